"""Mega MoE: the symmetric buffer, the weight layout and the fused MoE calls.

A Mega MoE call runs one MoE layer across the ranks of a process group: each
token goes to the ranks owning its top-k experts, every rank runs its local
experts (L1 GEMM, SwiGLU, FP8 requantisation, L2 GEMM) on what it received,
and the outputs come back to the token's own rank, where they are summed into
``y``.  Inputs are staged in a per-rank :class:`SymmBuffer` before each call.

The buffer's layout comes from the C++ side only
(``deep_gemm._C.get_symm_buffer_size_for_mega_moe`` returns ``layout_info``);
this module cuts the buffer into views from it, see
Note [Mega MoE buffer views] in ``csrc/apis/mega.hpp``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from deep_gemm import _C

__all__ = [
    "SymmBuffer",
    "bf16_mega_moe",
    "fp8_fp4_mega_moe",
    "get_symm_buffer_for_mega_moe",
    "transform_weights_for_mega_moe",
]

# layout_info, field by field (csrc/kernels/mega_layout.hpp, SymmBufferLayout::to_int_list).
LAYOUT_FIELDS = (
    "num_bytes",
    "x offset",
    "x_sf offset",
    "topk_idx offset",
    "topk_weights offset",
    "shared_l1_sf offset",
    "shared_l2_token offset",
    "shared_l2_sf offset",
    "l1_token offset",
    "l1_sf offset",
    "l2_token offset",
    "l2_sf offset",
    "mma kind",
    "with_sf",
    "sf_gran_k",
    "num_max_tokens_per_rank",
    "num_topk",
    "hidden",
    "intermediate_hidden",
    "num_shared_experts",
    "shared_intermediate_hidden",
    "num_ring_tokens",
    "num_sf_ring_tokens",
)
_MMA_TYPES = ("fp8xfp4", "bf16xbf16")

# The regions _get_symm_buffer_views_for_mega_moe describes, in its order.
REGIONS = (
    "workspace",
    "x",
    "x_sf",
    "topk_idx",
    "topk_weights",
    "shared_l1_sf",
    "shared_l2_token",
    "shared_l2_sf",
    "l1_token",
    "l1_sf",
    "l2_token",
    "l2_sf",
    "recv_info",
    "recv_weights",
    "l2_out",
    "combine",
)
PUBLIC_REGIONS = REGIONS[1:12]  # the regions whose offsets layout_info carries, in its order
_VIEW_FIELDS = 10
_DTYPES = {1: torch.float8_e4m3fn, 2: torch.bfloat16, 3: torch.int32, 4: torch.int64, 5: torch.float32}


def _arg_error(op: str, arg: str, what: str) -> ValueError:
    return ValueError(f"{op}: argument '{arg}' {what}")


def _check_layout_info(op: str, layout_info: Any) -> list[int]:
    if isinstance(layout_info, torch.Tensor) or not isinstance(layout_info, Sequence):
        raise _arg_error(
            op, "layout_info", f"must be a sequence of {len(LAYOUT_FIELDS)} ints, got {type(layout_info).__name__}"
        )
    info = list(layout_info)
    if len(info) != len(LAYOUT_FIELDS) or not all(isinstance(v, int) and not isinstance(v, bool) for v in info):
        raise _arg_error(
            op,
            "layout_info",
            f"must hold {len(LAYOUT_FIELDS)} ints (as returned by get_symm_buffer_size_for_mega_moe), got {info!r}",
        )
    if info[12] not in (0, 1):
        raise _arg_error(op, "layout_info", f"field 12 (mma kind) must be 0 (fp8xfp4) or 1 (bf16xbf16), got {info[12]}")
    return info


def _describe(
    op: str, info: list[int]
) -> tuple[int, dict[str, tuple[int, int, torch.dtype | None, list[int], list[int]]]]:
    """Ask the C++ layout for every region of ``info``'s configuration, and check ``info`` against it."""
    mma_type = _MMA_TYPES[info[12]]
    try:
        flat = _C._get_symm_buffer_views_for_mega_moe(
            mma_type, info[15], info[16], info[17], info[18], info[19], info[21]
        )
    except (ValueError, RuntimeError) as exc:
        raise _arg_error(op, "layout_info", f"holds a configuration the layout rejects: {exc}") from exc
    num_bytes, regions = flat[0], {}
    for i, name in enumerate(REGIONS):
        offset, nbytes, code, ndim, *rest = flat[1 + i * _VIEW_FIELDS : 1 + (i + 1) * _VIEW_FIELDS]
        regions[name] = (offset, nbytes, _DTYPES.get(code), rest[:ndim], rest[3 : 3 + ndim])
    with_sf = info[12] == 0
    expected = [
        num_bytes,
        *(regions[name][0] for name in PUBLIC_REGIONS),
        info[12],
        int(with_sf),
        32 if with_sf else 0,
        *info[15:19],
        info[19],
        info[19] * info[18],
        info[21],
        info[21] if with_sf else 0,
    ]
    for i, (got, want) in enumerate(zip(info, expected)):
        if got != want:
            raise _arg_error(
                op,
                "layout_info",
                f"field {i} ({LAYOUT_FIELDS[i]}) is {got}, but the layout of its configuration has {want}; "
                "pass the list get_symm_buffer_size_for_mega_moe returned",
            )
    return num_bytes, regions


def _region_views(op: str, buffer: Any, layout_info: Any) -> dict[str, torch.Tensor | None]:
    """Every region of ``buffer`` as a typed view (None for regions this configuration lacks)."""
    info = _check_layout_info(op, layout_info)
    if not isinstance(buffer, torch.Tensor):
        raise _arg_error(op, "buffer", f"must be a Tensor, got {type(buffer).__name__}")
    if buffer.dtype not in (torch.int8, torch.uint8) or buffer.dim() != 1 or not buffer.is_contiguous():
        raise _arg_error(
            op,
            "buffer",
            f"must be a contiguous 1-D int8 or uint8 tensor, got {buffer.dtype} of shape {tuple(buffer.shape)}",
        )
    num_bytes, regions = _describe(op, info)
    if buffer.numel() < num_bytes:
        raise _arg_error(op, "buffer", f"has {buffer.numel()} bytes, fewer than the layout's {num_bytes}")
    views: dict[str, torch.Tensor | None] = {}
    for name, (offset, nbytes, dtype, sizes, strides) in regions.items():
        if dtype is None:
            views[name] = None
            continue
        views[name] = buffer.narrow(0, offset, nbytes).view(dtype).as_strided(sizes, strides)
    return views


def _slice_symm_buffer_for_mega_moe(
    buffer: torch.Tensor, layout_info: Sequence[int]
) -> tuple[torch.Tensor | None, ...]:
    """The views of ``buffer`` that ``layout_info`` places, in its order.

    (x, x_sf, topk_idx, topk_weights, shared_l1_sf, shared_l2_token, shared_l2_sf,
    l1_token, l1_sf, l2_token, l2_sf); scale-factor views are None for
    'bf16xbf16' and shared-expert views None without shared experts.  Every view
    aliases ``buffer``.  ``layout_info`` is checked against the C++ layout of
    the configuration it carries, so a stale or edited list is rejected.
    """
    views = _region_views("_slice_symm_buffer_for_mega_moe", buffer, layout_info)
    return tuple(views[name] for name in PUBLIC_REGIONS)


class SymmBuffer:
    """The per-rank buffer a Mega MoE call reads its inputs from and exchanges rows through.

    ``group`` is a ``torch.distributed`` process group, or None for a single
    rank (no process group needed).  Stage each call's inputs into ``x``,
    ``x_sf`` (FP8 only), ``topk_idx`` and ``topk_weights`` (first ``T`` rows,
    ``T`` = the output's row count).  The buffer is zero-filled.

    With more than one rank on CUDA, the buffer is allocated in torch's
    symmetric memory (``torch.distributed._symmetric_memory``) and
    ``buffer_ptrs`` holds every rank's buffer address, mapped into this
    process: the fused op then writes rows straight into the peers' buffers
    (Note [Mega MoE on symmetric memory] in ``csrc/kernels/mega_moe.hpp``).
    ``symmetric=False`` asks for the other path, as on the CPU (gloo): the
    buffer is an ordinary tensor, ``buffer_ptrs`` is all zeros, and rows
    travel through the group's collectives.  ``symmetric=True`` requires
    symmetric memory; the default (None) uses it wherever it is available.
    """

    def __init__(
        self,
        group: Any,
        num_experts: int,
        num_max_tokens_per_rank: int,
        num_topk: int,
        hidden: int,
        intermediate_hidden: int,
        num_shared_experts: int = 0,
        mma_type: str = "fp8xfp4",
        activation: str = "swiglu",
        *,
        device: torch.device | str | None = None,
        symmetric: bool | None = None,
    ) -> None:
        num_ranks = 1 if group is None else group.size()
        rank = 0 if group is None else group.rank()
        num_bytes, layout_info = _C.get_symm_buffer_size_for_mega_moe(
            num_ranks,
            num_experts,
            num_max_tokens_per_rank,
            num_topk,
            hidden,
            intermediate_hidden,
            mma_type,
            activation,
            num_shared_experts,
        )
        self.group = group
        self.num_ranks, self.rank = num_ranks, rank
        self.num_experts = num_experts
        self.num_max_tokens_per_rank = num_max_tokens_per_rank
        self.num_topk = num_topk
        self.hidden, self.intermediate_hidden = hidden, intermediate_hidden
        self.num_shared_experts = num_shared_experts
        self.mma_type, self.activation = mma_type, activation
        self.num_bytes, self.layout_info = num_bytes, list(layout_info)
        self.num_ring_tokens = self.layout_info[21]
        where = torch.device(device or "cpu")
        self.symmetric = _use_symmetric_memory(num_ranks, where, symmetric)
        self._handle: Any = None  # the symmetric-memory handle, when there is one
        self._shift = 0  # bytes from the start of each rank's allocation to its buffer
        if self.symmetric:
            from torch.distributed import _symmetric_memory as symm_mem

            self.buffer = symm_mem.empty(num_bytes, dtype=torch.int8, device=where)
            self._handle = symm_mem.rendezvous(self.buffer, group)
            # The tensor may start inside the allocation; its peers start at the same offset.
            self._shift = self.buffer.data_ptr() - self._handle.buffer_ptrs[rank]
            self.buffer_ptrs = [int(p) + self._shift for p in self._handle.buffer_ptrs]
        else:
            self.buffer = torch.empty(num_bytes, dtype=torch.int8, device=where)
            # Zeros tell the fused ops that the caller moves the rows between ranks.
            self.buffer_ptrs = [0] * num_ranks
        self.buffer.zero_()
        views = _region_views("SymmBuffer", self.buffer, self.layout_info)
        self._views = views
        self.x, self.x_sf = _need(views, "x"), views["x_sf"]
        self.topk_idx, self.topk_weights = _need(views, "topk_idx"), _need(views, "topk_weights")
        self.l1_acts, self.l1_acts_sf = views["l1_token"], views["l1_sf"]
        self.l2_acts, self.l2_acts_sf = views["l2_token"], views["l2_sf"]
        self.shared_l1_acts_sf = views["shared_l1_sf"]
        self.shared_l2_acts, self.shared_l2_acts_sf = views["shared_l2_token"], views["shared_l2_sf"]
        if self._handle is not None:
            self._handle.barrier()  # every rank's buffer is zeroed before any peer writes into it
            torch.cuda.synchronize(where)
        elif num_ranks > 1:
            torch.distributed.barrier(group=group)

    def _op_args(self) -> tuple[torch.Tensor, list[int], int, int, int, int]:
        """The arguments every fused op takes from the buffer, in schema order (sym_buffer .. num_topk)."""
        return (
            self.buffer,
            self.buffer_ptrs,
            self.rank,
            self.num_max_tokens_per_rank,
            self.num_experts,
            self.num_topk,
        )

    def destroy(self) -> None:
        """Drop every reference to the buffer (its views included)."""
        for name in (
            "buffer",
            "_handle",
            "_views",
            "x",
            "x_sf",
            "topk_idx",
            "topk_weights",
            "l1_acts",
            "l1_acts_sf",
            "l2_acts",
            "l2_acts_sf",
            "shared_l1_acts_sf",
            "shared_l2_acts",
            "shared_l2_acts_sf",
        ):
            setattr(self, name, None)


def _use_symmetric_memory(num_ranks: int, device: torch.device, asked: bool | None) -> bool:
    """Whether a buffer of ``num_ranks`` ranks on ``device`` lives in symmetric memory (see SymmBuffer)."""
    possible = num_ranks > 1 and device.type == "cuda"
    reason = "it needs more than one rank" if num_ranks == 1 else f"it needs CUDA, not {device.type}"
    if possible:
        try:
            from torch.distributed import _symmetric_memory  # noqa: F401
        except ImportError as exc:  # a torch built without distributed CUDA support
            possible, reason = False, f"torch.distributed._symmetric_memory is unavailable ({exc})"
    if asked and not possible:
        raise _arg_error("SymmBuffer", "symmetric", f"is True, but symmetric memory cannot be used: {reason}")
    return possible if asked is None else asked


def get_symm_buffer_for_mega_moe(
    group: Any,
    num_experts: int,
    num_max_tokens_per_rank: int,
    num_topk: int,
    hidden: int,
    intermediate_hidden: int,
    num_shared_experts: int = 0,
    use_fp8_dispatch: bool | None = None,
    mma_type: str = "fp8xfp4",
    activation: str = "swiglu",
    *,
    device: torch.device | str | None = None,
    symmetric: bool | None = None,
) -> SymmBuffer:
    """A :class:`SymmBuffer` with num_max_tokens_per_rank rounded up to the token alignment (384).

    ``use_fp8_dispatch`` is deprecated; when given it must agree with ``mma_type``.
    """
    if use_fp8_dispatch is not None:
        warnings.warn(
            "get_symm_buffer_for_mega_moe: use_fp8_dispatch is deprecated; mma_type decides the dispatch format",
            DeprecationWarning,
            stacklevel=2,
        )
        if bool(use_fp8_dispatch) != mma_type.startswith("fp8"):
            raise _arg_error(
                "get_symm_buffer_for_mega_moe",
                "use_fp8_dispatch",
                f"is {use_fp8_dispatch}, which contradicts mma_type '{mma_type}'",
            )
    alignment = _C.get_token_alignment_for_mega_moe()
    aligned = -(-num_max_tokens_per_rank // alignment) * alignment
    return SymmBuffer(
        group,
        num_experts,
        aligned,
        num_topk,
        hidden,
        intermediate_hidden,
        num_shared_experts,
        mma_type,
        activation,
        device=device,
        symmetric=symmetric,
    )


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
        raise _arg_error(op, arg, f"must be a 3-D tensor [experts, rows, cols], got {shape}")
    if t.shape[1] % row_multiple != 0:
        raise _arg_error(
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
        raise _arg_error(op, "activation", f"must be 'swiglu', got {activation!r}")
    paired = isinstance(l1_weights, (tuple, list))
    for arg, value in (("l1_weights", l1_weights), ("l2_weights", l2_weights)):
        if paired and not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise _arg_error(op, arg, "must be a (data, sf) pair, like the other weights")
        if not paired and not isinstance(value, torch.Tensor):
            raise _arg_error(op, arg, "must be a bf16 tensor, like l1_weights")
    if not paired:
        _check_weight(op, "l1_weights", l1_weights, 16, "gate and up halves interleaved in chunks of 8")
        _check_weight(op, "l2_weights", l2_weights, 1, "")
        return _interleave_gate_up(l1_weights), l2_weights.contiguous()
    (w1, sf1), (w2, sf2) = l1_weights, l2_weights
    _check_weight(op, "l1_weights", w1, 16, "gate and up halves interleaved in chunks of 8")
    _check_weight(op, "l1_weights_sf", sf1, 128, "scale rows are transposed in blocks of 128")
    _check_weight(op, "l2_weights", w2, 1, "")
    _check_weight(op, "l2_weights_sf", sf2, 128, "scale rows are transposed in blocks of 128")
    for arg, data, sf in (("l1_weights_sf", w1, sf1), ("l2_weights_sf", w2, sf2)):
        if sf.shape[:2] != data.shape[:2]:
            raise _arg_error(
                op,
                arg,
                f"must have the experts and rows of its data {tuple(data.shape[:2])}, got {tuple(sf.shape[:2])}",
            )
    l1 = (_interleave_gate_up(w1), _utccp_transpose(_interleave_gate_up(sf1)))
    l2 = (w2.contiguous(), _utccp_transpose(sf2))
    return l1, l2


# ---- the fused calls ---------------------------------------------------------------------------
#
# See Note [Mega MoE across ranks] in csrc/kernels/mega_moe.hpp.  With one rank
# the registered op is the whole computation.  With more, this module moves the
# rows between ranks (all_to_all_single on the group) around the op, which runs
# the local experts only.  Any rank that rejects a call tells the others before
# the next collective, so every rank raises the same error and none hangs.


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
            y,
            w1,
            sf1,
            w2,
            sf2,
            None,
            None,
            None,
            None,
            stats,
            *sym_buffer._op_args(),
            list(recipe),
            activation,
            activation_clamp,
            fast_math,
        )

    _run(op, y, sym_buffer, cumulative_local_expert_recv_stats, local)


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
            y,
            l1_weights,
            l2_weights,
            None,
            None,
            stats,
            *sym_buffer._op_args(),
            activation,
            activation_clamp,
            fast_math,
        )

    _run(op, y, sym_buffer, cumulative_local_expert_recv_stats, local)


def _pair(op: str, arg: str, value: Any) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise TypeError(f"{op}: argument '{arg}' must be a (data, sf) pair, got {type(value).__name__}")
    return value[0], value[1]


def _check_symm_buffer(op: str, sym_buffer: Any, mma_type: str) -> None:
    if not isinstance(sym_buffer, SymmBuffer):
        raise TypeError(f"{op}: argument 'sym_buffer' must be a SymmBuffer, got {type(sym_buffer).__name__}")
    if sym_buffer.buffer is None:
        raise _arg_error(op, "sym_buffer", "was destroyed")
    if sym_buffer.mma_type != mma_type:
        raise _arg_error(op, "sym_buffer", f"was built for mma_type '{sym_buffer.mma_type}'; {op} needs '{mma_type}'")


_Local = Callable[[torch.Tensor | None], None]  # runs the registered op with the given recv stats


def _run(op: str, y: torch.Tensor, sym_buffer: SymmBuffer, stats: torch.Tensor | None, local: _Local) -> None:
    if sym_buffer.num_ranks == 1:
        local(stats)
    elif sym_buffer.symmetric:
        # The op moves the rows itself; the ranks only agree first that the routing is valid
        # everywhere, so that none waits at the op's barrier for a rank that refused the call.
        error: BaseException | None = None
        try:
            _check_routing(op, y, sym_buffer)
        except Exception as exc:
            error = exc
        _agree(sym_buffer, error)
        try:
            local(stats)
        except Exception:
            _stop_peers(sym_buffer)
            raise
    else:
        _run_across_ranks(op, y, sym_buffer, stats, local)


# The workspace word that ends every wait at the op's barrier (kWsTimeout in csrc/kernels/mega_layout.hpp;
# the workspace is the buffer's first region).
_WS_STOP_WORD = 2


def _stop_peers(sb: SymmBuffer) -> None:
    """This rank's call failed: release every rank waiting for it at the op's barrier.

    Writes 1 + this rank into every rank's stop word (its own included, so that
    its next call reports the out-of-step buffer too); see Note [Mega MoE on
    symmetric memory] in csrc/kernels/mega_moe.hpp.
    """
    mark = torch.tensor([sb.rank + 1], dtype=torch.int64, device=sb.buffer.device)
    for r in range(sb.num_ranks):
        word = sb._handle.get_buffer(r, (1,), torch.int64, storage_offset=sb._shift // 8 + _WS_STOP_WORD)
        word.copy_(mark)
    torch.cuda.synchronize(sb.buffer.device)


@dataclass
class _Dispatch:
    """This rank's outgoing rows, ordered by destination rank, then (token, slot)."""

    tokens: torch.Tensor  # int64 [n]
    slots: torch.Tensor  # int64 [n]
    counts: torch.Tensor  # int64 [num_ranks]: rows per destination
    payload: torch.Tensor  # uint8 [n, row bytes]: token, its scales, (token, slot, local expert), weight


def _need(views: dict[str, torch.Tensor | None], key: str) -> torch.Tensor:
    """A region every buffer has (only the scale-factor regions are absent for bf16)."""
    view = views[key]
    if view is None:
        raise RuntimeError(f"deep_gemm.mega: the symmetric buffer has no '{key}' region")
    return view


def _check_routing(op: str, y: Any, sb: SymmBuffer) -> torch.Tensor:
    """Check what routing needs (the op checks the rest); return the staged topk_idx[:T]."""
    if not isinstance(y, torch.Tensor) or y.dim() != 2:
        raise _arg_error(op, "y", "must be a 2-D tensor [num_tokens, hidden]")
    num_tokens, num_experts = y.shape[0], sb.num_experts
    if num_tokens > sb.num_max_tokens_per_rank:
        raise _arg_error(
            op, "y", f"has {num_tokens} tokens, more than num_max_tokens_per_rank ({sb.num_max_tokens_per_rank})"
        )
    idx = sb.topk_idx[:num_tokens]
    bad = (idx < -1) | (idx >= num_experts)
    if bad.any():
        t, k = bad.nonzero()[0].tolist()
        raise _arg_error(
            op,
            "sym_buffer",
            f"stages topk_idx[{t}, {k}] = {idx[t, k].item()}, outside [-1, num_experts = {num_experts})",
        )
    ordered = idx.sort(dim=1).values
    dup = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    if dup.any():
        t, k = dup.nonzero()[0].tolist()
        raise _arg_error(
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
    parts = [sb.x.view(torch.uint8)[tokens]]  # as bytes: indexing skips float8
    if sb.x_sf is not None:
        parts.append(sb.x_sf[tokens].view(torch.uint8))
    parts.append(torch.stack([tokens, slots, experts - dest * per_rank], 1).to(torch.int32).view(torch.uint8))
    parts.append(sb.topk_weights[tokens, slots].unsqueeze(1).view(torch.uint8))
    counts = torch.bincount(dest, minlength=sb.num_ranks)
    return _Dispatch(tokens, slots, counts, torch.cat(parts, 1))


def _receive(sb: SymmBuffer, rows: torch.Tensor, counts: torch.Tensor) -> None:
    """Write rows dispatched to this rank into its receive region (what peers would write upstream)."""
    n, views = rows.shape[0], sb._views
    if n > sb.num_ring_tokens:
        raise RuntimeError(
            f"Mega MoE: {n} rows reached rank {sb.rank}, more than its receive capacity {sb.num_ring_tokens}"
        )
    col = sb.hidden * _need(views, "x").element_size()
    _need(views, "l1_token")[:n].view(torch.uint8).copy_(rows[:, :col])
    if views["l1_sf"] is not None:
        width = views["l1_sf"].shape[1] * 4
        views["l1_sf"][:n] = rows[:, col : col + width].contiguous().view(torch.int32)
        col += width
    info = _need(views, "recv_info")[:n]
    info[:, 0] = torch.repeat_interleave(torch.arange(sb.num_ranks, device=rows.device), counts)
    info[:, 1:] = rows[:, col : col + 12].contiguous().view(torch.int32)
    _need(views, "recv_weights")[:n] = rows[:, col + 12 : col + 16].contiguous().view(torch.float32).squeeze(1)
    _need(views, "workspace")[0] = n


def _agree(sb: SymmBuffer, error: BaseException | None) -> None:
    """Every rank learns whether any rank failed; if one did, all raise its error."""
    import torch.distributed as dist

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


def _run_across_ranks(op: str, y: torch.Tensor, sb: SymmBuffer, stats: torch.Tensor | None, local: _Local) -> None:
    import torch.distributed as dist

    group, views = sb.group, sb._views
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
    outputs = _need(views, "l2_out")[: received.shape[0]].view(torch.uint8)
    returned = outputs.new_empty((plan.payload.shape[0], outputs.shape[1]))
    dist.all_to_all_single(returned, outputs, send_splits, recv_splits, group=group)
    combine = _need(views, "combine")
    combine[plan.slots, plan.tokens] = returned.view(torch.bfloat16)
    torch.ops.deep_gemm._sum_combined_for_mega_moe(y, combine, views["topk_idx"])
