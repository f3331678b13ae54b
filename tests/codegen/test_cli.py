"""The command line as a new user meets it: help, missing arguments, pipes, a missing dependency, make demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.__main__ import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


def codegen(*args: str, cwd: Path = ROOT, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args], cwd=cwd, capture_output=True, text=True, timeout=120, **kwargs
    )  # type: ignore[call-overload]


def test_help_says_what_each_command_does() -> None:
    result = codegen("--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())  # argparse wraps the help lines
    for name, what in COMMANDS.items():
        assert name in result.stdout
        assert " ".join(what.split())[:40] in text, (name, result.stdout)


def test_no_command_asks_for_one_not_for_files(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "COMMAND" in err and "files" not in err


def test_import_pybind_alone_needs_its_files(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import-pybind"])
    assert "files" in capsys.readouterr().err


def test_list_into_a_closed_pipe_ends_quietly() -> None:
    result = subprocess.run(
        f"{sys.executable} -m codegen list | head -n 1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("runtime\t")
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr


def test_missing_torch_is_one_line(tmp_path: Path) -> None:
    """A fresh clone run with an interpreter that lacks torch: one line saying what to install."""
    shutil.copy(ROOT / "ops.yaml", tmp_path / "ops.yaml")  # no schema cache there: torch would be imported
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "from codegen.__main__ import main\n"
        f"sys.exit(main(['check', '--manifest', {str(tmp_path / 'ops.yaml')!r}]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "'torch' is not installed for " + sys.executable in lines[0] and "pip install torch" in lines[0]


def test_make_demo_regenerates_before_the_drift_check() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    venv = Path(sys.executable).parent.parent
    result = subprocess.run(
        [make, "--dry-run", "demo", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("-m codegen regenerate") < out.index("-m codegen check --quiet") < out.index("setup.py")
