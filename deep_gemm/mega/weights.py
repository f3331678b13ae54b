"""Expert weights into the layout the fused Mega MoE reads (:func:`transform_weights_for_mega_moe`)."""

from __future__ import annotations

from typing import Any

import torch

from .errors import arg_error

__all__ = ["transform_weights_for_mega_moe"]

_L1_ROWS = "gate and up halves interleaved in chunks of 8"
_SF_ROWS = "scale rows are transposed in blocks of 128"


def _interleave_gate_up(w: torch.Tensor) -> torch.Tensor:
    """[E, 2I, C] holding [gate | up] rows -> rows g0..7, u0..7, g8..15, u8..15, ..."""
    e, rows, c = w.shape
    return w.reshape(e, 2, rows // 16, 8, c).transpose(1, 2).reshape(e, rows, c).contiguous()


def _utccp_transpose(sf: torch.Tensor) -> torch.Tensor:
    """Within each 128-row block, row 32i + j moves to 4j + i."""
    e, rows, c = sf.shape
    return sf.reshape(e, rows // 128, 4, 32, c).transpose(2, 3).reshape(e, rows, c).contiguous()


def _check_weight(op: str, arg: str, t: Any, row_multiple: int, what: str) -> None:
    if not isinstance(t, torch.Tensor) or t.dim() != 3:
        shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
        raise arg_error(op, arg, f"must be a 3-D tensor [experts, rows, cols], got {shape}")
    if t.shape[1] % row_multiple != 0:
        raise arg_error(
            op, arg, f"must have a row count that is a multiple of {row_multiple} ({what}), got {t.shape[1]}"
        )


def transform_weights_for_mega_moe(l1_weights: Any, l2_weights: Any, activation: str = "swiglu") -> tuple[Any, Any]:
    """Put expert weights into the layout the fused Mega MoE reads.

    FP8/FP4 weights come as (data, sf) pairs: L1 [E, 2I, H/2] with its packed
    UE8M0 scales [E, 2I, H/128], L2 [E, H, I/2] with [E, H, I/128].  The L1
    rows (and scale rows) [gate | up] are interleaved in chunks of 8
    (g0..7, u0..7, g8..15, ...); then, within each 128-row block, the scale
    rows of L1 and L2 are transposed as a 4 x 32 grid (row 32i + j moves to
    4j + i).  bf16 weights (plain tensors) only get the L1 interleave.
    Returns new contiguous tensors in the same form as the inputs.
    """
    op = "transform_weights_for_mega_moe"
    if activation != "swiglu":
        raise arg_error(op, "activation", f"must be 'swiglu', got {activation!r}")
    paired = isinstance(l1_weights, (tuple, list))
    for arg, value in (("l1_weights", l1_weights), ("l2_weights", l2_weights)):
        if paired and not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise arg_error(op, arg, "must be a (data, sf) pair, like the other weights")
        if not paired and not isinstance(value, torch.Tensor):
            raise arg_error(op, arg, "must be a bf16 tensor, like l1_weights")
    if not paired:
        _check_weight(op, "l1_weights", l1_weights, 16, _L1_ROWS)
        _check_weight(op, "l2_weights", l2_weights, 1, "")
        return _interleave_gate_up(l1_weights), l2_weights.contiguous()
    (w1, sf1), (w2, sf2) = l1_weights, l2_weights
    _check_weight(op, "l1_weights", w1, 16, _L1_ROWS)
    _check_weight(op, "l1_weights_sf", sf1, 128, _SF_ROWS)
    _check_weight(op, "l2_weights", w2, 1, "")
    _check_weight(op, "l2_weights_sf", sf2, 128, _SF_ROWS)
    for arg, data, sf in (("l1_weights_sf", w1, sf1), ("l2_weights_sf", w2, sf2)):
        if sf.shape[:2] != data.shape[:2]:
            raise arg_error(
                op,
                arg,
                f"must have the experts and rows of its data {tuple(data.shape[:2])}, got {tuple(sf.shape[:2])}",
            )
    l1 = (_interleave_gate_up(w1), _utccp_transpose(_interleave_gate_up(sf1)))
    l2 = (w2.contiguous(), _utccp_transpose(sf2))
    return l1, l2
