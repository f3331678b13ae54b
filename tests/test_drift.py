"""The drift check: stale generated files (or an edited manifest) make `check` fail and print the fix."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.pipeline import load_manifest, render

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the manifest and every generated file."""
    shutil.copy(ROOT / "ops.yaml", tmp_path / "ops.yaml")
    if (ROOT / ".cache").is_dir():  # the schema cache only saves torch's import time
        shutil.copytree(ROOT / ".cache", tmp_path / ".cache")
    for rel in render(load_manifest(ROOT / "ops.yaml", cache_root=ROOT)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    # The modules the manifest's fakes live in: check reads them (codegen/fakes.py).
    shutil.copytree(ROOT / "deep_gemm" / "_fakes", tmp_path / "deep_gemm" / "_fakes")
    return tmp_path


def codegen(tree: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", command, "--manifest", str(tree / "ops.yaml"), "--root", str(tree)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_repository_is_in_sync() -> None:
    result = subprocess.run([sys.executable, "-m", "codegen", "check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_edited_generated_file_fails_then_regenerate_fixes(tree: Path) -> None:
    assert codegen(tree, "check").returncode == 0
    shim = tree / "deep_gemm/_C.py"
    shim.write_text(shim.read_text().replace("def get_num_sms():", "def get_num_sms():  # hand edit"))
    result = codegen(tree, "check")
    assert result.returncode == 1
    assert "+def get_num_sms():\n" in result.stdout and "-def get_num_sms():  # hand edit" in result.stdout
    assert "run: python -m codegen regenerate" in result.stdout
    assert codegen(tree, "regenerate").returncode == 0
    assert codegen(tree, "check").returncode == 0


def test_edited_manifest_fails_until_regenerated(tree: Path) -> None:
    manifest = tree / "ops.yaml"
    manifest.write_text(
        manifest.read_text().replace("The tensor-core utilisation the heuristics assume", "TC utilisation")
    )
    result = codegen(tree, "check")
    assert result.returncode == 1
    assert "TC utilisation" in result.stdout and "run: python -m codegen regenerate" in result.stdout
    assert codegen(tree, "regenerate").returncode == 0
    assert codegen(tree, "check").returncode == 0


def test_deleted_generated_file_is_reported(tree: Path) -> None:
    (tree / "docs/ops.md").unlink()
    result = codegen(tree, "check")
    assert result.returncode == 1 and "+++ b/docs/ops.md" in result.stdout
