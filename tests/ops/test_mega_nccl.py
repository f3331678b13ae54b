"""Mega MoE across two GPUs over NCCL: symmetric memory and collectives, against the reference.

Each rank runs the same checks as the gloo tests (tests/support/mega_support.py), on
its own GPU: once with the buffer in torch's symmetric memory (the fused op
writes into the peer's buffer and synchronises through its device barrier),
once with an ordinary buffer (rows travel through NCCL all_to_all_single).
Both must match the float64 reference bitwise.  A call that fails on one rank
must release the other rank from the barrier at once, and the buffer must then
report that it needs rebuilding.
"""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from tests.support.mega_support import nccl_worker, spawn

pytestmark = pytest.mark.skipif(
    torch.cuda.device_count() < 2 or not dist.is_nccl_available(), reason="needs two CUDA GPUs and NCCL"
)


def test_two_gpus_nccl_and_symmetric_memory() -> None:
    seed = int(torch.randint(0, 2**31 - 1, ()).item())
    spawn(nccl_worker, 2, (seed,), timeout=300.0, backend="nccl")
