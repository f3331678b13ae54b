"""Support code for the generated ``deep_gemm._C`` shim (loading and errors).

The generated shim of a library imports these from ``<library>._shim``; another library
using the generator may re-export them (``examples/tiny_ext/tiny_ops/_shim.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence

import torch


def load_extension(extension: str) -> None:
    """Load the compiled extension module ``extension``, which registers every op with the dispatcher."""
    spec = importlib.util.find_spec(extension)
    if spec is None or spec.origin is None:
        raise ImportError(
            f"{extension} is not built. Build it with `make build` (or `pip install --no-build-isolation .` "
            "after installing torch)."
        )
    torch.ops.load_library(spec.origin)


def pack_error(op: str, names: Sequence[str], values: Sequence[object]) -> TypeError:
    """The error for a legacy ``(tensor, scale)`` argument that is not a pair."""
    for name, value in zip(names, values):
        ok = isinstance(value, (tuple, list)) and len(value) == 2
        if not ok:
            got = f"a Tensor of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor) else type(value).__name__
            return TypeError(f"{op}: argument '{name}' must be a (tensor, scale) pair (tuple of 2), got {got}")
    return TypeError(f"{op}: arguments {', '.join(names)} must be (tensor, scale) pairs")


def guard_enabled(library: str, guard: str, ops: Sequence[str]) -> bool:
    """Whether this build registered the ops under ``guard``: all of them, or none.

    A build with only part of a guard's ops is broken, and importing it fails.
    """
    namespace = getattr(torch.ops, library)
    present = [name for name in ops if hasattr(namespace, name)]
    if present and len(present) != len(ops):
        missing = sorted(set(ops) - set(present))
        raise ImportError(f"{library}: guard '{guard}' is half-built: {', '.join(missing)} missing from the extension")
    return bool(present)


def register_fake(qualified_op: str, dotted: str) -> None:
    """Register the Python fake kernel ``dotted`` (module.attr) for ``library::op``."""
    module, _, attr = dotted.rpartition(".")
    torch.library.register_fake(qualified_op, getattr(importlib.import_module(module), attr))
