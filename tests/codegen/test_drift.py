"""The drift check: stale generated files (or an edited manifest) make `check` fail and print the fix."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.outputs import render_all as render
from codegen.pipeline import load_manifest

ROOT = Path(__file__).resolve().parents[2]


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
    # The fix names the interpreter that ran (a bare `python` may not be the venv's).
    assert f"run: {sys.executable} -m codegen regenerate --manifest" in result.stdout
    assert codegen(tree, "regenerate").returncode == 0
    assert codegen(tree, "check").returncode == 0


def test_edited_manifest_fails_until_regenerated(tree: Path) -> None:
    manifest = tree / "ops.yaml"
    manifest.write_text(
        manifest.read_text().replace("The tensor-core utilisation the heuristics assume", "TC utilisation")
    )
    result = codegen(tree, "check")
    assert result.returncode == 1
    assert "TC utilisation" in result.stdout and f"run: {sys.executable} -m codegen regenerate" in result.stdout
    assert codegen(tree, "regenerate").returncode == 0
    assert codegen(tree, "check").returncode == 0


def test_deleted_generated_file_is_reported(tree: Path) -> None:
    (tree / "docs/ops.md").unlink()
    result = codegen(tree, "check")
    assert result.returncode == 1 and "+++ b/docs/ops.md" in result.stdout


def test_removed_family_leaves_no_stale_file(tree: Path) -> None:
    """Note [The generator owns its outputs]: a family dropped from the manifest takes its file with it."""
    ghost = tree / "csrc/generated/hyperconnection.cpp"
    assert ghost.is_file()
    manifest = tree / "ops.yaml"
    text = manifest.read_text()
    start = text.index("\n  hyperconnection:\n")
    end = text.index("\n  mega:\n")
    manifest.write_text(text[:start] + text[end:])
    result = codegen(tree, "check")
    assert result.returncode == 1
    assert "stale generated file: csrc/generated/hyperconnection.cpp" in result.stdout
    assert "-csrc/generated/hyperconnection.cpp" in result.stdout  # and the build's list drops it
    regen = codegen(tree, "regenerate")
    assert regen.returncode == 0 and "deleted csrc/generated/hyperconnection.cpp" in regen.stdout
    assert not ghost.exists()
    assert codegen(tree, "check").returncode == 0
    sources = (tree / "csrc/generated/sources.txt").read_text()
    assert "hyperconnection" not in sources and "csrc/generated/mega.cpp\n" in sources


def test_unmarked_file_in_owned_folder_is_left_alone(tree: Path) -> None:
    hand = tree / "csrc/generated/notes.txt"
    hand.write_text("written by a person\n")
    assert codegen(tree, "check").returncode == 0
    assert codegen(tree, "regenerate").returncode == 0 and hand.is_file()


def test_build_compiles_the_written_list() -> None:
    """setup.py compiles what the generator listed, not a glob of the folder."""
    setup = (ROOT / "setup.py").read_text()
    assert 'glob.glob("csrc/generated' not in setup and "sources.txt" in setup
    listed = [
        ln for ln in (ROOT / "csrc/generated/sources.txt").read_text().splitlines() if ln and not ln.startswith("#")
    ]
    assert listed == [
        f"csrc/generated/{f.name}.cpp" for f in load_manifest(ROOT / "ops.yaml", cache_root=ROOT).families
    ]
