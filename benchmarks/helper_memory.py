"""Memory that the test helpers take per input value: the FP8 casts of `deep_gemm.utils` and
`deep_gemm.testing.calc_diff`, on the CPU, from torch.profiler's memory events (peak held at once
and all bytes allocated, the result included).  docs/performance.md, twentieth session, has the
figures before and after the casts were made to keep their scratch to a slice.

Usage (repo root): PYTHONPATH=. python benchmarks/helper_memory.py [--shapes 1024x7168,8192x7168]
"""

from __future__ import annotations

import argparse

import torch

from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
from tests.support.memory import cpu_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="1024x7168,1000x7000,8192x7168", help="MxN,...: bf16 inputs")
    args = parser.parse_args()
    print("| helper | shape | peak bytes / value | allocated bytes / value |")
    print("|---|---|---|---|")
    for text in args.shapes.split(","):
        m, n = (int(v) for v in text.split("x"))
        x = torch.randn(m, n).bfloat16()
        y = torch.randn(m, n).bfloat16()
        calls = {
            "per_token_cast_to_fp8": lambda: per_token_cast_to_fp8(x, use_ue8m0=False),
            "per_block_cast_to_fp8": lambda: per_block_cast_to_fp8(x, use_ue8m0=False),
            "calc_diff": lambda: calc_diff(x, y),
        }
        for name, call in calls.items():
            peak, allocated = cpu_bytes(call)
            print(f"| `{name}` | {m} x {n} | {peak / x.numel():.2f} | {allocated / x.numel():.2f} |")


if __name__ == "__main__":
    main()
