# @generated from ops.yaml by python -m codegen — do not edit
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    'axpy',
]

FAMILIES: dict[str, list[str]]

def axpy(y: Tensor, x: Tensor, alpha: float = 1.0) -> None:
    """y += alpha * x, in place (same shape and dtype)."""
