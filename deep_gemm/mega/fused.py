"""The fused Mega MoE calls: :func:`fp8_fp4_mega_moe` and :func:`bf16_mega_moe`."""

from __future__ import annotations

from typing import Any

import torch

from .buffer import SymmBuffer
from .errors import arg_error
from .exchange import run

__all__ = ["bf16_mega_moe", "fp8_fp4_mega_moe"]

# Shared experts are not supported (see the op's doc in ops.yaml); the schema still has their slots.
_NO_SHARED_FP8 = dict.fromkeys(
    ("shared_l1_weights", "shared_l1_weights_sf", "shared_l2_weights", "shared_l2_weights_sf")
)
_NO_SHARED_BF16 = dict.fromkeys(("shared_l1_weights", "shared_l2_weights"))


def fp8_fp4_mega_moe(
    y: torch.Tensor,
    l1_weights: tuple[torch.Tensor, torch.Tensor],
    l2_weights: tuple[torch.Tensor, torch.Tensor],
    sym_buffer: SymmBuffer,
    cumulative_local_expert_recv_stats: torch.Tensor | None = None,
    recipe: tuple[int, int, int] = (1, 1, 32),
    activation: str = "swiglu",
    activation_clamp: float | None = None,
    fast_math: bool = True,
) -> None:
    """Mega MoE with FP8 tokens and FP4 experts: y[t] = sum over t's experts of expert(x[t]) * weight.

    Stage x, x_sf, topk_idx and topk_weights (first ``y.size(0)`` rows) in
    ``sym_buffer`` first; the weights are this rank's experts after
    :func:`transform_weights_for_mega_moe`.  See ``deep_gemm._C.fp8_fp4_mega_moe``.
    """
    op = "fp8_fp4_mega_moe"
    (w1, sf1), (w2, sf2) = _pair(op, "l1_weights", l1_weights), _pair(op, "l2_weights", l2_weights)
    _check_symm_buffer(op, sym_buffer, "fp8xfp4")

    def local(stats: torch.Tensor | None) -> None:
        torch.ops.deep_gemm.fp8_fp4_mega_moe(
            y=y,
            l1_weights=w1,
            l1_weights_sf=sf1,
            l2_weights=w2,
            l2_weights_sf=sf2,
            **_NO_SHARED_FP8,
            cumulative_local_expert_recv_stats=stats,
            **sym_buffer.op_kwargs(),
            recipe=list(recipe),
            activation=activation,
            activation_clamp=activation_clamp,
            fast_math=fast_math,
        )

    run(op, y, sym_buffer, cumulative_local_expert_recv_stats, local)


def bf16_mega_moe(
    y: torch.Tensor,
    l1_weights: torch.Tensor,
    l2_weights: torch.Tensor,
    sym_buffer: SymmBuffer,
    cumulative_local_expert_recv_stats: torch.Tensor | None = None,
    activation: str = "swiglu",
    activation_clamp: float | None = None,
    fast_math: bool = True,
) -> None:
    """:func:`fp8_fp4_mega_moe` with bf16 tokens and weights."""
    op = "bf16_mega_moe"
    _check_symm_buffer(op, sym_buffer, "bf16xbf16")

    def local(stats: torch.Tensor | None) -> None:
        torch.ops.deep_gemm.bf16_mega_moe(
            y=y,
            l1_weights=l1_weights,
            l2_weights=l2_weights,
            **_NO_SHARED_BF16,
            cumulative_local_expert_recv_stats=stats,
            **sym_buffer.op_kwargs(),
            activation=activation,
            activation_clamp=activation_clamp,
            fast_math=fast_math,
        )

    run(op, y, sym_buffer, cumulative_local_expert_recv_stats, local)


def _pair(op: str, arg: str, value: Any) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise TypeError(f"{op}: argument '{arg}' must be a (data, sf) pair, got {type(value).__name__}")
    return value[0], value[1]


def _check_symm_buffer(op: str, sym_buffer: Any, mma_type: str) -> None:
    if not isinstance(sym_buffer, SymmBuffer):
        raise TypeError(f"{op}: argument 'sym_buffer' must be a SymmBuffer, got {type(sym_buffer).__name__}")
    if sym_buffer.buffer is None:
        raise arg_error(op, "sym_buffer", "was destroyed")
    if sym_buffer.mma_type != mma_type:
        raise arg_error(op, "sym_buffer", f"was built for mma_type '{sym_buffer.mma_type}'; {op} needs '{mma_type}'")
