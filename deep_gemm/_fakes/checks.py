"""What every family's fakes share: argument errors worded as the C++ side words them, and size arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import torch

from deep_gemm._arith import align, ceil_div

__all__ = ["align", "by_name", "ceil_div", "check_same_device", "check_shape", "check_tensor", "fail"]


def fail(op: str, arg: str, what: str) -> NoReturn:
    raise ValueError(f"{op}: argument '{arg}' {what}")


def check_tensor(op: str, t: torch.Tensor, arg: str, dtypes: Sequence[torch.dtype], dims: Sequence[int]) -> None:
    if not isinstance(t, torch.Tensor):  # the dispatcher hands None through for a `Tensor` argument
        fail(op, arg, f"must be a Tensor, got {type(t).__name__}")
    if t.dtype not in dtypes:
        fail(op, arg, f"must be {' or '.join(str(d).removeprefix('torch.') for d in dtypes)}, got {t.dtype}")
    if t.dim() not in dims:
        fail(op, arg, f"must be {' or '.join(f'{d}-D' for d in dims)}, got {t.dim()}-D with shape {tuple(t.shape)}")


def check_same_device(op: str, t: torch.Tensor, arg: str, ref: torch.Tensor, ref_arg: str) -> None:
    if t.device != ref.device:
        fail(op, arg, f"is on {t.device} but '{ref_arg}' is on {ref.device}; expected one device for all tensors")


def check_shape(op: str, t: torch.Tensor, arg: str, shape: Sequence[Any]) -> None:
    if tuple(t.shape) != tuple(shape):
        fail(op, arg, f"must have shape {list(shape)}, got {list(t.shape)}")


def by_name(op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call of ``torch.ops.deep_gemm.<op>`` as {schema argument name: value}, for the arguments given.

    Lets a fake that serves several ops forward a call without writing out the
    op's parameter list again: the registered schema is the one list.
    """
    names = [a.name for a in getattr(torch.ops.deep_gemm, op).default._schema.arguments]
    return {**dict(zip(names, args)), **kwargs}
