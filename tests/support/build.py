"""What this build has: the devices the tests run on, and whether an op is registered."""

from __future__ import annotations

import torch

import deep_gemm  # noqa: F401  (loads the extension: torch.ops.deep_gemm is empty before)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def present(name: str) -> bool:
    """Whether this build registered the op (ops under a guard that is off are absent)."""
    return hasattr(torch.ops.deep_gemm, name)
