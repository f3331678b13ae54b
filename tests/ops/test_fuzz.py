"""Hostile input for every op: each call succeeds or raises an exception that names the op.

The cases come from tests/support/fuzz_cases.py (derived from each op's schema and
seeded by its samples) and run in a long-lived child process
(tests/support/fuzz_worker.py) with a capped address space, so that a crash (a signal)
or a hang (no answer within ``CASE_TIMEOUT`` seconds) is observed, counted and
survived: the worker is restarted and the next case runs.

Besides crashes and hangs, every run is held to four rules:

* an exception names the op in its message;
* a rejected call leaves its ``!`` outputs untouched (checks come before writes);
* an accepted layout-only case (same values, other strides or offset) gives the
  seed sample's result;
* nothing in the harness itself fails.

``DG_FUZZ_CASES`` sets the cases per op (default 1000); the table of counts is
printed at the end.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.build import present
from tests.support.manifest import OPS
from tests.support.pt2_support import guide, report

CASES_PER_OP = int(os.environ.get("DG_FUZZ_CASES", "1000"))
CASE_TIMEOUT = 60.0  # seconds; a case normally takes milliseconds
START_TIMEOUT = 300.0  # importing torch on a loaded 2-core machine
WORKER = Path(__file__).resolve().parents[1] / "support" / "fuzz_worker.py"
COLUMNS = ("cases", "ok", "exceptions", "unnamed", "partial", "wrong", "crashes", "hangs", "harness")


class Worker:
    """One child process running cases; restarted after a crash or a hang."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.restarts = 0

    def start(self) -> None:
        self.stderr.seek(0)
        self.stderr.truncate()
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
            env=env,
        )
        hello = self._read(START_TIMEOUT)
        if hello is None or not hello.get("ready"):
            raise RuntimeError(f"the fuzz worker did not start: {hello!r}\n{self.tail()}")

    def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"eof": True}

    def tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-1500:]

    def run(self, op: str, index: int, timeout: float = CASE_TIMEOUT) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{op} {index}\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died(op, index)
        answer = self._read(timeout)
        if answer is None:
            self.stop()
            return {"outcome": "hang", "case": f"{op}#{index}"}
        if answer.get("eof"):
            return self._died(op, index)
        return answer

    def _died(self, op: str, index: int) -> dict[str, Any]:
        assert self.proc is not None
        code = self.proc.wait()
        result = {"outcome": "crash", "case": f"{op}#{index}", "code": code, "stderr": self.tail()}
        self.proc = None
        self.restarts += 1
        return result

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            self.restarts += 1

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.proc = None
        self.stderr.close()


def _tally(result: dict[str, Any], row: Counter[str]) -> str | None:
    """Count one answer; return a line describing it when it breaks a rule."""
    row["cases"] += 1
    outcome = result["outcome"]
    case = result.get("case", "?")
    if outcome == "ok":
        row["ok"] += 1
        if "wrong" in result:
            row["wrong"] += 1
            return f"WRONG RESULT {case}: {result['wrong']}"
        return None
    if outcome == "exception":
        row["exceptions"] += 1
        problems = []
        if not result["named"]:
            row["unnamed"] += 1
            problems.append(f"UNNAMED {result['type']}: {result['message'][:300]!r}")
        if result["partial"]:
            row["partial"] += 1
            problems.append("WROTE AN OUTPUT BEFORE REJECTING")
        return f"{' / '.join(problems)} in {case}" if problems else None
    if outcome == "crash":
        row["crashes"] += 1
        return f"CRASH (exit {result['code']}) in {case}\n{result['stderr']}"
    if outcome == "hang":
        row["hangs"] += 1
        return f"HANG (> {CASE_TIMEOUT:.0f} s) in {case}"
    row["harness"] += 1
    return f"HARNESS ERROR: {result.get('message')}"


def _table(rows: dict[str, Counter[str]]) -> list[str]:
    width = max(len(n) for n in [*rows, "total"])
    head = f"{'op':{width}s} " + " ".join(f"{c:>10s}" for c in COLUMNS)
    lines = [head]
    total: Counter[str] = Counter()
    for name, row in rows.items():
        total.update(row)
        lines.append(f"{name:{width}s} " + " ".join(f"{row[c]:10d}" for c in COLUMNS))
    lines.append(f"{'total':{width}s} " + " ".join(f"{total[c]:10d}" for c in COLUMNS))
    return lines


def test_fuzz_every_op(request: pytest.FixtureRequest) -> None:
    names = [n for n in OPS if present(n)]
    rows: dict[str, Counter[str]] = {}
    failures: list[str] = []
    worker = Worker()
    try:
        for name in names:
            row = rows.setdefault(name, Counter())
            for index in range(CASES_PER_OP):
                problem = _tally(worker.run(name, index), row)
                if problem:
                    failures.append(problem)
    finally:
        worker.close()
    heading = f"fuzz: {CASES_PER_OP} hostile calls per op, worker restarts: {worker.restarts}"
    report(request.config, [heading, *("  " + line for line in _table(rows))])
    total: Counter[str] = Counter()
    for row in rows.values():
        total.update(row)
    assert total["cases"] == CASES_PER_OP * len(names)
    assert not failures, (
        f"{len(failures)} rule violations ({guide('header')}: check every argument, dtypes included, "
        "before any ATen call):\n" + "\n".join(failures[:40])
    )
    assert total["crashes"] == 0 and total["hangs"] == 0
    # The fuzzer must exercise both paths, or it is not testing anything.
    assert total["exceptions"] > 0 and total["ok"] > 0


def test_harness_counts_crashes_and_hangs_and_caps_memory() -> None:
    """The fuzzer's own rules can fail: a crash and a hang are observed and survived, a huge allocation fails."""
    worker = Worker()
    try:
        crash = worker.run("__crash__", 0)
        assert crash["outcome"] == "crash" and crash["code"] == -signal.SIGSEGV, crash
        hang = worker.run("__hang__", 0, timeout=2.0)
        assert hang["outcome"] == "hang", hang
        huge = worker.run("__huge__", 0)
        assert huge["outcome"] == "exception", (
            f"an 8 GiB allocation succeeded: the address space is not capped ({huge})"
        )
        assert worker.restarts == 2
        row: Counter[str] = Counter()
        for result in (crash, hang, huge):
            _tally(result, row)
        assert (row["crashes"], row["hangs"], row["exceptions"]) == (1, 1, 1)
    finally:
        worker.close()
