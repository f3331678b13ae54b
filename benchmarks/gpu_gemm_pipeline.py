"""The FP8 GEMM kernel's time per 128-wide K block, per compiled tile shape.

Two problems per shape (forced through DG_SM90_GEMM_CONFIG), both with a long K so that the
main loop dominates:

* one CTA: m = BLOCK_M, n = BLOCK_N, k = 128 x 448. Nothing else runs on the GPU, so the
  figure is the pipeline's own round trip per K block (producer, TMA, wgmma, promotion);
* the whole GPU: 132 tiles along N (n = 132 x BLOCK_N), k = 128 x 112, one tile per SM.

The tensor-core time of a K block is 2 x BLOCK_M x BLOCK_N x 128 / (about 8192 FLOP per SM cycle),
so a figure far above it (e.g. 64x16: 32 cycles) shows what else the loop waits for. Warm L2,
CUDA events, median of the repeats. Every result is first checked against a float64 product.
The H200 figures are in docs/performance.md ("where the FP8 GEMM's time goes").

    python benchmarks/gpu_gemm_pipeline.py [--shapes 64x16,64x64,128x128,128x160] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch
from gpu_gemm import Case, emit, environment

import deep_gemm
from deep_gemm.testing import calc_diff

BLOCK_K = 128


def per_k_block_ns(m: int, n: int, k: int, config: str, repeats: int) -> tuple[float, float, float]:
    """(µs per call, ns per K block, calc_diff) of fp8_gemm_nt forced to `config`, warm L2."""
    os.environ["DG_SM90_GEMM_CONFIG"] = config
    try:
        case = Case("fwd", m, n, k)
        call = case.call(deep_gemm)
        call()
        torch.cuda.synchronize()
        diff = calc_diff(case.d, case.reference())
        assert diff < 1e-3, f"{config} {m}x{n}x{k}: calc_diff {diff} against the float64 reference"
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeats):
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
    finally:
        os.environ.pop("DG_SM90_GEMM_CONFIG", None)
    us = statistics.median(times)
    return us, 1e3 * us / (k // BLOCK_K), diff


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="64x16,64x32,64x64,64x128,128x64,128x128,128x160")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    lines = [
        "| tile | one CTA µs | ns per K block | 132 CTAs µs | ns per K block | calc_diff (max) |",
        "|---|---|---|---|---|---|",
    ]
    for config in args.shapes.split(","):
        bm, bn = (int(v) for v in config.split("x"))
        one_us, one_ns, d1 = per_k_block_ns(bm, bn, BLOCK_K * 448, config, args.repeats)
        all_us, all_ns, d2 = per_k_block_ns(bm, 132 * bn, BLOCK_K * 112, config, args.repeats)
        lines.append(f"| {config} | {one_us:.1f} | {one_ns:.0f} | {all_us:.1f} | {all_ns:.0f} | {max(d1, d2):.1e} |")
    lines += ["", f"Warm L2, median of {args.repeats}. {environment()}"]
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
