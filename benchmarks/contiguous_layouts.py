"""Row ids against psum ends on the very same A, B and D: one M-grouped contiguous FP8 problem,
its groups given both ways, timed in one process, the calls interleaved and the L2 flushed
before each (gpu_gemm.time_gpu_samples).  A third call passes the psum ends at the head of an
m-long int32 buffer, as callers that reuse one layout buffer for both forms do.

Both layouts describe the same groups (sizes aligned to the contiguous alignment, no gaps), so
the op must give the same bits either way; the script checks that and prints each median and the
ratio row ids / psum (above 1: psum faster).

    python benchmarks/contiguous_layouts.py [--repeats 20] [--problems 4x33024x6144x7168,8x31232x4096x4096]
"""

from __future__ import annotations

import argparse
import random
import statistics

import torch
from gpu_gemm import time_gpu_samples
from gpu_grouped_gemm import ContiguousOperands

import deep_gemm

DEFAULT_PROBLEMS = "4x33024x6144x7168,8x31232x4096x4096"


def compare(key: tuple[int, int, int, int], repeats: int, flush: torch.Tensor) -> str:
    random.seed(1)
    torch.manual_seed(1)
    op = ContiguousOperands(*key, use_psum=False)
    groups = len(op.sizes)
    ends = op.psum_ends()
    long_buffer = torch.zeros(op.m, dtype=torch.int32, device="cuda")
    long_buffer[:groups] = ends
    a, b = (op.a, op.sfa), (op.b, op.sfb)
    psum = {"use_psum_layout": True, "expected_m_for_psum_layout": key[1] // key[0]}
    call = deep_gemm.m_grouped_fp8_gemm_nt_contiguous
    d_ids, d_psum = torch.empty_like(op.d), torch.empty_like(op.d)
    call(a, b, d_ids, op.layout)
    call(a, b, d_psum, ends, **psum)
    same = torch.equal(d_ids.view(torch.int16), d_psum.view(torch.int16))
    fns = [
        lambda: call(a, b, op.d, op.layout),
        lambda: call(a, b, op.d, ends, **psum),
        lambda: call(a, b, op.d, long_buffer[:groups], **psum),
    ]
    ids_us, psum_us, long_us = (statistics.median(t) for t in time_gpu_samples(fns, repeats, flush))
    return (
        f"{'x'.join(map(str, key))}: row ids {ids_us:.1f} us, psum {psum_us:.1f} ({ids_us / psum_us:.3f}), "
        f"psum in an m-long buffer {long_us:.1f} ({ids_us / long_us:.3f}); same bits {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--problems", default=DEFAULT_PROBLEMS, help="GROUPSxROWSxNxK,...")
    args = parser.parse_args()
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    for text in args.problems.split(","):
        groups, rows, n, k = (int(v) for v in text.split("x"))
        print(compare((groups, rows, n, k), args.repeats, flush), flush=True)


if __name__ == "__main__":
    main()
