"""The Mega MoE symmetric buffer: sizing, layout_info, views, errors (the weight transform: test_mega_weights.py).

Expected region sizes are written here from the layout that Note [Mega MoE symmetric buffer
layout] in csrc/reference/mega_layout.hpp describes (workspace,
staged inputs, L1/L2 receive regions with M-major scale views, the combine
buffer), never read back from deep_gemm.
"""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch

import deep_gemm
import deep_gemm.mega as mega
from deep_gemm import _C
from deep_gemm.mega.layout import WORKSPACE_WORDS, region_views
from tests.support.samples.mega import SIZE_CONFIGS

OPS = (
    "get_token_alignment_for_mega_moe",
    "get_symm_buffer_size_for_mega_moe",
    "_get_symm_buffer_views_for_mega_moe",
    "_get_workspace_words_for_mega_moe",
)
ELT = {torch.float8_e4m3fn: 1, torch.bfloat16: 2, torch.int32: 4, torch.int64: 8, torch.float32: 4}


def ring_tokens(r: int, e: int, t: int, k: int) -> int:
    return r * t * min(k, e // r)


def expected_regions(mma: str, t: int, k: int, h: int, i: int, s: int, rcv: int) -> dict:
    """name -> (dtype, shape, bytes), or None for a region the configuration lacks."""
    fp8 = mma == "fp8xfp4"
    tok = torch.float8_e4m3fn if fp8 else torch.bfloat16

    def region(dtype, *shape):
        n = 1
        for d in shape:
            n *= d
        return dtype, tuple(shape), n * ELT[dtype]

    return {
        # header word, barrier epoch/stop words (padded to 8), 32 signals, 32 x 32 counts
        "workspace": region(torch.int64, 8 + 32 + 32 * 32),
        "x": region(tok, t, h),
        "x_sf": region(torch.int32, t, h // 128) if fp8 else None,
        "topk_idx": region(torch.int64, t, k),
        "topk_weights": region(torch.float32, t, k),
        "shared_l1_sf": region(torch.int32, t, h // 128) if fp8 and s else None,
        "shared_l2_token": region(tok, t, s * i) if s else None,
        "shared_l2_sf": region(torch.int32, t, s * i // 128) if fp8 and s else None,
        "l1_token": region(tok, rcv, h),
        "l1_sf": region(torch.int32, rcv, h // 128) if fp8 else None,
        "l2_token": region(tok, rcv, i),
        "l2_sf": region(torch.int32, rcv, i // 128) if fp8 else None,
        "recv_info": region(torch.int32, rcv, 4),
        "recv_weights": region(torch.float32, rcv),
        "l2_out": region(torch.bfloat16, rcv, h),
        "combine": region(torch.bfloat16, k, t, h),
    }


CONFIG_IDS = [f"{c[6]}_r{c[0]}_e{c[1]}_t{c[2]}_k{c[3]}_h{c[4]}_i{c[5]}_s{c[7]}" for c in SIZE_CONFIGS]


def test_token_alignment_is_384_through_every_entry_point() -> None:
    assert _C.get_token_alignment_for_mega_moe() == 384
    assert torch.ops.deep_gemm.get_token_alignment_for_mega_moe() == 384


def test_mega_helpers_stay_on_C_only() -> None:
    for name in OPS:
        assert hasattr(_C, name) and hasattr(torch.ops.deep_gemm, name)
        assert not hasattr(deep_gemm, name), f"{name} must not be re-exported by deep_gemm"
        assert name not in _C.__all__


@pytest.mark.parametrize("config", SIZE_CONFIGS, ids=CONFIG_IDS)
def test_layout_info_fields(config: tuple) -> None:
    r, e, t, k, h, i, mma, s = config
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(r, e, t, k, h, i, mma, "swiglu", s)
    assert (num_bytes, list(info)) == tuple(
        torch.ops.deep_gemm.get_symm_buffer_size_for_mega_moe(r, e, t, k, h, i, mma, "swiglu", num_shared_experts=s)
    )
    assert len(info) == 23 and info[0] == num_bytes
    fp8 = mma == "fp8xfp4"
    rcv = ring_tokens(r, e, t, k)
    assert info[12:] == [0 if fp8 else 1, int(fp8), 32 if fp8 else 0, t, k, h, i, s, s * i, rcv, rcv if fp8 else 0]


@pytest.mark.parametrize("config", SIZE_CONFIGS, ids=CONFIG_IDS)
def test_regions_are_aligned_disjoint_and_sized_as_the_layout_note_says(config: tuple) -> None:
    r, e, t, k, h, i, mma, s = config
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(r, e, t, k, h, i, mma, "swiglu", s)
    flat = _C._get_symm_buffer_views_for_mega_moe(mma, t, k, h, i, s, ring_tokens(r, e, t, k))
    assert flat[0] == num_bytes and len(flat) == 1 + 16 * 10
    expected = expected_regions(mma, t, k, h, i, s, ring_tokens(r, e, t, k))
    assert list(expected) == list(mega.REGIONS)
    previous_end = 0
    for n, name in enumerate(mega.REGIONS):
        offset, nbytes, code, ndim = flat[1 + 10 * n : 5 + 10 * n]
        assert offset % 128 == 0, name
        assert offset >= previous_end, f"{name} overlaps the region before it"
        want = expected[name]
        if want is None:
            assert (nbytes, code) == (0, 0), name
            continue
        _, shape, size = want
        assert nbytes == size, name
        assert ndim == len(shape) and tuple(flat[5 + 10 * n : 5 + 10 * n + ndim]) == shape, name
        previous_end = offset + nbytes
    assert previous_end <= num_bytes < previous_end + 128
    # The public offsets of layout_info are the regions' offsets, in its order.
    for n, name in enumerate(mega.PUBLIC_REGIONS):
        assert info[1 + n] == flat[1 + 10 * (n + 1)], name


def _fill_bytes(view: torch.Tensor) -> None:
    """Set every byte the view covers to 0xFF (through a same-size integer view)."""
    as_int = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[view.element_size()]
    view.view(as_int).fill_(-1)


@pytest.mark.parametrize("config", SIZE_CONFIGS[:1] + SIZE_CONFIGS[2:], ids=CONFIG_IDS[:1] + CONFIG_IDS[2:])
def test_views_cover_exactly_their_byte_ranges(config: tuple) -> None:
    r, e, t, k, h, i, mma, s = config
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(r, e, t, k, h, i, mma, "swiglu", s)
    buffer = torch.zeros(num_bytes, dtype=torch.uint8)
    views = region_views("test", buffer, info)
    expected = expected_regions(mma, t, k, h, i, s, ring_tokens(r, e, t, k))
    for name, view in views.items():
        if expected[name] is None:
            assert view is None, name
            continue
        dtype, shape, size = expected[name]
        assert view.dtype == dtype and tuple(view.shape) == shape, name
        offset = view.data_ptr() - buffer.data_ptr()
        buffer.zero_()
        _fill_bytes(view)
        touched = buffer.nonzero().flatten()
        assert touched.numel() == size, f"{name}: the view covers {touched.numel()} bytes, expected {size}"
        assert (touched.min().item(), touched.max().item()) == (offset, offset + size - 1), name
    # Scale views are M-major (token index contiguous), as the kernels read them.
    if mma == "fp8xfp4":
        rcv = ring_tokens(r, e, t, k)
        assert views["l1_sf"].stride() == (1, rcv) and views["l2_sf"].stride() == (1, rcv)
        assert views["x_sf"].stride() == (h // 128, 1)


@pytest.mark.parametrize("config", SIZE_CONFIGS[:1] + SIZE_CONFIGS[2:], ids=CONFIG_IDS[:1] + CONFIG_IDS[2:])
def test_layout_info_round_trips_through_slice(config: tuple) -> None:
    r, e, t, k, h, i, mma, s = config
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(r, e, t, k, h, i, mma, "swiglu", s)
    buffer = torch.empty(num_bytes, dtype=torch.int8)
    views = mega._slice_symm_buffer_for_mega_moe(buffer, tuple(info))  # a tuple works as well as a list
    assert len(views) == 11
    for n, view in enumerate(views):
        if view is not None:
            assert view.data_ptr() - buffer.data_ptr() == info[1 + n], mega.PUBLIC_REGIONS[n]
            assert view.untyped_storage().data_ptr() == buffer.untyped_storage().data_ptr()
    # Writing through a view writes the buffer (they alias, nothing is copied).
    x = views[0]
    x.view(torch.int8 if x.element_size() == 1 else torch.int16)[0, 0] = 7
    assert buffer[info[1]].item() == 7


def test_symm_buffer_single_rank_without_process_group() -> None:
    buf = mega.SymmBuffer(None, 4, 384, 2, 256, 128)
    assert (buf.num_ranks, buf.rank, buf.handle.buffer_ptrs) == (1, 0, [0])
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(1, 4, 384, 2, 256, 128, "fp8xfp4", "swiglu")
    assert (buf.num_bytes, buf.layout_info, buf.buffer.numel()) == (num_bytes, info, num_bytes)
    assert buf.buffer.dtype == torch.int8 and not buf.buffer.any()
    assert buf.x.shape == (384, 256) and buf.x.dtype == torch.float8_e4m3fn
    assert buf.x_sf.shape == (384, 2) and buf.x_sf.dtype == torch.int32
    assert buf.topk_idx.shape == (384, 2) and buf.topk_idx.dtype == torch.int64
    assert buf.topk_weights.dtype == torch.float32
    assert buf.l1_acts.shape == (768, 256) and buf.l2_acts.shape == (768, 128)
    assert buf.l1_acts_sf.shape == (768, 2) and buf.l2_acts_sf.shape == (768, 1)
    assert buf.shared_l2_acts is None and buf.num_ring_tokens == 768
    assert buf.op_kwargs()["sym_buffer_ptrs"] is buf.handle.buffer_ptrs
    buf.destroy()
    assert buf.buffer is None and buf.handle is None
    for name in ("x", "x_sf", "topk_idx", "topk_weights", "l1_acts", "l1_acts_sf", "l2_acts", "l2_acts_sf"):
        assert getattr(buf, name) is None, name


def test_layout_info_names_every_field() -> None:
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(2, 8, 384, 2, 256, 128, "fp8xfp4", "swiglu", 1)
    named = mega.LayoutInfo(*info)
    assert len(mega.LAYOUT_FIELDS) == 23 and mega.LAYOUT_FIELDS == mega.LayoutInfo._fields
    assert (named.num_bytes, named.mma_type, named.num_shared_experts) == (num_bytes, "fp8xfp4", 1)
    assert (named.hidden, named.intermediate_hidden, named.shared_intermediate_hidden) == (256, 128, 128)
    assert named.num_ring_tokens == ring_tokens(2, 8, 384, 2)
    # The offsets layout_info carries are those of the regions after the workspace, up to l2_sf.
    assert mega.PUBLIC_REGIONS == mega.REGIONS[1:12]


def test_workspace_words_are_the_header_and_the_stop_word() -> None:
    """The indices Python writes come from the C++ layout: word 0 counts received rows, word 2 stops the barrier."""
    assert tuple(torch.ops.deep_gemm._get_workspace_words_for_mega_moe()) == (0, 2)
    assert WORKSPACE_WORDS == (0, 2) and WORKSPACE_WORDS.stop == 2


UPSTREAM_FACTORY_PARAMETERS = (
    "group",
    "num_experts",
    "num_max_tokens_per_rank",
    "num_topk",
    "hidden",
    "intermediate_hidden",
    "use_fp8_dispatch",
    "mma_type",
    "activation",
)


def test_get_symm_buffer_keeps_upstream_positional_order() -> None:
    params = inspect.signature(mega.get_symm_buffer_for_mega_moe).parameters.values()
    positional = tuple(p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keyword_only = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert positional == UPSTREAM_FACTORY_PARAMETERS
    assert keyword_only == {"num_shared_experts", "device", "symmetric"}
    # An upstream-style call: use_fp8_dispatch, then mma_type, by position.
    with pytest.warns(DeprecationWarning):
        buf = mega.get_symm_buffer_for_mega_moe(None, 2, 384, 1, 64, 16, False, "bf16xbf16")
    assert buf.mma_type == "bf16xbf16" and buf.x.dtype == torch.bfloat16
    with pytest.raises(TypeError):
        mega.get_symm_buffer_for_mega_moe(None, 2, 384, 1, 64, 16, None, "bf16xbf16", "swiglu", 1)
    shared = mega.get_symm_buffer_for_mega_moe(None, 4, 384, 2, 128, 128, num_shared_experts=1)
    assert shared.num_shared_experts == 1 and shared.shared_l2_acts is not None


def test_symm_buffer_bf16_has_no_scale_views() -> None:
    buf = mega.SymmBuffer(None, 2, 384, 1, 64, 16, mma_type="bf16xbf16")
    assert buf.x.dtype == torch.bfloat16 and buf.l2_acts.dtype == torch.bfloat16
    assert buf.x_sf is None and buf.l1_acts_sf is None and buf.l2_acts_sf is None


def test_get_symm_buffer_aligns_tokens_and_checks_the_deprecated_flag() -> None:
    buf = mega.get_symm_buffer_for_mega_moe(None, 4, 100, 2, 128, 128)
    assert buf.num_max_tokens_per_rank == 384 and buf.x.shape[0] == 384
    assert mega.get_symm_buffer_for_mega_moe(None, 4, 385, 2, 128, 128).num_max_tokens_per_rank == 768
    with pytest.warns(DeprecationWarning, match="use_fp8_dispatch is deprecated"):
        mega.get_symm_buffer_for_mega_moe(None, 4, 384, 2, 128, 128, use_fp8_dispatch=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(
            ValueError, match="argument 'use_fp8_dispatch' is True, which contradicts mma_type 'bf16xbf16'"
        ):
            mega.get_symm_buffer_for_mega_moe(None, 4, 384, 2, 128, 128, use_fp8_dispatch=True, mma_type="bf16xbf16")


# ---- errors -----------------------------------------------------------------------------------

GOOD = dict(
    num_ranks=2,
    num_experts=8,
    num_max_tokens_per_rank=384,
    num_topk=2,
    hidden=256,
    intermediate_hidden=128,
    mma_type="fp8xfp4",
    activation="swiglu",
)
SIZE_ERRORS = [
    ({"num_ranks": 0}, "argument 'num_ranks' must be positive, got 0"),
    ({"num_experts": 0}, "argument 'num_experts' must be positive, got 0"),
    ({"num_experts": 9}, "argument 'num_experts' must be divisible by the number of ranks (2), got 9"),
    ({"num_max_tokens_per_rank": 100}, "argument 'num_max_tokens_per_rank' must be a positive multiple of 384"),
    ({"num_max_tokens_per_rank": 0}, "argument 'num_max_tokens_per_rank' must be a positive multiple of 384"),
    ({"num_topk": 0}, "argument 'num_topk' must be positive, got 0"),
    ({"num_topk": 9}, "argument 'num_topk' must not exceed num_experts (8)"),
    ({"hidden": 200}, "argument 'hidden' must be a multiple of 128 for mma_type 'fp8xfp4'"),
    ({"hidden": -128}, "argument 'hidden' must be positive, got -128"),
    ({"intermediate_hidden": 64}, "argument 'intermediate_hidden' must be a multiple of 128 for mma_type 'fp8xfp4'"),
    ({"intermediate_hidden": 12, "mma_type": "bf16xbf16"}, "argument 'intermediate_hidden' must be a multiple of 8"),
    ({"mma_type": "fp4xfp4"}, "argument 'mma_type' must be 'fp8xfp4' or 'bf16xbf16', got 'fp4xfp4'"),
    ({"activation": "gelu"}, "argument 'activation' must be 'swiglu', got 'gelu'"),
    ({"num_shared_experts": -1}, "argument 'num_shared_experts' must be non-negative, got -1"),
    (
        {"num_ranks": 64, "num_experts": 64 * 8, "num_max_tokens_per_rank": 384 * 100000},
        "argument 'num_max_tokens_per_rank' gives a receive capacity",
    ),
    (
        {"num_ranks": 1, "num_topk": 8, "num_max_tokens_per_rank": 384 * 524288, "hidden": 2**31 - 128},
        "argument 'num_max_tokens_per_rank' gives a symmetric buffer too large",
    ),
]


@pytest.mark.parametrize(
    "change,message", SIZE_ERRORS, ids=[m.split("'")[1] + str(i) for i, (_, m) in enumerate(SIZE_ERRORS)]
)
def test_size_errors_name_the_argument(change: dict, message: str) -> None:
    args = {**GOOD, **change}
    for call in (_C.get_symm_buffer_size_for_mega_moe, torch.ops.deep_gemm.get_symm_buffer_size_for_mega_moe):
        with pytest.raises(ValueError, match="^get_symm_buffer_size_for_mega_moe: " + _escape(message)):
            call(**args)
    if "num_ranks" not in change and "num_experts" not in change:
        with pytest.raises(ValueError, match=_escape(message)):
            mega.SymmBuffer(
                None,
                8,
                *(args[n] for n in ("num_max_tokens_per_rank", "num_topk", "hidden", "intermediate_hidden")),
                args["mma_type"],
                args["activation"],
                num_shared_experts=args.get("num_shared_experts", 0),
            )


def _escape(text: str) -> str:
    import re

    return re.escape(text)


def test_views_op_errors() -> None:
    with pytest.raises(ValueError, match=r"argument 'num_ring_tokens' must be a positive multiple of 384, got 100"):
        _C._get_symm_buffer_views_for_mega_moe("fp8xfp4", 384, 2, 128, 128, 0, 100)
    with pytest.raises(ValueError, match=r"argument 'hidden' must be a multiple of 128"):
        torch.ops.deep_gemm._get_symm_buffer_views_for_mega_moe("fp8xfp4", 384, 2, 100, 128, 0, 384)
    with pytest.raises(ValueError, match=r"argument 'num_topk' must be positive"):
        _C._get_symm_buffer_views_for_mega_moe("bf16xbf16", 384, 0, 100, 128, 0, 384)


def test_slice_rejects_bad_layout_info_and_buffers() -> None:
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(1, 4, 384, 2, 128, 128, "fp8xfp4", "swiglu")
    buffer = torch.zeros(num_bytes, dtype=torch.int8)
    slice_ = mega._slice_symm_buffer_for_mega_moe
    prefix = "_slice_symm_buffer_for_mega_moe: argument "
    bad = list(info)
    bad[3] += 128
    with pytest.raises(ValueError, match=_escape(prefix + f"'layout_info' field 3 (topk_idx_offset) is {bad[3]}")):
        slice_(buffer, bad)
    bad = list(info)
    bad[21] = 384 * 5  # a different receive capacity: every later offset moves
    with pytest.raises(ValueError, match=_escape(prefix + "'layout_info' field 0 (num_bytes) is")):
        slice_(buffer, bad)
    with pytest.raises(ValueError, match=_escape(prefix + "'layout_info' must hold 23 ints")):
        slice_(buffer, info[:22])
    with pytest.raises(ValueError, match=_escape(prefix + "'layout_info' must be a sequence of 23 ints, got Tensor")):
        slice_(buffer, torch.tensor(info))
    bad = list(info)
    bad[12] = 2
    with pytest.raises(ValueError, match=_escape(prefix + "'layout_info' field 12 (mma_kind) must be 0")):
        slice_(buffer, bad)
    bad = list(info)
    bad[17] = 100
    with pytest.raises(ValueError, match=_escape(prefix + "'layout_info' holds a configuration the layout rejects")):
        slice_(buffer, bad)
    with pytest.raises(ValueError, match=_escape(prefix + f"'buffer' has {num_bytes - 1} bytes, fewer than")):
        slice_(buffer[:-1], info)
    with pytest.raises(ValueError, match=_escape(prefix + "'buffer' must be a contiguous 1-D int8 or uint8 tensor")):
        slice_(buffer.view(torch.float8_e4m3fn), info)
    with pytest.raises(ValueError, match=_escape(prefix + "'buffer' must be a contiguous 1-D int8 or uint8 tensor")):
        slice_(buffer.view(2, -1), info)
    assert not buffer.any()
