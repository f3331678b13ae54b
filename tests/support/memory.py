"""The CPU memory a call allocates, from torch.profiler's memory events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.profiler import ProfilerActivity, profile


def cpu_bytes(fn: Callable[[], Any]) -> tuple[int, int]:
    """(peak, allocated): the most bytes that `fn()` held at once in tensors it allocated itself
    (its result included), and the bytes of all its allocations, at the granularity of the
    operators it ran."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # Allocations are charged to the operator that made them; a free outside any operator
    # shows up as an event of its own ("[memory]"), charged negatively.
    events = sorted((e for e in prof.events() if e.self_cpu_memory_usage != 0), key=lambda e: e.time_range.start)
    held = peak = allocated = 0
    for e in events:
        held += e.self_cpu_memory_usage
        peak = max(peak, held)
        allocated += max(0, e.self_cpu_memory_usage)
    return peak, allocated
