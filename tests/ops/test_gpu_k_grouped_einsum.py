"""K-grouped FP8 GEMMs, the einsum forms and the float32 D += C path on the GPU (the native
sm90a kernel's K-grouped, batched and batch-summed schedules and its TMA float32 epilogue).

Against float64 references built from the definitions on fresh random inputs: K-grouped
with ragged sizes (empty groups, one group), C separate and C = D, 20-call determinism and
CUDA-graph replay with the data changed in place, and the general kernel's bits from the kernel
whose consumers walk the groups (DG_GEMM_K_GROUPED_SCHEDULE=1) on every per-row tile; the bf16 K-grouped TN GEMM (MN-major operands:
K tails inside a block, empty groups, the psum layout's NaN gaps, every compiled shape); einsum
'bhr,hdr->bhd' (bf16 and FP8, B a strided slice, A and D strided views) and 'bhd,hdr->bhr' (B
MN-major), 'bmk,bnk->mn' (float32 in place, float32 with a
separate C, bf16) and the dense FP8 GEMM with a float32 D += C.  The bf16 K-grouped psum layout
without ks_cpu, its sizes read on the device (the default; in a subprocess, so the switch is read fresh): the
float64 reference, bitwise equality with the host-sized path on the same tile, more groups than
one table holds, 20-call determinism, and a CUDA graph replayed with the group sizes changed.
Skipped without a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_token_cast_to_fp8
from tests.support.kernels import compiled_gemm_shapes

pytestmark = pytest.mark.gpu


def _fp8(shape: tuple[int, ...]) -> torch.Tensor:
    return (torch.randn(shape, device="cuda") * 2).to(torch.float8_e4m3fn)


def _k_grouped(ks: list[int], m: int, n: int):
    """Flat K-major operands of the groups, per-row scales, and a float64 product per group."""
    blocks = [(k + 127) // 128 for k in ks]
    a, b = _fp8((sum(ks) * m,)), _fp8((sum(ks) * n,))
    sfa = torch.rand(m, sum(blocks), device="cuda") + 0.5
    sfb = torch.rand(n, sum(blocks), device="cuda") + 0.5
    products = []
    for g, k in enumerate(ks):
        start, b0 = sum(ks[:g]), sum(blocks[:g])
        if k == 0:
            products.append(torch.zeros(m, n, dtype=torch.float64, device="cuda"))
            continue
        ea = sfa[:, b0 : b0 + blocks[g]].double().repeat_interleave(128, 1)[:, :k]
        eb = sfb[:, b0 : b0 + blocks[g]].double().repeat_interleave(128, 1)[:, :k]
        a_g = a[start * m : (start + k) * m].view(m, k).double() * ea
        b_g = b[start * n : (start + k) * n].view(n, k).double() * eb
        products.append(a_g @ b_g.t())
    return a, sfa, b, sfb, torch.stack(products)


def _check_k_grouped(
    d: torch.Tensor,
    c: torch.Tensor,
    c0: torch.Tensor,
    product: torch.Tensor,
    ks: list[int],
    in_place: bool,
    bound: float,
) -> None:
    """D = C + the groups' products (an empty group comes out as C exactly); a separate C unmodified."""
    ref = c0.double() + product
    for g, k in enumerate(ks):
        if k == 0:
            assert torch.equal(d[g], c0[g]), "an empty group must come out as C"
        else:
            assert calc_diff(d[g], ref[g]) < bound
    if not in_place:
        assert torch.equal(c, c0), "a separate c was modified"


@pytest.mark.parametrize(
    "ks,m,n",
    [([256, 0, 384, 128], 256, 384), ([512], 200, 130), ([0, 0, 128], 128, 256), ([1024, 640, 0, 256, 896], 384, 512)],
    ids=str,
)
@pytest.mark.parametrize("in_place", [True, False], ids=["c_is_d", "c_separate"])
def test_k_grouped_fp8_nt(ks: list[int], m: int, n: int, in_place: bool) -> None:
    a, sfa, b, sfb, product = _k_grouped(ks, m, n)
    c = torch.randn(len(ks), m, n, device="cuda")
    c0 = c.clone()
    d = c if in_place else torch.full_like(c, float("nan"))
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, layout, c)
    _check_k_grouped(d, c, c0, product, ks, in_place, 1e-5)


def _replay_and_check(
    graph: torch.cuda.CUDAGraph, c: torch.Tensor, d: torch.Tensor, product: torch.Tensor, bound: float
) -> None:
    """A fresh C and a NaN D, one replay of the captured K-grouped GEMM: D = C + each group's product."""
    c.copy_(torch.randn_like(c))
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ref = c.double() + product
    for g in range(d.size(0)):
        assert calc_diff(d[g], ref[g]) < bound


def _capture(call: Callable[[], None]) -> torch.cuda.CUDAGraph:
    """`call` run once on a side stream (warm-up), then captured there into a CUDA graph."""
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        call()
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            call()
    return graph


def test_k_grouped_deterministic_and_graph_replay() -> None:
    ks, m, n = [384, 0, 256, 512], 256, 320
    a, sfa, b, sfb, _ = _k_grouped(ks, m, n)
    c = torch.randn(len(ks), m, n, device="cuda")
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    d = torch.empty_like(c)
    results = []
    for _ in range(20):
        deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, layout, c)
        results.append(d.clone())
    assert all(torch.equal(r, results[0]) for r in results)
    graph = _capture(lambda: deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, layout, c))
    a2, sfa2, b2, sfb2, product2 = _k_grouped(ks, m, n)
    a.copy_(a2)
    b.copy_(b2)
    sfa.copy_(sfa2)
    sfb.copy_(sfb2)
    _replay_and_check(graph, c, d, product2, 1e-5)


ROW_SHAPES = sorted(s.config for s in compiled_gemm_shapes() if s.sfb_per_row)


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_k_grouped_fp8_uniform_kernel_same_bits(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The K-grouped kernel whose consumers walk the table of groups themselves
    (DG_GEMM_K_GROUPED_SCHEDULE=1) gives the general kernel's bits on every per-row tile (empty
    groups, M and N tails, a separate C), and replays in a CUDA graph."""
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", shape)
    ks, m, n = [256, 0, 384, 128, 640], 200, 2 * int(shape.split("x")[1]) + 24
    a, sfa, b, sfb, product = _k_grouped(ks, m, n)
    c = torch.randn(len(ks), m, n, device="cuda")
    c0 = c.clone()
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    outs = []
    for schedule in ("0", "1"):
        monkeypatch.setenv("DG_GEMM_K_GROUPED_SCHEDULE", schedule)
        d = torch.full_like(c, float("nan"))
        deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, layout, c)
        _check_k_grouped(d, c, c0, product, ks, False, 1e-5)
        outs.append(d)
    assert torch.equal(outs[0], outs[1])
    d = outs[1]
    graph = _capture(lambda: deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, layout, c))
    _replay_and_check(graph, c, d, product, 1e-5)


def _bf16_tn_case(ks: list[int], m: int, n: int, psum: bool = False):
    """K-stacked bf16 operands a [rows, m], b [rows, n] and the float64 A_g^T B_g of each group
    (psum: group g starts at the previous end rounded up to the alignment; the rows between are
    NaN, which must reach no output)."""
    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    starts, ends, row = [], [], 0
    for k in ks:
        start = (row + align - 1) // align * align if psum else row
        starts.append(start)
        ends.append(start + k)
        row = start + k
    a = torch.full((row, m), float("nan"), device="cuda", dtype=torch.bfloat16)
    b = torch.full((row, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    products = []
    for start, k in zip(starts, ks):
        a[start : start + k] = torch.randn(k, m, device="cuda").bfloat16()
        b[start : start + k] = torch.randn(k, n, device="cuda").bfloat16()
        products.append(a[start : start + k].double().t() @ b[start : start + k].double())
    return a, b, torch.stack(products), ends


@pytest.mark.parametrize(
    "ks,m,n,psum",
    [
        ([256, 0, 384, 128], 264, 200, False),
        ([1024], 128, 512, False),
        ([0, 0, 128], 64, 128, False),
        ([512, 384, 0, 128, 640], 384, 256, False),
        ([200, 0, 7, 300], 264, 200, True),  # psum: K tails ending inside a 64-row block
        ([1000, 130], 128, 512, True),
    ],
    ids=str,
)
@pytest.mark.parametrize("in_place", [True, False], ids=["c_is_d", "c_separate"])
def test_k_grouped_bf16_tn(ks: list[int], m: int, n: int, psum: bool, in_place: bool) -> None:
    """The native MN-major path: empty groups, C, and (psum layout) K tails with NaN gaps."""
    a, b, product, ends = _bf16_tn_case(ks, m, n, psum=psum)
    c = torch.randn(len(ks), m, n, device="cuda")
    c0 = c.clone()
    d = c if in_place else torch.full_like(c, float("nan"))
    layout = torch.tensor(ends if psum else ks, dtype=torch.int32, device="cuda")
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, c, use_psum_layout=psum)
    _check_k_grouped(d, c, c0, product, ks, in_place, 1e-6)


def test_k_grouped_bf16_tn_psum_deterministic_and_graph_replay() -> None:
    """psum layout with the sizes given on the host: the NaN rows between groups reach nothing;
    20 calls are bitwise equal and a captured graph recomputes from changed operands."""
    ks, m, n = [300, 0, 129, 512], 256, 384
    a, b, product, ends = _bf16_tn_case(ks, m, n, psum=True)
    layout = torch.tensor(ends, dtype=torch.int32, device="cuda")
    c = torch.randn(len(ks), m, n, device="cuda")
    d = torch.empty_like(c)
    results = []
    for _ in range(20):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, c, use_psum_layout=True)
        results.append(d.clone())
    assert all(torch.equal(r, results[0]) for r in results)
    ref = c.double() + product
    assert all(calc_diff(results[0][g], ref[g]) < 1e-6 for g in range(len(ks)))
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, c, use_psum_layout=True)
    a2, b2, product2, _ = _bf16_tn_case(ks, m, n, psum=True)
    a.copy_(a2)
    b.copy_(b2)
    _replay_and_check(graph, c, d, product2, 1e-6)


_DEVICE_SIZES_SCRIPT = r"""
import os
import torch
import deep_gemm
from deep_gemm.testing import calc_diff

torch.manual_seed(11)
align = deep_gemm.get_mk_alignment_for_contiguous_layout()


def place(a, b, ks):
    # NaN everywhere, fresh values in each group's psum rows; the float64 products and the ends.
    a.fill_(float("nan"))
    b.fill_(float("nan"))
    products, ends, row = [], [], 0
    for k in ks:
        start = (row + align - 1) // align * align
        a[start : start + k] = torch.randn(k, a.size(1), device="cuda").bfloat16()
        b[start : start + k] = torch.randn(k, b.size(1), device="cuda").bfloat16()
        products.append(a[start : start + k].double().t() @ b[start : start + k].double())
        ends.append(start + k)
        row = start + k
    assert row <= a.size(0)
    return torch.stack(products), ends


def check(d, c, product, ks, what):
    ref = c.double() + product
    for g, k in enumerate(ks):
        if k == 0:
            assert torch.equal(d[g], c[g]), (what, g, "an empty group must come out as C")
        else:
            assert calc_diff(d[g], ref[g]) < 1e-6, (what, g, calc_diff(d[g], ref[g]))


def call(a, b, d, ks, layout, c):
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, c, use_psum_layout=True)


many = [64 * (1 + g % 3) if g % 5 else 0 for g in range(70)] + [7]  # two tables of 64 groups
for ks, m, n in [([200, 0, 7, 300], 264, 200), ([1000, 130], 128, 512), ([0, 0, 128], 64, 128), (many, 128, 192)]:
    rows = sum((k + align - 1) // align * align for k in ks) + align
    a = torch.empty(rows, m, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
    product, ends = place(a, b, ks)
    layout = torch.tensor(ends, dtype=torch.int32, device="cuda")
    c = torch.randn(len(ks), m, n, device="cuda")
    d = torch.full_like(c, float("nan"))
    call(a, b, d, None, layout, c)
    check(d, c, product, ks, f"device sizes {ks[:6]}")
    # The same tile on both paths: the same maps and K order, so the same bits.
    os.environ["DG_SM90_GEMM_CONFIG"] = "128x128"
    d_dev, d_host = torch.full_like(c, float("nan")), torch.full_like(c, float("nan"))
    call(a, b, d_dev, None, layout, c)
    call(a, b, d_host, ks, layout, c)
    del os.environ["DG_SM90_GEMM_CONFIG"]
    assert torch.equal(d_dev, d_host), f"device and host sizes differ for {ks[:6]}"

# 20 calls, bitwise; then a graph captured once and replayed with other group sizes.
m, n, rows = 256, 384, 2048
a = torch.empty(rows, m, device="cuda", dtype=torch.bfloat16)
b = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
ks = [300, 0, 129, 512]
product, ends = place(a, b, ks)
layout = torch.tensor(ends, dtype=torch.int32, device="cuda")
c = torch.randn(len(ks), m, n, device="cuda")
d = torch.empty_like(c)
results = []
for _ in range(20):
    call(a, b, d, None, layout, c)
    results.append(d.clone())
assert all(torch.equal(r, results[0]) for r in results), "not deterministic"
check(results[0], c, product, ks, "repeated")
graph = torch.cuda.CUDAGraph()
stream = torch.cuda.Stream()
with torch.cuda.stream(stream):
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=stream):
        call(a, b, d, None, layout, c)
for ks in ([0, 700, 64, 100], [128, 128, 128, 128], [1000, 0, 0, 1]):
    product, ends = place(a, b, ks)
    layout.copy_(torch.tensor(ends, dtype=torch.int32))
    c.copy_(torch.randn_like(c))
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(d, c, product, ks, f"replay {ks}")
print("ok")
"""


def test_k_grouped_bf16_tn_psum_sizes_on_the_device() -> None:
    """ks_cpu=None with the psum layout: no host read (the graph capture would fail on one)."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, DG_K_GROUPED_DEVICE_SIZES="1")
    env.pop("DG_SM90_GEMM_CONFIG", None)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _DEVICE_SIZES_SCRIPT], env=env, cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().endswith("ok")


MN_SHAPES = [(s.config, s.majors) for s in compiled_gemm_shapes() if s.majors]


@pytest.mark.parametrize("shape", MN_SHAPES, ids=[f"{c}-mn{m}" for c, m in MN_SHAPES])
def test_every_mn_major_shape(shape: tuple[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each compiled MN-major shape, forced: ragged M, N and K against float64."""
    cfg, majors = shape
    monkeypatch.setenv("DG_SM90_GEMM_CONFIG", cfg)
    bm, bn = (int(v) for v in cfg.split("x"))
    m, n = 2 * bm + 8, 2 * bn - 56
    if majors == 3:
        ks = [200, 0, 75]
        a, b, product, ends = _bf16_tn_case(ks, m, n, psum=True)
        c = torch.randn(len(ks), m, n, device="cuda")
        d = c.clone()
        layout = torch.tensor(ends, dtype=torch.int32, device="cuda")
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, d, use_psum_layout=True)
        ref = c.double() + product
        assert all(calc_diff(d[g], ref[g]) < 1e-6 for g in (0, 2)) and torch.equal(d[1], c[1])
    else:
        h, k = 3, 200
        x = torch.randn(m, h, k, device="cuda").bfloat16()
        y = torch.randn(h, k, n + 40, device="cuda").bfloat16()[:, :, :n]
        out = torch.full((m, h, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.einsum("bhd,hdr->bhr", x, y, out)
        assert calc_diff(out, torch.einsum("bhd,hdr->bhr", x.double(), y.double())) < 1e-5


@pytest.mark.parametrize("nb,h,dd,r", [(5, 3, 64, 128), (200, 16, 128, 512), (300, 8, 200, 384)], ids=str)
def test_einsum_bhd_hdr_bhr_bf16(nb: int, h: int, dd: int, r: int) -> None:
    """'bhd,hdr->bhr' on the native kernel (B MN-major): strided A, B and D against float64."""
    x = torch.randn(nb, h, dd + 64, device="cuda").bfloat16()[:, :, :dd]  # strided A
    y = torch.randn(h, dd, r + 72, device="cuda").bfloat16()[:, :, :r]  # strided B
    full = torch.full((nb, h + 2, r + 8), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = full[:, 1 : h + 1, :r]  # strided D: what is outside must stay NaN
    deep_gemm.einsum("bhd,hdr->bhr", x, y, out)
    ref = torch.einsum("bhd,hdr->bhr", x.double(), y.double())
    assert calc_diff(out, ref) < 1e-5
    assert torch.isnan(full[:, 0].float()).all() and torch.isnan(full[:, h + 1].float()).all()
    assert torch.isnan(full[:, :, r:].float()).all()


@pytest.mark.parametrize("nb,h,r,dd", [(5, 3, 128, 64), (200, 16, 512, 128), (300, 8, 384, 200)], ids=str)
def test_einsum_bhr_hdr_bhd_bf16(nb: int, h: int, r: int, dd: int) -> None:
    x = torch.randn(nb, h, r + 64, device="cuda").bfloat16()[:, :, :r]  # strided A
    y = torch.randn(h, dd + 72, r, device="cuda").bfloat16()[:, :dd, :]  # strided B
    full = torch.full((nb, h + 2, dd + 8), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = full[:, 1 : h + 1, :dd]  # strided D: what is outside must stay NaN
    deep_gemm.einsum("bhr,hdr->bhd", x, y, out)
    ref = torch.einsum("bhr,hdr->bhd", x.double(), y.double())
    assert calc_diff(out, ref) < 1e-5
    assert torch.isnan(full[:, 0].float()).all() and torch.isnan(full[:, h + 1].float()).all()
    assert torch.isnan(full[:, :, dd:].float()).all()


@pytest.mark.parametrize("gran_n", [128, 1])
@pytest.mark.parametrize("nb,h,r,dd", [(7, 4, 256, 128), (160, 8, 512, 320)], ids=str)
def test_fp8_einsum_bhr_hdr_bhd(nb: int, h: int, r: int, dd: int, gran_n: int) -> None:
    x = torch.randn(nb, h, r, device="cuda")
    xq, sx = per_token_cast_to_fp8(x.view(nb * h, r), use_ue8m0=False)
    xq, sx = xq.view(nb, h, r), sx.view(nb, h, -1)
    yq = _fp8((h, dd + 64, r))[:, :dd, :]  # strided B
    sy = torch.rand(h, (dd + gran_n - 1) // gran_n, r // 128, device="cuda") + 0.5
    out = torch.empty(nb, h, dd, device="cuda", dtype=torch.bfloat16)
    deep_gemm.fp8_einsum("bhr,hdr->bhd", (xq, sx), (yq, sy), out, recipe=(1, gran_n, 128))
    x64 = xq.double() * sx.double().repeat_interleave(128, 2)
    y64 = yq.double() * sy.double().repeat_interleave(gran_n, 1)[:, :dd].repeat_interleave(128, 2)
    assert calc_diff(out, torch.einsum("bhr,hdr->bhd", x64, y64)) < 1e-4


@pytest.mark.parametrize("s,m,n,k", [(3, 64, 96, 128), (8, 257, 384, 192), (16, 1024, 512, 256)], ids=str)
@pytest.mark.parametrize("mode", ["f32_in_place", "f32_separate", "bf16"])
def test_einsum_bmk_bnk_mn(s: int, m: int, n: int, k: int, mode: str) -> None:
    a = torch.randn(s, m, k, device="cuda").bfloat16()
    b = torch.randn(s, n, k, device="cuda").bfloat16()
    product = torch.einsum("bmk,bnk->mn", a.double(), b.double())
    if mode == "bf16":
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.einsum("bmk,bnk->mn", a, b, d)
        assert calc_diff(d, product) < 1e-5
        return
    c = torch.randn(m, n, device="cuda")
    c0 = c.clone()
    d = c if mode == "f32_in_place" else torch.full_like(c, float("nan"))
    deep_gemm.einsum("bmk,bnk->mn", a, b, d, c)
    assert calc_diff(d, c0.double() + product) < 1e-7
    if mode == "f32_separate":
        assert torch.equal(c, c0)


@pytest.mark.parametrize("m,n,k", [(512, 256, 512), (300, 200, 384), (1024, 1536, 256)], ids=str)
@pytest.mark.parametrize("in_place", [True, False], ids=["c_is_d", "c_separate"])
def test_dense_fp8_float32_accumulate(m: int, n: int, k: int, in_place: bool) -> None:
    a, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), use_ue8m0=False)
    b, sfb = per_token_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False)
    c = torch.randn(m, n, device="cuda")
    c0 = c.clone()
    d = c if in_place else torch.full_like(c, float("nan"))
    deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c, recipe=(1, 1, 128))
    a64 = a.double() * sfa.double().repeat_interleave(128, 1)[:, :k]
    b64 = b.double() * sfb.double().repeat_interleave(128, 1)[:, :k]
    assert calc_diff(d, c0.double() + a64 @ b64.t()) < 1e-5
    if not in_place:
        assert torch.equal(c, c0)
    first = d.clone()
    for _ in range(5):  # bitwise reproducible, C = D and C separate alike
        if in_place:
            d.copy_(c0)
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d, d if in_place else c0, recipe=(1, 1, 128))
        assert torch.equal(d, first)
