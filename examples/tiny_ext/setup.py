"""Build tiny_ops._C_extension (abi3, CPU): csrc/python_api.cpp and the generated sources the
generator listed in csrc/generated/sources.txt.

    python -m codegen regenerate --manifest examples/tiny_ext/ops.yaml   (from the repository root)
    python setup.py build_ext --inplace                                 (here, torch installed)
"""

from __future__ import annotations

import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.abspath(__file__))


def generated_sources() -> list[str]:
    with open(os.path.join(ROOT, "csrc", "generated", "sources.txt"), encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip() and not line.startswith("#")]


setup(
    name="tiny_ops",
    packages=["tiny_ops"],
    ext_modules=[
        CppExtension(
            name="tiny_ops._C_extension",
            sources=["csrc/python_api.cpp", *generated_sources()],
            include_dirs=[os.path.join(ROOT, "csrc")],
            define_macros=[("Py_LIMITED_API", "0x030A0000")],
            extra_compile_args={"cxx": ["-O1"]},
            py_limited_api=True,
        )
    ],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
