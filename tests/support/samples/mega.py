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


@samples("_get_workspace_words_for_mega_moe")
def _workspace_words(device: torch.device) -> list[Sample]:
    return [Sample("plain", ())]


@samples("_get_symm_buffer_views_for_mega_moe")
def _views(device: torch.device) -> list[Sample]:
    out = []
    for r, e, t, k, h, i, mma, s in SIZE_CONFIGS:
        ring = r * t * min(k, e // r)
        out.append(Sample(f"{mma}_t{t}_k{k}_h{h}_i{i}_s{s}_ring{ring}", (mma, t, k, h, i, s, ring)))
    return out


def _to(x, device: torch.device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


# The fused ops read the routing and the received-row count on the host, so no CUDA graph can
# capture them.  (Set as an attribute so the note also reaches registries whose Sample has the field.)
HOST_READS = "reads topk_idx and the received-row count on the host"


def _host_reading(sample: Sample) -> Sample:
    sample.graphable_reason = HOST_READS  # type: ignore[attr-defined]
    return sample


def _fused(device: torch.device, mma: str) -> list[Sample]:
    import deep_gemm.mega as mega
    from tests.support.mega_support import ALIGN, make_problem, stage

    fp8 = mma == "fp8xfp4"
    hidden, inter = (128, 128) if fp8 else (64, 24)
    out = []
    # (name, tokens, experts, topk, clamp, mask)
    for name, tokens, experts, topk, clamp, mask in [
        ("t5_e4_k2", 5, 4, 2, None, 0.2),
        ("t1_clamp", 1, 4, 3, 0.5, 0.0),
        ("t0", 0, 2, 1, None, 0.0),
        ("all_slots_unused", 3, 2, 2, None, 1.0),
    ]:
        seed = int(torch.randint(0, 2**31 - 1, ()).item())
        p = make_problem(seed, mma, [tokens], experts, topk, hidden, inter, mask=mask)
        buf = mega.get_symm_buffer_for_mega_moe(None, experts, ALIGN, topk, hidden, inter, mma_type=mma, device=device)
        t = stage(buf, p, 0)
        w1, w2 = p.local_weights(0)
        y = torch.empty(t, hidden, dtype=torch.bfloat16, device=device)
        stats = torch.zeros(experts, dtype=torch.int32, device=device)
        weights = (*w1, *w2, None, None, None, None) if fp8 else (w1, w2, None, None)
        tail = ([1, 1, 32],) if fp8 else ()
        args = (y, *(_to(w, device) for w in weights), stats, buf.buffer, [0], 0, ALIGN, experts, topk, *tail)
        out.append(_host_reading(Sample(name, (*args, "swiglu", clamp, True))))
    out.append(_host_reading(_second_rank_sample(device, mma, hidden, inter)))
    return out


def _second_rank_sample(device: torch.device, mma: str, hidden: int, inter: int) -> Sample:
    """Rank 1 of 2: the receive region already holds rows a peer dispatched (the op runs its experts only)."""
    from deep_gemm import _C
    from deep_gemm.mega.layout import region_views
    from tests.support.mega_support import ALIGN, make_problem

    fp8 = mma == "fp8xfp4"
    seed = int(torch.randint(0, 2**31 - 1, ()).item())
    p = make_problem(seed, mma, [3, 4], 4, 2, hidden, inter, mask=0.0)
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(2, 4, ALIGN, 2, hidden, inter, mma, "swiglu")
    buffer = torch.zeros(num_bytes, dtype=torch.int8)
    views = region_views("sample", buffer, info)
    n = 0
    for r in range(2):
        for t in range(p.topk_idx[r].shape[0]):
            for k in range(2):
                e = int(p.topk_idx[r][t, k])
                if e < 2:
                    continue
                if fp8:
                    views["l1_token"][n] = p.x[r][0][t]
                    views["l1_sf"][n] = p.x[r][1][t]
                else:
                    views["l1_token"][n] = p.x[r][t]
                views["recv_info"][n] = torch.tensor([r, t, k, e - 2])
                views["recv_weights"][n] = p.topk_weights[r][t, k]
                n += 1
    views["workspace"][0] = n
    w1, w2 = p.local_weights(1)
    weights = (*w1, *w2, None, None, None, None) if fp8 else (w1, w2, None, None)
    tail = ([1, 1, 32],) if fp8 else ()
    y = torch.zeros(4, hidden, dtype=torch.bfloat16, device=device)
    stats = torch.zeros(2, dtype=torch.int32, device=device)
    args = (y, *(_to(w, device) for w in weights), stats, buffer.to(device), [0, 0], 1, ALIGN, 4, 2, *tail)
    return Sample("second_of_two_ranks", (*args, "swiglu", None, True))


@samples("fp8_fp4_mega_moe")
def _fp8_fp4_mega_moe(device: torch.device) -> list[Sample]:
    return _fused(device, "fp8xfp4")


@samples("bf16_mega_moe")
def _bf16_mega_moe(device: torch.device) -> list[Sample]:
    return _fused(device, "bf16xbf16")


@samples("_sum_combined_for_mega_moe")
def _sum_combined(device: torch.device) -> list[Sample]:
    out = []
    for name, t, k, h in [("t5_k2", 5, 2, 16), ("t1_k1", 1, 1, 8), ("t0", 0, 3, 8), ("t384_k4", 384, 4, 32)]:
        combine = torch.randn(k, 384, h, device=device).bfloat16()
        idx = torch.randint(-1, 6, (384, k), device=device)
        out.append(Sample(name, (torch.empty(t, h, dtype=torch.bfloat16, device=device), combine, idx)))
    return out
