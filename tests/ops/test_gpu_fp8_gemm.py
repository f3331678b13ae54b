"""Dense FP8 GEMMs on the GPU (the native sm90a kernel and the paths around it).

Against a float64 product of the dequantised operands, on fresh random inputs: every
layout (NT runs the native kernel; NN/TN/TT hand it transposed views), M from 1 to 4096,
the 18 forward shapes, upstream's Dgrad and Wgrad shapes, C accumulated into a float32 D,
K tails and N tails.  Then bitwise determinism over 20 calls, and CUDA-graph capture of
every kernel shape the heuristic can pick.  Skipped without a GPU.
"""

from __future__ import annotations

import math
import os

import pytest
import torch

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
from tests.support.kernels import GemmShape, compiled_gemm_shapes, printed_layout
from tests.support.operands import spread_blocks
from tests.support.profiling import cuda_kernel_names

pytestmark = pytest.mark.gpu

WEIGHTS = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]


def _compiled_shapes() -> list[GemmShape]:
    return [s for s in compiled_gemm_shapes() if not s.bf16]


def _operands(m: int, n: int, k: int, per_row_b: bool) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    # Scales that differ by up to 256x between blocks (rows of A; 128 x 128 blocks, or rows, of
    # B): a scale applied to the wrong row, column or K block shows in calc_diff.
    x = spread_blocks(torch.randn(m, k, device="cuda"), 1)
    w = spread_blocks(torch.randn(n, k, device="cuda"), 1 if per_row_b else 128)
    a, sfa = per_token_cast_to_fp8(x, use_ue8m0=False)
    b, sfb = (per_token_cast_to_fp8 if per_row_b else per_block_cast_to_fp8)(w, use_ue8m0=False)
    ga = sfa.double().repeat_interleave(128, 1)[:, :k]
    if per_row_b:
        gb = sfb.double().repeat_interleave(128, 1)[:, :k]
    else:
        gb = sfb.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:n, :k]
    ref = (a.double() * ga) @ (b.double() * gb).t()
    return (a, sfa, b, sfb), ref


def _run(layout: str, ops: tuple[torch.Tensor, ...], d: torch.Tensor, c: torch.Tensor | None, recipe) -> None:
    a, sfa, b, sfb = ops
    if layout in ("tn", "tt"):  # A given as [K, M] (and its scales as [K / 128, M])
        a, sfa = a.t().contiguous(), sfa.t().contiguous()
    if layout in ("nn", "tn"):  # B given as [K, N]
        b, sfb = b.t().contiguous(), sfb.t().contiguous()
    getattr(deep_gemm, f"fp8_gemm_{layout}")((a, sfa), (b, sfb), d, c=c, recipe=recipe)


@pytest.mark.parametrize("layout", ["nt", "nn", "tn", "tt"])
@pytest.mark.parametrize("m", [1, 7, 64, 128, 4096])
def test_layouts_and_m(layout: str, m: int) -> None:
    n, k = 576, 2112  # N and K both off the tile grid
    ops, ref = _operands(m, n, k, per_row_b=False)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run(layout, ops, d, None, None)
    assert calc_diff(d, ref) < 1e-3


@pytest.mark.parametrize("m", [64, 128, 4096])
@pytest.mark.parametrize("nk", WEIGHTS, ids=[f"{n}x{k}" for n, k in WEIGHTS])
def test_forward_shapes(m: int, nk: tuple[int, int]) -> None:
    n, k = nk
    ops, ref = _operands(m, n, k, per_row_b=False)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d, None, None)
    assert calc_diff(d, ref) < 1e-3


BACKWARD = [(n, k) for n, k in [*WEIGHTS, (576, 7168)]]


@pytest.mark.parametrize("nk", BACKWARD, ids=[f"{n}x{k}" for n, k in BACKWARD])
def test_dgrad_and_wgrad_shapes(nk: tuple[int, int]) -> None:
    n, k = nk
    # Dgrad: m 4096, n and k swapped, 128x128 SFB, bf16 D.
    ops, ref = _operands(4096, k, n, per_row_b=False)
    d = torch.full((4096, k), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d, None, None)
    assert calc_diff(d, ref) < 1e-3
    # Wgrad: per-row SFB (recipe 1, 1, 128); float32 D accumulating C = D, and bf16 D.
    ops, ref = _operands(n, 4096, k, per_row_b=True)
    c0 = torch.randn(n, 4096, device="cuda")
    d = c0.clone()
    _run("nt", ops, d, d, (1, 1, 128))
    assert calc_diff(d, ref + c0.double()) < 1e-3
    d16 = torch.full((n, 4096), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d16, None, (1, 1, 128))
    assert calc_diff(d16, ref) < 1e-3


@pytest.mark.parametrize("out_dtype", [torch.float, torch.bfloat16])
@pytest.mark.parametrize("separate_c", [False, True])
def test_c_accumulation(out_dtype: torch.dtype, separate_c: bool) -> None:
    m, n, k = 300, 200, 650
    ops, ref = _operands(m, n, k, per_row_b=False)
    c = torch.randn(m, n, device="cuda").to(out_dtype)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype) if separate_c else c.clone()
    _run("nt", ops, d, c if separate_c else d, None)
    assert calc_diff(d, ref + c.double()) < 1e-3


@pytest.mark.parametrize("k", [16, 80, 128, 200, 2112])
def test_k_tails(k: int) -> None:
    ops, ref = _operands(129, 136, k, per_row_b=False)
    d = torch.full((129, 136), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d, None, None)
    assert calc_diff(d, ref) < 1e-3


def test_strided_scales_and_outputs() -> None:
    """SFA in either major order, and a D that is a column slice of a wider buffer."""
    m, n, k = 256, 384, 1024
    (a, sfa, b, sfb), ref = _operands(m, n, k, per_row_b=False)
    wide = torch.full((m, n + 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    d = wide[:, 32 : 32 + n]
    deep_gemm.fp8_gemm_nt((a, deep_gemm.get_mn_major_tma_aligned_tensor(sfa)), (b, sfb), d)
    assert calc_diff(d, ref) < 1e-3
    assert torch.isnan(wide[:, :32].float()).all() and torch.isnan(wide[:, 32 + n :].float()).all()


@pytest.mark.parametrize("mnk", [(1, 2112, 7168), (128, 7168, 2048), (4096, 4096, 7168)])
def test_bitwise_deterministic(mnk: tuple[int, int, int]) -> None:
    m, n, k = mnk
    (a, sfa, b, sfb), _ = _operands(m, n, k, per_row_b=False)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    first = d.clone()
    for _ in range(20):
        d.fill_(float("nan"))
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        assert torch.equal(d.view(torch.int16), first.view(torch.int16))


SHAPES = _compiled_shapes()


SHAPE_IDS = [f"{s.config}-{'row' if s.sfb_per_row else 'blk'}" for s in SHAPES]


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_every_kernel_shape_in_a_cuda_graph(
    shape: GemmShape, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Each compiled shape (forced through DG_SM90_GEMM_CONFIG): it ran, it is right, and a graph
    replay is bitwise."""
    cfg, per_row, bm, bn = shape.config, shape.sfb_per_row, shape.block_m, shape.block_n
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", cfg)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    # Several tiles per CTA's share, ragged edges, and a tile at every offset from the 128-wide
    # SFB blocks that its width allows (BLOCK_N 144: eight).
    m, n, k = 4 * bm - 8, max(6, 128 // math.gcd(bn, 128)) * bn - 8, 1152
    ops, ref = _operands(m, n, k, per_row_b=per_row)
    recipe = (1, 1, 128) if per_row else None
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d, None, recipe)
    assert calc_diff(d, ref) < 2e-5
    assert shape.printed in capfd.readouterr().err  # the forced shape ran
    eager = d.clone()
    graph = torch.cuda.CUDAGraph()
    d.fill_(float("nan"))
    with torch.cuda.graph(graph):
        _run("nt", ops, d, None, recipe)
    for _ in range(2):
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(d.view(torch.int16), eager.view(torch.int16))
    assert os.environ["DG_SM90_GEMM_CONFIG"] == cfg


@pytest.mark.parametrize("c_form", ["c_is_d", "separate_c", "bf16_c"])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_every_kernel_shape_accumulates(
    shape: GemmShape, c_form: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Each compiled shape, forced: D = C + A B^T through every output path, with a K tail.  A
    per-row shape with a float32 D is the Wgrad form, which the one-K-group route runs on the
    uniform K-grouped kernel (test_per_row_shapes_accumulate_float32_on_the_general_kernel takes
    the route off)."""
    cfg, per_row, bm, bn = shape.config, shape.sfb_per_row, shape.block_m, shape.block_n
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", cfg)
    monkeypatch.setenv("DG_GEMM_ROW_AS_K_GROUP", "1")
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 2 * bm + 24, 3 * bn - 16, 720
    ops, ref = _operands(m, n, k, per_row_b=per_row)
    recipe = (1, 1, 128) if per_row else None
    dtype = torch.bfloat16 if c_form == "bf16_c" else torch.float
    c = torch.randn(m, n, device="cuda").to(dtype)
    if c_form == "c_is_d":
        d = c.clone()
        _run("nt", ops, d, d, recipe)
    else:
        d = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
        _run("nt", ops, d, c, recipe)
    assert calc_diff(d, ref + c.double()) < 2e-5
    printed = capfd.readouterr().err
    # The K-grouped problem of one group, which the route makes of the Wgrad form.
    assert (printed_layout("kKGrouped") in printed) == (per_row and dtype == torch.float), printed


@pytest.mark.parametrize("c_form", ["c_is_d", "separate_c"])
@pytest.mark.parametrize("shape", [s for s in SHAPES if s.sfb_per_row], ids=lambda s: s.config)
def test_per_row_shapes_accumulate_float32_on_the_general_kernel(
    shape: GemmShape, c_form: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Each per-row tile, forced, with a float32 D += A B^T (the Wgrad form) on the general kernel
    (the one-K-group route off; with it on, these problems take the uniform K-grouped kernel, which
    test_every_kernel_shape_accumulates covers): its float32 epilogue, the TMA reduce-add included
    (Note [float32 in 8-column boxes] for 128x136), partial tiles, a K tail."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape.config)
    monkeypatch.setenv("DG_GEMM_ROW_AS_K_GROUP", "0")
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    bm, bn = shape.block_m, shape.block_n
    m, n, k = 3 * bm - 40, 3 * bn - 24, 1040
    ops, ref = _operands(m, n, k, per_row_b=True)
    c = torch.randn(m, n, device="cuda")
    if c_form == "c_is_d":
        d = c.clone()
        _run("nt", ops, d, d, (1, 1, 128))
    else:
        d = torch.full((m, n), float("nan"), device="cuda")
        _run("nt", ops, d, c, (1, 1, 128))
    assert calc_diff(d, ref + c.double()) < 2e-5
    printed = capfd.readouterr().err
    assert shape.printed in printed
    assert printed_layout("kDense") in printed, printed  # the problem itself, not the one-K-group route


def _same_bits_under_switch(
    monkeypatch: pytest.MonkeyPatch, name: str, values: tuple[str, ...], ops, c, expected: torch.Tensor
) -> None:
    """The dense op (bf16 D) once per value of the environment switch `name`: each result against
    `expected`, and every result's bits equal to the first's."""
    outs = []
    for value in values:
        monkeypatch.setenv(name, value)
        d = torch.full(expected.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        _run("nt", ops, d, c, None)
        assert calc_diff(d, expected) < 2e-5
        outs.append(d)
    assert all(torch.equal(out.view(torch.int16), outs[0].view(torch.int16)) for out in outs[1:])


@pytest.mark.parametrize("c_form", ["none", "bf16_c"])
def test_slab_wait_keeps_the_bits(c_form: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture) -> None:
    """Note [slab waits] (DG_GEMM_SLAB_WAIT=1): 256-row tiles whose second slab waits only for its
    own region's store give the same bits, dense (a partial last tile, whose second slabs take the
    register path or none) and masked (the general kernel: groups ending in either slab)."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", "256x128")
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 5 * 256 - 72, 3 * 128 + 40, 896
    ops, ref = _operands(m, n, k, per_row_b=False)
    c = torch.randn(m, n, device="cuda").bfloat16() if c_form == "bf16_c" else None
    expected = ref + (c.double() if c is not None else 0.0)
    _same_bits_under_switch(monkeypatch, "DG_GEMM_SLAB_WAIT", ("0", "1"), ops, c, expected)
    assert "-> 256x128 " in capfd.readouterr().err  # the forced tile ran
    # Masked: 256-row tiles of groups of 1, 100, 129, 200 and 256 rows.
    counts = [1, 100, 129, 200, 256]
    groups, max_m = len(counts), 256
    x = spread_blocks(torch.randn(groups * max_m, k, device="cuda"), 1)
    w = spread_blocks(torch.randn(groups * n, k, device="cuda"), 128)
    a, sfa = per_token_cast_to_fp8(x, use_ue8m0=False)
    b_parts = [per_block_cast_to_fp8(w[g * n : (g + 1) * n], use_ue8m0=False) for g in range(groups)]
    b = torch.stack([bp[0] for bp in b_parts])
    sfb = torch.stack([bp[1] for bp in b_parts])
    a3, sfa3 = a.view(groups, max_m, k), sfa.view(groups, max_m, -1)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    masked_outs = []
    for wait in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_SLAB_WAIT", wait)
        d = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.m_grouped_fp8_gemm_nt_masked((a3, sfa3), (b, sfb), d, masked_m, 192)
        for g, rows in enumerate(counts):
            ga = sfa3[g, :rows].double().repeat_interleave(128, 1)[:, :k]
            gb = sfb[g].double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:n, :k]
            want = (a3[g, :rows].double() * ga) @ (b[g].double() * gb).t()
            assert calc_diff(d[g, :rows], want) < 2e-5
            assert torch.isnan(d[g, rows:].float()).all()  # rows past the count are not written
        masked_outs.append(d)
    for g, rows in enumerate(counts):
        assert torch.equal(masked_outs[0][g, :rows].view(torch.int16), masked_outs[1][g, :rows].view(torch.int16))


@pytest.mark.parametrize("tile", ["128x128", "128x192", "256x128"])
def test_staggered_warpgroups_keep_the_bits(
    tile: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [staggered warpgroups] (DG_GEMM_STAGGER_CYCLES): a late second math warpgroup changes
    the timing only; forced dense tiles with several tiles per CTA give the same bits."""
    bm, bn = (int(v) for v in tile.split("x"))
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 40 * bm + 40, 8 * bn - 24, 1280
    ops, ref = _operands(m, n, k, per_row_b=False)
    _same_bits_under_switch(monkeypatch, "DG_GEMM_STAGGER_CYCLES", ("0", "3000"), ops, None, ref)
    assert f"-> {tile} " in capfd.readouterr().err  # the forced tile ran


@pytest.mark.parametrize("tile", ["64x128", "128x192", "256x128"])
def test_band_width_keeps_the_bits(tile: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture) -> None:
    """DG_GEMM_SWIZZLE (the tile order's band width, read on every launch) changes which CTA takes
    which tile, never an element's sums: forced dense tiles, a grid of 13 x 11 tiles with partial last
    ones, the same bits at widths 8, 1, 3, 16 and 64; a width outside 1..64 falls back to 8."""
    bm, bn = (int(v) for v in tile.split("x"))
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 13 * bm - 40, 11 * bn - 24, 640
    ops, ref = _operands(m, n, k, per_row_b=False)
    widths = ("8", "1", "3", "16", "64", "0", "65")
    _same_bits_under_switch(monkeypatch, "DG_GEMM_SWIZZLE", widths, ops, None, ref)
    err = capfd.readouterr().err
    assert f"-> {tile} " in err  # the forced tile ran
    printed = [line.rsplit("bands=", 1)[1].strip() for line in err.splitlines() if "bands=" in line]
    assert printed[-len(widths) :] == ["8", "1", "3", "16", "64", "8", "8"]


@pytest.mark.parametrize("c_form", ["none", "bf16_c"])
@pytest.mark.parametrize("tile", ["64x128", "128x128", "128x192", "256x128"])
def test_stmatrix_epilogue_keeps_the_bits(
    tile: str, c_form: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [stmatrix epilogue] (DG_GEMM_STSM=1): the bf16 tile written to shared memory with
    stmatrix lands where the 4-byte stores put it. Forced dense tiles with partial last tiles in
    both directions (their slabs take the register path), bf16 C added or not: the same bits."""
    bm, bn = (int(v) for v in tile.split("x"))
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 7 * bm - 40, 5 * bn - 24, 1152
    ops, ref = _operands(m, n, k, per_row_b=False)
    c = torch.randn(m, n, device="cuda").bfloat16() if c_form == "bf16_c" else None
    expected = ref + (c.double() if c is not None else 0.0)
    _same_bits_under_switch(monkeypatch, "DG_GEMM_STSM", ("0", "1"), ops, c, expected)
    assert f"-> {tile} " in capfd.readouterr().err  # the forced tile ran


@pytest.mark.parametrize("tile", ["64x32", "64x128", "128x128", "128x176", "128x192", "256x128"])
def test_lean_dense_kernel_keeps_the_bits(
    tile: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [lean kernels] (DG_GEMM_LEAN, on by default here): the dense kernel compiled for bf16 D with no
    C writes the bits the plain one writes, with partial last tiles in both directions (a 256-row
    tile's empty second slabs write nothing), stmatrix epilogue off and on; the profiler shows
    which kernel ran: the lean one for bf16 D without C, the plain one with a bf16 C or a float32 D."""
    bm, bn = (int(v) for v in tile.split("x"))
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 5 * bm - 200 if bm == 256 else 5 * bm - 40, 4 * bn - 24, 1408
    ops, ref = _operands(m, n, k, per_row_b=False)
    for stsm in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_STSM", stsm)
        _same_bits_under_switch(monkeypatch, "DG_GEMM_LEAN", ("0", "1"), ops, None, ref)
    assert f"-> {tile} " in capfd.readouterr().err  # the forced tile ran

    def kernels(d: torch.Tensor, c: torch.Tensor | None) -> set[str]:
        return {name for name in cuda_kernel_names(lambda: _run("nt", ops, d, c, None)) if "fp8_gemm" in name}

    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    monkeypatch.setenv("DG_GEMM_LEAN", "0")
    names = kernels(d, None)
    assert names and not any("lean" in name for name in names)
    monkeypatch.delenv("DG_GEMM_LEAN")  # on by default for dense problems
    assert any("dense_lean_kernel" in name for name in kernels(d, None))
    assert calc_diff(d, ref) < 2e-5
    c = torch.randn(m, n, device="cuda").bfloat16()
    names = kernels(d, c)
    assert names and not any("lean" in name for name in names)
    assert calc_diff(d, ref + c.double()) < 2e-5
    d32 = torch.empty(m, n, device="cuda", dtype=torch.float32)
    names = kernels(d32, None)
    assert names and not any("lean" in name for name in names)
    assert calc_diff(d32, ref) < 2e-5


@pytest.mark.parametrize("c_form", ["none", "bf16_c"])
@pytest.mark.parametrize("tile", ["64x128", "128x192", "256x128"])
def test_compact_epilogue_keeps_the_bits(
    tile: str, c_form: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [compact epilogue] (DG_GEMM_COMPACT_EPILOGUE=1): the common tile's own path writes
    what write_slab writes. Forced dense tiles, partial last tiles in both directions (a 256-row
    tile whose second slabs are empty takes write_slab), bf16 C (write_slab throughout), with the
    stmatrix epilogue off and on: the same bits."""
    bm, bn = (int(v) for v in tile.split("x"))
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    m, n, k = 6 * bm - 200 if bm == 256 else 6 * bm - 40, 5 * bn - 24, 1152
    ops, ref = _operands(m, n, k, per_row_b=False)
    c = torch.randn(m, n, device="cuda").bfloat16() if c_form == "bf16_c" else None
    expected = ref + (c.double() if c is not None else 0.0)
    for stsm in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_STSM", stsm)
        _same_bits_under_switch(monkeypatch, "DG_GEMM_COMPACT_EPILOGUE", ("0", "1"), ops, c, expected)
    assert f"-> {tile} " in capfd.readouterr().err  # the forced tile ran


@pytest.mark.parametrize(
    ("tile", "m", "n", "k"),
    [
        ("64x32", 6 * 64 - 5, 5 * 32 - 8, 1472),
        ("64x64", 1, 7 * 64 + 3, 7168),
        ("64x128", 3 * 64 + 7, 3 * 128 - 24, 1408),
        ("128x128", 5 * 128 - 9, 4 * 128 + 40, 896),
        ("128x176", 3 * 128 - 1, 4 * 176 - 16, 2112),
        ("128x192", 2 * 128 + 9, 3 * 192 - 40, 1536),
        ("256x128", 5 * 256 - 72, 3 * 128 + 40, 896),
        ("64x32s2", 2 * 64 - 3, 6 * 32 + 8, 2112),
        ("128x64s2", 128 + 17, 3 * 64 - 8, 7168),
    ],
)
def test_scale_warp_keeps_the_bits(
    tile: str, m: int, n: int, k: int, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    """Note [a warp for the scales] (DG_GEMM_SCALE_WARP=1): the FP8 dense kernels with each stage's
    scales copied by a second producer warp give the same bits as with one warp, on forced tiles
    of both kernel forms (one CTA per tile, and split K across a cluster), with partial tiles in M
    and N, a K tail (k = 1472, 1408, 2112: 11.5, 11 and 16.5 blocks) and m = 1."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    ops, ref = _operands(m, n, k, per_row_b=False)
    _same_bits_under_switch(monkeypatch, "DG_GEMM_SCALE_WARP", ("0", "1"), ops, None, ref)
    bm_bn, _, split = tile.partition("s")
    assert f"-> {bm_bn} split={split or 1} " in capfd.readouterr().err  # the forced tile ran


def test_scale_warp_keeps_the_bits_with_scales_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with B scaled per row (1 x 128 blocks), whose dense kernels copy up to a scale per
    tile column each stage, and an accumulating c into a float32 d."""
    m, n, k = 200, 300, 1472
    ops, ref = _operands(m, n, k, per_row_b=True)
    c = torch.randn(m, n, device="cuda")
    outs = []
    for value in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_SCALE_WARP", value)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
        _run("nt", ops, d, c, (1, 1, 128))
        assert calc_diff(d, ref + c.double()) < 2e-5
        outs.append(d)
    assert torch.equal(outs[0].view(torch.int32), outs[1].view(torch.int32))


@pytest.mark.parametrize(
    ("tile", "m", "n", "k", "default_hints"),
    [
        (None, 64, 4096, 7168, 4),  # the heuristic's one-wave decode tile: B evict_first
        ("64x32s2", 2 * 64 - 3, 6 * 32 + 8, 2112, 4),  # split K, one wave of clusters
        ("256x128", 12 * 256 - 72, 12 * 128 - 24, 512, 0),  # 144 tiles on 132 CTAs: no hint
    ],
)
def test_l2_hints_keep_the_bits(
    tile: str | None,
    m: int,
    n: int,
    k: int,
    default_hints: int,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture,
) -> None:
    """Note [L2 policies] (DG_GEMM_L2_HINTS, read on every launch): the operands' L2 eviction
    priorities (and D's stores') move lines in L2, never a sum. The heuristic tags B evict_first
    exactly where every tile runs at once; each forced setting of the three pairs of bits (none,
    evict_first, evict_last) gives the default's bits, with partial tiles in M and N and a K tail
    (2112: 16.5 blocks)."""
    if tile is not None:
        monkeypatch.setenv("DG_SM90_GEMM_CONFIG", tile)
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    monkeypatch.delenv("DG_GEMM_L2_HINTS", raising=False)
    ops, ref = _operands(m, n, k, per_row_b=False)
    default = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, default, None, None)
    assert calc_diff(default, ref) < 2e-5
    values = ("0", "4", "1", "5", "6", "9", "16", "36", "42", "10")
    _same_bits_under_switch(monkeypatch, "DG_GEMM_L2_HINTS", values, ops, None, ref)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, d, None, None)  # (the last value, 10, still set)
    assert torch.equal(d.view(torch.int16), default.view(torch.int16))
    printed = [line.split(" l2=", 1)[1].split()[0] for line in capfd.readouterr().err.splitlines() if " l2=" in line]
    assert printed[-len(values) - 2 :] == [str(default_hints), *values, "10"]


SPLIT_SHAPES = [s for s in SHAPES if s.split > 1]


@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=[s.config for s in SPLIT_SHAPES])
@pytest.mark.parametrize("k", [512, 1408, 7168 + 80])
def test_split_k_clusters(shape: GemmShape, k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Split-K shapes, forced: more tiles than clusters (each CTA's partial buffer is reused),
    one K block per CTA, uneven shares and a K tail; C accumulated into a float32 D; 20 calls
    bitwise."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape.config)
    m, n = 20 * shape.block_m - 3, 9 * shape.block_n + 8  # 180 or more tiles: beyond 66 clusters
    ops, ref = _operands(m, n, k, per_row_b=False)
    c = torch.randn(m, n, device="cuda")
    d = c.clone()
    _run("nt", ops, d, d, None)
    assert calc_diff(d, ref + c.double()) < 1e-3
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _run("nt", ops, out, None, None)
    assert calc_diff(out, ref) < 1e-3
    first = out.clone()
    for _ in range(20):
        out.fill_(float("nan"))
        _run("nt", ops, out, None, None)
        assert torch.equal(out.view(torch.int16), first.view(torch.int16))
