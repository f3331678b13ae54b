"""Build deep_gemm._C_extension: one abi3 shared object, no pybind11.

The sources are csrc/python_api.cpp (an empty module init) and the generated
registration files listed in csrc/generated/sources.txt, which the generator
writes (run `python -m codegen regenerate` after editing ops.yaml).  The list,
not a glob: a stale file left in csrc/generated/ is never compiled.

A CUDA build happens when torch has CUDA and nvcc is found (set DG_FORCE_CPU=1
to build for the CPU only); it also compiles the kernels of csrc/cuda/ for sm_90a:
the scale-factor layout, FP4 dequant and barrier kernels (PORTABLE_KERNELS) always,
and the others (GEMM, attention, HC) when CuTe/CUTLASS headers are found (the optional
`nvidia-cutlass` wheel, or $CUTLASS_INCLUDE_DIR).

Install torch first, then build without build isolation:
    pip install --no-build-isolation .        or    python setup.py build_ext --inplace
"""

from __future__ import annotations

import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
PY_LIMITED_API = "0x030A0000"  # CPython 3.10: the oldest interpreter the abi3 wheel serves


def with_cuda() -> bool:
    if os.environ.get("DG_FORCE_CPU") == "1":
        return False
    return torch.version.cuda is not None and CUDA_HOME is not None


def generated_sources(root: str = ROOT) -> list[str]:
    """The registration sources the generator listed (comment lines start with '#')."""
    path = os.path.join(root, "csrc", "generated", "sources.txt")
    if not os.path.isfile(path):
        raise SystemExit(f"{path} is missing: run `python -m codegen regenerate` (or `make regenerate`) first")
    with open(path, encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip() and not line.startswith("#")]


def cutlass_include() -> str | None:
    """CuTe/CUTLASS headers for the native sm90a kernels: $CUTLASS_INCLUDE_DIR, or the
    `nvidia-cutlass` wheel's cutlass_library/source/include.  Optional: without them a CUDA
    build leaves out csrc/cuda/ and the ops take their vendor-library or reference paths."""
    path = os.environ.get("CUTLASS_INCLUDE_DIR")
    if not path:
        try:
            import cutlass_library  # type: ignore[import-not-found]
        except ImportError:
            return None
        path = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include")
    return path if os.path.isfile(os.path.join(path, "cute", "arch", "mma_sm90_gmma.hpp")) else None


# csrc/cuda/ sources that include no CuTe/CUTLASS header: built in every CUDA build.
PORTABLE_KERNELS = {"sf_layout.cu", "mega_dequant.cu", "symm_barrier.cu"}


def extension():
    sources = ["csrc/python_api.cpp", *generated_sources()]
    macros = [("Py_LIMITED_API", PY_LIMITED_API)]
    cxx = ["-O2", "-fvisibility=hidden"]
    kwargs = {}
    include_dirs = [os.path.join(ROOT, "csrc")]
    builder = CppExtension
    if with_cuda():
        builder = CUDAExtension
        kernels = sorted(glob.glob("csrc/cuda/*.cu"))
        # Kernels on CuTe's GMMA atoms need the cutlass headers; the portable ones build anywhere.
        sm90_kernels = [k for k in kernels if os.path.basename(k) not in PORTABLE_KERNELS]
        sources += [k for k in kernels if k not in sm90_kernels]
        macros.append(("DG_WITH_CUDA", None))
        cutlass = cutlass_include()
        if cutlass is not None:
            sources += sm90_kernels
            include_dirs.append(cutlass)
            macros.append(("DG_WITH_SM90_KERNELS", None))
        kwargs["extra_compile_args"] = {
            "cxx": cxx,
            "nvcc": ["-O3", "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr"],
        }
        kwargs["libraries"] = ["cublasLt", "cublas"]
    else:
        kwargs["extra_compile_args"] = {"cxx": cxx}
    return builder(
        name="deep_gemm._C_extension",
        sources=sources,
        include_dirs=include_dirs,
        define_macros=macros,
        py_limited_api=True,
        **kwargs,
    )


# Guarded so that tools/ptxas_report.py can import cutlass_include(); pip's build backend and
# `python setup.py` both run this file as __main__.
if __name__ == "__main__":
    setup(
        ext_modules=[extension()],
        cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
        options={"bdist_wheel": {"py_limited_api": "cp310"}},
    )
