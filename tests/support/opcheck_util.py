"""torch.library.opcheck with one adaptation for float8 inputs on the CPU.

opcheck's test_schema compares every input before and after the call with
``torch.allclose``, which torch does not implement for float8 tensors on the
CPU.  While opcheck runs, float8 tensors are compared bitwise instead (through
a uint8 view): a stricter comparison, so nothing that the original check would
catch slips through.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

FLOAT8 = {torch.float8_e4m3fn, torch.float8_e5m2}
ALL_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


@contextlib.contextmanager
def float8_bitwise_allclose() -> Iterator[None]:
    original = torch.allclose

    def allclose(lhs: torch.Tensor, rhs: torch.Tensor, *args: Any, **kwargs: Any) -> bool:
        if lhs.dtype in FLOAT8 and rhs.dtype == lhs.dtype:
            return torch.equal(lhs.view(torch.uint8), rhs.view(torch.uint8))
        return original(lhs, rhs, *args, **kwargs)

    torch.allclose = allclose  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.allclose = original


def opcheck(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> dict[str, str]:
    with float8_bitwise_allclose():
        return torch.library.opcheck(op, args, kwargs or {}, test_utils=ALL_TESTS, raise_exception=True)
