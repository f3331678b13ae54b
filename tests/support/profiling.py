"""Which CUDA kernels a call launches, from torch.profiler."""

from __future__ import annotations

from collections.abc import Callable

import torch


def cuda_kernel_names(call: Callable[[], object]) -> set[str]:
    """The names of the CUDA kernels that call() launches (it runs once, then the device syncs)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    return {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
