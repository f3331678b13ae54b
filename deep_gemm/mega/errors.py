"""The argument error every part of deep_gemm.mega raises, worded as the C++ ops word theirs."""

from __future__ import annotations

__all__ = ["arg_error"]


def arg_error(op: str, arg: str, what: str) -> ValueError:
    """``ValueError("<op>: argument '<arg>' <what>")``."""
    return ValueError(f"{op}: argument '{arg}' {what}")
