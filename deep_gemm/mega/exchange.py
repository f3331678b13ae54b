"""Running one fused call across the ranks of a group: agreement, dispatch, combine.

See Note [Mega MoE across ranks] in csrc/reference/mega_moe.hpp.  With one rank
the registered op is the whole computation.  With symmetric memory the op
moves the rows itself, and the ranks only agree first that every rank accepts
the call.  Otherwise this module moves the rows (``all_to_all_single`` on the
group) around the op, which then runs the local experts only.  Any rank that
rejects a call tells the others before the next collective, so every rank
raises the same error and none hangs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .buffer import SymmBuffer
from .errors import arg_error
from .layout import WORKSPACE_WORDS

__all__ = ["Local", "run"]

Local = Callable[[torch.Tensor | None], None]  # runs the registered op with the given recv stats


def run(op: str, y: torch.Tensor, sb: SymmBuffer, stats: torch.Tensor | None, local: Local) -> None:
    """One fused call of ``op`` on every rank of ``sb``'s group; ``local`` runs the registered op."""
    if sb.num_ranks == 1:
        local(stats)
    elif sb.symmetric:
        # The ranks agree first that the routing is valid everywhere, so that none waits
        # at the op's barrier for a rank that refused the call.
        error: BaseException | None = None
        try:
            _check_routing(op, y, sb)
        except Exception as exc:
            error = exc
        _agree(sb, error)
        try:
            local(stats)
        except Exception:
            _stop_peers(sb)
            raise
    else:
        _run_across_ranks(op, y, sb, stats, local)


def _stop_peers(sb: SymmBuffer) -> None:
    """This rank's call failed: release every rank waiting for it at the op's barrier.

    Writes 1 + this rank into every rank's stop word (its own included, so that
    its next call reports the out-of-step buffer too); see Note [Mega MoE on
    symmetric memory] in csrc/reference/mega_moe.hpp.
    """
    assert sb.handle is not None and sb.buffer is not None, "the caller checks that the buffer was not destroyed"
    mark = torch.tensor([sb.rank + 1], dtype=torch.int64, device=sb.buffer.device)
    for r in range(sb.num_ranks):
        sb.handle.word(r, WORKSPACE_WORDS.stop).copy_(mark)
    torch.cuda.synchronize(sb.buffer.device)


@dataclass
class _Dispatch:
    """This rank's outgoing rows, ordered by destination rank, then (token, slot)."""

    tokens: torch.Tensor  # int64 [n]
    slots: torch.Tensor  # int64 [n]
    counts: torch.Tensor  # int64 [num_ranks]: rows per destination
    payload: torch.Tensor  # uint8 [n, row bytes]: token, its scales, (token, slot, local expert), weight


def _check_routing(op: str, y: Any, sb: SymmBuffer) -> torch.Tensor:
    """Check what routing needs (the op checks the rest); return the staged topk_idx[:T]."""
    if not isinstance(y, torch.Tensor) or y.dim() != 2:
        raise arg_error(op, "y", "must be a 2-D tensor [num_tokens, hidden]")
    num_tokens, num_experts = y.shape[0], sb.num_experts
    if num_tokens > sb.num_max_tokens_per_rank:
        raise arg_error(
            op, "y", f"has {num_tokens} tokens, more than num_max_tokens_per_rank ({sb.num_max_tokens_per_rank})"
        )
    idx = sb.region("topk_idx")[:num_tokens]
    bad = (idx < -1) | (idx >= num_experts)
    if bad.any():
        t, k = bad.nonzero()[0].tolist()
        raise arg_error(
            op,
            "sym_buffer",
            f"stages topk_idx[{t}, {k}] = {idx[t, k].item()}, outside [-1, num_experts = {num_experts})",
        )
    ordered = idx.sort(dim=1).values
    dup = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    if dup.any():
        t, k = dup.nonzero()[0].tolist()
        raise arg_error(
            op,
            "sym_buffer",
            f"stages token {t} with expert {ordered[t, k + 1].item()} twice in topk_idx; a token picks distinct experts",
        )
    return idx


def _plan_dispatch(op: str, y: Any, sb: SymmBuffer) -> _Dispatch:
    """Check the routing and pack the rows each rank receives."""
    idx = _check_routing(op, y, sb)
    per_rank = sb.num_experts // sb.num_ranks
    tokens, slots = (idx >= 0).nonzero(as_tuple=True)
    experts = idx[tokens, slots]
    order = torch.argsort(experts // per_rank, stable=True)
    tokens, slots, experts = tokens[order], slots[order], experts[order]
    dest = experts // per_rank
    parts = [sb.region("x").view(torch.uint8)[tokens]]  # as bytes: indexing skips float8
    if sb.views["x_sf"] is not None:
        parts.append(sb.views["x_sf"][tokens].view(torch.uint8))
    parts.append(torch.stack([tokens, slots, experts - dest * per_rank], 1).to(torch.int32).view(torch.uint8))
    parts.append(sb.region("topk_weights")[tokens, slots].unsqueeze(1).view(torch.uint8))
    counts = torch.bincount(dest, minlength=sb.num_ranks)
    return _Dispatch(tokens, slots, counts, torch.cat(parts, 1))


def _receive(sb: SymmBuffer, rows: torch.Tensor, counts: torch.Tensor) -> None:
    """Write rows dispatched to this rank into its receive region (where symmetric-memory peers write them)."""
    n = rows.shape[0]
    if n > sb.num_ring_tokens:
        raise RuntimeError(
            f"Mega MoE: {n} rows reached rank {sb.rank}, more than its receive capacity {sb.num_ring_tokens}"
        )
    col = sb.hidden * sb.region("x").element_size()
    sb.region("l1_token")[:n].view(torch.uint8).copy_(rows[:, :col])
    l1_sf = sb.views["l1_sf"]
    if l1_sf is not None:
        width = l1_sf.shape[1] * 4
        l1_sf[:n] = rows[:, col : col + width].contiguous().view(torch.int32)
        col += width
    info = sb.region("recv_info")[:n]
    info[:, 0] = torch.repeat_interleave(torch.arange(sb.num_ranks, device=rows.device), counts)
    info[:, 1:] = rows[:, col : col + 12].contiguous().view(torch.int32)
    sb.region("recv_weights")[:n] = rows[:, col + 12 : col + 16].contiguous().view(torch.float32).squeeze(1)
    sb.region("workspace")[WORKSPACE_WORDS.recv_rows] = n


def _agree(sb: SymmBuffer, error: BaseException | None) -> None:
    """Every rank learns whether any rank failed; if one did, all raise its error."""
    import torch.distributed as dist

    assert sb.buffer is not None, "the caller checks that the buffer was not destroyed"
    flag = torch.tensor([int(error is not None)], dtype=torch.int32, device=sb.buffer.device)
    dist.all_reduce(flag, group=sb.group)
    if flag.item() == 0:
        return
    reports: list[Any] = [None] * sb.num_ranks
    dist.all_gather_object(reports, None if error is None else (type(error).__name__, str(error)), group=sb.group)
    first = next(r for r, report in enumerate(reports) if report is not None)
    kind, text = reports[first]
    cls = {"ValueError": ValueError, "TypeError": TypeError}.get(kind, RuntimeError)
    raise cls(f"{text} [rank {first} of {sb.num_ranks} rejected the call]") from error


def _run_across_ranks(op: str, y: torch.Tensor, sb: SymmBuffer, stats: torch.Tensor | None, local: Local) -> None:
    import torch.distributed as dist

    group = sb.group
    plan: _Dispatch | None = None
    error: BaseException | None = None
    try:
        plan = _plan_dispatch(op, y, sb)
    except Exception as exc:  # every rank must hear of it before the next collective
        error = exc
    _agree(sb, error)
    assert plan is not None
    # Dispatch: row counts, then the rows.
    recv_counts = torch.empty_like(plan.counts)
    dist.all_to_all_single(recv_counts, plan.counts, group=group)
    send_splits, recv_splits = plan.counts.tolist(), recv_counts.tolist()
    received = plan.payload.new_empty((sum(recv_splits), plan.payload.shape[1]))
    dist.all_to_all_single(received, plan.payload, recv_splits, send_splits, group=group)
    # The op counts into a copy of the stats, kept only if every rank's op succeeds.
    new_stats = stats.clone() if isinstance(stats, torch.Tensor) else stats
    try:
        _receive(sb, received, recv_counts)
        local(new_stats)
    except Exception as exc:
        error = exc
    _agree(sb, error)
    if isinstance(stats, torch.Tensor) and new_stats is not None:
        stats.copy_(new_stats)
    # Combine: every output row goes back to its token's rank, in the order it came.
    outputs = sb.region("l2_out")[: received.shape[0]].view(torch.uint8)
    returned = outputs.new_empty((plan.payload.shape[0], outputs.shape[1]))
    dist.all_to_all_single(returned, outputs, send_splits, recv_splits, group=group)
    combine = sb.region("combine")
    combine[plan.slots, plan.tokens] = returned.view(torch.bfloat16)
    torch.ops.deep_gemm._sum_combined_for_mega_moe(y=y, combine=combine, topk_idx=sb.region("topk_idx"))
