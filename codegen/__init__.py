"""deep_gemm's binding generator; see ``python -m codegen --help`` and ``codegen/__main__.py``."""
