"""Python-side argument converters named by ``python.convert`` in ops.yaml.

Each takes the value, the op name and the parameter name, and returns what the
schema expects, or raises a ``TypeError`` that names both.
"""

from __future__ import annotations

from collections.abc import Sequence


def _ints(value: object) -> bool:
    return isinstance(value, Sequence) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _plain_int_tuple(value: object, sizes: tuple[int, ...]) -> bool:
    """The common case, checked cheaply: a tuple of plain ints of an accepted length."""
    return value.__class__ is tuple and len(value) in sizes and all(v.__class__ is int for v in value)  # type: ignore[arg-type,attr-defined]


def int_or_pair(value: object, op: str, arg: str) -> object:
    """``x`` -> ``[x]``; ``(a, b)`` -> ``[a, b]`` (the schema takes ``int[]``)."""
    if value.__class__ is int or _plain_int_tuple(value, (2,)):
        return value if value.__class__ is tuple else [value]
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if _ints(value) and len(value) == 2:  # type: ignore[arg-type]
        return list(value)  # type: ignore[call-overload]
    raise TypeError(f"{op}: argument '{arg}' must be an int or a pair of ints, got {value!r}")


def recipe_2_or_3(value: object, op: str, arg: str) -> object:
    """A (gran_mn, gran_k) or (gran_m, gran_n, gran_k) tuple, passed on as a list."""
    if _plain_int_tuple(value, (2, 3)):
        return value
    if _ints(value) and len(value) in (2, 3):  # type: ignore[arg-type]
        return list(value)  # type: ignore[call-overload]
    raise TypeError(f"{op}: argument '{arg}' must be a tuple of 2 or 3 ints, got {value!r}")
