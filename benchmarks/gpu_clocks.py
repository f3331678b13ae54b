"""Sustained dense FP8 GEMM bursts with the GPU's clock and power read alongside.

The in-run ratios of gpu_gemm.py say how long each call takes; they do not say whether a slower
kernel takes more SM cycles or runs at a lower clock.  An H200 under a GEMM's load is held by
its power limit (KINDS.md saw a bf16 product 13% faster on zeros than on random data), so two
kernels of the same cycle count can differ in time if one draws more power per cycle (more
instructions, more shared-memory traffic).  This benchmark separates the two.

Per shape, each implementation (this package, torch's blockwise `_scaled_mm` where it serves the
recipe, and `--other MODULE`, e.g. upstream built under another name) runs bursts of back-to-back
calls on fresh random inputs (rotating over `--sets` input sets, so that L2 does not hold the
operands from one call to the next), in turn, `--rounds` times, each round in an order of its own
(gpu_gemm.round_orders).  Each burst is timed with CUDA
events; meanwhile `nvidia-smi` streams the SM clock, the power draw and the active clock-event
reasons every 20 ms, and each sample is assigned to the burst it fell in (the first 150 ms of a
burst are left out: the clock settles).  Every implementation's result is first checked against a
float64 product of the dequantised operands.

Printed per shape and implementation: µs per call (median of the rounds), the median SM clock and
power over its bursts, the cycles per call at that clock (µs x MHz: what a cycle-level comparison
sees), and the event reasons seen; then, for the other module, its time and cycle ratios against
this package.  Timing figures only: nothing here is asserted about speed.

    python benchmarks/gpu_clocks.py [--shapes MxNxK,...] [--other dg_upstream] [--seconds 0.8]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import torch
from gpu_gemm import WEIGHTS, Case, round_orders

import deep_gemm
from deep_gemm.testing import calc_diff

# The reasons field has had two names across drivers; the first that nvidia-smi accepts is used.
QUERIES = (
    "clocks.sm,power.draw,clocks_event_reasons.active",
    "clocks.sm,power.draw,clocks_throttle_reasons.active",
    "clocks.sm,power.draw",
)


def accepted_query() -> str:
    for query in QUERIES:
        probe = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            return query
    return QUERIES[-1]


class Sampler:
    """Streams `nvidia-smi --query-gpu` lines, each stamped with the host's monotonic clock."""

    def __init__(self, period_ms: int = 20) -> None:
        self.samples: list[tuple[float, float, float, int]] = []  # (t, MHz, W, reasons)
        self.proc = subprocess.Popen(
            [
                "nvidia-smi",
                f"--query-gpu={accepted_query()}",
                "--format=csv,noheader,nounits",
                f"--loop-ms={period_ms}",
                "-i",
                "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                mhz, watts = float(parts[0]), float(parts[1])
                reasons = int(parts[2], 16) if len(parts) > 2 and parts[2].startswith("0x") else 0
            except (ValueError, IndexError):
                continue
            self.samples.append((time.monotonic(), mhz, watts, reasons))

    def between(self, t0: float, t1: float) -> list[tuple[float, float, float, int]]:
        return [s for s in self.samples if t0 <= s[0] <= t1]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def burst(fns: list[Callable[[], object]], seconds: float) -> tuple[float, float, float, int]:
    """Calls fns in rotation for about `seconds`; returns (µs per call, host start, host end, calls)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # Size the burst from a short timed run.
    start.record()
    for fn in fns:
        fn()
    end.record()
    end.synchronize()
    per_call_ms = start.elapsed_time(end) / len(fns)
    calls = max(len(fns), int(seconds * 1e3 / max(per_call_ms, 1e-3)))
    torch.cuda.synchronize()
    t0 = time.monotonic()
    start.record()
    for i in range(calls):
        fns[i % len(fns)]()
    end.record()
    end.synchronize()
    t1 = time.monotonic()
    return start.elapsed_time(end) * 1e3 / calls, t0, t1, calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=",".join(f"4096x{n}x{k}" for n, k in WEIGHTS))
    parser.add_argument("--other", default=None, help="a second DeepGEMM-compatible module")
    parser.add_argument("--seconds", type=float, default=0.8, help="length of one burst")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sets", type=int, default=3, help="input sets a burst rotates over")
    parser.add_argument("--settle", type=float, default=0.15, help="seconds of each burst left out of its samples")
    args = parser.parse_args()
    torch.manual_seed(0)
    other = importlib.import_module(args.other) if args.other else None
    sampler = Sampler()
    time.sleep(0.5)
    if not sampler.samples:
        print("nvidia-smi gave no samples: clocks and power are left out", file=sys.stderr)
    lines = [
        "| shape | impl | µs/call | SM MHz | W | Mcycles/call | event reasons |",
        "|---|---|---|---|---|---|---|",
    ]
    ratio_lines = []
    for spec in args.shapes.split(","):
        m, n, k = (int(v) for v in spec.split("x"))
        cases = [Case("fwd", m, n, k) for _ in range(args.sets)]
        impls: dict[str, list[Callable[[], object]]] = {"ours": [c.call(deep_gemm) for c in cases]}
        anchors = [c.torch_call() for c in cases]
        if all(a is not None for a in anchors):
            impls["torch"] = anchors  # type: ignore[assignment]
        if other is not None:
            impls[args.other] = [c.call(other) for c in cases]
        # Every implementation's result against the float64 reference first.
        ref = cases[0].reference()
        for name, fns in impls.items():
            fns[0]()
            torch.cuda.synchronize()
            out = cases[0].d_torch if name == "torch" else cases[0].d
            diff = calc_diff(out, ref)
            assert diff < 1e-3, f"{spec} {name}: calc_diff {diff} against the float64 reference"
        del ref
        per: dict[str, list[tuple[float, list[tuple[float, float, float, int]]]]] = {name: [] for name in impls}
        names = list(impls)
        for order in round_orders(len(names), args.rounds):  # each in every place, after every other
            for i in order:
                us, t0, t1, _ = burst(impls[names[i]], args.seconds)
                per[names[i]].append((us, sampler.between(t0 + args.settle, t1)))
        summary: dict[str, tuple[float, float]] = {}
        for name in names:
            us = statistics.median(u for u, _ in per[name])
            samples = [s for _, ss in per[name] for s in ss]
            mhz = statistics.median(s[1] for s in samples) if samples else float("nan")
            watts = statistics.median(s[2] for s in samples) if samples else float("nan")
            reasons = 0
            for s in samples:
                reasons |= s[3]
            summary[name] = (us, us * mhz)
            lines.append(
                f"| {spec} | {name} | {us:.1f} | {mhz:.0f} | {watts:.0f} | {us * mhz / 1e6:.3f} | {reasons:#x} "
                f"({len(samples)} samples) |"
            )
            print(lines[-1], flush=True)
        if other is not None:
            (u_ours, c_ours), (u_other, c_other) = summary["ours"], summary[args.other]
            ratio_lines.append(f"{spec}: {args.other}/ours time {u_other / u_ours:.3f}, cycles {c_other / c_ours:.3f}")
            print(ratio_lines[-1], flush=True)
        del cases, impls, anchors
        torch.cuda.empty_cache()
    sampler.close()
    print("\n".join(lines))
    if ratio_lines:
        print("\n".join(ratio_lines))
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. Command: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
