"""Grouped GEMMs on one GPU: deep_gemm's M-grouped FP8 contiguous (per-row ids and psum) and
masked GEMMs against one torch blockwise `_scaled_mm` per group, its BF16 ones against
`torch._grouped_mm`, the K-grouped FP8 NT GEMM (float32 D += per group) against one bf16
torch.matmul of the dequantised operands per group, and einsum 'bhr,hdr->bhd' (bf16, B a
strided slice) against torch.einsum (the in-run anchors), next to the upstream figures of
gpu-targets.md (measured side by side on an H200; the target).  The bf16 K-grouped TN GEMM and
einsum 'bhd,hdr->bhr' (MN-major operands) have no upstream figure there: torch's per-group
matmul and torch.einsum are their anchors.  K-grouped sizes are drawn
in [0.7, 1.3] x the mean and aligned to 128, the last absorbing the difference.

Shapes as gpu-targets.md: contiguous = groups x total rows x n x k, each group's rows drawn
in [0.7, 1.3] x the expected m and aligned to 128 (the last group absorbs the difference so
the total matches the table); masked = groups x expected m x n x k, max_m 4096, masked_m
drawn in [0.7, 1.3] x expected m, expected_m passed as 1.2 x expected m.  Method: random
inputs, L2 flushed before every timed call, CUDA events, median, calls interleaved (see
gpu_gemm.py).  Every case is checked against a float64 reference on sampled groups first.

    python benchmarks/gpu_grouped_gemm.py [--repeats 10] [--markdown out.md] [--only FAMILY,...]

`--other MODULE` also times a second DeepGEMM-compatible package (e.g. upstream built under
another name) on the same operands, interleaved with ours and the anchor, and prints its time and
other/ours per case and family.  `--only contiguous,contiguous_psum,bf16_contiguous` runs those
families alone (e.g. for an A/B against `DG_GEMM_GENERAL_SCHEDULE=1`, which sends them to the
general kernel).  `--tiles 128x128,...` also times those forced tiles, interleaved call by call
with the pick, and `--variant NAME:KEY=VALUE,...` the kernels' per-launch switches (e.g.
`--variant skip:DG_GEMM_SKIP_IDLE_WAVES=1`): each variant's result is checked against the
reference first, and each case and family prints its paired ratios and verdict
(benchmarks/variants.py).  `--sfa-mn-major` passes SFA of the FP8 M-grouped cases M-major, as
get_mn_major_tma_aligned_tensor gives it (prepared once, for ours and `--other` alike, as
gpu_gemm.py does): the layout upstream's own tests pass, where the default K-major SFA makes
upstream transpose it inside the timed call.  `--dense-rows` also times, for the FP8 contiguous
families, one dense `fp8_gemm_nt` over the same rows against group 0's B (the same MMA work, the
same SFA layout) in the same rounds, and prints ours/dense per case and family: what the
contiguous schedule costs over the dense kernel's (docs/performance.md, fifty-fourth session).
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
from collections.abc import Callable, Sequence
from functools import partial
from types import ModuleType

import torch
from gpu_gemm import emit, environment, set_head_start, time_gpu_samples, time_host
from variants import Paired, Variant, paired, summary, under, variants_from_args

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

# (groups, total rows, n, k): upstream µs, from gpu-targets.md.
CONTIGUOUS = {
    (4, 33024, 6144, 7168): 2167.8, (4, 34944, 7168, 3072): 1271.4, (4, 29952, 4096, 4096): 900.8,
    (4, 32640, 4096, 2048): 602.1, (8, 33024, 6144, 7168): 2190.4, (8, 28800, 7168, 3072): 1080.4,
    (8, 31232, 4096, 4096): 910.5, (8, 35968, 4096, 2048): 626.7,
}  # fmt: skip
# (groups, expected m, n, k): upstream µs.
MASKED = {
    (32, 192, 6144, 7168): 667.6, (32, 192, 4096, 2048): 227.1, (6, 1024, 6144, 7168): 523.3,
    (6, 1024, 4096, 2048): 124.1, (32, 20, 6144, 7168): 461.7, (32, 20, 4096, 2048): 194.8,
    (6, 20, 6144, 7168): 171.7, (6, 20, 4096, 2048): 26.1,
}  # fmt: skip
BF16_CONTIGUOUS = {
    (4, 35456, 6144, 7168): 3975.6, (4, 32512, 4096, 2048): 784.8, (8, 38656, 6144, 7168): 4324.0,
    (8, 35328, 4096, 2048): 851.1,
}  # fmt: skip
BF16_MASKED = {
    (32, 192, 6144, 7168): 1072.2, (32, 192, 4096, 2048): 298.8, (6, 1024, 6144, 7168): 855.7,
    (6, 1024, 4096, 2048): 144.5,
}  # fmt: skip
# (groups, m, n, total K) and (b, h, r, d): upstream µs.
K_GROUPED = {(4, 4096, 7168, 34304): 2195.8, (4, 7168, 2048, 33024): 1094.6}
EINSUM_BHR = {
    (128, 128, 512, 128): 16.8, (4096, 128, 512, 128): 186.4, (128, 8, 4096, 1024): 30.9,
    (4096, 8, 4096, 1024): 371.9,
}  # fmt: skip
# No upstream figure in gpu-targets.md (the torch anchor is the in-run reference): the bf16
# K-grouped TN GEMM (MN-major operands) and einsum 'bhd,hdr->bhr' (B MN-major), (b, h, d, r).
K_GROUPED_BF16 = [(4, 4096, 7168, 34304), (4, 7168, 2048, 33024)]
EINSUM_BHD = [(128, 128, 128, 512), (4096, 128, 128, 512), (128, 8, 1024, 4096), (4096, 8, 1024, 4096)]
ALIGN = 128
VARIANTS: list[Variant] = []  # --tiles and --variant: per-launch switches timed next to the pick
OTHER: list[ModuleType] = []  # --other: a second package, called as ours(module)


def peak_bytes(fn: Callable[[], None]) -> int:
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def time_pair(
    ours: Callable[..., None],
    anchor: Callable[[], None],
    repeats: int,
    flush: torch.Tensor,
    extras: Sequence[tuple[str, Callable[[], None]]] = (),
) -> tuple[float, float, float | None, list[tuple[str, float, Paired]], list[tuple[str, float, Paired]]]:
    """Median µs of ours and the anchor, interleaved, of the --other package's same call (ours(module)),
    per variant (--tiles, --variant) ours under it, and each extra call (a second anchor, e.g.
    --dense-rows): median µs and the paired ratios ours / it."""
    others: list[Callable[[], None]] = []
    if OTHER:
        try:
            ours(OTHER[0])
            others.append(lambda: ours(OTHER[0]))
        except Exception as e:  # a call the other package does not take (a layout it lacks here): time the rest
            print(f"  ({OTHER[0].__name__} refused this case: {type(e).__name__}: {str(e)[:160]})", flush=True)
    first_extra = 2 + len(others) + len(VARIANTS)
    fns: list[Callable[[], object]] = [
        ours,
        anchor,
        *others,
        *(under(ours, v) for v in VARIANTS),
        *(fn for _, fn in extras),
    ]
    samples = time_gpu_samples(fns, repeats, flush)
    times = [statistics.median(t) for t in samples]
    t_other = times[2] if others else None
    by_variant = [
        (v.name, times[i], paired(samples[0], samples[i]))
        for i, v in zip(range(2 + len(others), first_extra), VARIANTS, strict=True)
    ]
    by_extra = [
        (name, times[i], paired(samples[0], samples[i]))
        for i, (name, _) in zip(range(first_extra, len(fns)), extras, strict=True)
    ]
    return times[0], times[1], t_other, by_variant, by_extra


def measure(
    m: int,
    ours: Callable[..., None],
    anchor: Callable[[], None],
    check: Callable[[], float],
    repeats: int,
    flush: torch.Tensor,
    host_calls: int,
    extras: Sequence[tuple[str, Callable[[], None]]] = (),
) -> dict:
    """Device times of ours, the anchor, --other and the extra calls (interleaved), host time and peak
    extra memory of ours.  `check` calls ours and returns calc_diff against the float64 reference; it
    runs once as launched and once under each variant, before any timing."""
    diff = check()
    variant_diffs = {v.name: under(check, v)() for v in VARIANTS}
    t_ours, t_torch, t_other, by_variant, by_extra = time_pair(ours, anchor, repeats, flush, extras)
    return {
        "variants": by_variant,
        "extras": by_extra,
        "variant_diffs": variant_diffs,
        "m": m,
        "ours": t_ours,
        "torch": t_torch,
        "other": t_other,
        "diff": diff,
        "host": time_host(ours, host_calls),
        "mem": peak_bytes(ours),
    }


class KGroupedOperands:
    """A K-grouped FP8 problem (groups x m x n x total K): K sizes drawn per group, A and B packed
    group after group, per-row scales for both, and a float32 D that each call accumulates into."""

    def __init__(self, groups: int, m: int, n: int, total: int) -> None:
        self.ks = sizes_for(groups, total, total // groups)
        self.blocks = [k // 128 for k in self.ks]
        self.a = torch.randn(sum(self.ks) * m, device="cuda").to(torch.float8_e4m3fn)
        self.b = torch.randn(sum(self.ks) * n, device="cuda").to(torch.float8_e4m3fn)
        self.sfa = torch.rand(m, sum(self.blocks), device="cuda") + 0.5
        self.sfb = torch.rand(n, sum(self.blocks), device="cuda") + 0.5
        self.d = torch.randn(groups, m, n, device="cuda")
        self.layout = torch.tensor(self.ks, dtype=torch.int32, device="cuda")

    def __call__(self, mod: ModuleType = deep_gemm) -> None:
        mod.k_grouped_fp8_gemm_nt_contiguous(
            (self.a, self.sfa), (self.b, self.sfb), self.d, self.ks, self.layout, self.d
        )

    def dequantised(self, g: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Group g's A (m x k_g) and B (n x k_g) with their scales applied, in float64."""
        start, block0 = sum(self.ks[:g]), sum(self.blocks[:g])

        def one(x: torch.Tensor, sf: torch.Tensor) -> torch.Tensor:
            mn = sf.shape[0]
            data = x[start * mn : (start + self.ks[g]) * mn].view(mn, self.ks[g]).double()
            return data * sf[:, block0 : block0 + self.blocks[g]].double().repeat_interleave(128, 1)

        return one(self.a, self.sfa), one(self.b, self.sfb)


def k_grouped_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    groups, m, n, _ = key
    ours = KGroupedOperands(*key)
    d = ours.d

    g = random.randrange(groups)
    a_g, b_g = ours.dequantised(g)
    product = a_g[:256] @ b_g[:256].t()

    def check() -> float:  # D accumulates: the reference is what D held before the call plus the product
        before = d[g, :256, :256].double().clone()
        ours()
        return calc_diff(d[g, :256, :256], before + product)

    deq = [[x.bfloat16() for x in ours.dequantised(g2)] for g2 in range(groups)]
    out = torch.empty(groups, m, n, device="cuda", dtype=torch.bfloat16)

    def anchor() -> None:
        for g2 in range(groups):
            torch.matmul(deq[g2][0], deq[g2][1].t(), out=out[g2])

    return measure(m, ours, anchor, check, repeats, flush, host_calls=20)


def k_grouped_bf16_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    groups, m, n, total = key
    ks = sizes_for(groups, total, total // groups)
    a = torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16)
    d = torch.randn(groups, m, n, device="cuda")
    layout = torch.tensor(ks, dtype=torch.int32, device="cuda")
    starts = [sum(ks[:g]) for g in range(groups)]

    def ours(mod: ModuleType = deep_gemm) -> None:
        mod.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, layout, d)

    g = random.randrange(groups)
    a_g, b_g = a[starts[g] : starts[g] + ks[g]], b[starts[g] : starts[g] + ks[g]]
    product = a_g[:, :256].double().t() @ b_g[:, :256].double()

    def check() -> float:
        before = d[g, :256, :256].double().clone()
        ours()
        return calc_diff(d[g, :256, :256], before + product)

    out = torch.empty(groups, m, n, device="cuda", dtype=torch.bfloat16)  # torch's bf16 product (float32 sums)

    def anchor() -> None:
        for g2 in range(groups):
            torch.matmul(a[starts[g2] : starts[g2] + ks[g2]].t(), b[starts[g2] : starts[g2] + ks[g2]], out=out[g2])

    return measure(m, ours, anchor, check, repeats, flush, host_calls=20)


def einsum_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor, expr: str = "bhr,hdr->bhd") -> dict:
    """'bhr,hdr->bhd': key (b, h, r, d), y a strided slice; 'bhd,hdr->bhr': key (b, h, d, r), B MN-major."""
    if expr == "bhr,hdr->bhd":
        nb, h, r, dd = key
        x = torch.randn(nb, h, r, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(h, 2 * dd, r, device="cuda", dtype=torch.bfloat16)[:, :dd, :]  # a strided slice
        out = torch.empty(nb, h, dd, device="cuda", dtype=torch.bfloat16)
    else:
        nb, h, dd, r = key
        x = torch.randn(nb, h, dd, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(h, dd, r, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(nb, h, r, device="cuda", dtype=torch.bfloat16)

    def ours(mod: ModuleType = deep_gemm) -> None:
        mod.einsum(expr, x, y, out)

    rows = slice(0, min(nb, 256))
    expected = torch.einsum(expr, x[rows].double(), y.double())

    def check() -> float:
        ours()
        return calc_diff(out[rows], expected)

    def anchor() -> None:
        torch.einsum(expr, x, y)

    return measure(nb, ours, anchor, check, repeats, flush, host_calls=50)


def grouped_b(groups: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    data, sf = zip(*(per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False) for _ in range(groups)))
    return torch.stack(data), torch.stack(sf)


def reference_rows(a: torch.Tensor, sfa: torch.Tensor, b: torch.Tensor, sfb: torch.Tensor) -> torch.Tensor:
    k = a.shape[-1]
    a64 = a.double() * sfa.double().repeat_interleave(128, -1)[..., :k]
    b64 = b.double() * sfb.double().repeat_interleave(128, -2).repeat_interleave(128, -1)[: b.shape[0], :k]
    return a64 @ b64.t()


def sizes_for(groups: int, total: int, expected: int, rng: random.Random | None = None) -> list[int]:
    draw = rng or random
    sizes = [(int(expected * draw.uniform(0.7, 1.3)) + ALIGN - 1) // ALIGN * ALIGN for _ in range(groups)]
    sizes[-1] = max(ALIGN, total - sum(sizes[:-1]))
    return sizes


class ContiguousOperands:
    """An M-grouped contiguous FP8 problem (groups x total rows x n x k): rows drawn per group,
    per-row ids or psum ends, and the op call.  The group sizes are drawn from the problem's own
    seed, so both layouts of one problem have the same groups."""

    def __init__(self, groups: int, total: int, n: int, k: int, use_psum: bool, sfa_mn_major: bool = False) -> None:
        self.sizes = sizes_for(groups, total, total // groups, random.Random(f"{groups}x{total}x{n}x{k}"))
        self.m = sum(self.sizes)
        self.a, self.sfa = per_token_cast_to_fp8(torch.randn(self.m, k, device="cuda"), use_ue8m0=False)
        if sfa_mn_major:
            self.sfa = deep_gemm.get_mn_major_tma_aligned_tensor(self.sfa)
        self.b, self.sfb = grouped_b(groups, n, k)
        self.starts = [sum(self.sizes[:g]) for g in range(groups)]
        if use_psum:
            self.layout = self.psum_ends()
        else:
            self.layout = torch.cat([torch.full((r,), g, dtype=torch.int32) for g, r in enumerate(self.sizes)]).cuda()
        self.d = torch.empty(self.m, n, device="cuda", dtype=torch.bfloat16)
        self.kwargs = {"use_psum_layout": True, "expected_m_for_psum_layout": total // groups} if use_psum else {}

    def __call__(self, mod: ModuleType = deep_gemm) -> None:
        ab, bb = (self.a, self.sfa), (self.b, self.sfb)
        mod.m_grouped_fp8_gemm_nt_contiguous(ab, bb, self.d, self.layout, **self.kwargs)

    def psum_ends(self) -> torch.Tensor:
        """The groups as psum ends (each group's end row), whichever layout the object calls with."""
        ends = [s + r for s, r in zip(self.starts, self.sizes, strict=True)]
        return torch.tensor(ends, dtype=torch.int32, device="cuda")


def contiguous_case(
    key: tuple[int, int, int, int],
    use_psum: bool,
    repeats: int,
    flush: torch.Tensor,
    sfa_mn_major: bool = False,
    dense_rows: bool = False,
) -> dict:
    groups, total, n, k = key
    ours = ContiguousOperands(groups, total, n, k, use_psum, sfa_mn_major)
    sizes, m, starts, d = ours.sizes, ours.m, ours.starts, ours.d
    a, sfa, b, sfb = ours.a, ours.sfa, ours.b, ours.sfb
    g = random.randrange(groups)
    rows = slice(starts[g], starts[g] + min(sizes[g], 512))
    expected = reference_rows(a[rows], sfa[rows], b[g], sfb[g])

    def check() -> float:
        ours()
        return calc_diff(d[rows], expected)

    d_torch = torch.empty_like(d)
    spans = [slice(starts[g2], starts[g2] + sizes[g2]) for g2 in range(groups)]
    scales = [sfa[r].t().contiguous().t() for r in spans]  # M-major per group, as cuBLASLt wants

    def anchor() -> None:
        for g2, r in enumerate(spans):
            torch._scaled_mm(a[r], b[g2].t(), scales[g2], sfb[g2].t(), out_dtype=torch.bfloat16, out=d_torch[r])

    extras: list[tuple[str, Callable[[], None]]] = []
    if dense_rows:  # the same MMA work as one dense problem: every row against group 0's B
        d_dense = torch.empty_like(d)
        extras.append(("dense-rows", lambda: deep_gemm.fp8_gemm_nt((a, sfa), (b[0], sfb[0]), d_dense)))
    return measure(m, ours, anchor, check, repeats, flush, host_calls=50, extras=extras)


class MaskedOperands:
    """An M-grouped masked FP8 problem (groups x expected m x n x k): max_m 4096 rows per group,
    masked_m drawn in [0.7, 1.3] x the expected m, expected_m passed as 1.2 x it, and the op call."""

    def __init__(
        self, groups: int, expected: int, n: int, k: int, max_m: int = 4096, sfa_mn_major: bool = False
    ) -> None:
        self.counts = [min(max_m, int(expected * random.uniform(0.7, 1.3))) for _ in range(groups)]
        a, sfa = zip(
            *(per_token_cast_to_fp8(torch.randn(max_m, k, device="cuda"), use_ue8m0=False) for _ in range(groups)),
            strict=True,
        )
        self.a_t, self.sfa_t = torch.stack(a), torch.stack(sfa)  # (the per-group tensors are dropped)
        if sfa_mn_major:
            self.sfa_t = deep_gemm.get_mn_major_tma_aligned_tensor(self.sfa_t)
        self.b, self.sfb = grouped_b(groups, n, k)
        self.masked_m = torch.tensor(self.counts, dtype=torch.int32, device="cuda")
        self.d = torch.empty(groups, max_m, n, device="cuda", dtype=torch.bfloat16)
        self.hint = int(expected * 1.2)

    def __call__(self, mod: ModuleType = deep_gemm) -> None:
        lhs, rhs = (self.a_t, self.sfa_t), (self.b, self.sfb)
        mod.m_grouped_fp8_gemm_nt_masked(lhs, rhs, self.d, self.masked_m, self.hint)


def masked_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor, sfa_mn_major: bool = False) -> dict:
    groups = key[0]
    ours = MaskedOperands(*key, sfa_mn_major=sfa_mn_major)
    counts, a_t, sfa_t, b, sfb, d = ours.counts, ours.a_t, ours.sfa_t, ours.b, ours.sfb, ours.d

    g = random.randrange(groups)
    rows = slice(0, min(counts[g], 512))
    expected_rows = reference_rows(a_t[g, rows], sfa_t[g, rows], b[g], sfb[g])

    def check() -> float:
        ours()
        return calc_diff(d[g, rows], expected_rows)

    rows_of = [max(16, (c + 15) // 16 * 16) for c in counts]  # cuBLASLt wants M a multiple of 16 here
    scales = [sfa_t[g2, :r].t().contiguous().t() for g2, r in enumerate(rows_of)]
    d_torch = torch.empty_like(d)

    def anchor() -> None:
        for g2, r in enumerate(rows_of):
            torch._scaled_mm(
                a_t[g2, :r], b[g2].t(), scales[g2], sfb[g2].t(), out_dtype=torch.bfloat16, out=d_torch[g2, :r]
            )

    return measure(sum(counts), ours, anchor, check, repeats, flush, host_calls=50)


def bf16_contiguous_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    groups, total, n, k = key
    sizes = sizes_for(groups, total, total // groups)
    m = sum(sizes)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
    ends = torch.tensor([sum(sizes[: g + 1]) for g in range(groups)], dtype=torch.int32, device="cuda")
    layout = torch.cat([torch.full((r,), g, dtype=torch.int32) for g, r in enumerate(sizes)]).cuda()
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

    def ours(mod: ModuleType = deep_gemm) -> None:
        mod.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout)

    g = random.randrange(groups)
    start = sum(sizes[:g])
    rows = slice(start, start + min(sizes[g], 512))
    expected = a[rows].double() @ b[g].double().t()

    def check() -> float:
        ours()
        return calc_diff(d[rows], expected)

    bt = b.transpose(1, 2)

    def anchor() -> None:
        torch._grouped_mm(a, bt, offs=ends, out_dtype=torch.bfloat16)

    return measure(m, ours, anchor, check, repeats, flush, host_calls=50)


class BF16MaskedOperands:
    """An M-grouped masked BF16 problem (groups x expected m x n x k, max_m 4096): rows per group
    drawn in [0.7, 1.3] x expected, expected_m passed as 1.2 x expected, and the op call."""

    def __init__(self, groups: int, expected: int, n: int, k: int) -> None:
        max_m = 4096
        self.counts = [min(max_m, int(expected * random.uniform(0.7, 1.3))) for _ in range(groups)]
        self.a = torch.randn(groups, max_m, k, device="cuda", dtype=torch.bfloat16)
        self.b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
        self.masked_m = torch.tensor(self.counts, dtype=torch.int32, device="cuda")
        self.d = torch.empty(groups, max_m, n, device="cuda", dtype=torch.bfloat16)
        self.hint = int(expected * 1.2)

    def __call__(self, mod: ModuleType = deep_gemm) -> None:
        mod.m_grouped_bf16_gemm_nt_masked(self.a, self.b, self.d, self.masked_m, self.hint)


def bf16_masked_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    groups = key[0]
    ours = BF16MaskedOperands(*key)
    a, b, d, counts = ours.a, ours.b, ours.d, ours.counts
    g = random.randrange(groups)
    rows = slice(0, min(counts[g], 512))
    expected = a[g, rows].double() @ b[g].double().t()

    def check() -> float:
        ours()
        return calc_diff(d[g, rows], expected)

    bt = b.transpose(1, 2)

    def anchor() -> None:  # the whole max_m rows per group: torch has no masked form
        torch._grouped_mm(a, bt, out_dtype=torch.bfloat16)

    return measure(sum(counts), ours, anchor, check, repeats, flush, host_calls=50)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--markdown", default=None)
    parser.add_argument(
        "--only", default=None, help="comma-separated families to run (e.g. contiguous,bf16_contiguous)"
    )
    parser.add_argument("--tiles", default=None, help="BMxBN,...: forced tiles timed interleaved with the pick")
    parser.add_argument(
        "--variant",
        action="append",
        help="NAME:KEY=VALUE[,...]: per-launch switches timed interleaved with the pick (benchmarks/variants.py)",
    )
    parser.add_argument("--other", default=None, help="a second DeepGEMM-compatible module to time side by side")
    parser.add_argument("--head-start-cycles", type=int, default=0, help="GPU spin before each timed call")
    parser.add_argument(
        "--sfa-mn-major", action="store_true", help="FP8 M-grouped cases: SFA M-major (get_mn_major_tma_aligned_tensor)"
    )
    parser.add_argument(
        "--dense-rows",
        action="store_true",
        help="FP8 contiguous cases: also time one dense fp8_gemm_nt over the same rows (group 0's B)",
    )
    args = parser.parse_args()
    set_head_start(args.head_start_cycles)
    VARIANTS.extend(variants_from_args(args.variant, args.tiles))
    OTHER.extend([importlib.import_module(args.other)] if args.other else [])
    random.seed(0)
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    rows: list[tuple[str, str, float | None, dict]] = []
    cases: list[tuple[str, tuple[int, int, int, int], float | None, Callable[[], dict]]] = []
    for key, up in CONTIGUOUS.items():
        for family, psum in (("contiguous", False), ("contiguous_psum", True)):
            run = partial(contiguous_case, key, psum, args.repeats, flush, args.sfa_mn_major, args.dense_rows)
            cases.append((family, key, up, run))
    for key, up in MASKED.items():
        cases.append(("masked", key, up, lambda key=key: masked_case(key, args.repeats, flush, args.sfa_mn_major)))
    for key, up in BF16_CONTIGUOUS.items():
        cases.append(("bf16_contiguous", key, up, lambda key=key: bf16_contiguous_case(key, args.repeats, flush)))
    for key, up in BF16_MASKED.items():
        cases.append(("bf16_masked", key, up, lambda key=key: bf16_masked_case(key, args.repeats, flush)))
    for key, up in K_GROUPED.items():
        cases.append(("k_grouped_fp8_nt", key, up, lambda key=key: k_grouped_case(key, args.repeats, flush)))
    for key, up in EINSUM_BHR.items():
        cases.append(("einsum_bhr_hdr_bhd", key, up, lambda key=key: einsum_case(key, args.repeats, flush)))
    for key in K_GROUPED_BF16:
        cases.append(("k_grouped_bf16_tn", key, None, lambda key=key: k_grouped_bf16_case(key, args.repeats, flush)))
    for key in EINSUM_BHD:
        cases.append(
            ("einsum_bhd_hdr_bhr", key, None, lambda key=key: einsum_case(key, args.repeats, flush, "bhd,hdr->bhr"))
        )
    if args.only:
        wanted = set(args.only.split(","))
        cases = [case for case in cases if case[0] in wanted]
    for family, key, upstream, run in cases:
        r = run()
        # Upstream's total rows differ a little from ours (random draws): compare per row.
        up_rows = key[1] if "contiguous" in family else None
        target = None if upstream is None else upstream * (r["m"] / up_rows) if up_rows else upstream
        shape = "x".join(map(str, key))
        rows.append((family, shape, target, r))
        versus = "upstream –" if target is None else f"upstream {target:8.1f} ({target / r['ours']:.3f}x)"
        print(
            f"{family:18s} {shape:22s} rows {r['m']:6d} | ours {r['ours']:9.1f} us | torch per group {r['torch']:9.1f} "
            f"({r['torch'] / r['ours']:.2f}x) | {versus} | diff {r['diff']:.1e} | host {r['host']:.1f} us"
            + (f" | peak {r['mem'] / 2**20:.1f} MiB" if "mem" in r else "")
            + (f" | other {r['other']:.1f} ({r['other'] / r['ours']:.3f}x)" if r.get("other") else "")
            + "".join(f" | {name} {t:.1f} ({pair})" for name, t, pair in r["variants"])
            + "".join(f" | {name} {t:.1f} (ours/{name} {pair.median:.3f})" for name, t, pair in r["extras"]),
            flush=True,
        )
        bound = 1e-5 if family.startswith(("bf16", "einsum", "k_grouped_bf16")) else 1e-3
        assert r["diff"] < bound, f"{family} {shape}: calc_diff {r['diff']}"
        for name, v_diff in r["variant_diffs"].items():
            assert v_diff < bound, f"{family} {shape} under variant {name}: calc_diff {v_diff}"
    lines = [
        "| family | shape | rows | ours µs | torch per-group µs | torch/ours | upstream µs | upstream/ours | host µs |",
        "|" + "---|" * 9,
    ]
    for family, shape, target, r in rows:
        up = "– | –" if target is None else f"{target:.1f} | {target / r['ours']:.3f}"
        lines.append(
            f"| {family} | {shape} | {r['m']} | {r['ours']:.1f} | {r['torch']:.1f} | {r['torch'] / r['ours']:.2f} "
            f"| {up} | {r['host']:.1f} |"
        )
    for family in (
        "contiguous",
        "contiguous_psum",
        "masked",
        "bf16_contiguous",
        "bf16_masked",
        "k_grouped_fp8_nt",
        "einsum_bhr_hdr_bhd",
    ):
        ratios = [t / r["ours"] for f, _, t, r in rows if f == family and t is not None]
        if not ratios:  # a family left out by --only
            continue
        lines.append(
            f"\n{family}: geomean upstream/ours {statistics.geometric_mean(ratios):.3f}, worst {min(ratios):.3f}."
        )
    for family in ("k_grouped_bf16_tn", "einsum_bhd_hdr_bhr"):
        ratios = [r["torch"] / r["ours"] for f, _, _, r in rows if f == family]
        if not ratios:
            continue
        lines.append(f"\n{family} (no upstream figure): geomean torch/ours {statistics.geometric_mean(ratios):.3f}.")
    if OTHER:
        for family in dict.fromkeys(f for f, _, _, _ in rows):
            ratios = [r["other"] / r["ours"] for f, _, _, r in rows if f == family and r.get("other")]
            if ratios:
                lines.append(
                    f"\n{family}: geomean {OTHER[0].__name__}/ours (in-run) {statistics.geometric_mean(ratios):.3f}, "
                    f"worst {min(ratios):.3f}."
                )
    for family in dict.fromkeys(f for f, _, _, _ in rows):
        by_name: dict[str, list[float]] = {}
        for _, _, _, r in (row for row in rows if row[0] == family):
            for name, _, pair in r["extras"]:
                by_name.setdefault(name, []).append(pair.median)
        for name, medians in by_name.items():
            lines.append(
                f"\n{family}: {name}/ours (paired, in-run) geomean {1 / statistics.geometric_mean(medians):.3f}, "
                f"worst {1 / max(medians):.3f}; below 1: ours slower than the same work as one dense problem."
            )
    for family in dict.fromkeys(f for f, _, _, _ in rows):
        for v in VARIANTS:
            results = [pair for f, _, _, r in rows if f == family for name, _, pair in r["variants"] if name == v.name]
            lines.append("\n" + summary(family, v.name, results))
    lines.append(environment())
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
