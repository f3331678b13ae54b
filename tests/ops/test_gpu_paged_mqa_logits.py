"""Paged MQA logits and their schedule on the GPU (the native sm90a kernels).

Inputs follow the decode rule of the upstream benchmark: per sequence a context length drawn in
[0.7, 1.3] x the average, 2-D context lens whose last query has the full length and earlier ones
a random fraction, block tables holding a random permutation of the cache's blocks (junk ids
past each sequence's blocks), a per-token FP8 KV cache with float32 scales.  Checked against a
float64 evaluation of the definition: values within float32 accumulation of the magnitude of
the summed terms, -inf exactly where the column is at or past the row's context length, NaN
(and no fault) where a needed block-table entry is out of range.  The schedule is compared bit
for bit with a Python derivation of its documented formula.  Then 20-call bitwise determinism,
CUDA-graph replays with context_lens / block_table changed in place, the extra device memory of
one call, and the kernel names a call launches.  A subset runs under every pipeline variant
(DG_PAGED_MQA_CONFIG) and must match the default bit for bit.  Skipped without a GPU.
"""

from __future__ import annotations

import bisect
import os
import random
from dataclasses import dataclass

import pytest
import torch

import deep_gemm

pytestmark = pytest.mark.gpu

NEG_INF = float("-inf")
TOL = 2.0**-12  # error bound relative to sum_h |w| sum_d |q kv|


@dataclass
class Case:
    q: torch.Tensor  # FP8 [B, next_n, H, D]
    kv_cache: torch.Tensor  # uint8 [num_blocks, block_kv, 1, D + 4]
    values: torch.Tensor  # FP8 [num_blocks, block_kv, D]
    scales: torch.Tensor  # float32 [num_blocks, block_kv]
    weights: torch.Tensor  # [B * next_n, H]
    context_lens: torch.Tensor  # int32 [B, next_n]
    block_table: torch.Tensor  # int32 [seqs, max_blocks]
    indices: torch.Tensor | None
    max_context_len: int
    block_kv: int


def encode_cache(values: torch.Tensor, scales: torch.Tensor, pad: int) -> torch.Tensor:
    """Per block: block_kv token rows of D value bytes, then block_kv float32 scales, then pad bytes."""
    nb, bk, d = values.shape
    block_bytes = bk * (d + 4)
    storage = torch.full((nb, block_bytes + pad), 0x7F, dtype=torch.uint8, device=values.device)
    storage[:, : bk * d] = values.view(torch.uint8).reshape(nb, bk * d)
    storage[:, bk * d : block_bytes] = scales.contiguous().view(torch.uint8).reshape(nb, bk * 4)
    return storage.as_strided((nb, bk, 1, d + 4), (block_bytes + pad, d + 4, d + 4, 1))


def make_case(
    batch: int,
    next_n: int,
    heads: int,
    dim: int,
    block_kv: int,
    avg: int,
    *,
    num_seqs: int | None = None,
    weights_dtype: torch.dtype = torch.float32,
    zero_rows: bool = True,
    extra_cols: int = 0,
    pad: int = 0,
) -> Case:
    dev = "cuda"
    seqs = num_seqs if num_seqs is not None else batch
    seq_len = torch.randint(max(1, int(0.7 * avg)), max(2, int(1.3 * avg)), (seqs,))
    if num_seqs is not None:  # varlen: query b reads sequence indices[b], a little shorter than it
        assert next_n == 1
        indices = torch.randint(0, seqs, (batch,))
        lens = (seq_len[indices] - torch.randint(0, 4, (batch,))).clamp_min(0).unsqueeze(1)
    else:
        indices = None
        lens = ((seq_len.unsqueeze(1) + 1) * torch.rand(batch, next_n)).to(torch.int64)
        lens[:, -1] = seq_len
    if zero_rows and batch > 2:
        lens[1] = 0  # a group with no work
        lens[2, 0] = 0  # a row of length zero (the whole group when next_n == 1)
    seq_need = torch.zeros(seqs, dtype=torch.int64)
    for b in range(batch):
        s = b if indices is None else int(indices[b])
        seq_need[s] = max(int(seq_need[s]), int(lens[b].max()))
    blocks = [(int(n) + block_kv - 1) // block_kv for n in seq_len.maximum(seq_need)]
    max_blocks = max(blocks) + 1
    num_blocks = sum(blocks) + 3
    perm = torch.randperm(num_blocks)
    table = torch.randint(-5, 10**6, (seqs, max_blocks))  # junk past each sequence's blocks
    used = 0
    for s, n in enumerate(blocks):
        table[s, :n] = perm[used : used + n]
        used += n
    x = torch.randn(num_blocks, block_kv, dim, device=dev)
    scales = x.abs().amax(-1).clamp_min(1e-4) / 448.0
    values = (x / scales.unsqueeze(-1)).to(torch.float8_e4m3fn)
    q = torch.randn(batch, next_n, heads, dim, device=dev).to(torch.float8_e4m3fn)
    weights = torch.randn(batch * next_n, heads, device=dev).to(weights_dtype)
    return Case(
        q=q,
        kv_cache=encode_cache(values, scales, pad),
        values=values,
        scales=scales,
        weights=weights,
        context_lens=lens.to(torch.int32).to(dev),
        block_table=table.to(torch.int32).to(dev),
        indices=None if indices is None else indices.to(torch.int32).to(dev),
        max_context_len=max(blocks) * block_kv + extra_cols,
        block_kv=block_kv,
    )


def reference(c: Case) -> tuple[torch.Tensor, torch.Tensor]:
    """float64 logits (-inf past each row's length, NaN where a needed block id is out of range)
    and the magnitude sum_h |w| * sum_d |q kv| of every entry."""
    batch, next_n = c.q.shape[:2]
    tokens = c.values.double() * c.scales.double().unsqueeze(-1)  # [num_blocks, block_kv, D]
    num_blocks, bk = tokens.shape[:2]
    q = c.q.double()
    w = c.weights.double()
    lens = c.context_lens.cpu()
    table = c.block_table.cpu()
    cols = c.max_context_len
    out = torch.full((batch * next_n, cols), NEG_INF, dtype=torch.float64, device="cuda")
    mag = torch.zeros_like(out)
    for b in range(batch):
        length = min(int(lens[b].max()), cols)
        if length <= 0:
            continue
        seq = b if c.indices is None else int(c.indices[b])
        n = (length + bk - 1) // bk
        if 0 <= seq < table.shape[0]:
            ids = [int(table[seq, k]) if k < table.shape[1] else -1 for k in range(n)]
        else:
            ids = [-1] * n
        ok = torch.tensor([0 <= i < num_blocks for i in ids], device="cuda").repeat_interleave(bk)[:length]
        kv = tokens[torch.tensor([i if 0 <= i < num_blocks else 0 for i in ids], device="cuda")]
        kv = kv.reshape(-1, kv.shape[-1])[:length]
        dots = torch.einsum("thd,jd->thj", q[b], kv)
        absdots = torch.einsum("thd,jd->thj", q[b].abs(), kv.abs())
        wb = w[b * next_n : (b + 1) * next_n].unsqueeze(-1)
        value = (wb * dots.relu()).sum(1)  # [next_n, length]
        magnitude = (wb.abs() * absdots).sum(1)
        value = torch.where(ok, value, torch.full_like(value, float("nan")))
        for t in range(next_n):
            r = b * next_n + t
            m = min(int(lens[b, t]), cols)
            if m > 0:
                out[r, :m], mag[r, :m] = value[t, :m], magnitude[t, :m]
    return out, mag


def run(c: Case, logits_dtype: torch.dtype = torch.float32, schedule: torch.Tensor | None = None) -> torch.Tensor:
    if schedule is None:
        schedule = deep_gemm.get_paged_mqa_logits_metadata(
            c.context_lens, c.block_kv, deep_gemm.get_num_sms(), c.indices
        )
    return deep_gemm.fp8_fp4_paged_mqa_logits(
        (c.q, None),
        c.kv_cache,
        c.weights,
        c.context_lens,
        c.block_table,
        schedule,
        c.max_context_len,
        False,
        logits_dtype,
        c.indices,
    )


def check(out: torch.Tensor, c: Case, ref: tuple[torch.Tensor, torch.Tensor] | None = None) -> None:
    want, mag = reference(c) if ref is None else ref
    assert out.shape == want.shape
    got = out.double()
    neg = want == NEG_INF
    assert torch.equal(got == NEG_INF, neg), "-inf pattern differs"
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan), "NaN pattern differs"
    fin = ~(neg | nan)
    g, v, m = got[fin], want[fin], mag[fin]
    assert torch.isfinite(g).all()
    # FP8 products summed by the tensor cores (whose FP8 accumulation keeps fewer bits than
    # float32) over D, then over heads in float32: relative to the magnitude of the terms.
    bound = TOL * m + 1e-6
    if out.dtype == torch.bfloat16:
        bound = bound + 2**-8 * v.abs()
    excess = (g - v).abs() - bound
    assert (excess <= 0).all(), f"max error over bound {excess.max().item():.3e} at {int((excess > 0).sum())} entries"


def expected_row_stride(cols: int, dtype: torch.dtype) -> int:
    e = 1024 // torch.empty((), dtype=dtype).element_size()
    a = (cols + 255) // 256 * 256
    return (a + e - 1) // e * e


# ---- schedule ------------------------------------------------------------------------------


def schedule_py(lens: torch.Tensor, block_kv: int, num_sms: int) -> torch.Tensor:
    n = [(max(0, int(r.max())) + block_kv - 1) // block_kv for r in lens.cpu()]
    ends, acc = [], 0
    for v in n:
        acc += v
        ends.append(acc)
    total = acc
    rows = []
    for s in range(num_sms + 1):
        p = s * (total // num_sms) + min(s, total % num_sms)
        b = bisect.bisect_right(ends, p)
        start = ends[b - 1] if b > 0 else 0
        rows.append((b, p - start))
    return torch.tensor(rows, dtype=torch.int32)


@pytest.mark.parametrize("seed", range(12))
def test_schedule_matches_formula(seed):
    rng = random.Random(seed)
    batch = rng.choice([0, 1, 3, 17, 131, 1025, 3000])
    next_n = rng.choice([1, 2, 3])
    block_kv = rng.choice([32, 64])
    num_sms = rng.choice([1, 2, 7, 78, 132, 1500])
    hi = rng.choice([1, 70, 5000, 70000])
    lens = torch.randint(-3, hi, (batch, next_n), dtype=torch.int32)
    if batch > 4:
        lens[rng.randrange(batch)] = 0
    dev = lens.cuda()
    got = deep_gemm.get_paged_mqa_logits_metadata(dev, block_kv, num_sms)
    assert got.is_cuda and got.dtype == torch.int32 and got.shape == (num_sms + 1, 2)
    assert torch.equal(got.cpu(), schedule_py(lens, block_kv, num_sms))
    # A strided context_lens view gives the same rows.
    wide = torch.zeros(batch, next_n * 2, dtype=torch.int32, device="cuda")
    wide[:, ::2] = dev
    assert torch.equal(deep_gemm.get_paged_mqa_logits_metadata(wide[:, ::2], block_kv, num_sms).cpu(), got.cpu())


# ---- logits --------------------------------------------------------------------------------

CASES = [
    # batch, next_n, heads, dim, block_kv, avg
    (5, 1, 64, 128, 64, 700),
    (6, 2, 64, 128, 64, 900),
    (7, 1, 32, 128, 64, 1300),
    (5, 2, 32, 128, 64, 500),
    (4, 1, 64, 128, 32, 600),
    (4, 2, 32, 128, 32, 800),
    (5, 1, 64, 64, 64, 700),
    (5, 2, 32, 64, 32, 500),
    (4, 1, 32, 32, 64, 300),
    (4, 2, 16, 128, 64, 400),
    (3, 1, 16, 64, 32, 200),
    (300, 1, 64, 128, 64, 150),  # more groups than SMs, short contexts
    (1, 1, 64, 128, 64, 20),  # a handful of blocks for many SMs
]


@pytest.mark.parametrize("case", CASES, ids=lambda x: "x".join(map(str, x)))
def test_logits_match_reference(case):
    torch.manual_seed(hash(case) % 2**31)
    c = make_case(*case, extra_cols=37)
    out = run(c)
    assert out.stride(0) == expected_row_stride(c.max_context_len, torch.float32)
    check(out, c)


# ---- pipeline variants (DG_PAGED_MQA_CONFIG) ------------------------------------------------

VARIANTS = [f"{v}{s}" for s in ("", "_split") for v in ("wg2", "wg2_deep", "wg4", "wg4_deep")]
VARIANT_CASES = [
    (5, 1, 64, 128, 64, 700),
    (5, 2, 32, 128, 64, 500),
    (4, 1, 64, 128, 32, 600),
    (6, 2, 64, 128, 64, 900),  # next_n * H = 128: two warpgroups under every variant
    (5, 2, 32, 64, 32, 500),
    (3, 1, 16, 64, 32, 200),
    (300, 1, 64, 128, 64, 150),
    (1, 1, 64, 128, 64, 20),
    (48, 2, 32, 128, 64, 8192),  # tens of blocks per CTA: every pipeline wraps several times
    (64, 1, 64, 128, 64, 6000),
]


_VARIANT_INPUTS: dict = {}


def variant_inputs(case: tuple) -> tuple:
    """The case's inputs, float64 reference and default-variant logits, built once per case."""
    if case not in _VARIANT_INPUTS:
        _VARIANT_INPUTS.clear()  # one case's tensors at a time
        torch.manual_seed(hash(case) % 2**31)
        c = make_case(*case, extra_cols=37)
        saved = os.environ.pop("DG_PAGED_MQA_CONFIG", None)
        try:
            base = run(c)
        finally:
            if saved is not None:
                os.environ["DG_PAGED_MQA_CONFIG"] = saved
        _VARIANT_INPUTS[case] = (c, reference(c), base)
    return _VARIANT_INPUTS[case]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", VARIANT_CASES, ids=lambda x: "x".join(map(str, x)))
def test_variants_match_reference_and_default(monkeypatch, case, variant):
    c, ref, base = variant_inputs(case)
    monkeypatch.setenv("DG_PAGED_MQA_CONFIG", variant)
    out = run(c)
    check(out, c, ref)
    # Every variant computes each logit with the same operations: bitwise the default's.
    assert torch.equal(out.view(torch.int32), base.view(torch.int32))


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_bf16_varlen_and_bad_ids(monkeypatch, variant):
    monkeypatch.setenv("DG_PAGED_MQA_CONFIG", variant)
    torch.manual_seed(21)
    c = make_case(6, 2, 32, 128, 64, 800, weights_dtype=torch.bfloat16)
    check(run(c, torch.bfloat16), c)
    c = make_case(20, 1, 64, 128, 64, 600, num_seqs=6)
    check(run(c), c)
    c = make_case(6, 2, 32, 128, 64, 900, zero_rows=False)
    c.block_table[0, 1] = c.kv_cache.shape[0]
    c.block_table[3, 0] = -7
    out = run(c)
    assert torch.isnan(out[1, 64:128]).all() and torch.isnan(out[7, :64]).all()
    check(out, c)


def test_bad_variant_is_an_error(monkeypatch):
    torch.manual_seed(22)
    c = make_case(2, 1, 64, 128, 64, 100)
    monkeypatch.setenv("DG_PAGED_MQA_CONFIG", "wg3")
    with pytest.raises(RuntimeError, match="DG_PAGED_MQA_CONFIG"):
        run(c)
    monkeypatch.setenv("DG_PAGED_MQA_CONFIG", "default")
    check(run(c), c)


@pytest.mark.parametrize("weights_dtype", [torch.float32, torch.bfloat16])
def test_logits_bf16(weights_dtype):
    torch.manual_seed(3)
    c = make_case(6, 2, 64, 128, 64, 800, weights_dtype=weights_dtype)
    out = run(c, torch.bfloat16)
    assert out.dtype == torch.bfloat16
    assert out.stride(0) == expected_row_stride(c.max_context_len, torch.bfloat16)
    check(out, c)


@pytest.mark.parametrize("block_kv", [32, 64])
def test_logits_varlen_indices(block_kv):
    torch.manual_seed(block_kv)
    c = make_case(20, 1, 64, 128, block_kv, 600, num_seqs=6)
    check(run(c), c)


def test_legacy_fp8_paged_mqa_logits():
    torch.manual_seed(5)
    c = make_case(5, 2, 32, 128, 64, 600)
    schedule = deep_gemm.get_paged_mqa_logits_metadata(c.context_lens, 64, deep_gemm.get_num_sms())
    out = deep_gemm.fp8_paged_mqa_logits(
        c.q, c.kv_cache, c.weights, c.context_lens, c.block_table, schedule, c.max_context_len, False
    )
    check(out, c)


@pytest.mark.parametrize("pad", [16, 4])  # 16: native with a padded block stride; 4: the reference path
def test_padded_cache(pad):
    torch.manual_seed(pad)
    c = make_case(4, 2, 64, 128, 64, 500, pad=pad)
    check(run(c), c)


def test_bad_block_ids_give_nan():
    torch.manual_seed(11)
    c = make_case(6, 2, 64, 128, 64, 900, zero_rows=False)
    num_blocks = c.kv_cache.shape[0]
    c.block_table[0, 1] = num_blocks  # just past the cache
    c.block_table[3, 0] = -7
    c.block_table[4, 2] = 2**31 - 1
    out = run(c)
    torch.cuda.synchronize()  # no fault
    # Row 2b + 1 is group b's full-length query.
    assert torch.isnan(out[1, 64:128]).all() and torch.isnan(out[7, :64]).all() and torch.isnan(out[9, 128:192]).all()
    check(out, c)


def test_short_block_table_and_bad_indices_give_nan():
    torch.manual_seed(12)
    c = make_case(8, 1, 32, 128, 64, 500, num_seqs=3, zero_rows=False)
    c.block_table = c.block_table[:, :3].contiguous()  # the table ends before the contexts
    c.indices[2] = 3  # past the table's rows
    c.indices[5] = -1
    out = run(c)
    torch.cuda.synchronize()
    assert torch.isnan(out[2, :10]).all()
    check(out, c)


def test_deterministic():
    torch.manual_seed(13)
    c = make_case(40, 2, 64, 128, 64, 1500)
    schedule = deep_gemm.get_paged_mqa_logits_metadata(c.context_lens, 64, deep_gemm.get_num_sms())
    first = run(c, schedule=schedule)
    for _ in range(19):
        again = run(c, schedule=schedule)
        assert torch.equal(again.view(torch.int32), first.view(torch.int32))


def test_cuda_graph_replay_with_new_lengths_and_table():
    torch.manual_seed(14)
    c = make_case(12, 2, 64, 128, 64, 800, zero_rows=False)
    num_sms = deep_gemm.get_num_sms()

    def step():
        schedule = deep_gemm.get_paged_mqa_logits_metadata(c.context_lens, c.block_kv, num_sms)
        return run(c, schedule=schedule)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    graph.replay()
    torch.cuda.synchronize()
    check(captured, c)
    capacity = (c.max_context_len // c.block_kv) * c.block_kv
    for _ in range(3):
        new_lens = torch.randint(0, capacity + 1, c.context_lens.shape, dtype=torch.int32)
        c.context_lens.copy_(new_lens)
        # Shuffle the blocks each sequence reads among all used blocks.
        table = c.block_table.cpu()
        used = table[:, : capacity // c.block_kv].flatten()
        table[:, : capacity // c.block_kv] = used[torch.randperm(used.numel())].view(table.shape[0], -1)
        c.block_table.copy_(table)
        graph.replay()
        torch.cuda.synchronize()
        check(captured, c)
        assert torch.equal(captured.view(torch.int32), step().view(torch.int32))


def test_extra_memory_is_the_output():
    torch.manual_seed(15)
    c = make_case(128, 1, 64, 128, 64, 4096, zero_rows=False)
    schedule = deep_gemm.get_paged_mqa_logits_metadata(c.context_lens, 64, deep_gemm.get_num_sms())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = run(c, schedule=schedule)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    out_bytes = out.shape[0] * out.stride(0) * out.element_size()
    assert extra <= out_bytes + (1 << 20), f"{extra} bytes for a {out_bytes}-byte result"
    # Spot-check a few rows against the definition (the whole reference is slow here).
    rows = [0, 37, 127]
    small = Case(
        q=c.q[rows],
        kv_cache=c.kv_cache,
        values=c.values,
        scales=c.scales,
        weights=c.weights[rows],
        context_lens=c.context_lens[rows],
        block_table=c.block_table[rows],
        indices=None,
        max_context_len=c.max_context_len,
        block_kv=64,
    )
    want, mag = reference(small)
    got = out[rows].double()
    fin = torch.isfinite(want)
    assert torch.equal(got == NEG_INF, want == NEG_INF)
    assert ((got[fin] - want[fin]).abs() <= TOL * mag[fin] + 1e-6).all()


def test_launches_the_native_kernels_only():
    torch.manual_seed(16)
    c = make_case(4, 1, 64, 128, 64, 300)
    run(c)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run(c)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    kernels = [n for n in names if "memcpy" not in n.lower() and "memset" not in n.lower()]
    assert any("paged_mqa_logits_metadata" in n for n in kernels), kernels
    assert any("paged_mqa_logits" in n and "metadata" not in n for n in kernels), kernels
    assert all("paged_mqa_logits" in n for n in kernels), kernels
