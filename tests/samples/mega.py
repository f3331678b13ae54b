"""Samples for the mega family (Mega MoE and its symmetric buffer)."""

from __future__ import annotations

import torch

from . import Sample, samples

# (num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, mma_type, num_shared_experts)
SIZE_CONFIGS = [
    (1, 4, 384, 2, 128, 128, "fp8xfp4", 0),
    (8, 384, 8448, 6, 7168, 3072, "fp8xfp4", 0),  # DeepSeek-V4-Pro, 8192 tokens aligned to 384
    (4, 8, 768, 8, 256, 384, "fp8xfp4", 2),  # topk above the experts per rank; shared experts
    (2, 2, 384, 1, 64, 8, "bf16xbf16", 0),  # bf16: no scale regions, hidden need not be a multiple of 128
    (3, 9, 1152, 3, 200, 24, "bf16xbf16", 1),
]


@samples("get_token_alignment_for_mega_moe")
def _alignment(device: torch.device) -> list[Sample]:
    return [Sample("plain", ())]


@samples("get_symm_buffer_size_for_mega_moe")
def _size(device: torch.device) -> list[Sample]:
    out = []
    for r, e, t, k, h, i, mma, s in SIZE_CONFIGS:
        kwargs = {"num_shared_experts": s} if s else {}
        out.append(Sample(f"{mma}_r{r}_e{e}_t{t}_k{k}_h{h}_i{i}_s{s}", (r, e, t, k, h, i, mma, "swiglu"), kwargs))
    return out


@samples("_get_symm_buffer_views_for_mega_moe")
def _views(device: torch.device) -> list[Sample]:
    out = []
    for r, e, t, k, h, i, mma, s in SIZE_CONFIGS:
        ring = r * t * min(k, e // r)
        out.append(Sample(f"{mma}_t{t}_k{k}_h{h}_i{i}_s{s}_ring{ring}", (mma, t, k, h, i, s, ring)))
    return out
