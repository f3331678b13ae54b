"""get_ring_limit_for_mega_moe against the formula of its doc (ops.yaml, docs/ops.md)."""

from __future__ import annotations

import pytest
import torch

from deep_gemm import _C
from deep_gemm.utils import align


@pytest.mark.parametrize(
    "tokens,experts,topk,ranks", [(384, 48, 6, 8), (768, 1, 1, 1), (384, 256, 8, 2), (8448, 6, 6, 72)]
)
def test_ring_limits(tokens: int, experts: int, topk: int, ranks: int) -> None:
    lo, hi = _C.get_ring_limit_for_mega_moe(tokens, experts, topk, ranks)
    assert lo == tokens * ranks
    assert hi == min(tokens * ranks * experts, align(tokens * ranks * topk + experts * 383, 384))
    assert lo <= hi and (lo, hi) == tuple(torch.ops.deep_gemm.get_ring_limit_for_mega_moe(tokens, experts, topk, ranks))


@pytest.mark.parametrize(
    "args,message",
    [
        ((100, 4, 2, 2), "'num_max_tokens_per_rank' must be a positive multiple of 384, got 100"),
        ((384, 0, 2, 2), "'num_experts_per_rank' must be positive"),
        ((384, 4, 2, 0), "'num_ranks' must be positive"),
    ],
)
def test_ring_limits_reject(args, message) -> None:
    with pytest.raises(ValueError, match=f"^get_ring_limit_for_mega_moe: argument {message}"):
        _C.get_ring_limit_for_mega_moe(*args)
