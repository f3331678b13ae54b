"""Before/after of the generated shim: several versions of deep_gemm/_C.py in one run.

    python benchmarks/shim_variants.py REV [REV ...] [--ops NAME ...] [--repeats 15]

Each REV is a git revision whose ``deep_gemm/_C.py`` is loaded as its own
module next to the working tree's (``worktree``), so every version calls the
very same registered ops; its fake-kernel registrations are skipped (the
working tree's module made them).  The cases are those of
benchmarks/overhead.py, called positionally and by keyword through every
version, with ``torch.ops.deep_gemm.<op>.default`` as the common reference,
interleaved in one run.  Used for the notes in docs/performance.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types

import overhead
from overhead import ROOT, Call, Case, cases_for, load_manifest, measure

import deep_gemm

REGISTER_FAKE = "from deep_gemm._shim import register_fake as _register_fake"


def load_version(rev: str) -> types.ModuleType:
    """``deep_gemm/_C.py`` as of ``rev``, as a fresh module that registers no fake kernels."""
    text = subprocess.run(
        ["git", "show", f"{rev}:deep_gemm/_C.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    if REGISTER_FAKE not in text:
        raise SystemExit(f"{rev}: deep_gemm/_C.py does not import register_fake as expected")
    text = text.replace(REGISTER_FAKE, "_register_fake = lambda op, dotted: None")
    module = types.ModuleType(f"deep_gemm._C_at_{rev}")
    exec(compile(text, f"{rev}:deep_gemm/_C.py", "exec"), module.__dict__)
    return module


def version_calls(case: Case, label: str, module: types.ModuleType) -> dict[tuple[str, str], Call]:
    paths = overhead.call_paths(case, None)
    out = {}
    for path in ("shim pos", "shim kw"):
        if path in paths:
            call = paths[path]
            out[(case.label, f"{label} {path.split()[1]}")] = Call(
                getattr(module, case.op.name), call.args, call.kwargs
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+", help="git revisions to compare with the working tree")
    parser.add_argument("--ops", nargs="+", default=list(overhead.DEFAULT_OPS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--target-ms", type=float, default=5.0)
    parser.add_argument("--clock", choices=sorted(overhead.CLOCKS), default="cpu")
    args = parser.parse_args(argv)

    manifest = load_manifest(ROOT / "ops.yaml", cache_root=ROOT)
    versions = {rev: load_version(rev) for rev in args.revs}
    versions["worktree"] = deep_gemm._C
    notes: list[str] = []
    cases = [c for name in args.ops for c in cases_for(manifest, name, notes)]
    overhead.torch.set_num_threads(1)
    calls: dict[tuple[str, str], Call] = {}
    for case in cases:
        calls[(case.label, "op pos")] = overhead.call_paths(case, None)["op pos"]
        for label, module in versions.items():
            calls.update(version_calls(case, label, module))
    med, failures = measure(calls, args.repeats, args.target_ms / 1000, 0, args.clock)

    labels = list(versions)
    print(f"# µs per call, {args.clock} clock, median of {args.repeats} interleaved rounds\n")
    print("| op (case) | call | " + " | ".join(labels) + " | op pos |")
    print("|---|---|" + "---:|" * (len(labels) + 1))
    for case in cases:
        for kind in ("pos", "kw"):
            cells = [med.get((case.label, f"{label} {kind}")) for label in labels]
            if all(c is None for c in cells):
                continue
            text = ["n/a" if c is None else f"{c:.2f}" for c in cells]
            ref = med.get((case.label, "op pos"))
            print(f"| {case.label} | {kind} | " + " | ".join(text) + f" | {ref:.2f} |")
    for note in notes:
        print(f"note: {note}")
    for where, problem in failures.items():
        print(f"note: {where} failed and is not timed: {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
