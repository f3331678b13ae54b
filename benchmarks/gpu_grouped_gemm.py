"""M-grouped FP8 GEMMs on one GPU: deep_gemm's contiguous (per-row ids and psum) and masked
GEMMs against one torch blockwise `_scaled_mm` per group (the in-run anchor), next to the
upstream figures of gpu-targets.md (measured side by side on an H200; the target).

Shapes as gpu-targets.md: contiguous = groups x total rows x n x k, each group's rows drawn
in [0.7, 1.3] x the expected m and aligned to 128 (the last group absorbs the difference so
the total matches the table); masked = groups x expected m x n x k, max_m 4096, masked_m
drawn in [0.7, 1.3] x expected m, expected_m passed as 1.2 x expected m.  Method: random
inputs, L2 flushed before every timed call, CUDA events, median, calls interleaved (see
gpu_gemm.py).  Every case is checked against a float64 reference on sampled groups first.

    python benchmarks/gpu_grouped_gemm.py [--repeats 10] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import torch
from gpu_gemm import time_gpu, time_host

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
ALIGN = 128


def grouped_b(groups: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    data, sf = zip(*(per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), use_ue8m0=False) for _ in range(groups)))
    return torch.stack(data), torch.stack(sf)


def reference_rows(a: torch.Tensor, sfa: torch.Tensor, b: torch.Tensor, sfb: torch.Tensor) -> torch.Tensor:
    k = a.shape[-1]
    a64 = a.double() * sfa.double().repeat_interleave(128, -1)[..., :k]
    b64 = b.double() * sfb.double().repeat_interleave(128, -2).repeat_interleave(128, -1)[: b.shape[0], :k]
    return a64 @ b64.t()


def sizes_for(groups: int, total: int, expected: int) -> list[int]:
    sizes = [(int(expected * random.uniform(0.7, 1.3)) + ALIGN - 1) // ALIGN * ALIGN for _ in range(groups)]
    sizes[-1] = max(ALIGN, total - sum(sizes[:-1]))
    return sizes


def contiguous_case(key: tuple[int, int, int, int], use_psum: bool, repeats: int, flush: torch.Tensor) -> dict:
    groups, total, n, k = key
    sizes = sizes_for(groups, total, total // groups)
    m = sum(sizes)
    a, sfa = per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), use_ue8m0=False)
    b, sfb = grouped_b(groups, n, k)
    starts = [sum(sizes[:g]) for g in range(groups)]
    if use_psum:
        layout = torch.tensor([s + r for s, r in zip(starts, sizes, strict=True)], dtype=torch.int32, device="cuda")
    else:
        layout = torch.cat([torch.full((r,), g, dtype=torch.int32) for g, r in enumerate(sizes)]).cuda()
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    kwargs = {"use_psum_layout": True, "expected_m_for_psum_layout": total // groups} if use_psum else {}

    def ours() -> None:
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, layout, **kwargs)

    ours()
    g = random.randrange(groups)
    rows = slice(starts[g], starts[g] + min(sizes[g], 512))
    diff = calc_diff(d[rows], reference_rows(a[rows], sfa[rows], b[g], sfb[g]))
    d_torch = torch.empty_like(d)
    spans = [slice(starts[g2], starts[g2] + sizes[g2]) for g2 in range(groups)]
    scales = [sfa[r].t().contiguous().t() for r in spans]  # M-major per group, as cuBLASLt wants

    def anchor() -> None:
        for g2, r in enumerate(spans):
            torch._scaled_mm(a[r], b[g2].t(), scales[g2], sfb[g2].t(), out_dtype=torch.bfloat16, out=d_torch[r])

    t_ours, t_torch = time_gpu([ours, anchor], repeats, flush)
    return {"m": m, "ours": t_ours, "torch": t_torch, "diff": diff, "host": time_host(ours, 50)}


def masked_case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    groups, expected, n, k = key
    max_m = 4096
    counts = [min(max_m, int(expected * random.uniform(0.7, 1.3))) for _ in range(groups)]
    a, sfa = zip(
        *(per_token_cast_to_fp8(torch.randn(max_m, k, device="cuda"), use_ue8m0=False) for _ in range(groups)),
        strict=True,
    )
    a_t, sfa_t = torch.stack(a), torch.stack(sfa)
    b, sfb = grouped_b(groups, n, k)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = torch.empty(groups, max_m, n, device="cuda", dtype=torch.bfloat16)
    hint = int(expected * 1.2)

    def ours() -> None:
        deep_gemm.m_grouped_fp8_gemm_nt_masked((a_t, sfa_t), (b, sfb), d, masked_m, hint)

    ours()
    g = random.randrange(groups)
    rows = slice(0, min(counts[g], 512))
    diff = calc_diff(d[g, rows], reference_rows(a_t[g, rows], sfa_t[g, rows], b[g], sfb[g]))
    rows_of = [max(16, (c + 15) // 16 * 16) for c in counts]  # cuBLASLt wants M a multiple of 16 here
    scales = [s[:r].t().contiguous().t() for s, r in zip(sfa, rows_of, strict=True)]
    d_torch = torch.empty_like(d)

    def anchor() -> None:
        for g2, r in enumerate(rows_of):
            torch._scaled_mm(
                a_t[g2, :r], b[g2].t(), scales[g2], sfb[g2].t(), out_dtype=torch.bfloat16, out=d_torch[g2, :r]
            )

    t_ours, t_torch = time_gpu([ours, anchor], repeats, flush)
    return {"m": sum(counts), "ours": t_ours, "torch": t_torch, "diff": diff, "host": time_host(ours, 50)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    random.seed(0)
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    rows: list[tuple[str, str, float, dict]] = []
    cases: list[tuple[str, tuple[int, int, int, int], float, Callable[[], dict]]] = []
    for key, up in CONTIGUOUS.items():
        cases.append(("contiguous", key, up, lambda key=key: contiguous_case(key, False, args.repeats, flush)))
        cases.append(("contiguous_psum", key, up, lambda key=key: contiguous_case(key, True, args.repeats, flush)))
    for key, up in MASKED.items():
        cases.append(("masked", key, up, lambda key=key: masked_case(key, args.repeats, flush)))
    for family, key, upstream, run in cases:
        r = run()
        # Upstream's total rows differ a little from ours (random draws): compare per row.
        up_rows = key[1] if family.startswith("contiguous") else None
        target = upstream * (r["m"] / up_rows) if up_rows else upstream
        shape = "x".join(map(str, key))
        rows.append((family, shape, target, r))
        print(
            f"{family:16s} {shape:22s} rows {r['m']:6d} | ours {r['ours']:9.1f} us | torch per group {r['torch']:9.1f} "
            f"({r['torch'] / r['ours']:.2f}x) | upstream {target:8.1f} ({target / r['ours']:.3f}x) | diff "
            f"{r['diff']:.1e} | host {r['host']:.1f} us",
            flush=True,
        )
        assert r["diff"] < 1e-3, f"{family} {shape}: calc_diff {r['diff']}"
    lines = [
        "| family | shape | rows | ours µs | torch per-group µs | torch/ours | upstream µs | upstream/ours | host µs |",
        "|" + "---|" * 9,
    ]
    for family, shape, target, r in rows:
        lines.append(
            f"| {family} | {shape} | {r['m']} | {r['ours']:.1f} | {r['torch']:.1f} | {r['torch'] / r['ours']:.2f} "
            f"| {target:.1f} | {target / r['ours']:.3f} | {r['host']:.1f} |"
        )
    for family in ("contiguous", "contiguous_psum", "masked"):
        ratios = [t / r["ours"] for f, _, t, r in rows if f == family]
        lines.append(
            f"\n{family}: geomean upstream/ours {statistics.geometric_mean(ratios):.3f}, worst {min(ratios):.3f}."
        )
    lines.append(
        f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. Command: python {' '.join(sys.argv)}"
    )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")


if __name__ == "__main__":
    main()
