"""The built artifact: one abi3 module, no pybind11, no libtorch_python, dynamic libstdc++;
and `import deep_gemm` leaves CUDA uninitialised."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import deep_gemm

SO = Path(deep_gemm.__file__).parent


def extension() -> Path:
    found = sorted(SO.glob("_C_extension*.so"))
    assert len(found) == 1, found
    return found[0]


def test_extension_is_abi3() -> None:
    assert extension().name == "_C_extension.abi3.so"


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
def test_linkage() -> None:
    dynamic = subprocess.run(["readelf", "-d", str(extension())], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert "libstdc++.so.6" in needed  # linked dynamically: a static libstdc++ broke iostream/regex
    assert not any("torch_python" in lib for lib in needed)
    assert not any("python3" in lib for lib in needed)
    symbols = subprocess.run(["readelf", "-Ws", "--dyn-syms", str(extension())], capture_output=True, text=True).stdout
    assert "pybind11" not in symbols
    assert "PyInit__C_extension" in symbols


def test_extension_is_an_importable_module() -> None:
    import importlib

    module = importlib.import_module("deep_gemm._C_extension")
    assert module.__name__ == "deep_gemm._C_extension"


def test_import_does_not_initialise_cuda() -> None:
    code = "import deep_gemm, torch; print(torch.cuda.is_initialized())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=SO.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_no_pybind11_in_sources() -> None:
    root = SO.parent
    for path in [*root.glob("csrc/**/*.hpp"), *root.glob("csrc/**/*.cpp"), *root.glob("csrc/**/*.cu")]:
        assert "pybind11" not in path.read_text(), path
