"""Test-selection helpers with DeepGEMM's names: ``get_arch_major``, ``test_filter``, ``ignore_env``."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import torch

F = TypeVar("F", bound=Callable[..., Any])


def get_arch_major() -> int:
    """The compute-capability major of the current GPU (9 for Hopper, 10 for Blackwell); 0 without a GPU."""
    if not torch.cuda.is_available():
        return 0
    return torch.cuda.get_device_capability()[0]


def test_filter(condition: Callable[[], bool]) -> Callable[[F], F]:
    """Decorate a test so that it runs only when ``condition()`` is true at call time.

    A filtered-out call prints the test's name and the condition, and returns None.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            if condition():
                return func(*args, **kwargs)
            print(f"{func.__name__}:\n > Filtered by {condition}\n")
            return None

        return run  # type: ignore[return-value]

    return decorate


# Scripts import this decorator into their test modules; pytest must not collect it as a test.
test_filter.__test__ = False  # type: ignore[attr-defined]


def ignore_env(name: str, condition: Callable[[], bool]) -> Callable[[F], F]:
    """Decorate a function so that, when ``condition()`` is true, it runs with environment
    variable ``name`` unset; the variable's value is put back afterwards (also on error)."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not condition():
                return func(*args, **kwargs)
            saved = os.environ.pop(name, None)
            try:
                return func(*args, **kwargs)
            finally:
                if saved is not None:
                    os.environ[name] = saved

        return run  # type: ignore[return-value]

    return decorate
