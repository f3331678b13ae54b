"""tf32_hc_prenorm_gemm on the GPU (the native sm90a kernel, csrc/cuda/hc_prenorm.h).

Two bars on fresh random inputs: a float64 reference built from the definition with B
rounded to TF32 the way the tensor cores are fed (nearest, ties away from zero:
``(bits + 0x1000) & ~0x1FFF``), which the kernel must match to calc_diff < 1e-10 and to the
float32 accumulation bound elementwise; and upstream's bar, calc_diff < 1e-8 against
``a.float() @ b.T`` with TF32 matmuls allowed.  Shapes: a sample of upstream's grid (m in
{13, 137, 4096, 8192} x (24, 28672), (24, 7680), (24, 7168) x num_splits in {None, 16}),
m = 1, K not a multiple of the 64-wide tile (aligned and unaligned row strides, which take
the TMA and the scalar kernels), split boundaries inside tiles, empty splits, N from 1 to
64, M == 0, exact integer inputs (bitwise results), 20-call determinism, CUDA-graph replays
with the inputs changed in place, argument errors, and a subset of these under every kernel
variant of the DG_HC_PRENORM_CONFIG tuning override (plus its rejection of malformed text).
Upstream's bar is applied only on upstream's grid of M: at M = 1 cuBLAS runs a GEMV without
TF32.  Skipped without a GPU.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
import torch

import deep_gemm
from deep_gemm.testing import calc_diff

pytestmark = pytest.mark.gpu

F64 = torch.float64


def rna_tf32(x: torch.Tensor) -> torch.Tensor:
    """float32 -> TF32 (10 mantissa bits), to nearest with ties away from zero, as float32."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def bounds(k: int, splits: int | None) -> list[tuple[int, int]]:
    s = 1 if splits is None else splits
    c = (k + s - 1) // s
    return [(min(i * c, k), min((i + 1) * c, k)) for i in range(s)]


def reference(a: torch.Tensor, b: torch.Tensor, splits: int | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """float64 (d, |a| |b| bound, sqr_sum) per split, stacked: [S, M, N], [S, M, N], [S, M]."""
    a64, b64 = a.to(F64), rna_tf32(b).to(F64)
    ds, dbs, sqs = [], [], []
    for lo, hi in bounds(a.shape[1], splits):
        ds.append(a64[:, lo:hi] @ b64[:, lo:hi].T)
        dbs.append(a64[:, lo:hi].abs() @ b64[:, lo:hi].abs().T)
        sqs.append((a64[:, lo:hi] ** 2).sum(-1))
    return torch.stack(ds), torch.stack(dbs), torch.stack(sqs)


def outputs(m: int, n: int, splits: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    lead = () if splits is None else (splits,)
    d = torch.full((*lead, m, n), float("nan"), device="cuda")
    sqr = torch.full((*lead, m), float("nan"), device="cuda")
    return d, sqr


def operands(m: int, n: int, k: int, pad_a: int = 0, pad_b: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A bf16 [m, k] and B float32 [n, k]; pads > 0 make row slices of wider tensors."""
    a = torch.randn(m, k + pad_a, device="cuda").bfloat16()[:, :k]
    b = torch.randn(n, k + pad_b, device="cuda")[:, :k]
    return a, b


@contextlib.contextmanager
def tf32_matmul() -> Iterator[None]:
    was = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = was


UPSTREAM_M = (13, 137, 4096, 8192)


def check(a: torch.Tensor, b: torch.Tensor, splits: int | None, upstream_bar: bool = False) -> None:
    m, k = a.shape
    # Upstream's bar holds where cuBLAS runs a TF32 GEMM: on upstream's grid of M.
    assert not upstream_bar or m in UPSTREAM_M
    n = b.shape[0]
    d, sqr = outputs(m, n, splits)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)
    ref_d, ref_bound, ref_sqr = reference(a, b, splits)
    got_d = d if splits is not None else d[None]
    got_sqr = sqr if splits is not None else sqr[None]
    assert not torch.isnan(got_d).any() and not torch.isnan(got_sqr).any(), "unwritten outputs"
    # float32 accumulation over at most k terms (sums of non-negative squares for sqr_sum).
    tol = (k + 2) * 2.0**-23
    err_d = (got_d.to(F64) - ref_d).abs()
    assert bool((err_d <= tol * ref_bound + 1e-30).all()), f"max d error {err_d.max().item():.3e}"
    err_sqr = (got_sqr.to(F64) - ref_sqr).abs()
    assert bool((err_sqr <= tol * ref_sqr + 1e-30).all()), f"max sqr_sum error {err_sqr.max().item():.3e}"
    for s, (lo, hi) in enumerate(bounds(k, splits)):
        if lo == hi:  # an empty split: exact zeros
            assert bool((got_d[s] == 0).all()) and bool((got_sqr[s] == 0).all())
            continue
        assert calc_diff(got_d[s], ref_d[s]) < 1e-10, f"split {s}: d calc_diff {calc_diff(got_d[s], ref_d[s]):.3e}"
        assert calc_diff(got_sqr[s], ref_sqr[s]) < 1e-10
    if upstream_bar:
        with tf32_matmul():
            up_d = a.float() @ b.T
        up_sqr = a.float().square().sum(-1)
        assert calc_diff(got_d.sum(0), up_d) < 1e-8, f"upstream bar: d calc_diff {calc_diff(got_d.sum(0), up_d):.3e}"
        assert calc_diff(got_sqr.sum(0), up_sqr) < 1e-8


UPSTREAM_SAMPLE = [
    (13, 24, 28672, None),
    (13, 24, 7680, 16),
    (137, 24, 7680, None),
    (137, 24, 7680, 16),
    (137, 24, 7168, None),
    (4096, 24, 28672, None),
    (4096, 24, 28672, 16),
    (4096, 24, 7168, 16),
    (8192, 24, 7168, None),
    (8192, 24, 7168, 16),
]


@pytest.mark.parametrize("m,n,k,splits", UPSTREAM_SAMPLE)
def test_upstream_grid(m: int, n: int, k: int, splits: int | None) -> None:
    check(*operands(m, n, k), splits, upstream_bar=True)


# A lone row: cuBLAS' ``a.float() @ b.T`` is a GEMV there that ignores TF32, so upstream's bar
# (a TF32 product) does not apply; the float64 rna-TF32 reference does.
@pytest.mark.parametrize("splits", [None, 1, 16])
def test_one_row(splits: int | None) -> None:
    check(*operands(1, 24, 7680), splits)


# K off the 64-wide tile; split boundaries inside tiles (c = 43, 334, 2574); internal K
# parts with a ragged last part (137 x 7720 unsplit, 3 splits).  K = 100 (row stride not a
# multiple of 16 bytes) takes the scalar kernel, the rest the TMA one.
@pytest.mark.parametrize(
    "m,k,splits",
    [(13, 100, None), (137, 7720, None), (137, 7720, 3), (200, 296, 7), (64, 1000, 3), (4096, 4104, None), (7, 72, 1)],
)
def test_ragged_k(m: int, k: int, splits: int | None) -> None:
    check(*operands(m, 24, k), splits)


# Row strides: multiples of 16 bytes (TMA, odd K included), and others (the scalar kernel).
@pytest.mark.parametrize(
    "k,pad_a,pad_b", [(1024, 8, 4), (1001, 7, 3), (999, 9, 1), (1001, 7, 0), (1001, 0, 3), (1000, 5, 0)]
)
@pytest.mark.parametrize("splits", [None, 4])
def test_row_strides(k: int, pad_a: int, pad_b: int, splits: int | None) -> None:
    a, b = operands(300, 24, k, pad_a, pad_b)
    assert a.stride(0) == k + pad_a and b.stride(0) == k + pad_b
    check(a, b, splits)


# More splits than K values (or than tiles): the splits past K are zeros (K = 7: the scalar kernel).
@pytest.mark.parametrize("m,k,splits", [(13, 96, 64), (137, 8, 16), (300, 136, 100), (137, 7, 16)])
def test_empty_splits(m: int, k: int, splits: int) -> None:
    check(*operands(m, 24, k), splits)


# N from one column to two 32-column slices.
@pytest.mark.parametrize("n", [1, 7, 8, 16, 31, 32, 40, 64])
@pytest.mark.parametrize("splits", [None, 2])
def test_widths(n: int, splits: int | None) -> None:
    check(*operands(150, n, 2000), splits)


@pytest.mark.parametrize("splits", [None, 3])
def test_m_zero(splits: int | None) -> None:
    a, b = operands(0, 24, 256)
    d, sqr = outputs(0, 24, splits)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)
    torch.cuda.synchronize()
    assert d.numel() == 0 and sqr.numel() == 0


@pytest.mark.parametrize("m,k,splits", [(4096, 7168, None), (137, 7680, 16), (100, 1001, None)])
def test_exact_integers(m: int, k: int, splits: int | None) -> None:
    """Small integers: every product and partial sum is exact in float32, so the results are too."""
    a = torch.randint(-8, 9, (m, k), device="cuda").bfloat16()
    b = torch.randint(-8, 9, (24, k), device="cuda").float()
    d, sqr = outputs(m, 24, splits)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)
    ref_d, _, ref_sqr = reference(a, b, splits)
    if splits is None:
        ref_d, ref_sqr = ref_d[0], ref_sqr[0]
    assert torch.equal(sqr, ref_sqr.float())
    assert torch.equal(d, ref_d.float())


@pytest.mark.parametrize("m,k,splits", [(4096, 7168, None), (137, 7680, 16), (137, 7680, None)])
def test_deterministic(m: int, k: int, splits: int | None) -> None:
    a, b = operands(m, 24, k)
    d0, s0 = outputs(m, 24, splits)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d0, s0, num_splits=splits)
    for _ in range(20):
        d, s = outputs(m, 24, splits)
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, s, num_splits=splits)
        assert torch.equal(d, d0) and torch.equal(s, s0)


@pytest.mark.parametrize("config", ["", "default:l"])
@pytest.mark.parametrize("m,k,splits", [(2048, 7168, None), (137, 7680, 16), (137, 7680, None)])
def test_cuda_graph(m: int, k: int, splits: int | None, config: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_HC_PRENORM_CONFIG", config)  # "": the defaults; ":l": a dependent reduce launch
    a, b = operands(m, 24, k)
    d, sqr = outputs(m, 24, splits)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)  # warm-up outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)
    for _ in range(3):
        new_a, new_b = operands(m, 24, k)
        a.copy_(new_a)
        b.copy_(new_b)
        d.fill_(float("nan"))
        sqr.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref_d, _, ref_sqr = reference(a, b, splits)
        got_d = d if splits is not None else d[None]
        got_sqr = sqr if splits is not None else sqr[None]
        assert calc_diff(got_d, ref_d) < 1e-10
        assert calc_diff(got_sqr, ref_sqr) < 1e-10


def test_argument_errors() -> None:
    a, b = operands(64, 24, 256)
    d, sqr = outputs(64, 24, None)
    with pytest.raises(ValueError, match="'b'"):
        deep_gemm.tf32_hc_prenorm_gemm(a, b[:, :128], d, sqr)
    with pytest.raises(ValueError, match="'a'"):
        deep_gemm.tf32_hc_prenorm_gemm(a.float(), b, d, sqr)
    with pytest.raises(ValueError, match="'num_splits'"):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d[None], sqr[None], num_splits=0)
    with pytest.raises(ValueError, match="'d'"):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d[:, :16], sqr)
    with pytest.raises(ValueError, match="'sqr_sum'"):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr[:32])
    with pytest.raises(ValueError, match="'a'"):
        deep_gemm.tf32_hc_prenorm_gemm(a.t().contiguous().t(), b, d, sqr)


# Every kernel variant of the DG_HC_PRENORM_CONFIG override (and the K-part options) on a
# representative subset: many splits of few rows, K parts with ragged ends, odd K with padded
# row strides, two column slices, empty splits, exact integers.
VARIANTS = [
    "default",
    "m128c2",
    "m64c2",
    "m128w4c1",
    "m64c2w",
    "m128k2c1w",
    "m256c1",
    "m128c1w",
    "m32c4w",
    "m16c4w",
    "m32c4",
    "m16c4",
    "m64c1w",
    "m64w4c1",
    "m128c2:p0",
    "m64c2w:p4:b2",
    "m16c4w:p8:b1",
    "default:l",
    "m64c2w:p4:b2:l",
    "default:h",
    "m64c1w:p0:h",
    "default:u",
    "m64c2w:p0:u",
    "m32c4w:u",
]
VARIANT_CASES = [
    (137, 24, 7680, 16, 0, 0),
    (4096, 24, 4104, None, 0, 0),
    (137, 24, 7720, 3, 0, 0),
    (300, 24, 1001, 4, 7, 3),
    (150, 40, 2000, 2, 0, 0),
    (13, 24, 96, 64, 0, 0),
]


@pytest.fixture
def variant(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DG_HC_PRENORM_CONFIG", request.param)
    return request.param


@pytest.mark.parametrize("variant", VARIANTS, indirect=True)
@pytest.mark.parametrize("m,n,k,splits,pad_a,pad_b", VARIANT_CASES)
def test_variants(variant: str, m: int, n: int, k: int, splits: int | None, pad_a: int, pad_b: int) -> None:
    assert os.environ["DG_HC_PRENORM_CONFIG"] == variant
    check(*operands(m, n, k, pad_a, pad_b), splits)


@pytest.mark.parametrize("variant", VARIANTS, indirect=True)
def test_variants_exact(variant: str) -> None:
    a = torch.randint(-8, 9, (600, 3000), device="cuda").bfloat16()
    b = torch.randint(-8, 9, (24, 3000), device="cuda").float()
    d, sqr = outputs(600, 24, 5)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=5)
    ref_d, _, ref_sqr = reference(a, b, 5)
    assert torch.equal(sqr, ref_sqr.float()) and torch.equal(d, ref_d.float())


@pytest.mark.parametrize(
    "text", ["m999", "m128c2:q3", "m64c2:p", "m64c2:b0", "m64c2:px", "m64c2:l1", "default:", "m64c2:u2"]
)
def test_bad_config(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_HC_PRENORM_CONFIG", text)
    a, b = operands(64, 24, 256)
    d, sqr = outputs(64, 24, None)
    with pytest.raises(RuntimeError, match="DG_HC_PRENORM_CONFIG"):
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr)


@pytest.mark.parametrize("m,k,splits", [(137, 7680, None), (4096, 28672, None), (137, 7680, 16)])
def test_one_kernel_carries_the_profiling_name(m: int, k: int, splits: int | None) -> None:
    # DeepGEMM's scripts time the op with bench_kineto(fn, "tf32_hc_prenorm_gemm"), which accepts
    # exactly one kernel per substring; the split-K reduce (when it runs) must not carry it.
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the native kernel is sm90a")
    a, b = operands(m, 24, k)
    d, sqr = outputs(m, 24, splits)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr, num_splits=splits)
        torch.cuda.synchronize()
    names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    assert len([n for n in names if "tf32_hc_prenorm_gemm" in n]) == 1, names
    ref_d, _, ref_sqr = reference(a, b, splits)
    assert calc_diff(d, ref_d) < 1e-10 and calc_diff(sqr, ref_sqr) < 1e-10


@pytest.mark.parametrize("splits", [None, 2])
def test_default_one_wave_of_64_row_tiles(splits: int | None) -> None:
    # 64-row tiles x splits filling 90-100% of the SMs take the heuristic's m64c2w branch (whole
    # splits per CTA); the last tile is ragged.
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    tiles = num_sms // (splits or 1)
    m = 64 * tiles - 37
    check(*operands(m, 24, 1000), splits)
