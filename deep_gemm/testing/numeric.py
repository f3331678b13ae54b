"""Comparing results."""

from __future__ import annotations

import torch

# Values per float64 slice of calc_diff (two slices of 32 MiB).
_DIFF_SLICE = 1 << 22


def calc_diff(x: torch.Tensor, y: torch.Tensor) -> float:
    """1 - 2 sum(x y) / sum(x^2 + y^2), in float64; 0 for two all-zero tensors.

    The sums are float64 dot products over slices of the flattened (broadcast) inputs, so the
    scratch is two slices however large the tensors are (results of several GiB are compared
    this way in the tests)."""
    if x.shape != y.shape:
        x, y = torch.broadcast_tensors(x, y)  # type: ignore[no-untyped-call]  # (untyped in torch's stubs)
    xf, yf = x.reshape(-1), y.reshape(-1)
    sums = torch.zeros(3, dtype=torch.float64, device=xf.device)
    for s in range(0, xf.numel(), _DIFF_SLICE):
        xs, ys = xf[s : s + _DIFF_SLICE].double(), yf[s : s + _DIFF_SLICE].double()
        sums += torch.stack((torch.dot(xs, xs), torch.dot(ys, ys), torch.dot(xs, ys)))
        del xs, ys  # before the next slices are made
    xx, yy, xy = (float(v) for v in sums.tolist())
    if xx + yy == 0:
        return 0.0
    return 1 - 2 * xy / (xx + yy)


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
