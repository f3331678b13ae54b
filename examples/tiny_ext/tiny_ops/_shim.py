"""What the generated ``tiny_ops._C`` imports from its library: loading the extension."""

from __future__ import annotations

import importlib.util

import torch


def load_extension(extension: str) -> None:
    """Load the compiled extension, which registers every op with the dispatcher."""
    spec = importlib.util.find_spec(extension)
    if spec is None or spec.origin is None:
        raise ImportError(f"{extension} is not built: run `python setup.py build_ext --inplace` in examples/tiny_ext")
    torch.ops.load_library(spec.origin)
