"""The ragged MQA indexer logits (fp8_fp4_mqa_logits / fp8_mqa_logits) on the GPU.

Against a float64 evaluation of the definition, logits[i, j] = sum_h w[i, h] * relu(q[i, h] . kv[j] * kv_sf[j])
for ks[i] <= j < ke[i] and -inf elsewhere, on fresh random FP8 inputs (some kv scales negative):
H 8/16/32/64, D 32/64/128, float32 and bfloat16 logits, bfloat16 weights, clean_logits both ways,
the compressed layout, causal, context-parallel and arbitrary (empty, out-of-bounds, non-monotonic)
ranges, S not a multiple of the query block.  -inf masks must match exactly.  Then 20-call bitwise
determinism, CUDA-graph replays with ks / ke changed in place, the extra device memory of one call,
and (on sm90) that the native kernels ran.  A representative subset (H 32 / 64, D 128, causal,
context-parallel, random and empty ranges, compressed, bf16) runs under every tuning variant of
the kernel (DG_MQA_LOGITS_CONFIG, set for the test and restored).  Skipped without a GPU.
"""

from __future__ import annotations

import pytest
import torch

import deep_gemm
from deep_gemm.testing import calc_diff

pytestmark = pytest.mark.gpu

F64 = torch.float64
NEG_INF = float("-inf")


def _inputs(s: int, s_kv: int, h: int, d: int, weights_dtype: torch.dtype = torch.float32):
    q = (torch.randn(s, h, d, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    x = torch.randn(s_kv, d, device="cuda")
    sf = x.abs().amax(1).clamp_min(1e-4) / 448.0
    kv = (x / sf.unsqueeze(1)).to(torch.float8_e4m3fn)
    sign = torch.where(torch.rand(s_kv, device="cuda") < 0.1, -1.0, 1.0)
    kv_sf = (sf * sign).contiguous()
    weights = torch.randn(s, h, device="cuda").to(weights_dtype)
    return q, kv, kv_sf, weights


def _ranges(mode: str, s: int, s_kv: int):
    if mode == "causal":  # the benchmark rule: every query sees a prefix ending at its position
        ks = torch.zeros(s, dtype=torch.int32, device="cuda")
        ke = torch.arange(s, dtype=torch.int32, device="cuda") + (s_kv - s)
        return ks, ke
    if mode == "cp":  # two chunks of a context-parallel rank, non-monotonic ends
        assert s_kv % s == 0 and s % 2 == 0
        half, cp = s // 2, s_kv // s
        rank = cp // 3
        i = torch.arange(half, dtype=torch.int32, device="cuda")
        ke = torch.cat([rank * half + i, (2 * cp - 1 - rank) * half + i]).to(torch.int32)
        return torch.zeros(s, dtype=torch.int32, device="cuda"), ke
    if mode == "empty":
        ks = torch.randint(0, max(s_kv, 1), (s,), device="cuda", dtype=torch.int32)
        return ks, ks.clone()
    # arbitrary: starts below 0 or past Skv, ends before starts or past Skv
    ks = torch.randint(-20, s_kv + 10, (s,), device="cuda", dtype=torch.int32)
    ke = ks + torch.randint(-30, s_kv + 40, (s,), device="cuda", dtype=torch.int32)
    ke[::7] = ks[::7]  # some empty rows
    return ks, ke


def _reference(q, kv, kv_sf, weights, ks, ke, max_seqlen_k: int):
    """(value, magnitude) float64 [S, cols]; magnitude = sum_h |w| sum_d |q kv sf| (the rounding scale)."""
    s, s_kv = q.shape[0], kv.shape[0]
    q64, kv64, w64 = q.to(F64), kv.to(F64) * kv_sf.to(F64).unsqueeze(1), weights.to(F64)
    full = torch.empty(s, s_kv, dtype=F64, device="cuda")
    for i0 in range(0, s, 32):
        scores = torch.einsum("shd,jd->shj", q64[i0 : i0 + 32], kv64).clamp_min(0)
        full[i0 : i0 + 32] = torch.einsum("sh,shj->sj", w64[i0 : i0 + 32], scores)
    mag = (w64.abs().unsqueeze(2) * q64.abs()).sum(1) @ kv64.abs().t()
    cols = max_seqlen_k if max_seqlen_k > 0 else s_kv
    t = torch.arange(cols, device="cuda").unsqueeze(0)
    keys = ks.long().unsqueeze(1) + t if max_seqlen_k > 0 else t.expand(s, cols)
    ok = (keys >= ks.long().unsqueeze(1)) & (keys < ke.long().unsqueeze(1)) & (keys >= 0) & (keys < s_kv)
    idx = keys.clamp(0, max(s_kv - 1, 0))
    if s_kv == 0:
        return torch.full((s, cols), NEG_INF, dtype=F64, device="cuda"), torch.zeros(s, cols, dtype=F64, device="cuda")
    value = torch.where(ok, full.gather(1, idx), torch.full((), NEG_INF, dtype=F64, device="cuda"))
    return value, torch.where(ok, mag.gather(1, idx), torch.zeros((), dtype=F64, device="cuda"))


def _check(out: torch.Tensor, value: torch.Tensor, mag: torch.Tensor) -> None:
    assert out.shape == value.shape
    masked = value == NEG_INF
    assert torch.equal(out.double() == NEG_INF, masked), "-inf mask differs"
    got, want, m = out.double()[~masked], value[~masked], mag[~masked]
    if got.numel() == 0:
        return
    assert torch.isfinite(got).all()
    # FP8 tensor-core sums carry ~2^-13 relative to the magnitude; bf16 adds one rounding.
    bound = 2**-10 * m + (2**-8 * want.abs() if out.dtype == torch.bfloat16 else 0)
    excess = (got - want).abs() - bound
    assert (excess <= 0).all(), f"max error over bound {excess.max().item()} (n={int((excess > 0).sum())})"
    assert calc_diff(got, want) < (1e-4 if out.dtype == torch.bfloat16 else 1e-6)


def _run(q, kv, kv_sf, weights, ks, ke, clean: bool, max_seqlen_k: int, logits_dtype: torch.dtype):
    return deep_gemm.fp8_fp4_mqa_logits(
        (q, None),
        (kv, kv_sf),
        weights,
        ks,
        ke,
        clean_logits=clean,
        max_seqlen_k=max_seqlen_k,
        logits_dtype=logits_dtype,
    )


CASES = [
    # s, s_kv, h, d, logits dtype, clean, max_seqlen_k, ranges
    (257, 2048, 64, 128, torch.float32, True, 0, "causal"),
    (128, 1024, 32, 64, torch.bfloat16, True, 0, "cp"),
    (77, 999, 32, 32, torch.float32, False, 0, "random"),
    (200, 1500, 64, 64, torch.bfloat16, False, 700, "random"),
    (64, 4096, 64, 32, torch.float32, False, 1024, "cp"),
    (130, 640, 32, 128, torch.float32, False, 300, "causal"),
    (33, 300, 16, 128, torch.float32, True, 0, "random"),
    (19, 513, 8, 64, torch.bfloat16, True, 0, "random"),
    (45, 777, 64, 128, torch.float32, True, 0, "empty"),
    (5, 0, 32, 64, torch.float32, False, 10, "random"),
    (3, 70, 64, 128, torch.float32, True, 0, "random"),
]


@pytest.mark.parametrize("s,s_kv,h,d,dtype,clean,max_seqlen_k,ranges", CASES, ids=str)
def test_matches_definition(s, s_kv, h, d, dtype, clean, max_seqlen_k, ranges):
    q, kv, kv_sf, w = _inputs(s, s_kv, h, d)
    ks, ke = _ranges(ranges, s, s_kv)
    out = _run(q, kv, kv_sf, w, ks, ke, clean, max_seqlen_k, dtype)
    _check(out, *_reference(q, kv, kv_sf, w, ks, ke, max_seqlen_k))
    elems = 1024 // out.element_size()
    assert out.stride(0) % elems == 0


def test_bf16_weights():
    q, kv, kv_sf, w = _inputs(50, 700, 32, 128, torch.bfloat16)
    ks, ke = _ranges("random", 50, 700)
    out = _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.bfloat16)
    assert out.dtype == torch.bfloat16
    _check(out, *_reference(q, kv, kv_sf, w, ks, ke, 0))


def test_legacy_entry():
    q, kv, kv_sf, w = _inputs(66, 512, 64, 64)
    ks, ke = _ranges("random", 66, 512)
    out = deep_gemm.fp8_mqa_logits(q, (kv, kv_sf), w, ks, ke)
    assert out.dtype == torch.float32
    _check(out, *_reference(q, kv, kv_sf, w, ks, ke, 0))


def test_deterministic():
    q, kv, kv_sf, w = _inputs(300, 3000, 64, 128)
    ks, ke = _ranges("random", 300, 3000)
    first = _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32)
    for _ in range(20):
        assert torch.equal(
            _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32).view(torch.int32), first.view(torch.int32)
        )


@pytest.mark.parametrize("max_seqlen_k", [0, 400])
def test_cuda_graph_with_new_ranges(max_seqlen_k):
    s, s_kv = 96, 1200
    q, kv, kv_sf, w = _inputs(s, s_kv, 32, 128)
    ks, ke = _ranges("random", s, s_kv)
    clean = max_seqlen_k == 0
    _run(q, kv, kv_sf, w, ks, ke, clean, max_seqlen_k, torch.float32)  # warm-up outside the graph
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = _run(q, kv, kv_sf, w, ks, ke, clean, max_seqlen_k, torch.float32)
    for mode in ("random", "causal", "empty", "random"):
        new_ks, new_ke = _ranges(mode, s, s_kv)
        ks.copy_(new_ks)
        ke.copy_(new_ke)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        _check(out, *_reference(q, kv, kv_sf, w, ks, ke, max_seqlen_k))


def test_memory_is_output_only():
    s, s_kv, h, d = 1024, 8192, 64, 128
    q, kv, kv_sf, w = _inputs(s, s_kv, h, d)
    ks, ke = _ranges("causal", s, s_kv)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    assert extra <= out.untyped_storage().nbytes() + (1 << 20), (extra, out.untyped_storage().nbytes())


def test_native_kernels_ran():
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the native kernels are sm90a")
    q, kv, kv_sf, w = _inputs(64, 1024, 64, 128)
    ks, ke = _ranges("causal", 64, 1024)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert any("mqa_logits" in n and "paged" not in n for n in names), names
    assert any("clean_logits" in n for n in names), names
    # nothing else runs on the device (no ATen kernels, no copies)
    assert all("mqa_logits_kernel" in n or "clean_logits_kernel" in n for n in names), names


# The tuning variants of the native kernel (csrc/cuda/mqa_logits.cu, kConfigs).
CONFIGS = [
    "default", "default+lin", "default+fuse", "st16", "wsmem", "wg3", "n256", "n256+fuse+lin", "n256s16",
    "s128", "n256s128", "n256s128+fuse", "wg4", "wg4s256+fuse", "wg4s256r", "n256s128r+fuse",
]  # fmt: skip
CONFIG_CASES = [
    (257, 2048, 64, 128, torch.float32, True, 0, "causal"),
    (301, 1500, 32, 128, torch.float32, True, 0, "causal"),
    (128, 1024, 32, 128, torch.bfloat16, True, 0, "cp"),
    (130, 640, 32, 128, torch.float32, False, 300, "causal"),
    (77, 999, 32, 128, torch.float32, False, 0, "random"),
    (200, 1500, 64, 128, torch.bfloat16, False, 700, "random"),
    (45, 777, 64, 128, torch.float32, True, 0, "empty"),
    (3, 70, 32, 128, torch.float32, True, 0, "random"),
    (5, 0, 32, 128, torch.float32, False, 10, "random"),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("s,s_kv,h,d,dtype,clean,max_seqlen_k,ranges", CONFIG_CASES, ids=str)
def test_tuning_configs(monkeypatch, config, s, s_kv, h, d, dtype, clean, max_seqlen_k, ranges):
    monkeypatch.setenv("DG_MQA_LOGITS_CONFIG", config)
    q, kv, kv_sf, w = _inputs(s, s_kv, h, d, torch.bfloat16 if dtype == torch.bfloat16 else torch.float32)
    ks, ke = _ranges(ranges, s, s_kv)
    out = _run(q, kv, kv_sf, w, ks, ke, clean, max_seqlen_k, dtype)
    _check(out, *_reference(q, kv, kv_sf, w, ks, ke, max_seqlen_k))
    again = _run(q, kv, kv_sf, w, ks, ke, clean, max_seqlen_k, dtype)
    assert torch.equal(
        again.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
        out.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
    )


def test_fused_cleaning_runs_one_kernel(monkeypatch):
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the native kernels are sm90a")
    monkeypatch.setenv("DG_MQA_LOGITS_CONFIG", "default+fuse")
    q, kv, kv_sf, w = _inputs(64, 1024, 64, 128)
    ks, ke = _ranges("causal", 64, 1024)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        out = _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert any("mqa_logits_kernel" in n for n in names), names
    assert all("mqa_logits_kernel" in n for n in names), names  # no cleaning kernel
    _check(out, *_reference(q, kv, kv_sf, w, ks, ke, 0))


def test_unknown_config_is_refused(monkeypatch):
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the tuning override is read by the native sm90a path")
    monkeypatch.setenv("DG_MQA_LOGITS_CONFIG", "no-such-config")
    q, kv, kv_sf, w = _inputs(8, 128, 32, 128)
    ks, ke = _ranges("causal", 8, 128)
    with pytest.raises(Exception, match="DG_MQA_LOGITS_CONFIG"):
        _run(q, kv, kv_sf, w, ks, ke, True, 0, torch.float32)
