"""tf32_hc_prenorm_gemm on one GPU: deep_gemm against the upstream figures and a torch anchor.

Shapes m x n x k x num_splits (0 = None) of gpu-targets.md.  The in-run anchor is what the op
replaces in plain torch: ``a.float() @ b.T`` with TF32 matmuls plus ``a.float().square().sum(-1)``
(unsplit).  Method as benchmarks/gpu_gemm.py: fresh random inputs, L2 flushed before every
timed call, CUDA events, median, calls interleaved.  Each shape is checked first (calc_diff
< 1e-8 against the TF32 torch product, upstream's bar).  Peak memory per call is
torch.cuda.max_memory_allocated over one call minus the memory allocated before it.

    python benchmarks/gpu_hc_prenorm.py [--repeats 30] [--markdown out.md]
    python benchmarks/gpu_hc_prenorm.py --sweep [--repeats 15] [--markdown sweep.md] [--only 8192x24x7168x0]

``--sweep`` times the six shapes under every DG_HC_PRENORM_CONFIG kernel variant and K-part
option (docs/gpu.md) and prints a variant x shape table of µs (the best per shape marked),
from which the default heuristic is set; a variant failing the calc_diff check (or raising) shows
"bad".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable

import torch
from gpu_gemm import emit, environment, time_gpu, time_host

import deep_gemm
from deep_gemm.testing import calc_diff

# (m, n, k, num_splits or 0): upstream µs on one H200, cold L2, from gpu-targets.md.
UPSTREAM_US = {
    (4096, 24, 28672, 0): 110.0, (4096, 24, 28672, 16): 82.1, (8192, 24, 7168, 0): 41.7,
    (8192, 24, 7168, 16): 63.0, (137, 24, 7680, 0): 32.8, (137, 24, 7680, 16): 9.6,
}  # fmt: skip
UPSTREAM_GIB = 0.00


def peak_gib(fn: Callable[[], object]) -> float:
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**30


class HcOperands:
    """One m x n x k x num_splits (0 = None) problem: random bf16 A, float32 B, the outputs, the op call."""

    def __init__(self, m: int, n: int, k: int, s: int) -> None:
        self.splits = s or None
        self.a = torch.randn(m, k, device="cuda").bfloat16()
        self.b = torch.randn(n, k, device="cuda")
        lead = (s,) if s else ()
        self.d = torch.empty(*lead, m, n, device="cuda")
        self.sqr = torch.empty(*lead, m, device="cuda")

    def __call__(self) -> None:
        deep_gemm.tf32_hc_prenorm_gemm(self.a, self.b, self.d, self.sqr, num_splits=self.splits)


def case(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    s = key[3]
    ours = HcOperands(*key)
    a, b, d, sqr = ours.a, ours.b, ours.d, ours.sqr

    def anchor() -> tuple[torch.Tensor, torch.Tensor]:
        af = a.float()
        return af @ b.T, af.square().sum(-1)

    torch.backends.cuda.matmul.allow_tf32 = True
    ours()
    ref_d, ref_sqr = anchor()
    got_d, got_sqr = (d.sum(0), sqr.sum(0)) if s else (d, sqr)
    diff = max(calc_diff(got_d, ref_d), calc_diff(got_sqr, ref_sqr))
    t_ours, t_torch = time_gpu([ours, anchor], repeats, flush)
    return {
        "ours": t_ours,
        "torch": t_torch,
        "diff": diff,
        "host": time_host(ours),
        "mem": peak_gib(ours),
        "mem_torch": peak_gib(anchor),
    }


VARIANTS = [
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
]
PART_OPTIONS = ["", ":l", ":p0", ":p2:b2", ":p4:b2", ":p4:b2:l", ":p8:b1"]
ENV = "DG_HC_PRENORM_CONFIG"


def sweep(
    repeats: int,
    flush: torch.Tensor,
    markdown: str | None,
    only: list[str] | None = None,
    configs: list[str] | None = None,
) -> None:
    configs = configs or ["default"] + [v + o for v in VARIANTS for o in PART_OPTIONS]
    keys = [key for key in UPSTREAM_US if not only or "x".join(map(str, key)) in only]
    table: dict[str, list[float | None]] = {c: [] for c in configs}
    was_env = os.environ.get(ENV)
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        for m, n, k, s in keys:
            ours = HcOperands(m, n, k, s)
            a, b, d, sqr = ours.a, ours.b, ours.d, ours.sqr
            af = a.float()
            ref_d, ref_sqr = af @ b.T, af.square().sum(-1)
            del af
            print(f"sweeping {m}x{n}x{k}x{s} ...", file=sys.stderr, flush=True)
            for c in configs:
                os.environ[ENV] = c
                d.fill_(float("nan"))
                try:
                    ours()
                except RuntimeError as e:  # a launch the variant cannot make: reported, not fatal
                    print(f"{c} at {m}x{n}x{k}x{s}: {e}", file=sys.stderr)
                    table[c].append(None)
                    continue
                got_d, got_sqr = (d.sum(0), sqr.sum(0)) if s else (d, sqr)
                ok = max(calc_diff(got_d, ref_d), calc_diff(got_sqr, ref_sqr)) < 1e-8
                table[c].append(time_gpu([ours], repeats, flush)[0] if ok else None)
    finally:
        if was_env is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = was_env
    best = [min((table[c][i] for c in configs if table[c][i] is not None), default=None) for i in range(len(keys))]
    shapes = ["x".join(map(str, key)) for key in keys]
    lines = [
        f"{ENV} sweep, µs (median of {repeats}, cold L2; * = best of the column)",
        "",
        "| config | " + " | ".join(shapes) + " |",
        "|" + "---|" * (len(shapes) + 1),
    ]
    for c in configs:
        cells = []
        for i, t in enumerate(table[c]):
            cells.append("bad" if t is None else f"{t:.1f}{'*' if t == best[i] else ''}")
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines.append("| upstream | " + " | ".join(f"{UPSTREAM_US[key]:.1f}" for key in keys) + " |")
    lines.append(
        "| best/upstream | "
        + " | ".join("-" if t is None else f"{UPSTREAM_US[key] / t:.3f}" for key, t in zip(keys, best, strict=True))
        + " |"
    )
    lines.append("\n" + environment())
    emit(lines, markdown)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--sweep", action="store_true", help="time every DG_HC_PRENORM_CONFIG variant")
    parser.add_argument("--only", default=None, help="comma-separated MxNxKxS shapes of the table (--sweep)")
    parser.add_argument("--configs", default=None, help=f"comma-separated {ENV} values to sweep instead of all")
    args = parser.parse_args()
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    if args.sweep:
        was_tf32 = torch.backends.cuda.matmul.allow_tf32
        try:
            only = args.only.split(",") if args.only else None
            configs = args.configs.split(",") if args.configs else None
            sweep(args.repeats, flush, args.markdown, only, configs)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = was_tf32
        return
    was_tf32 = torch.backends.cuda.matmul.allow_tf32
    rows = []
    try:
        for key, upstream in UPSTREAM_US.items():
            r = case(key, args.repeats, flush)
            shape = "x".join(map(str, key))
            rows.append((shape, upstream, r))
            print(
                f"{shape:18s} | ours {r['ours']:7.1f} us | upstream {upstream:6.1f} ({upstream / r['ours']:.3f}x) | "
                f"torch {r['torch']:7.1f} ({r['torch'] / r['ours']:.2f}x) | diff {r['diff']:.1e} | "
                f"host {r['host']:.1f} us | peak {r['mem']:.3f} GiB (torch {r['mem_torch']:.2f})",
                flush=True,
            )
            assert r["diff"] < 1e-8, f"{shape}: calc_diff {r['diff']}"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = was_tf32
    lines = [
        "| shape m x n x k x splits | ours µs | upstream µs | upstream/ours | torch µs | torch/ours | calc_diff "
        "| host µs | peak GiB ours / upstream |",
        "|" + "---|" * 9,
    ]
    for shape, upstream, r in rows:
        lines.append(
            f"| {shape} | {r['ours']:.1f} | {upstream:.1f} | {upstream / r['ours']:.3f} | {r['torch']:.1f} "
            f"| {r['torch'] / r['ours']:.2f} | {r['diff']:.1e} | {r['host']:.1f} | {r['mem']:.3f} / {UPSTREAM_GIB:.2f} |"
        )
    ratios = [up / r["ours"] for _, up, r in rows]
    lines.append(f"\ngeomean upstream/ours {statistics.geometric_mean(ratios):.3f}, worst {min(ratios):.3f}.")
    lines.append(environment())
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
