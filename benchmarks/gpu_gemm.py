"""Dense FP8 GEMM on one GPU: deep_gemm.fp8_gemm_nt against torch's blockwise _scaled_mm.

Shapes: the 18 forward shapes of gpu-targets.md (m in {64, 128, 4096} x six weight
shapes), plus the Dgrad (m=4096, n and k swapped) and Wgrad (per-row SFB, float32 D
accumulating C=D, and bf16 D) shapes upstream's test enumerates.  Method (as in
gpu-targets.md): fresh random inputs, L2 flushed by a 256 MB write before every timed
call, CUDA events around the call, median of the repeats, calls interleaved.  Every
shape is checked against a float64 product of the dequantised operands first.

Printed per shape: this package, torch's blockwise `_scaled_mm` (the in-run anchor, where
it supports the recipe), the upstream figure measured side by side on an H200 (the
target table of gpu-targets.md), and the ratios.  `--other MODULE` also times a second
DeepGEMM-compatible package (e.g. upstream built under another name) in the same run.
`--sweep` times every compiled kernel shape per problem (DG_SM90_GEMM_CONFIG), one after
another; `--tiles 128x128,256x128,...` times the named ones interleaved with the heuristic's pick
call by call, so that the GPU's clock and temperature weigh on each alike (only such in-run
ratios compare tiles), and `--variant NAME:KEY=VALUE,...` does the same for the kernels' per-launch
switches (e.g. `--variant slab:DG_GEMM_SLAB_WAIT=1`), each with its paired ratios and verdict
(benchmarks/variants.py).

    python benchmarks/gpu_gemm.py [--repeats 40] [--markdown out.md] [--other NAME] [--sweep]
                                  [--tiles BMxBN,...] [--variant NAME:KEY=VALUE,...] [--shapes MxNxK,...]

`--shapes` takes benchmark shapes and any other MxNxK (timed as forward shapes with no upstream
figure).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch
from variants import Paired, paired, summary, under, variants_from_args

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
from tests.support.kernels import compiled_gemm_shapes

WEIGHTS = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
# Upstream DeepGEMM 54e2261 on one H200, cold L2, from gpu-targets.md (µs); the target.
UPSTREAM_US = {
    (64, 2112, 7168): 13.1, (64, 24576, 1536): 19.1, (64, 32768, 512): 12.0, (64, 7168, 16384): 42.5,
    (64, 4096, 7168): 16.3, (64, 7168, 2048): 10.1, (128, 2112, 7168): 13.9, (128, 24576, 1536): 20.1,
    (128, 32768, 512): 13.5, (128, 7168, 16384): 46.2, (128, 4096, 7168): 16.7, (128, 7168, 2048): 12.1,
    (4096, 2112, 7168): 97.2, (4096, 24576, 1536): 257.5, (4096, 32768, 512): 156.7, (4096, 7168, 16384): 820.9,
    (4096, 4096, 7168): 201.4, (4096, 7168, 2048): 109.1,
}  # fmt: skip


def forward_cases() -> list[tuple[str, int, int, int]]:
    return [("fwd", m, n, k) for m in (64, 128, 4096) for n, k in WEIGHTS]


def backward_cases() -> list[tuple[str, int, int, int]]:
    out = []
    for n, k in [*WEIGHTS, (576, 7168)]:
        out.append(("dgrad", 4096, k, n))
        out.append(("wgrad_f32_acc", n, 4096, k))
        out.append(("wgrad_bf16", n, 4096, k))
    return out


def time_gpu(fns: list[Callable[[], object]], repeats: int, flush: torch.Tensor) -> list[float]:
    """Median µs of each fn, L2 flushed before every call, calls interleaved."""
    return [statistics.median(t) for t in time_gpu_samples(fns, repeats, flush)]


def round_orders(n: int, rounds: int, seed: int = 0) -> list[list[int]]:
    """The order of n calls in each of `rounds` rounds: a permutation per round from a seeded
    generator (the same orders every run), so that over the rounds every call takes every place and
    follows every other call.  Both matter on the H200: the call after torch's cuBLASLt anchor ran
    up to 12% slower at small shapes than the same call later in the round (docs/performance.md,
    twenty-first session), and rotating one list, which moves every call through every place, kept
    each call's predecessor fixed, so the identity variant right after the anchor still read 1-7%
    slow (twenty-second session)."""
    rng = random.Random(seed)
    orders = []
    for _ in range(rounds):
        order = list(range(n))
        rng.shuffle(order)
        orders.append(order)
    return orders


# GPU cycles of a spin queued after each flush and before each timed call's start event (0: none;
# --head-start-cycles).  The flush (a 256 MB write, some 60 µs) already keeps the GPU busy while the
# host does a call's work; a spin longer than any call's host work makes sure of it, so that the
# event interval holds the call's kernels alone whatever its host path costs (ours, an identity
# variant's extra switch handling, the other package's).
HEAD_START = {"cycles": 0}


def set_head_start(cycles: int) -> None:
    if cycles < 0:
        raise ValueError(f"--head-start-cycles must be >= 0, got {cycles}")
    HEAD_START["cycles"] = cycles


def time_gpu_samples(fns: list[Callable[[], object]], repeats: int, flush: torch.Tensor) -> list[list[float]]:
    """Every round's µs of each fn (sample i of each fn comes from round i), L2 flushed before every
    call (then the head-start spin, when set), the calls of each round in the order round_orders
    gives."""
    for fn in fns:
        for _ in range(3):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for order in round_orders(len(fns), repeats):
        for i in order:
            flush.zero_()
            if HEAD_START["cycles"]:
                torch.cuda._sleep(HEAD_START["cycles"])
            start.record()
            fns[i]()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) * 1e3)
    return times


def ratio_summary(label: str, ratios: list[float]) -> str:
    """One line on other/ours time ratios (above 1: ours faster): their geomean, the worst, and how
    many reach 1.0."""
    geo = statistics.geometric_mean(ratios)
    reached = sum(x >= 1.0 for x in ratios)
    return f"{label}: geomean {geo:.3f}, worst {min(ratios):.3f}, {reached} of {len(ratios)} at >= 1.0."


def environment() -> str:
    """The GPU, torch and the command line, for the foot of a benchmark's table."""
    return f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. Command: python {' '.join(sys.argv)}"


def emit(lines: list[str], markdown: str | None) -> None:
    """Prints a benchmark's table, and writes it to `markdown` when given."""
    text = "\n".join(lines)
    print(text)
    if markdown:
        Path(markdown).write_text(text + "\n")


def time_host(fn: Callable[[], object], calls: int = 200) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - t0
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


class Case:
    """Inputs of one GEMM, its float64 reference, and the calls to time."""

    def __init__(self, kind: str, m: int, n: int, k: int) -> None:
        self.kind, self.m, self.n, self.k = kind, m, n, k
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        self.a, self.sfa = per_token_cast_to_fp8(x.float(), use_ue8m0=False)
        if kind.startswith("wgrad"):
            self.b, self.sfb = per_token_cast_to_fp8(w.float(), use_ue8m0=False)
            self.recipe: tuple[int, int, int] | None = (1, 1, 128)
        else:
            self.b, self.sfb = per_block_cast_to_fp8(w.float(), use_ue8m0=False)
            self.recipe = None
        self.sfa_mn = deep_gemm.get_mn_major_tma_aligned_tensor(self.sfa)  # prepared once, as users do
        out_dtype = torch.float if kind == "wgrad_f32_acc" else torch.bfloat16
        self.c0 = torch.randn(m, n, device="cuda", dtype=out_dtype) if kind == "wgrad_f32_acc" else None
        self.d = torch.empty(m, n, device="cuda", dtype=out_dtype)
        self.d_torch = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

    def reference(self) -> torch.Tensor:
        ga = self.sfa.double().repeat_interleave(128, dim=1)[:, : self.k]
        if self.recipe is None:
            gb = self.sfb.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[: self.n, : self.k]
        else:
            gb = self.sfb.double().repeat_interleave(128, dim=1)[:, : self.k]
        out = (self.a.double() * ga) @ (self.b.double() * gb).t()
        return out + self.c0.double() if self.c0 is not None else out

    def call(self, module: ModuleType, reset: bool = False) -> Callable[[], None]:
        """The op call; with C, D accumulates into itself (`reset` starts it from C first)."""

        def run() -> None:
            c = None
            if self.c0 is not None:
                if reset:
                    self.d.copy_(self.c0)
                c = self.d
            module.fp8_gemm_nt((self.a, self.sfa_mn), (self.b, self.sfb), self.d, c=c, recipe=self.recipe)

        return run

    def torch_call(self) -> Callable[[], object] | None:
        if self.recipe is not None or self.k % 128 != 0:
            return None  # torch's blockwise path serves 1x128 x 128x128 with K a multiple of 128
        scale_a = self.sfa.t().contiguous().t()
        scale_b = self.sfb.t()

        def run() -> None:
            torch._scaled_mm(self.a, self.b.t(), scale_a, scale_b, out_dtype=torch.bfloat16, out=self.d_torch)

        return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--other", default=None, help="a second DeepGEMM-compatible module to time side by side")
    parser.add_argument("--sweep", action="store_true", help="time every compiled kernel shape per problem")
    parser.add_argument("--forward-only", action="store_true")
    parser.add_argument("--sweep-json", default=None, help="write every swept time here")
    parser.add_argument("--tiles", default=None, help="BMxBN[sS],...: forced tiles timed interleaved with the pick")
    parser.add_argument(
        "--variant",
        action="append",
        help="NAME:KEY=VALUE[,...]: per-launch switches timed interleaved with the pick (benchmarks/variants.py)",
    )
    parser.add_argument("--shapes", default=None, help="MxNxK,...: only these problems")
    parser.add_argument("--head-start-cycles", type=int, default=0, help="GPU spin before each timed call")
    args = parser.parse_args()
    set_head_start(args.head_start_cycles)
    variants = variants_from_args(args.variant, args.tiles)
    per_variant: dict[str, list[Paired]] = {v.name: [] for v in variants}
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    other = importlib.import_module(args.other) if args.other else None
    cases = forward_cases() + ([] if args.forward_only else backward_cases())
    if args.shapes:
        # Benchmark shapes by name, and any other MxNxK as a forward case of its own (no upstream
        # figure): e.g. a K sweep at one M and N, to separate a tile's fixed cost from its K blocks.
        wanted = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
        known = {c[1:] for c in cases}
        cases = [c for c in cases if c[1:] in set(wanted)] + [("fwd", *mnk) for mnk in wanted if mnk not in known]
    rows = []
    swept: dict[str, dict[str, float]] = {}
    for kind, m, n, k in cases:
        case = Case(kind, m, n, k)
        os.environ["DG_PRINT_CONFIGS"] = "1"
        case.call(deep_gemm, reset=True)()
        torch.cuda.synchronize()
        os.environ.pop("DG_PRINT_CONFIGS")
        ours = case.call(deep_gemm)
        reference = case.reference()
        diff = calc_diff(case.d, reference)
        # Each variant's result against the same reference before it is timed (a switch that broke
        # the kernel would otherwise only show as a time).
        for v in variants:
            under(case.call(deep_gemm, reset=True), v)()
            v_diff = calc_diff(case.d, reference)
            assert v_diff < 1e-3, f"{kind} {m}x{n}x{k} under variant {v.name}: calc_diff {v_diff}"
        del reference
        fns: list[Callable[[], object]] = [ours]
        anchor = case.torch_call()
        if anchor is not None:
            fns.append(anchor)
        # The other package is timed where it takes the case (upstream's SM90 build refuses, e.g.,
        # a Wgrad GEMM with a bf16 D); a refusal is printed and its cells stay empty.
        other_call = None
        if other is not None:
            try:
                case.call(other, reset=True)()
                torch.cuda.synchronize()
                other_call = case.call(other)
            except RuntimeError as err:
                print(f"{args.other} refuses {kind} {m}x{n}x{k}: {str(err).splitlines()[0][:200]}")
        if other_call is not None:
            fns.append(other_call)
        fns += [under(ours, v) for v in variants]
        samples = time_gpu_samples(fns, args.repeats, flush)
        times = [statistics.median(t) for t in samples]
        t_ours = times[0]
        t_torch = times[1] if anchor is not None else None
        t_other = times[1 + (anchor is not None)] if other_call is not None else None
        variant_samples = samples[len(samples) - len(variants) :] if variants else []
        upstream = UPSTREAM_US.get((m, n, k)) if kind == "fwd" else None
        sweep = ""
        if args.sweep:
            best: tuple[float, str] | None = None
            per_row = case.recipe is not None
            for shape in compiled_gemm_shapes():
                if shape.bf16 or shape.sfb_per_row != per_row:
                    continue
                cfg = shape.config
                os.environ["DG_SM90_GEMM_CONFIG"] = cfg
                t = time_gpu([ours], max(8, args.repeats // 4), flush)[0]
                swept.setdefault(f"{kind}:{m}x{n}x{k}", {})[cfg] = t
                if best is None or t < best[0]:
                    best = (t, cfg)
            os.environ.pop("DG_SM90_GEMM_CONFIG", None)
            if best is not None:
                sweep = f"{best[1]} {best[0]:.1f}"
        if variants:
            cells = []
            for v, vs in zip(variants, variant_samples, strict=True):
                pair = paired(samples[0], vs)
                per_variant[v.name].append(pair)
                cells.append(f"{v.name} {statistics.median(vs):.1f} ({pair})")
            sweep = " ".join(cells)
        flops = 2 * m * n * k
        row = {
            "kind": kind, "m": m, "n": n, "k": k, "ours": t_ours, "torch": t_torch, "upstream": upstream,
            "other": t_other, "tflops": flops / t_ours / 1e6, "diff": diff, "host": time_host(ours), "sweep": sweep,
        }  # fmt: skip
        rows.append(row)
        fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
        ratio = lambda base: "-" if base is None else f"{base / t_ours:.3f}"  # noqa: E731
        print(
            f"{kind:14s} {m:6d} {n:6d} {k:6d} | ours {t_ours:8.1f} us {row['tflops']:6.0f} TF | torch {fmt(t_torch)} "
            f"({ratio(t_torch)}) | upstream {fmt(upstream)} ({ratio(upstream)}) | other {fmt(t_other)} "
            f"({ratio(t_other)}) | diff {diff:.1e} | host {row['host']:.1f} us | {sweep}",
            flush=True,
        )
        assert diff < 1e-3, f"{kind} {m}x{n}x{k}: calc_diff {diff} against the float64 reference"
        del case
    header = (
        "| case | m | n | k | ours µs | TFLOP/s | torch blockwise µs | torch/ours | upstream µs (target) "
        "| upstream/ours | other µs | other/ours | calc_diff | host µs |"
    )
    lines = [header, "|" + "---|" * 14]
    for r in rows:
        cell = lambda v: "–" if v is None else f"{v:.1f}"  # noqa: E731
        rat = lambda v: "–" if v is None else f"{v / r['ours']:.3f}"  # noqa: E731
        lines.append(
            f"| {r['kind']} | {r['m']} | {r['n']} | {r['k']} | {r['ours']:.1f} | {r['tflops']:.0f} | {cell(r['torch'])} "
            f"| {rat(r['torch'])} | {cell(r['upstream'])} | {rat(r['upstream'])} | {cell(r['other'])} "
            f"| {rat(r['other'])} | {r['diff']:.1e} | {r['host']:.1f} |"
        )
    fwd = [r for r in rows if r["upstream"] is not None]
    if fwd:
        ratios = [r["upstream"] / r["ours"] for r in fwd]
        label = "Forward shapes against upstream's figures"
        lines += ["", f"{ratio_summary(label, ratios)} {environment()}"]
    # The side-by-side verdict, where --other ran: its in-run times over ours.
    in_run = [r for r in rows if r["kind"] == "fwd" and r["other"] is not None]
    if in_run:
        ratios = [r["other"] / r["ours"] for r in in_run]
        lines.append(ratio_summary(f"Forward shapes against {args.other} in-run", ratios))
    if per_variant:
        lines += ["", *(summary("all shapes", name, results) for name, results in per_variant.items())]
    emit(lines, args.markdown)
    if args.sweep_json:
        Path(args.sweep_json).write_text(json.dumps(swept, indent=1))


if __name__ == "__main__":
    main()
