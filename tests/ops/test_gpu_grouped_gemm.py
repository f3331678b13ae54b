"""M-grouped FP8 and BF16 GEMMs on the GPU (the native sm90a kernel's grouped schedules).

Against float64 products of the dequantised operands on fresh random inputs: contiguous
layouts with per-row ids (aligned and ragged, -1 padding, empty groups, one group, more
groups than SMs) and with psum ends (gaps poisoned with NaN/Inf bytes, zero or kept
padding), each also on every compiled tile, masked layouts with masked_m above and below
expected_m (also on the masked kernel, DG_GEMM_MASKED_SCHEDULE=1, with the general kernel's bits),
and the same bits with idle waves skipped (DG_GEMM_SKIP_IDLE_WAVES=1), with the compact
epilogue (DG_GEMM_COMPACT_EPILOGUE=1) and with one producer warp (DG_GEMM_SCALE_WARP=0).  Rows of no group in a
per-row-id layout (ids outside [0, G)) come out exactly zero over a NaN-filled d; psum gaps
and masked tails keep their poison.  Then 20-call bitwise determinism, and CUDA-graph replays
with the group sizes changed in place between replays.  Skipped without a GPU.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
from tests.support.kernels import GemmShape, compiled_gemm_shapes
from tests.support.operands import spread_blocks
from tests.support.profiling import cuda_kernel_names

pytestmark = pytest.mark.gpu

ALIGN = 128


def _b(groups: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """B [G, N, K] FP8 with 128x128 scales [G, ceil(N/128), ceil(K/128)], and its float64 value."""
    data, sfs, ref = [], [], []
    for _ in range(groups):
        w = spread_blocks(torch.randn(n, k, device="cuda"), 128)  # scales up to 256x apart
        q, s = per_block_cast_to_fp8(w, use_ue8m0=False)
        data.append(q)
        sfs.append(s)
        ref.append(q.double() * s.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:n, :k])
    return torch.stack(data), torch.stack(sfs), torch.stack(ref)


def _a(m: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = spread_blocks(torch.randn(m, k, device="cuda"), 1)
    q, s = per_token_cast_to_fp8(x, use_ue8m0=False)
    return q, s, q.double() * s.double().repeat_interleave(128, 1)[:, :k]


def _ragged(groups: int, expected: int, aligned: bool) -> list[int]:
    sizes = [int(expected * f) for f in torch.empty(groups).uniform_(0.7, 1.3).tolist()]
    return [(s + ALIGN - 1) // ALIGN * ALIGN for s in sizes] if aligned else sizes


def _check_contiguous_ids(
    sizes: list[int], pad: int, n: int, k: int, pad_ids: tuple[int, ...] = (-1,), zero_padding: bool = True
) -> None:
    """Group g's rows, each group followed by `pad` rows whose ids cycle through `pad_ids`."""
    ids: list[int] = []
    for g, rows in enumerate(sizes):
        ids += [g] * rows + [pad_ids[(g + i) % len(pad_ids)] for i in range(pad)]
    m = len(ids)
    a, sfa, a_ref = _a(m, k)
    b, sfb, b_ref = _b(len(sizes), n, k)
    layout = torch.tensor(ids, dtype=torch.int32, device="cuda")
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, layout, ensure_zero_padding=zero_padding)
    ids_t = torch.tensor(ids, device="cuda")
    for g in range(len(sizes)):
        rows = ids_t == g
        if rows.any():
            assert calc_diff(d[rows], a_ref[rows] @ b_ref[g].t()) < 2e-5
    no_group = (ids_t < 0) | (ids_t >= len(sizes))
    assert pad == 0 or no_group.any()
    assert (d[no_group].float() == 0).all()  # rows of no group come out exactly zero


@pytest.mark.parametrize(
    "groups,expected,n,k", [(4, 512, 1024, 1024), (8, 256, 512, 2048), (1, 1000, 768, 512)], ids=str
)
def test_contiguous_aligned(groups: int, expected: int, n: int, k: int) -> None:
    sizes = _ragged(groups, expected, aligned=True)
    sizes[len(sizes) // 2] = 0  # an empty group
    _check_contiguous_ids(sizes, 0, n, k)


def test_contiguous_ragged_ids_with_padding() -> None:
    _check_contiguous_ids([3, 1, 0, 200, 77], 5, 384, 640)


@pytest.mark.parametrize("zero_padding", [True, False])
def test_contiguous_ids_out_of_range_are_zero(zero_padding: bool) -> None:
    # Ids -1, -7 and >= G all mark padding, written as zero whatever ensure_zero_padding says;
    # 130 padding rows after the first group cover a whole 128-row tile of padding.
    _check_contiguous_ids([129, 5, 64], 130, 256, 384, pad_ids=(-1, 3, -7, 1000), zero_padding=zero_padding)


def test_contiguous_ids_whole_d_like_a_dense_product() -> None:
    # The whole of d against A' B[g]^T where A' has zero padding rows: what a caller that
    # zeroes its padding rows and compares every row of d expects.
    sizes, pad, n, k = [200, 0, 77, 300], 51, 512, 768
    ids: list[int] = []
    for g, rows in enumerate(sizes):
        ids += [g] * rows + [-1] * pad
    ids_t = torch.tensor(ids, dtype=torch.int32, device="cuda")
    a, sfa, a_ref = _a(len(ids), k)
    b, sfb, b_ref = _b(len(sizes), n, k)
    d = torch.full((len(ids), n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ids_t)
    ref = torch.zeros(len(ids), n, device="cuda", dtype=torch.float64)
    for g in range(len(sizes)):
        rows = ids_t == g
        ref[rows] = a_ref[rows] @ b_ref[g].t()
    assert not torch.isnan(d.float()).any()
    assert calc_diff(d, ref) < 2e-5


def test_contiguous_more_groups_than_sms() -> None:
    _check_contiguous_ids([128] * 150 + [64], 0, 256, 256)


def _psum(sizes: list[int]) -> list[int]:
    ends, prev = [], 0
    for rows in sizes:
        prev = (prev + ALIGN - 1) // ALIGN * ALIGN + rows
        ends.append(prev)
    return ends


@pytest.mark.parametrize("zero_padding", [True, False])
def test_psum_with_poisoned_gaps(zero_padding: bool) -> None:
    _psum_poisoned([300, 0, 129, 1, 512], 512, 1024)(zero_padding)


@pytest.mark.parametrize("zero_padding", [True, False])
def test_psum_a_sized_for_the_worst_case(zero_padding: bool) -> None:
    # A and D hold many more rows than the groups use (upstream's masked-as-psum form): the
    # schedule stops at the last group's padded end; the rows after it are kept.
    _psum_poisoned([200, 77, 0, 130], 384, 640, tail=3000)(zero_padding)


def _psum_poisoned(sizes: list[int], n: int, k: int, tail: int = 64) -> Callable[[bool], torch.Tensor]:
    """A psum layout whose rows outside every group hold NaN/Inf bytes and NaN scales, and a call
    on it (zero padding or not) that checks group rows against float64 and free of NaN, gaps zero
    or kept, rows after the last group kept, and returns D."""
    ends = _psum(sizes)
    m = (ends[-1] + ALIGN - 1) // ALIGN * ALIGN + tail
    a, sfa, _ = _a(m, k)
    rows_of = torch.full((m,), -1, dtype=torch.long, device="cuda")
    gap = torch.zeros(m, dtype=torch.bool, device="cuda")
    prev = 0
    for g, end in enumerate(ends):
        start = (prev + ALIGN - 1) // ALIGN * ALIGN
        rows_of[start:end] = g
        gap[prev:start] = g > 0
        prev = end
    gap[prev : (prev + ALIGN - 1) // ALIGN * ALIGN] = True
    # Poison every row outside a group: NaN/Inf bytes in the data, NaN scales.
    outside = rows_of < 0
    a.view(torch.uint8)[outside] = torch.randint(0x78, 0x80, (int(outside.sum()), k), device="cuda").to(torch.uint8)
    sfa[outside] = float("nan")
    a_ref = a.double() * sfa.double().repeat_interleave(128, 1)[:, :k]
    b, sfb, b_ref = _b(len(sizes), n, k)
    layout = torch.tensor(ends, dtype=torch.int32, device="cuda")

    def run(zero_padding: bool) -> torch.Tensor:
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(
            (a, sfa), (b, sfb), d, layout, use_psum_layout=True, ensure_zero_padding=zero_padding,
            expected_m_for_psum_layout=256,
        )  # fmt: skip
        for g in range(len(sizes)):
            rows = rows_of == g
            if rows.any():
                assert not torch.isnan(d[rows].float()).any()
                assert calc_diff(d[rows], a_ref[rows] @ b_ref[g].t()) < 2e-5
        if zero_padding:
            assert (d[gap].float() == 0).all()
        else:
            assert torch.isnan(d[gap].float()).all()
        assert torch.isnan(d[outside & ~gap].float()).all()
        return d

    return run


def _same_bits_off_and_on(monkeypatch: pytest.MonkeyPatch, switch: str, run: Callable[[], torch.Tensor]) -> None:
    """run() (which checks its D against float64 and returns it) with the environment switch off
    and on: the same bits."""
    outs = []
    for value in ("0", "1"):
        monkeypatch.setenv(switch, value)
        outs.append(run())
    assert torch.equal(outs[0].view(torch.int16), outs[1].view(torch.int16))


@pytest.mark.parametrize("config", ["64x128", "128x128", "128x176", "128x192", "256x128"])
def test_scale_warp_keeps_the_bits_on_psum(
    config: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [a warp for the scales] in the contiguous kernel (64- and 128-row tiles, and at 256x128
    the lean twin that runs by default; the plain 256x128 kernel does not compile it): with the
    scales copied by a second producer warp, a psum layout of empty, one-row and unaligned groups
    (tiles of two groups, zero items for the gaps, idle tiles past the end) keeps its bits, with
    the gaps zeroed or kept.  (The row-id and masked layouts:
    test_idle_waves_skipped_keep_the_bits.)"""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", config)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    run = _psum_poisoned([300, 0, 129, 1, 512], 400, 896)
    for zero_padding in (True, False):
        _same_bits_off_and_on(monkeypatch, "DG_GEMM_SCALE_WARP", lambda zp=zero_padding: run(zp))
    assert f"-> {config} " in capfd.readouterr().err  # the forced tile ran


FP8_SHAPES = [s for s in compiled_gemm_shapes() if not s.bf16 and not s.sfb_per_row and s.split == 1]
FP8_IDS = [s.config for s in FP8_SHAPES]


@pytest.mark.parametrize("shape", FP8_SHAPES, ids=FP8_IDS)
def test_contiguous_every_shape(
    shape: GemmShape, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Every FP8 tile forced on both contiguous layouts: ragged groups, so tiles hold padding
    rows, several groups, or no group at all (the uniform first pass and the described items
    after it; a 256-row tile's runs that miss one of its waves), an N tail, and K of a few
    blocks."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape.config)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    n = 2 * shape.block_n + 24
    _check_contiguous_ids([3, 1, 0, 200, 77, 130], 5, n, 640, pad_ids=(-1, -1, 1000))
    _check_contiguous_ids([128, 256, 0, 128], 0, n, 384)
    _psum_poisoned([300, 0, 129, 1, 64], n, 512)(True)
    assert shape.printed in capfd.readouterr().err  # the forced tile ran


@pytest.mark.parametrize("tile", ["128x192", "256x128"])
def test_lean_contiguous_kernel_keeps_the_bits(
    tile: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [lean kernels] in the contiguous kernel: its 128x192 twin (DG_GEMM_LEAN=1, off by
    default) and its 256x128 twin (on by default: Note [lean contiguous 256x128], whole waves, the
    stmatrix epilogue, the scale warp, idle waves).  Row ids of ragged groups with -1 padding (slabs
    that a run covers in part go out from registers, whole ones through the TMA unit, padding as
    zero items; 256-row tiles that straddle two groups) and a poisoned psum layout, gaps zeroed or
    kept, give the plain kernel's bits; the profiler shows that the lean kernel ran."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    block_n = int(tile.split("x")[1])
    n, k = 2 * block_n + 24, 896
    sizes, pad = [1, 65, 0, 130, 256], 70
    ids: list[int] = []
    for g, rows in enumerate(sizes):
        ids += [g] * rows + [-1] * pad
    ids_t = torch.tensor(ids, device="cuda")
    layout = ids_t.int()
    a, sfa, a_ref = _a(len(ids), k)
    b, sfb, b_ref = _b(len(sizes), n, k)

    def row_ids() -> torch.Tensor:
        d = torch.full((len(ids), n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, layout)
        for g in range(len(sizes)):
            rows = ids_t == g
            if rows.any():
                assert calc_diff(d[rows], a_ref[rows] @ b_ref[g].t()) < 2e-5
        assert (d[ids_t < 0].float() == 0).all()
        return d

    psum = _psum_poisoned([300, 0, 129, 1, 512], n, k)
    for run in (row_ids, lambda: psum(True), lambda: psum(False)):
        _same_bits_off_and_on(monkeypatch, "DG_GEMM_LEAN", run)
    _lean_kernel_ran(monkeypatch, row_ids, "contiguous", default_on=tile == "256x128")
    assert f"-> {tile} " in capfd.readouterr().err  # the forced tile ran


def _lean_kernel_ran(
    monkeypatch: pytest.MonkeyPatch,
    run: Callable[[], torch.Tensor],
    family: str,
    default_on: bool,
    plain: str | None = None,
) -> None:
    """The profiler's kernel names for run(): the family's lean kernel with DG_GEMM_LEAN=1; at 0 a
    plain one (`plain`, by default the family's) and no lean kernel at all; unset, the one its
    default names."""
    twin, plain = f"{family}_lean_kernel", plain or f"{family}_kernel"

    def lean_ran() -> bool:
        names = cuda_kernel_names(run)
        ran = any(twin in name for name in names)
        assert ran or (any(plain in name for name in names) and not any("lean" in n for n in names))
        return ran

    monkeypatch.setenv("DG_GEMM_LEAN", "1")
    assert lean_ran()
    monkeypatch.setenv("DG_GEMM_LEAN", "0")
    assert not lean_ran()
    monkeypatch.delenv("DG_GEMM_LEAN")
    assert lean_ran() == default_on


def _masked_case(groups: int, max_m: int, n: int, k: int):
    a, sfa, a_ref = zip(*(_a(max_m, k) for _ in range(groups)), strict=True)
    b, sfb, b_ref = _b(groups, n, k)
    return (torch.stack(a), torch.stack(sfa)), (b, sfb), torch.stack(a_ref), b_ref


def _check_masked_rows(
    d: torch.Tensor, counts: list[int], a_ref: torch.Tensor, b_ref: torch.Tensor, bound: float
) -> None:
    """Rows below each group's count against float64 (B as [G, N, K]); the rest left as NaN."""
    for g, rows in enumerate(counts):
        if rows:
            assert calc_diff(d[g, :rows], a_ref[g, :rows] @ b_ref[g].t()) < bound
        assert torch.isnan(d[g, rows:].float()).all()


@pytest.mark.parametrize("groups,expected,n,k", [(6, 20, 1024, 2048), (4, 300, 512, 1024), (32, 64, 256, 512)], ids=str)
def test_masked(groups: int, expected: int, n: int, k: int) -> None:
    max_m = 512
    a, b, a_ref, b_ref = _masked_case(groups, max_m, n, k)
    counts = [min(max_m, int(expected * f)) for f in torch.empty(groups).uniform_(0.3, 1.7).tolist()]
    counts[0] = 0
    counts[-1] = max_m
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected)
    _check_masked_rows(d, counts, a_ref, b_ref, 2e-5)


IDLE_MASKED_COUNTS = [0, 1, 64, 65, 129, 192, 193, 320]  # max_m 320: full, partial and empty waves


def _forced_masked(
    monkeypatch: pytest.MonkeyPatch, config: str
) -> tuple[str, bool, int, int, Callable[[], torch.Tensor]]:
    """Forces config ("BMxBN", or "bf16:BMxBN" for BF16 operands; a pair's ends in "ma" or "mb")
    and builds a masked problem for it: groups of IDLE_MASKED_COUNTS rows, N two tiles and 24
    columns, K 640.  Returns the tile, whether BF16, N, K, and run(), which checks D against
    float64 (the rows past each count left NaN) and returns it."""
    bf16 = config.startswith("bf16:")
    shape = config.removeprefix("bf16:")
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    block_n = int(re.match(r"\d+x(\d+)", shape).group(1))
    groups, max_m, n, k = len(IDLE_MASKED_COUNTS), 320, 2 * block_n + 24, 640
    masked_m = torch.tensor(IDLE_MASKED_COUNTS, dtype=torch.int32, device="cuda")
    if bf16:
        a, a_ref = _bf16(groups, max_m, k)
        b, b_ref = _bf16(groups, n, k)
    else:
        a, b, a_ref, b_ref = _masked_case(groups, max_m, n, k)

    def masked() -> torch.Tensor:
        d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        if bf16:
            deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 128)
        else:
            deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, 128)
        _check_masked_rows(d, IDLE_MASKED_COUNTS, a_ref, b_ref, 1e-5 if bf16 else 2e-5)
        return d

    return shape, bf16, n, k, masked


@pytest.mark.parametrize(
    "config",
    [
        "64x192",
        "128x192",
        "256x128",
        "bf16:64x192",
        "bf16:64x256",
        "bf16:128x128",
        "bf16:128x256",
        "bf16:128x128ma",
        "bf16:128x256mb",
    ],
)
def test_lean_masked_kernel_keeps_the_bits(
    config: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [lean kernels] in the masked kernels (on by default): groups of 0 to 320 rows, so tiles
    whose rows fill a slab (the TMA unit), part of one (registers) or none, and pairs whose second
    tile is empty, with idle waves skipped or not, give the bits of the kernel that runs without it
    (FP8: the plain masked kernel; BF16: the general kernel, or the plain multicast kernel for a
    pair) and leave the rows past each count unwritten; the profiler shows which kernel ran."""
    shape, bf16, _, _, masked = _forced_masked(monkeypatch, config)
    for skip in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_SKIP_IDLE_WAVES", skip)
        _same_bits_off_and_on(monkeypatch, "DG_GEMM_LEAN", masked)
    if shape.endswith(("ma", "mb")):
        _lean_kernel_ran(monkeypatch, masked, "multicast", default_on=True, plain="bf16_gemm_multicast_kernel")
    else:
        _lean_kernel_ran(monkeypatch, masked, "masked", default_on=True, plain="bf16_gemm_kernel" if bf16 else None)
    assert f"-> {shape} " in capfd.readouterr().err  # the forced tile ran


@pytest.mark.parametrize("groups", [40, 1100])
@pytest.mark.parametrize("zero_padding", [True, False])
def test_psum_with_many_groups(groups: int, zero_padding: bool) -> None:
    """A psum layout of many groups, as a tile's group search sees it: 40 groups of 0 to 296 rows,
    and 1100 groups of which only every 37th has rows (the rest empty, the last fifty too); each
    group's rows against float64 and free of NaN, the poisoned gaps zeroed or kept."""
    if groups == 40:
        sizes, n, k = [(g * 37) % 301 for g in range(groups)], 256, 512
    else:
        sizes, n, k = [0 if g % 37 or g > 1050 else 1 + (g * 53) % 250 for g in range(groups)], 128, 256
    _psum_poisoned(sizes, n, k)(zero_padding)


@pytest.mark.parametrize("schedule", ["general", "masked"])
@pytest.mark.parametrize("shape", FP8_SHAPES, ids=FP8_IDS)
def test_masked_every_shape(
    shape: GemmShape, schedule: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Every FP8 tile forced on a masked problem: an empty group, a one-row group, a full one,
    groups ending inside a tile, an N tail; on the general kernel and on the masked kernel
    (DG_GEMM_MASKED_SCHEDULE=1)."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape.config)
    monkeypatch.setenv("DG_GEMM_MASKED_SCHEDULE", "1" if schedule == "masked" else "0")
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    groups, max_m, n, k = 5, 320, 2 * shape.block_n + 24, 640
    a, b, a_ref, b_ref = _masked_case(groups, max_m, n, k)
    counts = [0, 1, 200, max_m, 129]
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, 128)
    _check_masked_rows(d, counts, a_ref, b_ref, 2e-5)
    assert shape.printed in capfd.readouterr().err  # the forced tile ran


# Note [idle waves]: tiles whose items miss some of a warpgroup's 64-row waves.  FP8: one wave
# per warpgroup (64 and 128 rows, the three-SFB-block 176), two (256); BF16: single CTAs and
# the masked multicast pairs.
IDLE_WAVE_CONFIGS = ["64x128", "128x128", "128x176", "128x192", "256x128", "bf16:128x256", "bf16:128x128ma"]


def _idle_and_compact_modes(monkeypatch: pytest.MonkeyPatch, run: Callable[[], torch.Tensor]) -> None:
    """run() with DG_GEMM_SKIP_IDLE_WAVES off and on (it checks its result against float64 and
    returns D): the skipped MMAs belong to rows that are never written, so D keeps its bits.  Each
    also with DG_GEMM_COMPACT_EPILOGUE=1 (Note [compact epilogue]): tiles whose slabs are all
    owned take the compact path, the others write_slab, and D keeps its bits.  And with
    DG_GEMM_SCALE_WARP=0 (Note [a warp for the scales], on by default in the FP8 masked and
    contiguous kernels): one producer warp copying everything gives the same bits."""
    outs = []
    modes = (("0", "0", "1"), ("1", "0", "1"), ("0", "1", "1"), ("1", "1", "1"), ("0", "0", "0"), ("1", "1", "0"))
    for skip, compact, scale_warp in modes:
        monkeypatch.setenv("DG_GEMM_SKIP_IDLE_WAVES", skip)
        monkeypatch.setenv("DG_GEMM_COMPACT_EPILOGUE", compact)
        monkeypatch.setenv("DG_GEMM_SCALE_WARP", scale_warp)
        outs.append(run())
    assert all(torch.equal(outs[0].view(torch.int16), out.view(torch.int16)) for out in outs[1:])


@pytest.mark.parametrize("config", IDLE_WAVE_CONFIGS)
def test_idle_waves_skipped_keep_the_bits(
    config: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    shape, bf16, n, k, masked = _forced_masked(monkeypatch, config)
    _idle_and_compact_modes(monkeypatch, masked)
    assert f"-> {shape} " in capfd.readouterr().err  # the forced tile ran
    if shape.endswith(("ma", "mb")):
        return  # multicast pairs serve dense and masked problems only
    # Contiguous per-row ids: groups of 1, 65 and 130 rows with padding (-1) after each, so
    # tiles hold a run in their first wave only, in their second only, or padding alone.
    sizes, pad = [1, 65, 0, 130], 70
    ids: list[int] = []
    for g, rows in enumerate(sizes):
        ids += [g] * rows + [-1] * pad
    layout = torch.tensor(ids, dtype=torch.int32, device="cuda")
    ids_t = layout.long()
    if bf16:
        a2, a2_ref = _bf16(len(ids), k)
        b2, b2_ref = _bf16(len(sizes), n, k)
    else:
        a2, sfa2, a2_ref = _a(len(ids), k)
        b2, sfb2, b2_ref = _b(len(sizes), n, k)

    def contiguous() -> torch.Tensor:
        d = torch.full((len(ids), n), float("nan"), device="cuda", dtype=torch.bfloat16)
        if bf16:
            deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a2, b2, d, layout)
        else:
            deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a2, sfa2), (b2, sfb2), d, layout)
        for g in range(len(sizes)):
            rows = ids_t == g
            if rows.any():
                assert calc_diff(d[rows], a2_ref[rows] @ b2_ref[g].t()) < (1e-5 if bf16 else 2e-5)
        assert (d[ids_t < 0].float() == 0).all()
        return d

    _idle_and_compact_modes(monkeypatch, contiguous)
    assert f"-> {shape} " in capfd.readouterr().err


def _replay_masked_with_new_sizes(
    a: tuple[torch.Tensor, torch.Tensor],
    b: tuple[torch.Tensor, torch.Tensor],
    a_ref: torch.Tensor,
    b_ref: torch.Tensor,
    masked_m: torch.Tensor,
    expected: int,
) -> None:
    """The masked FP8 GEMM of `a` and `b` captured in a CUDA graph, then replayed three times with
    masked_m rewritten in place (random sizes up to max_m) and D poisoned: each replay's rows
    against float64, the rest left as NaN."""
    groups, max_m, n = a[0].size(0), a[0].size(1), b[0].size(1)
    d = torch.zeros(groups, max_m, n, device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected)
    for _ in range(3):
        counts = torch.randint(0, max_m + 1, (groups,)).tolist()  # from the printed seed
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        _check_masked_rows(d, counts, a_ref, b_ref, 2e-5)


@pytest.mark.parametrize("config", ["64x128", "128x128", "128x192", "256x128"])
def test_masked_kernel_same_bits_and_graph_replay(config: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The masked kernel (DG_GEMM_MASKED_SCHEDULE=1: its consumers walk the groups' tiles from
    masked_m on the device) gives the general kernel's bits, with idle waves kept and skipped, and
    replays in a CUDA graph with the group sizes rewritten in place."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", config)
    block_n = int(config.split("x")[1])
    groups, max_m, n, k = 6, 320, 2 * block_n + 24, 512
    a, b, a_ref, b_ref = _masked_case(groups, max_m, n, k)
    counts = [0, 1, 129, max_m, 65, 200]
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    outs = []
    for schedule, skip in (("0", "0"), ("1", "0"), ("1", "1")):
        monkeypatch.setenv("DG_GEMM_MASKED_SCHEDULE", schedule)
        monkeypatch.setenv("DG_GEMM_SKIP_IDLE_WAVES", skip)
        d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, 128)
        _check_masked_rows(d, counts, a_ref, b_ref, 2e-5)
        outs.append(d)
    assert all(torch.equal(o.view(torch.int16), outs[0].view(torch.int16)) for o in outs[1:])
    _replay_masked_with_new_sizes(a, b, a_ref, b_ref, masked_m, 128)


def test_grouped_bitwise_deterministic() -> None:
    a, b, _, _ = _masked_case(8, 256, 512, 1024)
    masked_m = torch.tensor([256, 10, 0, 100, 256, 33, 129, 200], dtype=torch.int32, device="cuda")
    d = torch.zeros(8, 256, 512, device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, 128)
    first = d.clone()
    for _ in range(20):
        deep_gemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, 128)
        assert torch.equal(d.view(torch.int16), first.view(torch.int16))


def test_graph_replay_with_new_group_sizes() -> None:
    groups, max_m, n, k = 6, 256, 512, 768
    a, b, a_ref, b_ref = _masked_case(groups, max_m, n, k)
    _replay_masked_with_new_sizes(a, b, a_ref, b_ref, torch.zeros(groups, dtype=torch.int32, device="cuda"), 64)
    # The contiguous psum layout, ends changed between replays.
    sizes = [128, 256, 64]
    m = 640
    a2, sfa2, a2_ref = _a(m, k)
    b2, sfb2, b2_ref = _b(3, n, k)
    ends = torch.tensor(_psum(sizes), dtype=torch.int32, device="cuda")
    d2 = torch.zeros(m, n, device="cuda", dtype=torch.bfloat16)
    kwargs = {"use_psum_layout": True}
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a2, sfa2), (b2, sfb2), d2, ends, **kwargs)
    graph2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph2):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a2, sfa2), (b2, sfb2), d2, ends, **kwargs)
    for sizes in ([100, 200, 50], [0, 300, 128], [256, 0, 1]):
        ends.copy_(torch.tensor(_psum(sizes), dtype=torch.int32))
        graph2.replay()
        torch.cuda.synchronize()
        prev = 0
        for g, end in enumerate(_psum(sizes)):
            start = (prev + ALIGN - 1) // ALIGN * ALIGN
            if end > start:
                assert calc_diff(d2[start:end], a2_ref[start:end] @ b2_ref[g].t()) < 2e-5
            prev = end


# ---- BF16 ---------------------------------------------------------------------------------


def _bf16(*shape: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(*shape, device="cuda").to(torch.bfloat16)
    return x, x.double()


def _check_bf16_contiguous(run: Callable[..., None], b_ref: torch.Tensor, k: int) -> None:
    """`run(a, d, layout, **kwargs)` calls an M-grouped BF16 contiguous op whose group g multiplies
    by b_ref[g] ([K, N], float64): per-row ids with padding rows (ids -1 and >= G, zeroed without
    ensure_zero_padding), then psum ends with zero padding, each against float64."""
    sizes = [256, 0, 77, 384]
    n = b_ref.shape[2]
    ids: list[int] = []
    for g, rows in enumerate(sizes):
        ids += [g] * rows + [-1, len(sizes) + 5, -1]
    a, a_ref = _bf16(len(ids), k)
    d = torch.full((len(ids), n), float("nan"), device="cuda", dtype=torch.bfloat16)
    run(a, d, torch.tensor(ids, dtype=torch.int32, device="cuda"), ensure_zero_padding=False)
    ids_t = torch.tensor(ids, device="cuda")
    for g in range(len(sizes)):
        rows = ids_t == g
        if rows.any():
            assert calc_diff(d[rows], a_ref[rows] @ b_ref[g]) < 1e-5
    assert (d[(ids_t < 0) | (ids_t >= len(sizes))].float() == 0).all()  # rows of no group: exactly zero
    ends = _psum(sizes)
    m = (ends[-1] + ALIGN - 1) // ALIGN * ALIGN
    a, a_ref = _bf16(m, k)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    run(a, d, torch.tensor(ends, dtype=torch.int32, device="cuda"), use_psum_layout=True)
    prev = 0
    for g, end in enumerate(ends):
        start = (prev + ALIGN - 1) // ALIGN * ALIGN
        if g > 0:
            assert (d[prev:start].float() == 0).all()
        if end > start:
            assert calc_diff(d[start:end], a_ref[start:end] @ b_ref[g]) < 1e-5
        prev = end


def test_bf16_contiguous_ids_and_psum() -> None:
    n, k = 640, 1000  # K off the 64-wide block
    b, b_ref = _bf16(4, n, k)
    _check_bf16_contiguous(
        lambda a, d, layout, **kw: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, **kw),
        b_ref.transpose(1, 2),
        k,
    )


def test_bf16_nn_contiguous_and_masked() -> None:
    """The NN forms (B given [G, K, N], N contiguous: an MN-major B on the native kernel):
    per-row ids with padding, psum ends with zero padding, and masked, against float64."""
    n, k = 640, 1000  # K off the 64-wide block: the tail must not reach the next group's rows
    b_kn, b_kn_ref = _bf16(4, k, n)
    _check_bf16_contiguous(
        lambda a, d, layout, **kw: deep_gemm.m_grouped_bf16_gemm_nn_contiguous(a, b_kn, d, layout, **kw), b_kn_ref, k
    )
    # Masked, B an MN-major view.
    groups, max_m = 4, 320
    a3, a3_ref = _bf16(groups, max_m, k)
    counts = [0, 1, 200, 129]
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d3 = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a3, b_kn.transpose(1, 2), d3, masked_m, 128)
    for g, rows in enumerate(counts):
        if rows:
            assert calc_diff(d3[g, :rows], a3_ref[g, :rows] @ b_kn_ref[g]) < 1e-5
        assert torch.isnan(d3[g, rows:].float()).all()


def _bf16_shapes() -> list[str]:
    return [s.config for s in compiled_gemm_shapes() if s.bf16 and s.majors == 0 and s.split == 1 and not s.cast]


@pytest.mark.parametrize("shape", _bf16_shapes())
def test_bf16_contiguous_every_shape(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every BF16 tile forced on the NT contiguous layouts (ids with padding, psum), and on the
    NN form where the tile has an MN-major-B kernel."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape)
    n, k = 2 * int(shape.split("x")[1]) + 24, 448
    b, b_ref = _bf16(4, n, k)
    _check_bf16_contiguous(
        lambda a, d, layout, **kw: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, **kw),
        b_ref.transpose(1, 2),
        k,
    )
    if any(s.config == shape and s.bf16 and s.majors == 2 for s in compiled_gemm_shapes()):
        b_kn, b_kn_ref = _bf16(4, k, n)
        _check_bf16_contiguous(
            lambda a, d, layout, **kw: deep_gemm.m_grouped_bf16_gemm_nn_contiguous(a, b_kn, d, layout, **kw),
            b_kn_ref,
            k,
        )


def _bf16_masked_shapes() -> list[str]:
    # The multicast pairs (dense and masked problems) too.
    return _bf16_shapes() + [s.config for s in compiled_gemm_shapes() if s.cast]


@pytest.mark.parametrize("shape", _bf16_masked_shapes())
def test_bf16_masked_every_shape_in_a_graph(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape)
    block_n = int(re.match(r"\d+x(\d+)", shape).group(1))  # (a pair shape ends in "ma" or "mb")
    groups, max_m, n, k = 5, 320, 2 * block_n + 24, 704
    a, a_ref = _bf16(groups, max_m, k)
    b, b_ref = _bf16(groups, n, k)
    counts = [0, 1, 200, max_m, 129]
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 128)
    _check_masked_rows(d, counts, a_ref, b_ref, 1e-5)
    eager = d.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 128)
    d.copy_(torch.full_like(d, float("nan")))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d.view(torch.int16), eager.view(torch.int16))


# ---- the uniform-schedule kernels against the general kernel --------------------------------

# Runs in a fresh process (DG_GEMM_GENERAL_SCHEDULE is read once per process): fixed-seed inputs
# through dense FP8 and BF16, and M-grouped contiguous FP8 and BF16 (ids with padding and
# several groups per tile, psum with gaps), every output saved to argv[1].
_SCHEDULE_SCRIPT = r"""
import sys
import torch
import deep_gemm
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

torch.manual_seed(7)
out = {}
m, n, k = 517, 776, 1408
a, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), use_ue8m0=False)
bs = [per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False) for _ in range(3)]
b, sfb = torch.stack([q for q, _ in bs]), torch.stack([s for _, s in bs])
d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
deep_gemm.fp8_gemm_nt((a, sfa), (b[0], sfb[0]), d)
out["fp8_dense"] = d.clone()
ids = torch.tensor([0] * 130 + [-1] * 3 + [2] * 250 + [1] * 90 + [-1] * 44, dtype=torch.int32, device="cuda")
deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ids)
out["fp8_ids"] = d.clone()
ends = torch.tensor([100, 300, 500], dtype=torch.int32, device="cuda")
d.zero_()
deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ends, use_psum_layout=True)
out["fp8_psum"] = d.clone()
x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
w = torch.randn(3, n, k, device="cuda").to(torch.bfloat16)
deep_gemm.bf16_gemm_nt(x, w[1], d)
out["bf16_dense"] = d.clone()
deep_gemm.m_grouped_bf16_gemm_nt_contiguous(x, w, d, ids)
out["bf16_ids"] = d.clone()
torch.save({name: t.cpu() for name, t in out.items()}, sys.argv[1])
"""


def test_uniform_schedules_match_the_general_kernel(tmp_path: Path) -> None:
    results = []
    for general in ("0", "1"):
        path = tmp_path / f"general{general}.pt"
        env = dict(os.environ, DG_GEMM_GENERAL_SCHEDULE=general, DG_BF16_GEMM_NATIVE="1")
        env.pop("DG_SM90_GEMM_CONFIG", None)
        subprocess.run([sys.executable, "-c", _SCHEDULE_SCRIPT, str(path)], env=env, check=True, timeout=300)
        results.append(torch.load(path))
    uniform, general_kernel = results
    assert uniform.keys() == general_kernel.keys()
    for name, value in uniform.items():
        assert not torch.isnan(value.float()).any(), name
        assert value.abs().sum() > 0, name
        assert torch.equal(value.view(torch.int16), general_kernel[name].view(torch.int16)), name
