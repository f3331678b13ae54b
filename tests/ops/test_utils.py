"""deep_gemm.utils and deep_gemm.testing against their definitions."""

from __future__ import annotations

import pytest
import torch

from deep_gemm.testing import calc_diff
from deep_gemm.utils import (
    align,
    cast_back_from_fp4,
    ceil_div,
    ceil_to_ue8m0,
    pack_ue8m0_to_int,
    per_block_cast_to_fp8,
    per_channel_cast_to_fp8,
    per_custom_dims_cast_to_fp8,
    per_token_cast_to_fp4,
    per_token_cast_to_fp8,
    transpose_packed_fp4,
    unpack_ue8m0_from_int,
)
from tests.support.reference import F64, fp4_to_f64


def test_int_helpers() -> None:
    assert [ceil_div(x, 4) for x in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert [align(x, 128) for x in (0, 1, 128, 129)] == [0, 128, 128, 256]


def test_ceil_to_ue8m0_is_the_smallest_power_of_two_not_below() -> None:
    x = torch.randn(1000) * torch.pow(10.0, torch.randint(-6, 6, (1000,)).float())
    x = x[x != 0]
    p = ceil_to_ue8m0(x)
    exps = torch.log2(p.double())
    assert torch.equal(exps, exps.round())  # powers of two
    assert bool((p.double() >= x.abs().double()).all()) and bool((p.double() / 2 < x.abs().double()).all())


def test_pack_unpack_round_trip() -> None:
    sf = torch.pow(2.0, torch.randint(-30, 30, (5, 8)).float())
    packed = pack_ue8m0_to_int(sf)
    assert packed.shape == (5, 2) and packed.dtype == torch.int32
    assert torch.equal(unpack_ue8m0_from_int(packed), sf)
    byte0 = (packed[0, 0].item() & 0xFF) - 127
    assert 2.0**byte0 == sf[0, 0].item()  # byte 0 holds the lowest K group


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("m,n", [(1, 128), (5, 300), (16, 1024)])
def test_per_token_fp8(use_ue8m0: bool, m: int, n: int) -> None:
    x = torch.randn(m, n)
    q, sf = per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (m, n) and sf.shape == (m, ceil_div(n, 128))
    groups = torch.nn.functional.pad(x, (0, sf.shape[1] * 128 - n)).view(m, -1, 128)
    amax = groups.abs().amax(-1).clamp(min=1e-4)
    expected = amax / 448
    if use_ue8m0:
        expected = torch.pow(2.0, torch.ceil(torch.log2(expected)))
    assert torch.allclose(sf, expected, rtol=1e-6)
    back = q.to(F64) * sf.to(F64).repeat_interleave(128, 1)[:, :n]
    assert calc_diff(back, x) < 1e-3


def test_per_token_fp8_packed() -> None:
    _q, sf = per_token_cast_to_fp8(torch.randn(3, 1024), use_ue8m0=True, use_packed_ue8m0=True)
    assert sf.dtype == torch.int32 and sf.shape == (3, 2)


def test_per_channel_and_block_fp8() -> None:
    x = torch.randn(256, 96)
    q, sf = per_channel_cast_to_fp8(x, use_ue8m0=False)
    assert sf.shape == (2, 96)
    assert calc_diff(q.to(F64) * sf.to(F64).repeat_interleave(128, 0), x) < 1e-3
    x = torch.randn(200, 300)
    q, sf = per_block_cast_to_fp8(x, use_ue8m0=True)
    assert sf.shape == (2, 3) and q.shape == (200, 300)
    full = sf.to(F64).repeat_interleave(128, 0)[:200].repeat_interleave(128, 1)[:, :300]
    assert calc_diff(q.to(F64) * full, x) < 1e-3
    with pytest.raises(ValueError, match="rows divisible by 128"):
        per_channel_cast_to_fp8(torch.randn(100, 4), use_ue8m0=False)


def test_per_custom_dims() -> None:
    x = torch.randn(6, 64)
    _q, sf = per_custom_dims_cast_to_fp8(x, (0,), use_ue8m0=False)
    assert sf.shape == (6,)
    assert torch.allclose(sf, x.abs().amax(1).clamp(min=1e-4) / 448)


def test_fp4_codes_thresholds_and_packing() -> None:
    # Scale 1 (amax 6 per row): values map to the e2m1 grid, ties rounding down.
    row = torch.tensor([6.0, 0.25, 0.26, -0.75, 1.75, 1.8, -2.5, 3.6, 5.0, 5.1, 0.0, -0.1] + [0.0] * 20)
    packed, sf = per_token_cast_to_fp4(row[None], use_ue8m0=False, gran_k=32)
    assert sf.item() == pytest.approx(1.0)
    assert packed.shape == (1, 16) and packed.dtype == torch.int8
    got = fp4_to_f64(packed)[0, :12]
    assert got.tolist() == [6.0, 0.0, 0.5, -0.5, 1.5, 2.0, -2.0, 4.0, 4.0, 6.0, 0.0, 0.0]
    low = packed.view(torch.uint8)[0, 0].item() & 0xF
    assert low == 7  # element 0 (6.0) sits in the low nibble


def test_fp4_round_trip_and_transpose() -> None:
    x = torch.randn(8, 64)
    packed, sf = per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
    back = cast_back_from_fp4(packed, sf, gran_k=32, use_packed_ue8m0=True)
    assert back.shape == (8, 64) and calc_diff(back, x) < 0.02
    t = transpose_packed_fp4(packed)
    assert t.shape == (64, 4)
    assert torch.equal(fp4_to_f64(t), fp4_to_f64(packed).T)


def test_calc_diff() -> None:
    x = torch.randn(100)
    assert calc_diff(x, x) == pytest.approx(0.0, abs=1e-12)
    assert calc_diff(x, -x) == pytest.approx(2.0)
    assert calc_diff(torch.zeros(3), torch.zeros(3)) == 0.0


def test_casts_and_calc_diff_keep_their_scratch_small() -> None:
    # An operand of 2^25 values: its float32 copy alone would be 128 MiB.  The casts reduce
    # the amax from the input and make the float32 products a slice at a time, so they hold
    # the FP8 result (1 byte a value) and about one float32 slice; calc_diff holds two float64
    # slices; besides, a few tensors of one float32 scale per 128 values.  (The previous casts
    # held 9 bytes a value, calc_diff 40.)
    from deep_gemm.testing import numeric
    from deep_gemm.utils import math as cast_math
    from tests.support.memory import cpu_bytes

    m, n = 4096, 8192
    x = torch.randn(m, n, dtype=torch.bfloat16)
    slice_bytes = cast_math._SLICE_ELEMENTS * 4
    scales = 4 * (m * n // 128) * 4
    for name, cast in (("per_token", per_token_cast_to_fp8), ("per_block", per_block_cast_to_fp8)):
        peak, _ = cpu_bytes(lambda cast=cast: cast(x, use_ue8m0=False))
        assert m * n <= peak <= m * n + slice_bytes + scales, f"{name}: {peak / (m * n):.2f} bytes a value"
    y = x + torch.randn_like(x)
    peak, _ = cpu_bytes(lambda: calc_diff(x, y))
    assert 0 < peak <= 2 * numeric._DIFF_SLICE * 8 + (1 << 20), f"calc_diff: {peak} bytes"
    # The sliced sums agree with one float64 pass of the definition.
    x64, y64 = x.double(), y.double()
    expected = 1 - 2 * float((x64 * y64).sum()) / float((x64 * x64 + y64 * y64).sum())
    assert calc_diff(x, y) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "name,shape,gran_k",
    [("per_token", (40, 1000), 128), ("per_token", (24, 1000), 32), ("per_block", (300, 1000), 128)],
)
def test_casts_under_torch_compile_match_eager(name: str, shape: tuple[int, int], gran_k: int) -> None:
    # Shapes that leave a partial last group: torch.compile's CPU backend (torch 2.13) turned the
    # earlier per-token cast's partial group into garbage (a broadcast product viewed and sliced).
    cast = per_token_cast_to_fp8 if name == "per_token" else per_block_cast_to_fp8
    x = torch.randn(*shape)

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return cast(t, use_ue8m0=False, gran_k=gran_k)

    torch._dynamo.reset()
    q_compiled, sf_compiled = torch.compile(fn, fullgraph=True)(x)
    q, sf = fn(x)
    assert torch.equal(sf_compiled, sf)
    assert torch.equal(q_compiled.view(torch.uint8), q.view(torch.uint8))
    # And both against the definition: every value within FP8's rounding of x / sf.
    rows = sf.to(F64).repeat_interleave(gran_k, 0)[: shape[0]] if name == "per_block" else sf.to(F64)
    assert calc_diff(q.to(F64) * rows.repeat_interleave(gran_k, 1)[:, : shape[1]], x) < 1e-3
