"""A second extension from the same toolchain (examples/tiny_ext/): another library, one CPU op.

It proves the generator is library-agnostic: every name in its outputs comes from its
manifest's ``library: tiny_ops``, it builds without deep_gemm, and its op, shim and stub work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.outputs import render_all
from codegen.pipeline import load_manifest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tiny_ext"


def test_generated_files_are_fresh_and_name_only_their_library() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "check", "--manifest", str(EXAMPLE / "ops.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    files = render_all(load_manifest(EXAMPLE / "ops.yaml", cache_root=None))
    assert sorted(files) == [
        "csrc/generated/blas.cpp",
        "csrc/generated/sources.txt",
        "docs/ops.md",
        "tiny_ops/_C.py",
        "tiny_ops/_C.pyi",
    ]
    for rel, text in files.items():
        assert "deep_gemm" not in text, rel
    assert "TORCH_LIBRARY_FRAGMENT(tiny_ops, m)" in files["csrc/generated/blas.cpp"]
    assert "::tiny_ops::blas::axpy(y, x, alpha)" in files["csrc/generated/blas.cpp"]
    assert 'load_extension("tiny_ops._C_extension")' in files["tiny_ops/_C.py"]


def test_generator_hard_codes_no_library_name() -> None:
    """Every library name the generator writes comes from the manifest's ``library:``."""
    sources = [*(ROOT / "codegen").rglob("*.py"), *(ROOT / "templates").glob("*.j2")]
    assert sources
    assert [str(p.relative_to(ROOT)) for p in sources if "deep_gemm" in p.read_text()] == []


@pytest.mark.slow
def test_builds_and_runs(tmp_path: Path) -> None:
    project = tmp_path / "tiny_ext"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("build", "*.so", ".cache", "__pycache__"))
    env = {**os.environ, "CC": "gcc", "CXX": "g++", "MAX_JOBS": "1"}
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    script = """
import sys, torch, tiny_ops
x, y = torch.arange(4.0), torch.ones(4)
tiny_ops.axpy(y, x, 2.0)
assert y.tolist() == [1.0, 3.0, 5.0, 7.0], y
torch.ops.tiny_ops.axpy(y, x)
assert y.tolist() == [1.0, 4.0, 7.0, 10.0], y
try:
    tiny_ops.axpy(torch.ones(3), x)
except ValueError as exc:  # std::invalid_argument reaches Python as ValueError
    assert "axpy: x and y must have the same shape and dtype" in str(exc), exc
else:
    raise AssertionError("a shape mismatch was accepted")
assert tiny_ops._C.FAMILIES == {"blas": ["axpy"]}
assert "deep_gemm" not in sys.modules
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
    # The stub types the shim for users: mypy accepts a right call and rejects a wrong keyword.
    pytest.importorskip("mypy")
    (project / "use.py").write_text(
        "import tiny_ops\nimport torch\ntiny_ops.axpy(torch.ones(2), torch.ones(2), alpha=0.5)\n"
    )
    (project / "bad.py").write_text(
        "import tiny_ops\nimport torch\ntiny_ops.axpy(torch.ones(2), torch.ones(2), beta=0.5)\n"
    )
    for name, want in (("use.py", 0), ("bad.py", 1)):
        typed = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", name],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert typed.returncode == want, typed.stdout + typed.stderr
