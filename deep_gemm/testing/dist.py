"""A process group of the processes on this host, for multi-rank tests and benchmarks."""

from __future__ import annotations

import os
from datetime import timedelta

import torch

# NVLink multicast (NVLS) stays off: it needs a fabric manager that plain multi-GPU hosts do not run.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def init_local_group(backend: str, rank: int, world: int, port: int, timeout_s: float = 60.0) -> torch.device | None:
    """Join the default process group of ``world`` processes rendezvousing on 127.0.0.1:``port``.

    With backend "nccl", rank r takes GPU r, NVLink multicast is left off
    (variables already set win) and that GPU is returned; with "gloo", None.
    """
    import torch.distributed as dist

    device = None
    if backend == "nccl":
        for name, value in NO_MULTICAST.items():
            os.environ.setdefault(name, value)
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
    else:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=timeout_s),
        device_id=device,
    )
    return device
