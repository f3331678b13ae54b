"""The samples registry: small valid inputs for every op in ops.yaml.

A family module in this package registers a builder per op with
``@samples("op_name", ...)``.  A builder takes a device and returns a list of
:class:`Sample`, each in the op's *schema* form (flat arguments, as
``torch.ops.deep_gemm.<op>`` takes them).  The legacy ``deep_gemm._C`` form is
derived from it with the manifest's pack rules (``legacy_call``), so a sample
serves opcheck, torch.compile, immutability and numerics tests alike.

Every op in the manifest must have samples: tests/ops/test_samples.py fails otherwise.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

Builder = Callable[[torch.device], list["Sample"]]
REGISTRY: dict[str, Builder] = {}


@dataclass
class Sample:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    # False when the result is defined per GPU architecture, so CPU and CUDA may differ by design.
    portable: bool = True
    # Why the sample cannot be captured in a CUDA graph (it reads device values on the host), or "".
    graphable_reason: str = ""

    @property
    def graphable(self) -> bool:
        return not self.graphable_reason

    def __repr__(self) -> str:
        return self.name


def samples(*ops: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        for op in ops:
            if op in REGISTRY:
                raise RuntimeError(f"samples for '{op}' registered twice")
            REGISTRY[op] = fn
        return fn

    return register


def load_all() -> dict[str, Builder]:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return REGISTRY


def clone_args(sample: Sample, device: torch.device | None = None) -> Sample:
    """A copy whose tensors are fresh clones (keeping strides), optionally on another device."""

    def c(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device or x.device)
            out.copy_(x)
            return out
        if isinstance(x, (list, tuple)):
            return type(x)(c(v) for v in x)
        return x

    return Sample(
        sample.name,
        tuple(c(a) for a in sample.args),
        {k: c(v) for k, v in sample.kwargs.items()},
        sample.portable,
        sample.graphable_reason,
    )
