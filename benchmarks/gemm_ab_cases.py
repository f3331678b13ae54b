"""Two builds of the extension compared case by case, for changes that only a rebuild can switch
(a kernel's compile-time structure), where `--variant` (one process) cannot reach.

Each build runs this script in its own process (benchmarks/h200_ab.sh alternates them, round after
round); each case prints its median time, that time over an in-process anchor (a fixed bf16 torch
matmul, so that processes on one machine compare), and a hash of D's bits on seeded inputs, so the
builds must agree bit for bit.  Cases: FP8 M-grouped contiguous (row ids and psum), masked, dense,
Wgrad (per-row B scales) and K-grouped problems of gpu_grouped_gemm.py and gpu_gemm.py.

    python benchmarks/gemm_ab_cases.py [--repeats 10] [--only ids,psum,masked,dense,wgrad,kgrouped]
    python benchmarks/gemm_ab_cases.py --compare DIR    # DIR/gemm_ab_cases_{a,b}_<round>.log

The comparison prints, per case, a's anchor-relative time over b's (medians over the rounds;
above 1: b faster) and whether every round of both builds gave the same bits; then the geomean.
For example, on the GPU machine, with the other tree prepared as h200_ab.sh says:

    DG_AB_ROUNDS=7 bash benchmarks/h200_ab.sh .ab/b gemm_ab_cases
    python benchmarks/gemm_ab_cases.py --compare "$OUT"
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^case (\S+) us ([\d.]+) rel ([\d.]+) bits (\w+)$")
LOG = re.compile(r"gemm_ab_cases_([ab])_(\d+)\.log$")

CONTIGUOUS = [(4, 33024, 6144, 7168), (4, 34944, 7168, 3072), (8, 31232, 4096, 4096), (8, 35968, 4096, 2048)]
MASKED = [(6, 1024, 6144, 7168), (6, 1024, 4096, 2048), (32, 192, 6144, 7168), (32, 192, 4096, 2048)]
DENSE = [(128, 2112, 7168), (64, 2112, 7168), (128, 32768, 512), (4096, 24576, 1536), (4096, 32768, 512),
         (4096, 2112, 7168), (128, 24576, 1536)]  # fmt: skip
# Per-row B scales (1x128 both sides): Wgrad into float32 D with C = D, Wgrad with bf16 D, and the
# K-grouped FP8 problems of gpu_grouped_gemm.py.
WGRAD_F32 = [(2112, 4096, 7168), (7168, 4096, 2048), (576, 4096, 7168), (7168, 4096, 16384), (4096, 4096, 7168),
             (32768, 4096, 512)]  # fmt: skip
WGRAD_BF16 = [(2112, 4096, 7168)]
K_GROUPED = [(4, 4096, 7168, 34304), (4, 7168, 2048, 33024)]


def parse(text: str) -> dict[str, tuple[float, str]]:
    """A run's cases: name -> (anchor-relative time, bits)."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            out[m.group(1)] = (float(m.group(3)), m.group(4))
    return out


def compare(directory: Path) -> list[str]:
    runs: dict[str, list[dict[str, tuple[float, str]]]] = defaultdict(list)
    for path in sorted(directory.iterdir()):
        m = LOG.search(path.name)
        if m:
            runs[m.group(1)].append(parse(path.read_text()))
    if not runs["a"] or not runs["b"]:
        raise SystemExit(f"gemm_ab_cases: no rounds of both builds in {directory}")
    lines, ratios = [], []
    for case in runs["a"][0]:
        a = [r[case] for r in runs["a"] if case in r]
        b = [r[case] for r in runs["b"] if case in r]
        if not b:
            lines.append(f"{case:30s} (no run of b)")
            continue
        ratio = statistics.median(x[0] for x in a) / statistics.median(x[0] for x in b)
        ratios.append(ratio)
        same = len({x[1] for x in a + b}) == 1
        lines.append(f"{case:30s} a/b {ratio:.3f}  bits {'same' if same else 'DIFFER'}  ({len(a)}/{len(b)} rounds)")
    lines.append(f"geomean a/b {statistics.geometric_mean(ratios):.3f} over {len(ratios)} cases (above 1: b faster)")
    return lines


def run(repeats: int, only: set[str] | None) -> None:
    import random

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gpu_gemm import Case, time_gpu
    from gpu_grouped_gemm import ContiguousOperands, KGroupedOperands, MaskedOperands

    import deep_gemm

    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)

    def anchor() -> None:
        torch.matmul(x, x, out=y)

    # Each case: D, the timed call, and the call whose result is hashed.  Calls that accumulate
    # into D (C = D) are hashed after one call from a fixed start and timed accumulating, as callers
    # run them; the others are hashed after the timed call itself.
    def masked(key: tuple[int, int, int, int]):
        op = MaskedOperands(*key)
        op.d.zero_()  # rows past masked_m are not written: hash zeros there, not stale memory
        return op.d, op, op

    def dense(key: tuple[int, int, int]):
        case = Case("fwd", *key)
        return case.d, case.call(deep_gemm), case.call(deep_gemm)

    def contiguous(key: tuple[int, int, int, int], psum: bool):
        op = ContiguousOperands(*key, use_psum=psum)
        return op.d, op, op

    def wgrad(kind: str, key: tuple[int, int, int]):
        case = Case(kind, *key)
        return case.d, case.call(deep_gemm), case.call(deep_gemm, reset=True)

    def k_grouped(key: tuple[int, int, int, int]):
        op = KGroupedOperands(*key)
        start = op.d.clone()

        def first() -> None:
            op.d.copy_(start)
            op()

        return op.d, op, first

    cases = [(f"ids:{'x'.join(map(str, k))}", lambda k=k: contiguous(k, False)) for k in CONTIGUOUS]
    cases += [(f"psum:{'x'.join(map(str, k))}", lambda k=k: contiguous(k, True)) for k in CONTIGUOUS]
    cases += [(f"masked:{'x'.join(map(str, k))}", lambda k=k: masked(k)) for k in MASKED]
    cases += [(f"dense:{'x'.join(map(str, k))}", lambda k=k: dense(k)) for k in DENSE]
    cases += [(f"wgrad:{'x'.join(map(str, k))}", lambda k=k: wgrad("wgrad_f32_acc", k)) for k in WGRAD_F32]
    cases += [(f"wgrad:bf16:{'x'.join(map(str, k))}", lambda k=k: wgrad("wgrad_bf16", k)) for k in WGRAD_BF16]
    cases += [(f"kgrouped:{'x'.join(map(str, k))}", lambda k=k: k_grouped(k)) for k in K_GROUPED]
    for name, make in cases:
        if only and name.split(":")[0] not in only:
            continue
        random.seed(7)
        torch.manual_seed(7)
        d, fn, first = make()
        first()
        bits = hashlib.sha1(d.contiguous().view(torch.int16).cpu().numpy().tobytes()).hexdigest()[:12]
        ours, ref = time_gpu([fn, anchor], repeats, flush)
        print(f"case {name} us {ours:.1f} rel {ours / ref:.5f} bits {bits}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--only", default=None, help="comma-separated kinds: ids, psum, masked, dense, wgrad, kgrouped")
    parser.add_argument("--compare", type=Path, default=None, help="a directory of both builds' logs")
    args = parser.parse_args()
    if args.compare is not None:
        print("\n".join(compare(args.compare)))
    else:
        run(args.repeats, set(args.only.split(",")) if args.only else None)


if __name__ == "__main__":
    main()
