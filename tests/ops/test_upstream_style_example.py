"""examples/upstream_style.py runs to the end with every check passing: on the CPU always
(a GPU hidden), and on the GPU when there is one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "upstream_style.py"
CASES = 9


def _run(hide_gpu: bool) -> str:
    env = dict(os.environ)
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.pop("DG_USE_NVIDIA_TOOLS", None)
    proc = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_runs_on_the_cpu() -> None:
    out = _run(hide_gpu=True)
    assert "no GPU: CPU operators" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(" ok ")]
    assert len(lines) == CASES, out
    # Without a GPU each case is timed through its CPU operator, so every one is found.
    assert "not in the profile" not in out
    assert f"upstream_style: {CASES} of {CASES} cases ok" in out


@pytest.mark.gpu
@pytest.mark.slow
def test_runs_on_the_gpu() -> None:
    out = _run(hide_gpu=False)
    assert f"upstream_style: {CASES} of {CASES} cases ok" in out
