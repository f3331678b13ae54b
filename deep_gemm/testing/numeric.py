"""Comparing results."""

from __future__ import annotations

import torch


def calc_diff(x: torch.Tensor, y: torch.Tensor) -> float:
    """1 - 2 sum(x y) / sum(x^2 + y^2), in float64; 0 for two all-zero tensors."""
    x64, y64 = x.double(), y.double()
    denominator = (x64 * x64 + y64 * y64).sum()
    if denominator == 0:
        return 0.0
    return float(1 - 2 * (x64 * y64).sum() / denominator)


def count_bytes(*tensors: object) -> int:
    """Bytes held by the tensors, looking inside tuples and lists; None counts 0."""
    total = 0
    for t in tensors:
        if isinstance(t, (tuple, list)):
            total += count_bytes(*t)
        elif isinstance(t, torch.Tensor):
            total += t.numel() * t.element_size()
    return total


def assert_bitwise_equal(x: torch.Tensor, y: torch.Tensor, label: str = "") -> None:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise AssertionError(f"{label}: shape/dtype differ: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}")
    a = x.contiguous().view(torch.uint8)
    b = y.contiguous().view(torch.uint8)
    if not torch.equal(a, b):
        raise AssertionError(f"{label}: tensors differ bitwise")
