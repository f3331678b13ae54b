"""Size arithmetic shared by the public helpers (deep_gemm.utils) and the fakes (deep_gemm._fakes).

A module of its own with no imports, so the fakes can use it while the extension is still loading.
"""

from __future__ import annotations


def ceil_div(x: int, y: int) -> int:
    """x / y rounded up (ints, and the SymInts of fake tensors alike)."""
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    """x rounded up to a multiple of y (ints and SymInts alike)."""
    return ceil_div(x, y) * y
