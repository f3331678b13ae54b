"""Builders for random, valid operands (FP8/FP4 data with float32 or packed UE8M0 scales)."""

from __future__ import annotations

import torch

from deep_gemm.utils import (
    per_block_cast_to_fp8,
    per_token_cast_to_fp4,
    per_token_cast_to_fp8,
)


def randn(*shape: int, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=torch.float32).to(dtype)


def fp8_per_token(mn: int, k: int, device: torch.device | str = "cpu", gran_k: int = 128, packed: bool = False):
    """(FP8 [mn, k], scales) with 1 x gran_k scales; packed=True gives UE8M0 int32 scales."""
    return per_token_cast_to_fp8(randn(mn, k, device=device), use_ue8m0=packed, gran_k=gran_k, use_packed_ue8m0=packed)


def fp8_per_block(mn: int, k: int, device: torch.device | str = "cpu", use_ue8m0: bool = False):
    """(FP8 [mn, k], float32 scales [ceil(mn/128), ceil(k/128)]) with 128 x 128 blocks."""
    return per_block_cast_to_fp8(randn(mn, k, device=device), use_ue8m0=use_ue8m0)


def fp4_per_token(mn: int, k: int, device: torch.device | str = "cpu", gran_k: int = 32, packed: bool = True):
    """(packed FP4 int8 [mn, k/2], scales) with 1 x gran_k power-of-two scales."""
    return per_token_cast_to_fp4(randn(mn, k, device=device), use_ue8m0=True, gran_k=gran_k, use_packed_ue8m0=packed)


def spread_blocks(x: torch.Tensor, block_rows: int, block_cols: int = 128) -> torch.Tensor:
    """x with each block_rows x block_cols block scaled by its own power of two in [2^-4, 2^4],
    so that the blocks' scale factors differ by up to 256x: a kernel that applies a neighbouring
    block's scale to a column or row then misses by far more than FP8 rounding (with randn alone
    the scales of 128 x 128 blocks agree within a few percent, and such a slip hides in calc_diff)."""
    rows, cols = x.shape[-2:]
    exps = torch.randint(-4, 5, (*x.shape[:-2], -(-rows // block_rows), -(-cols // block_cols)), device=x.device)
    factor = torch.exp2(exps.float()).repeat_interleave(block_rows, -2).repeat_interleave(block_cols, -1)
    return x * factor[..., :rows, :cols]
