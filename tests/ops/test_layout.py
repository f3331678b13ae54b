"""Layout ops: values, shapes and strides exactly as their docs (ops.yaml, docs/ops.md) define them."""

from __future__ import annotations

import pytest
import torch

import deep_gemm
from deep_gemm import _C
from tests.support.reference import ceil_div


def pow2(*shape: int) -> torch.Tensor:
    """Random powers of two (what UE8M0 scales are)."""
    return torch.pow(2.0, torch.randint(-20, 20, shape).float())


def exponent_byte(x: torch.Tensor) -> torch.Tensor:
    return (x.view(torch.int32) >> 23) & 0xFF


def ref_pack(sf: torch.Tensor) -> torch.Tensor:
    """[.., mn, sf_k] float32 -> [.., mn, ceil(sf_k/4)] int32; byte j of word w = exponent of group 4w+j."""
    words = ceil_div(sf.shape[-1], 4)
    out = torch.zeros(*sf.shape[:-1], words, dtype=torch.int64)
    e = exponent_byte(sf.contiguous()).to(torch.int64)
    for g in range(sf.shape[-1]):
        out[..., g // 4] |= e[..., g] << (8 * (g % 4))
    return out.to(torch.int32)  # wraps the top byte like a 32-bit word would


def mn_major_strides(batch: bool, mn: int, cols: int) -> tuple[int, ...]:
    tma = ceil_div(mn, 4) * 4
    return (tma * cols, 1, tma) if batch else (1, tma)


@pytest.mark.parametrize("x,elem,expected", [(0, 4, 0), (1, 4, 4), (4095, 4, 4096), (7, 2, 8), (17, 1, 32), (5, 16, 5)])
def test_tma_aligned_size(x: int, elem: int, expected: int) -> None:
    assert _C.get_tma_aligned_size(x, elem) == expected


@pytest.mark.parametrize(
    "x,elem,message", [(4, 3, "element_size"), (4, 0, "element_size"), (-1, 4, "'x' must be non-negative")]
)
def test_tma_aligned_size_rejects(x: int, elem: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"get_tma_aligned_size: argument .*{message}"):
        _C.get_tma_aligned_size(x, elem)


@pytest.mark.parametrize("shape", [(33, 5), (4096, 56), (4097, 57), (1, 1), (0, 3), (3, 8, 3), (2, 1, 7)])
def test_mn_major_tma_aligned_tensor(shape: tuple[int, ...]) -> None:
    sf = torch.rand(*shape)
    out = _C.get_mn_major_tma_aligned_tensor(sf)
    assert out.dtype == torch.float32 and out.shape == sf.shape
    if out.numel():
        assert out.stride() == mn_major_strides(len(shape) == 3, shape[-2], shape[-1])
    assert torch.equal(out, sf)
    assert out.data_ptr() != sf.data_ptr() or sf.numel() == 0  # never an alias of the input
    already = _C.get_mn_major_tma_aligned_tensor(out)  # input already in that layout: same values, new tensor
    assert torch.equal(already, sf) and already.stride() == out.stride()


@pytest.mark.parametrize("shape", [(33, 7), (128, 4), (4097, 57), (2, 16, 9), (1, 1)])
def test_packed_ue8m0(shape: tuple[int, ...]) -> None:
    sf = pow2(*shape)
    out = _C.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    words = ceil_div(shape[-1], 4)
    assert out.dtype == torch.int32 and out.shape == (*shape[:-1], words)
    assert out.stride() == mn_major_strides(len(shape) == 3, shape[-2], words)
    assert torch.equal(out, ref_pack(sf))
    # Round trip through the Python helpers (pack / unpack of exponent bytes).
    padded = torch.nn.functional.pad(sf, (0, words * 4 - shape[-1]), value=2.0**-127)
    assert torch.equal(deep_gemm.utils.pack_ue8m0_to_int(padded), ref_pack(sf))


def test_packed_ue8m0_with_psum_layout_skips_gap_rows() -> None:
    old = _C.get_mk_alignment_for_contiguous_layout()
    _C.set_mk_alignment_for_contiguous_layout(64)
    try:
        ends = [10, 70, 128 + 5]  # group starts: 0, align(10)=64, align(70)=128
        sf = pow2(200, 6)
        sf[10:64] = float("nan")  # gap rows are never read
        out = _C.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, torch.tensor(ends, dtype=torch.int32))
        valid = torch.zeros(200, dtype=torch.bool)
        for start, end in [(0, 10), (64, 70), (128, 133)]:
            valid[start:end] = True
        expected = torch.where(valid[:, None], ref_pack(sf), 0)
        assert torch.equal(out, expected)
    finally:
        _C.set_mk_alignment_for_contiguous_layout(old)


def ref_k_grouped(sf: torch.Tensor, ks: list[int], gran_k: int, rows_out: int) -> torch.Tensor:
    mn = sf.shape[1]
    out = torch.zeros(rows_out, mn, dtype=torch.int64)
    e = exponent_byte(sf).to(torch.int64)
    src = dst = 0
    for k in ks:
        r = ceil_div(k, gran_k)
        for i in range(r):
            out[dst + i // 4] |= e[src + i] << (8 * (i % 4))
        src += r
        dst += ceil_div(r, 4)
    return out.to(torch.int32)


@pytest.mark.parametrize("gran_k", [32, 128])
@pytest.mark.parametrize("ks", [[128, 0, 640, 256], [512], [0, 0, 128]])
def test_k_grouped_packed(gran_k: int, ks: list[int], device: torch.device) -> None:
    rows = sum(ceil_div(k, gran_k) for k in ks)
    sf = pow2(rows, 8)
    layout = torch.tensor(ks, dtype=torch.int32)
    out = _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf.to(device), layout.to(device), ks, gran_k, 128)
    rows_out = sum(ceil_div(ceil_div(k, gran_k), 4) for k in ks)
    assert out.shape == (rows_out, 8) and out.is_contiguous() and out.device.type == device.type
    assert torch.equal(out.cpu(), ref_k_grouped(sf, ks, gran_k, rows_out))


@pytest.mark.parametrize("ks_arg", [None, []])
def test_k_grouped_packed_psum_without_ks(ks_arg, device: torch.device) -> None:
    ks, align = [128, 32, 0, 96], 32
    ends, prev = [], 0
    for k in ks:
        start = ceil_div(prev, align) * align
        ends.append(start + k)
        prev = start + k
    rows = sum(ceil_div(k, 32) for k in ks)
    sf = pow2(rows, 4)
    out = _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
        sf.to(device), torch.tensor(ends, dtype=torch.int32, device=device), ks_arg, 32, align, use_psum_layout=True
    )
    upper = (rows + 3 * len(ks)) // 4
    assert out.shape == (upper, 4)
    assert torch.equal(out.cpu(), ref_k_grouped(sf, ks, 32, upper))


def test_k_grouped_rejects() -> None:
    sf = pow2(2, 8)
    layout = torch.tensor([128, 128], dtype=torch.int32)
    with pytest.raises(ValueError, match="argument 'ks_cpu' may be None or empty only with use_psum_layout=True"):
        _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, None, 128, 128)
    with pytest.raises(ValueError, match="argument 'gran_k' must be 32 or 128, got 64"):
        _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, [128, 128], 64, 128)
    with pytest.raises(ValueError, match="argument 'sf' has 2 rows, but the groups' K sizes need 3"):
        _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, layout, [128, 256], 128, 128)
    with pytest.raises(ValueError, match="argument 'sf' must have a multiple of 4 columns"):
        _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(pow2(2, 6), layout, [128, 128], 128, 128)


# ---- transform_sf_into_required_layout -------------------------------------------------------


def test_transform_sfa_float_rules() -> None:
    sf = torch.rand(65, 3)
    out = _C.transform_sf_into_required_layout(sf, 65, 300, (1, 128, 128), is_sfa=True, disable_ue8m0_cast=True)
    assert torch.equal(out, sf) and out.stride() == (1, 68)
    out2 = _C.transform_sf_into_required_layout(sf, 65, 300, (1, 128), disable_ue8m0_cast=True)
    assert torch.equal(out2, sf) and out2.stride() == (1, 68)


def test_transform_sfb_block_float_kept() -> None:
    sf = torch.rand(2, 3)
    out = _C.transform_sf_into_required_layout(sf, 256, 300, (1, 128, 128), is_sfa=False, disable_ue8m0_cast=True)
    assert torch.equal(out, sf) and out.stride() == sf.stride() and out.data_ptr() != sf.data_ptr()
    t = torch.rand(3, 2).t()  # contiguous once the last two dims are swapped: accepted
    assert torch.equal(_C.transform_sf_into_required_layout(t, 256, 300, (128, 128), disable_ue8m0_cast=True), t)


def test_transform_packs_ue8m0_and_broadcasts_block_rows() -> None:
    sf = pow2(2, 3)  # (128, 128) blocks for mn = 200 rows
    out = _C.transform_sf_into_required_layout(sf, 200, 300, (1, 128, 128), is_sfa=False)
    per_row = sf[torch.arange(200) // 128]
    assert out.dtype == torch.int32 and out.shape == (200, 1) and out.stride() == (1, 200)
    assert torch.equal(out, ref_pack(per_row))


def test_transform_grouped_gran32_and_int_input() -> None:
    sf = pow2(2, 40, 4)
    out = _C.transform_sf_into_required_layout(sf, 40, 128, (1, 32), num_groups=2)
    assert out.shape == (2, 40, 1) and out.stride() == (40, 1, 40)
    assert torch.equal(out, ref_pack(sf))
    again = _C.transform_sf_into_required_layout(out, 40, 128, (1, 32), num_groups=2)  # packed input: validated
    assert torch.equal(again, out) and again.stride() == out.stride()


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        ((torch.rand(4, 3), 4, 300, (1, 128, 128)), {}, "argument 'is_sfa' is required with a 3-entry recipe"),
        (
            (torch.rand(4, 3), 4, 300, (1, 128)),
            {"is_sfa": True},
            "argument 'is_sfa' must be None with a 2-entry recipe",
        ),
        ((torch.rand(4, 2), 4, 300, (1, 128)), {}, r"argument 'sf' must end in shape \[4, 3\]"),
        ((torch.rand(4, 3), 4, 300, (1, 64)), {}, "gives a K granularity of 64; expected 32 or 128"),
        ((torch.rand(4, 3).half(), 4, 300, (1, 128)), {}, "argument 'sf' must be Float or Int, got Half"),
        (
            (torch.rand(2, 4, 3), 4, 300, (1, 128)),
            {"num_groups": 3},
            "argument 'sf' has 2 groups in dim 0, but num_groups is 3",
        ),
        ((torch.zeros(4, 2, dtype=torch.int32), 4, 600, (1, 128)), {}, "packed scales must be MN-major"),
        ((torch.zeros(4, 1, dtype=torch.int32), 4, 300, (1, 128)), {}, r"packed scales must have stride\(-1\) == 4"),
    ],
)
def test_transform_rejects(args, kwargs, message) -> None:
    with pytest.raises(ValueError, match=f"^transform_sf_into_required_layout: .*{message}"):
        _C.transform_sf_into_required_layout(*args, **kwargs)
    with pytest.raises(
        TypeError, match="transform_sf_into_required_layout: argument 'recipe' must be a tuple of 2 or 3 ints"
    ):
        _C.transform_sf_into_required_layout(args[0], 4, 300, 128)


def test_mk_alignment() -> None:
    old = _C.get_mk_alignment_for_contiguous_layout()
    assert old == 128
    try:
        _C.set_mk_alignment_for_contiguous_layout(64)
        assert deep_gemm.get_mk_alignment_for_contiguous_layout() == 64
        assert deep_gemm.utils.get_m_alignment_for_contiguous_layout() == 64
        for bad in (0, -32, 48):
            with pytest.raises(ValueError, match="set_mk_alignment_for_contiguous_layout: argument 'new_value'"):
                _C.set_mk_alignment_for_contiguous_layout(bad)
        assert _C.get_mk_alignment_for_contiguous_layout() == 64
    finally:
        _C.set_mk_alignment_for_contiguous_layout(old)
    # No SM100 GPU here: the theoretical alignment is 128 whatever expected_m says.
    assert _C.get_theoretical_mk_alignment_for_contiguous_layout() == 128
    assert _C.get_theoretical_mk_alignment_for_contiguous_layout(100) == 128
