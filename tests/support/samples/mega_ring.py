"""Samples for get_ring_limit_for_mega_moe."""

from __future__ import annotations

import torch

from . import Sample, samples


@samples("get_ring_limit_for_mega_moe")
def _ring(device: torch.device) -> list[Sample]:
    return [
        Sample("ep8", (384, 48, 6, 8)),
        Sample("one_rank", (768, 1, 1, 1)),
        Sample("many_experts", (384, 256, 8, 2)),
    ]
