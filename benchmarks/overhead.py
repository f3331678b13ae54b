"""Host cost of one call, per op and call path (CPU, tiny or empty tensors).

Over 400 lines: the call paths, the pybind11 baseline and the report live together so one run compares them.

    python benchmarks/overhead.py [--ops NAME ...] [--repeats 15] [--target-ms 5] [--clock cpu|wall] [--json FILE]

For every op named (an op or an alias from ops.yaml; ops this branch or this
build lacks are skipped with a note), one or more *cases* are timed.  A case is
a prefix of the op's schema arguments with tiny CPU tensors, mostly empty, so
the kernel returns right after its checks and the figure is the call's host
cost.  Each case is called through these paths, with the same arguments:

    shim pos      deep_gemm._C.<op>(...)             legacy signature, positional
    shim kw       deep_gemm._C.<op>(name=...)        every argument by keyword
    op pos        torch.ops.deep_gemm.<op>.default(...)
    op kw         torch.ops.deep_gemm.<op>.default(name=...)
    op._op pos    the C++ callable behind OpOverload.__call__ (what the shim calls)
    pybind pos    the pybind11 baseline (benchmarks/baseline.py), positional
    pybind kw     the pybind11 baseline, every argument by keyword

A path that cannot take the case (keywords into a positional-only function)
is shown as n/a.  Timing: timeit, the arguments bound to locals, ``number``
calls per sample chosen so one sample takes about --target-ms; all (case, path)
pairs are sampled once per round in a shuffled order, for --repeats rounds
(interleaved), and the median per-call time is reported.  Ratios come from the
same run.  The clock is the thread's CPU time by default (``--clock cpu``,
``time.thread_time``): on a shared, busy machine it leaves out the time the
process waits for a core, which wall time (``--clock wall``) would add at random.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, Path(__file__).resolve().parent):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import torch  # noqa: E402

import deep_gemm  # noqa: E402
from codegen.model import Manifest, Op  # noqa: E402
from codegen.pipeline import load_manifest  # noqa: E402
from codegen.spelling.python import PyParam, params  # noqa: E402

DEFAULT_OPS = (
    "get_num_sms",
    "get_mn_major_tma_aligned_tensor",
    "transform_sf_into_required_layout",
    "fp8_gemm_nt",
    "bf16_gemm_nt",
    "m_grouped_fp8_gemm_nt_contiguous",
    "fp8_fp4_mqa_logits",
)
PATHS = ("shim pos", "shim kw", "op pos", "op kw", "op._op pos", "pybind pos", "pybind kw")
FP8 = torch.float8_e4m3fn


# --------------------------------------------------------------------------------------
# cases: schema-form arguments, a prefix of the schema (in order)
# --------------------------------------------------------------------------------------


@dataclass
class Case:
    label: str
    op: Op
    values: dict[str, Any]  # schema argument name -> value, a prefix of the schema's arguments


def _fp8(*shape: int) -> torch.Tensor:
    return torch.empty(*shape, dtype=FP8)


def _f32(*shape: int) -> torch.Tensor:
    return torch.rand(*shape)


def _gemm_cases(op: Op) -> list[tuple[str, dict[str, Any]]]:
    d = torch.empty(0, 64, dtype=torch.bfloat16)
    base = {"a": _fp8(0, 128), "sfa": _f32(0, 1), "b": _fp8(64, 128), "sfb": _f32(1, 1), "d": d}
    full = dict(base)
    for arg in op.schema.args[len(base) :]:
        full[arg.name] = arg.default
    return [("", base), ("+c=d", {**base, "c": d}), ("+all args", full)]


def _m_grouped_contiguous(op: Op) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "",
            {
                "a": _fp8(0, 128),
                "sfa": _f32(0, 1),
                "b": _fp8(1, 128, 128),
                "sfb": _f32(1, 1, 1),
                "d": torch.empty(0, 128, dtype=torch.bfloat16),
                "grouped_layout": torch.empty(0, dtype=torch.int32),
            },
        )
    ]


def _mqa_logits(op: Op) -> list[tuple[str, dict[str, Any]]]:
    s, skv, h, dim = 0, 0, 32, 64
    return [
        (
            "",
            {
                "q": _fp8(s, h, dim),
                "q_sf": None,
                "kv": _fp8(skv, dim),
                "kv_sf": _f32(skv),
                "weights": _f32(s, h),
                "cu_seq_len_k_start": torch.zeros(s, dtype=torch.int32),
                "cu_seq_len_k_end": torch.zeros(s, dtype=torch.int32),
            },
        )
    ]


# Hand-made cases (empty shapes); any other op falls back to its smallest registered sample.
BUILDERS: dict[str, Callable[[Op], list[tuple[str, dict[str, Any]]]]] = {
    "get_num_sms": lambda op: [("", {})],
    "get_mn_major_tma_aligned_tensor": lambda op: [("", {"sf": _f32(0, 4)})],
    "transform_sf_into_required_layout": lambda op: [
        (
            "",
            {
                "sf": _f32(0, 3),
                "mn": 0,
                "k": 300,
                "recipe": (1, 128, 128),
                "num_groups": None,
                "is_sfa": True,
                "disable_ue8m0_cast": True,
            },
        )
    ],
    "fp8_fp4_gemm_nt": _gemm_cases,
    "bf16_gemm_nt": lambda op: [
        (
            "",
            {
                "a": torch.empty(0, 64, dtype=torch.bfloat16),
                "b": torch.empty(32, 64, dtype=torch.bfloat16),
                "d": torch.empty(0, 32, dtype=torch.bfloat16),
            },
        )
    ],
    "m_grouped_fp8_fp4_gemm_nt_contiguous": _m_grouped_contiguous,
    "fp8_fp4_mqa_logits": _mqa_logits,
}


def _numel(values: Any) -> int:
    if isinstance(values, torch.Tensor):
        return values.numel()
    if isinstance(values, (list, tuple)):
        return sum(_numel(v) for v in values)
    if isinstance(values, dict):
        return sum(_numel(v) for v in values.values())
    return 0


def _sample_case(op: Op) -> list[tuple[str, dict[str, Any]]]:
    """The op's smallest registered sample (tests/support/samples), as a schema prefix."""
    from tests.support.samples import load_all

    builder = load_all().get(op.name)
    if builder is None:
        return []
    best = min(builder(torch.device("cpu")), key=lambda s: _numel(s.args) + _numel(s.kwargs))
    names = op.schema.arg_names
    given = dict(zip(names, best.args))
    given.update(best.kwargs)
    last = max(names.index(n) for n in given) if given else -1
    values = {}
    for arg in op.schema.args[: last + 1]:
        # A gap before the last given argument is filled with the schema default.
        values[arg.name] = given[arg.name] if arg.name in given else arg.default
    return [(f" (sample {best.name})", values)]


def resolve(manifest: Manifest, name: str) -> Op | None:
    return next((op for op in manifest.ops if name == op.name or name in op.aliases), None)


def cases_for(manifest: Manifest, name: str, notes: list[str]) -> list[Case]:
    op = resolve(manifest, name)
    if op is None:
        notes.append(f"{name}: not in this branch's ops.yaml, skipped")
        return []
    if not hasattr(torch.ops.deep_gemm, op.name):
        notes.append(f"{name}: not registered by this build (guard off?), skipped")
        return []
    out: list[Case] = []
    built = BUILDERS[op.name](op) if op.name in BUILDERS else []
    for suffix, values in built:
        case = Case(name + suffix, op, values)
        problem = _try(lambda c=case: call_paths(c, None)["op pos"]())
        if problem is None:
            out.append(case)
        else:
            notes.append(f"{case.label}: the hand-made case was rejected ({problem}); trying the samples")
    if not out:
        for suffix, values in _sample_case(op):
            case = Case(name + suffix, op, values)
            problem = _try(lambda c=case: call_paths(c, None)["op pos"]())
            if problem is None:
                out.append(case)
            else:
                notes.append(f"{case.label}: rejected ({problem}), skipped")
    if not out:
        notes.append(f"{name}: no usable case, skipped")
    return out


def _try(fn: Callable[[], object]) -> str | None:
    try:
        fn()
    except Exception as exc:  # report any failure as a note and carry on
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    return None


# --------------------------------------------------------------------------------------
# call paths
# --------------------------------------------------------------------------------------


@dataclass
class Call:
    """One way to call: a function and the arguments it gets."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> Any:
        return self.fn(*self.args, **self.kwargs)

    def timer(self, clock: Callable[[], float] = time.thread_time) -> timeit.Timer:
        # Arguments are bound to locals of the timing function, so every path pays the same loads.
        setup = ["fn = _fn"]
        setup += [f"x{i} = _args[{i}]" for i in range(len(self.args))]
        setup += [f"k_{k} = _kwargs[{k!r}]" for k in self.kwargs]
        stmt = "fn(" + ", ".join([f"x{i}" for i in range(len(self.args))] + [f"{k}=k_{k}" for k in self.kwargs]) + ")"
        names = {"_fn": self.fn, "_args": self.args, "_kwargs": self.kwargs}
        return timeit.Timer(stmt, "\n".join(setup), timer=clock, globals=names)


def legacy_values(op: Op, values: dict[str, Any]) -> list[tuple[PyParam, Any]]:
    """The legacy parameters a schema prefix covers, with their (packed) values."""
    out = []
    for p in params(op):
        members = [m.name for m in p.members]
        if all(m in values for m in members):
            out.append((p, tuple(values[m] for m in members) if p.is_pack else values[members[0]]))
    return out


def call_paths(case: Case, baseline: Any) -> dict[str, Call]:
    op = case.op
    overload = getattr(torch.ops.deep_gemm, op.name).default
    schema_pos = tuple(
        v for a in op.schema.args if a.name in case.values and not a.kwarg_only for v in [case.values[a.name]]
    )
    schema_kwonly = {a.name: case.values[a.name] for a in op.schema.args if a.name in case.values and a.kwarg_only}
    legacy = legacy_values(op, case.values)
    legacy_pos = tuple(v for p, v in legacy if p.kind != "kwonly")
    legacy_kwonly = {p.name: v for p, v in legacy if p.kind == "kwonly"}
    legacy_all = {p.name: v for p, v in legacy}
    posonly = any(p.kind == "posonly" for p, _ in legacy)
    shim = getattr(deep_gemm._C, op.name)
    paths = {
        "shim pos": Call(shim, legacy_pos, legacy_kwonly),
        "op pos": Call(overload, schema_pos, schema_kwonly),
        "op kw": Call(overload, (), dict(case.values)),
        "op._op pos": Call(overload._op, schema_pos, schema_kwonly),
    }
    if not posonly:
        paths["shim kw"] = Call(shim, (), legacy_all)
    if baseline is not None and hasattr(baseline, op.name):
        fn = getattr(baseline, op.name)
        paths["pybind pos"] = Call(fn, legacy_pos, legacy_kwonly)
        paths["pybind kw"] = Call(fn, (), legacy_all)
    return paths


# --------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------


def _empty() -> None:
    pass


CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}


def calibrate(timer: timeit.Timer, target_s: float) -> int:
    number = 1
    while True:
        took = timer.timeit(number)
        if took >= target_s / 10 or number >= 1 << 22:
            return max(1, int(number * target_s / max(took, 1e-9)))
        number *= 4


def measure(
    calls: dict[tuple[str, str], Call], repeats: int, target_s: float, seed: int, clock: str = "cpu"
) -> tuple[dict[tuple[str, str], float], dict[str, str]]:
    """Median µs per call of every call, sampled in interleaved, shuffled rounds.

    A call that raises is left out and reported in the second result.
    """
    failures: dict[str, str] = {}
    jobs: list[tuple[tuple[str, str], timeit.Timer, int]] = []
    for key, call in {("(floor)", "empty Python function"): Call(_empty), **calls}.items():
        problem = _try(call)
        if problem is not None:
            failures[" / ".join(key)] = problem
            continue
        timer = call.timer(CLOCKS[clock])
        jobs.append((key, timer, calibrate(timer, target_s)))
    samples: dict[tuple[str, str], list[float]] = {key: [] for key, _, _ in jobs}
    rng = random.Random(seed)
    for _ in range(repeats):
        order = list(jobs)
        rng.shuffle(order)
        for key, timer, number in order:
            samples[key].append(timer.timeit(number) / number * 1e6)
    return {key: statistics.median(v) for key, v in samples.items()}, failures


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------


def _ratio(num: float | None, den: float | None) -> str:
    if num is None or den is None:
        return ""
    return f"{num / den:.2f}×"


def tables(cases: list[Case], med: dict[tuple[str, str], float]) -> tuple[str, str]:
    rows = ["| op (case) | path | µs/call | shim / OpOverload | shim / pybind kw |", "|---|---|---:|---:|---:|"]
    rows.append(f"| (floor) | empty Python function | {med[('(floor)', 'empty Python function')]:.2f} | | |")
    summary = [
        "| op (case) | shim pos / op pos | shim kw / op kw | shim pos / pybind kw | shim kw / pybind kw |",
        "|---|---:|---:|---:|---:|",
    ]

    def get(label: str, path: str) -> float | None:
        return med.get((label, path))

    for case in cases:
        for path in PATHS:
            us = get(case.label, path)
            if us is None:
                rows.append(f"| {case.label} | {path} | n/a | | |")
                continue
            vs_op = vs_pb = ""
            if path.startswith("shim"):
                vs_op = _ratio(us, get(case.label, "op " + path.split()[1]))
                vs_pb = _ratio(us, get(case.label, "pybind kw"))
            rows.append(f"| {case.label} | {path} | {us:.2f} | {vs_op} | {vs_pb} |")
        cells = []
        for shim, ref, limit in (
            ("shim pos", "op pos", 1.0),
            ("shim kw", "op kw", 1.0),
            ("shim pos", "pybind kw", 2.0),
            ("shim kw", "pybind kw", 2.0),
        ):
            a, b = get(case.label, shim), get(case.label, ref)
            if a is None or b is None:
                cells.append("n/a")
            else:
                cells.append(f"{a / b:.2f}× {'met' if a / b <= limit else 'MISSED'}")
        summary.append(f"| {case.label} | " + " | ".join(cells) + " |")
    return "\n".join(rows), "\n".join(summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", default=list(DEFAULT_OPS), help="op names or aliases")
    parser.add_argument("--repeats", type=int, default=15, help="interleaved rounds (median over them)")
    parser.add_argument("--target-ms", type=float, default=5.0, help="duration of one sample")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="thread CPU time or wall time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-pybind", action="store_true", help="skip building/using the pybind11 baseline")
    parser.add_argument("--json", type=Path, help="also write the medians here")
    args = parser.parse_args(argv)

    manifest = load_manifest(ROOT / "ops.yaml", cache_root=ROOT)
    notes: list[str] = []
    baseline = None
    if not args.no_pybind:
        import baseline as baseline_builder

        baseline = baseline_builder.build(manifest)
    cases = [c for name in args.ops for c in cases_for(manifest, name, notes)]
    torch.set_num_threads(1)
    calls = {(case.label, path): call for case in cases for path, call in call_paths(case, baseline).items()}
    med, failures = measure(calls, args.repeats, args.target_ms / 1000, args.seed, args.clock)

    print(
        f"# host cost per call — torch {torch.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {args.clock} clock, {args.repeats} interleaved rounds of ~{args.target_ms:g} ms, median\n"
    )
    full, summary = tables(cases, med)
    print(full)
    print("\nTargets: shim ≤ 1.0× OpOverload with the same arguments; shim ≤ 2.0× pybind11 with them as keywords.\n")
    print(summary)
    for note in notes:
        print(f"note: {note}")
    for where, problem in failures.items():
        print(f"note: {where} failed and is not timed: {problem}")
    if args.json:
        args.json.write_text(json.dumps({f"{k[0]} | {k[1]}": v for k, v in med.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
