"""Developer-loop costs: codegen commands, clean build, one-op rebuild, import time.

    python benchmarks/tooling.py [--runs 5] [--op fp8_fp4_gemm_tt] [--skip-build]

Everything that writes runs in a temporary copy of the working tree (tracked
and untracked, not ignored, files), so the working tree is never touched:

* ``python -m codegen regenerate`` / ``check`` (/ ``verify`` when this branch has
  it): --runs fresh processes each, median.  The first ``check`` of the copy
  runs without the schema cache (``.cache/``, as in a fresh clone) and is shown
  on its own line; the others use the cache it leaves.  Likewise the first
  ``verify`` finds no prelude PCH (a fresh clone): it parses inline and starts
  the PCH build in the background (Note [Prelude PCH] in codegen/cxx.py), which
  is awaited before the warm runs.  Its CPU column excludes that detached build.
* ``python -m codegen import-pybind`` on the gaps fixture (tests/codegen/fixtures/pybind_gaps/):
  cold (no pybind11 prelude PCH: inline parse, PCH built in the background and
  awaited), then warm, median of --runs.
* a clean build (``setup.py build_ext --inplace``, CC=gcc CXX=g++, MAX_JOBS=2);
* a rebuild after one op's manifest entry changes (a default of --op's schema
  is flipped, then ``regenerate``): time, and the translation units ninja
  compiled (new entries of ``.ninja_log`` whose output is an object file);
* ``import deep_gemm`` against ``import torch`` alone, each in fresh processes,
  interleaved, median of --import-runs.

Times are wall-clock (what a developer waits) with, beside them, the CPU time
the child processes used (user + sys), which a busy machine disturbs less.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BUILD_ENV = {"CC": "gcc", "CXX": "g++", "MAX_JOBS": "2"}


@dataclass
class Run:
    wall: float
    cpu: float
    out: str


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> Run:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return Run(wall, cpu, proc.stdout + proc.stderr)


def copy_tree(dest: Path) -> None:
    """The working tree's tracked and untracked (not ignored) files, without build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = Path(raw.decode())
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the working tree but still in the index
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)


def has_command(tree: Path, name: str) -> bool:
    help_text = run([PY, "-m", "codegen", "--help"], tree, check=False).out
    return re.search(rf"\b{name}\b", help_text) is not None


def _pch_note(out: str) -> str:
    return "the PCH was then built in the background" if "background" in out else ""


def wait_for_pch(tree: Path, timeout: float = 300.0, count: int = 1) -> None:
    """Wait until the background PCH build a cold verify (or import-pybind) started in ``tree`` has
    finished: ``count`` prelude PCHs exist."""
    folder = tree / ".cache" / "codegen-pch"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(folder.glob("prelude-*.pch"))) >= count:
            return
        time.sleep(0.2)
    raise SystemExit(f"no prelude PCH appeared in {folder} within {timeout:.0f} s")


def median_runs(cmd: list[str], tree: Path, runs: int) -> tuple[float, float]:
    results = [run(cmd, tree) for _ in range(runs)]
    return statistics.median(r.wall for r in results), statistics.median(r.cpu for r in results)


def ninja_log(tree: Path) -> dict[str, tuple[str, ...]]:
    """output -> its latest .ninja_log entry, over every build directory of the tree."""
    entries: dict[str, tuple[str, ...]] = {}
    for log in sorted((tree / "build").glob("temp*/.ninja_log")):
        for line in log.read_text().splitlines():
            if line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) >= 5:
                entries[fields[3]] = tuple(fields)
    return entries


def compiled_units(before: dict[str, tuple[str, ...]], after: dict[str, tuple[str, ...]]) -> list[str]:
    return sorted(out for out, entry in after.items() if out.endswith(".o") and before.get(out) != entry)


def _units(n: int) -> str:
    return f"{n} translation unit{'' if n == 1 else 's'}"


def flip_default(manifest: Path, op: str) -> str:
    """Change one default in ``op``'s schema (bool flipped, else a str default changed); say what changed."""
    text = manifest.read_text(encoding="utf-8")
    start = re.search(rf"schema: (>-\s*)?{re.escape(op)}\(", text)
    if start is None:
        raise SystemExit(f"{op}: not found in {manifest}")
    end = text.index("->", start.end())
    schema = text[start.start() : end]
    for pattern, repl in (
        (r"(\w+)=False", r"\1=True"),
        (r"(\w+)=True", r"\1=False"),
        (r'(\w+)="(\w*)"', r'\1="\2x"'),
    ):
        changed, n = re.subn(pattern, repl, schema, count=1)
        if n:
            manifest.write_text(text[: start.start()] + changed + text[end:], encoding="utf-8")
            before = re.search(pattern, schema)
            assert before is not None
            return f"{before.group(0)} -> {re.sub(pattern, repl, before.group(0))}"
    raise SystemExit(f"{op}: no bool or str default to change")


def import_times(tree: Path, runs: int) -> dict[str, tuple[float, float]]:
    code = (
        "import time, resource; t = time.perf_counter(); import {mod}; "
        "w = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_SELF); "
        "print(w, r.ru_utime + r.ru_stime)"
    )
    samples: dict[str, list[tuple[float, float]]] = {"torch": [], "deep_gemm": []}
    env = {"PYTHONPATH": str(tree)}
    for _ in range(runs):
        for mod in samples:
            out = run([PY, "-c", code.format(mod=mod)], tree, env).out.split()
            samples[mod].append((float(out[0]), float(out[1])))
    return {mod: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for mod, v in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each codegen command (median)")
    parser.add_argument("--import-runs", type=int, default=11, help="fresh processes per import (median)")
    parser.add_argument("--op", default="fp8_fp4_gemm_tt", help="the op whose manifest entry the rebuild changes")
    parser.add_argument("--skip-build", action="store_true", help="no clean build / rebuild; imports use the worktree")
    args = parser.parse_args(argv)

    rows: list[tuple[str, str, str, str, str]] = []  # what, wall, cpu, target, verdict

    def add(what: str, wall: float, cpu: float | None, target: float | None, extra: str = "") -> None:
        verdict = "" if target is None else ("met" if wall <= target else "MISSED")
        rows.append(
            (
                what,
                f"{wall:.2f} s",
                "" if cpu is None else f"{cpu:.2f} s",
                "" if target is None else f"≤ {target:g} s",
                (verdict + (" — " + extra if extra else "")).strip(" —"),
            )
        )

    with tempfile.TemporaryDirectory(prefix="dg-tooling-") as tmp:
        tree = Path(tmp) / "tree"
        copy_tree(tree)
        cold = run([PY, "-m", "codegen", "check"], tree)
        add("codegen check, cold (no schema cache: a fresh clone)", cold.wall, cold.cpu, None)
        if has_command(tree, "verify"):
            cold = run([PY, "-m", "codegen", "verify"], tree)
            add("codegen verify, cold (no PCH: a fresh clone)", cold.wall, cold.cpu, 5.0, _pch_note(cold.out))
            wait_for_pch(tree)
        if has_command(tree, "import-pybind"):
            fixture = "tests/codegen/fixtures/pybind_gaps"
            cmd = [PY, "-m", "codegen", "import-pybind", f"{fixture}/csrc/python_api.cpp", "--root", fixture]
            cmd += ["-o", str(Path(tmp) / "draft.yaml")]
            cold = run(cmd, tree)
            add(
                "codegen import-pybind, cold (no PCH; the gaps fixture)", cold.wall, cold.cpu, None, _pch_note(cold.out)
            )
            wait_for_pch(tree, count=2)
            wall, cpu = median_runs(cmd, tree, args.runs)
            add(f"codegen import-pybind, warm (median of {args.runs})", wall, cpu, None)
        for command in ("regenerate", "check", "verify"):
            if command == "verify" and not has_command(tree, "verify"):
                rows.append(("codegen verify", "absent", "", "≤ 1 s", "not in this branch, skipped"))
                continue
            wall, cpu = median_runs([PY, "-m", "codegen", command], tree, args.runs)
            add(f"codegen {command} (median of {args.runs})", wall, cpu, 1.0)

        import_tree = ROOT
        if not args.skip_build:
            build = [PY, "setup.py", "-q", "build_ext", "--inplace"]
            clean = run(build, tree, BUILD_ENV)
            units = compiled_units({}, ninja_log(tree))
            add("clean build (MAX_JOBS=2)", clean.wall, clean.cpu, None, _units(len(units)))
            noop = run(build, tree, BUILD_ENV)
            add("rebuild, nothing changed", noop.wall, noop.cpu, None)
            what = flip_default(tree / "ops.yaml", args.op)
            run([PY, "-m", "codegen", "regenerate"], tree)
            before = ninja_log(tree)
            rebuild = run(build, tree, BUILD_ENV)
            units = compiled_units(before, ninja_log(tree))
            names = ", ".join(Path(u).name for u in units) or "none"
            ok = "met" if len(units) <= 2 else "MISSED"
            add(
                f"rebuild after one op's entry changed ({args.op}: {what})",
                rebuild.wall,
                rebuild.cpu,
                None,
                f"{_units(len(units))} recompiled ({names}); target ≤ 2: {ok}",
            )
            import_tree = tree

        times = import_times(import_tree, args.import_runs)
        add(f"import torch (median of {args.import_runs})", *times["torch"], None)
        add(f"import deep_gemm (median of {args.import_runs})", *times["deep_gemm"], None)
        delta = times["deep_gemm"][0] - times["torch"][0]
        delta_cpu = times["deep_gemm"][1] - times["torch"][1]
        rows.append(
            (
                "import deep_gemm − import torch",
                f"{delta * 1000:+.0f} ms",
                f"{delta_cpu * 1000:+.0f} ms",
                "≤ +150 ms",
                "met" if delta <= 0.150 else "MISSED",
            )
        )

    print(f"# tooling — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print("| what | wall | CPU (user+sys) | target | result |")
    print("|---|---:|---:|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
