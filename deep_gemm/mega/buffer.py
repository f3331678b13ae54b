"""The per-rank buffer of a Mega MoE call (:class:`SymmBuffer`), its handle, and the factory that sizes it."""

from __future__ import annotations

import warnings
from typing import Any

import torch

from deep_gemm import _C

from .errors import arg_error
from .layout import LayoutInfo, region_views

__all__ = ["SymmBuffer", "SymmHandle", "get_symm_buffer_for_mega_moe"]


class SymmHandle:
    """``SymmBuffer.handle``: ``buffer_ptrs``, every rank's buffer address as the fused ops take it.

    With symmetric memory the addresses are the peers' buffers mapped into this
    process (entry ``rank`` is this rank's own); without, they are all zeros,
    which tells the fused ops that the caller moves the rows between ranks.
    """

    def __init__(self, buffer_ptrs: list[int], peers: Any = None, shift: int = 0) -> None:
        self.buffer_ptrs = buffer_ptrs
        self._peers = peers  # torch's symmetric-memory handle, when there is one
        self._shift = shift  # bytes from the start of each rank's allocation to its buffer

    @classmethod
    def rendezvous(cls, buffer: torch.Tensor, group: Any, rank: int) -> SymmHandle:
        """Map every rank's ``buffer`` (allocated by ``symm_mem.empty``) into this process."""
        from torch.distributed import _symmetric_memory as symm_mem

        peers = symm_mem.rendezvous(buffer, group)
        # The tensor may start inside the allocation; its peers start at the same offset.
        shift = buffer.data_ptr() - peers.buffer_ptrs[rank]
        return cls([int(p) + shift for p in peers.buffer_ptrs], peers, shift)

    @property
    def symmetric(self) -> bool:
        return self._peers is not None

    def barrier(self) -> None:
        """Wait for every rank of the group (symmetric memory only)."""
        self._peers.barrier()

    def word(self, rank: int, index: int) -> torch.Tensor:
        """The int64 word ``index`` of ``rank``'s buffer, writable from this process (symmetric memory only)."""
        word: torch.Tensor = self._peers.get_buffer(rank, (1,), torch.int64, storage_offset=self._shift // 8 + index)
        return word


class _View:
    """A region of the buffer under upstream's attribute name: None where the configuration has
    none (scale factors for bf16, shared-expert regions without shared experts) and once destroyed."""

    def __init__(self, region: str) -> None:
        self.region = region

    def __get__(self, sb: SymmBuffer | None, owner: type | None = None) -> Any:
        if sb is None:
            return self
        return sb.views.get(self.region)


class SymmBuffer:
    """The per-rank buffer a Mega MoE call reads its inputs from and exchanges rows through.

    ``group`` is a ``torch.distributed`` process group, or None for a single
    rank (no process group needed).  Stage each call's inputs into ``x``,
    ``x_sf`` (FP8 only), ``topk_idx`` and ``topk_weights`` (first ``T`` rows,
    ``T`` = the output's row count).  The buffer is zero-filled.

    With more than one rank on CUDA, the buffer is allocated in torch's
    symmetric memory (``torch.distributed._symmetric_memory``) and
    ``handle.buffer_ptrs`` holds every rank's buffer address, mapped into this
    process: the fused op then writes rows straight into the peers' buffers
    (Note [Mega MoE on symmetric memory] in ``csrc/reference/mega_moe.hpp``).
    ``symmetric=False`` asks for the other path, as on the CPU (gloo): the
    buffer is an ordinary tensor, ``handle.buffer_ptrs`` is all zeros, and rows
    travel through the group's collectives.  ``symmetric=True`` requires
    symmetric memory; the default (None) uses it wherever it is available.
    """

    # The staged inputs and the activations, by upstream's names (regions of csrc/reference/mega_layout.hpp).
    x = _View("x")
    x_sf = _View("x_sf")
    topk_idx = _View("topk_idx")
    topk_weights = _View("topk_weights")
    l1_acts = _View("l1_token")
    l1_acts_sf = _View("l1_sf")
    l2_acts = _View("l2_token")
    l2_acts_sf = _View("l2_sf")
    shared_l1_acts_sf = _View("shared_l1_sf")
    shared_l2_acts = _View("shared_l2_token")
    shared_l2_acts_sf = _View("shared_l2_sf")

    def __init__(
        self,
        group: Any,
        num_experts: int,
        num_max_tokens_per_rank: int,
        num_topk: int,
        hidden: int,
        intermediate_hidden: int,
        mma_type: str = "fp8xfp4",
        activation: str = "swiglu",
        *,
        num_shared_experts: int = 0,
        device: torch.device | str | None = None,
        symmetric: bool | None = None,
    ) -> None:
        num_ranks = 1 if group is None else group.size()
        rank = 0 if group is None else group.rank()
        num_bytes, layout_info = _C.get_symm_buffer_size_for_mega_moe(
            num_ranks=num_ranks,
            num_experts=num_experts,
            num_max_tokens_per_rank=num_max_tokens_per_rank,
            num_topk=num_topk,
            hidden=hidden,
            intermediate_hidden=intermediate_hidden,
            mma_type=mma_type,
            activation=activation,
            num_shared_experts=num_shared_experts,
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
        self.num_ring_tokens = LayoutInfo(*self.layout_info).num_ring_tokens
        where = torch.device(device or "cpu")
        self.symmetric = _use_symmetric_memory(num_ranks, where, symmetric)
        self.buffer: torch.Tensor | None
        self.handle: SymmHandle | None
        if self.symmetric:
            from torch.distributed import _symmetric_memory as symm_mem

            self.buffer = symm_mem.empty(num_bytes, dtype=torch.int8, device=where)
            self.handle = SymmHandle.rendezvous(self.buffer, group, rank)
        else:
            self.buffer = torch.empty(num_bytes, dtype=torch.int8, device=where)
            self.handle = SymmHandle([0] * num_ranks)
        self.buffer.zero_()
        # Every region as a typed view (None where the configuration has none); the attributes above read it.
        self.views = region_views("SymmBuffer", self.buffer, self.layout_info)
        if self.handle.symmetric:
            self.handle.barrier()  # every rank's buffer is zeroed before any peer writes into it
            torch.cuda.synchronize(where)
        elif num_ranks > 1:
            torch.distributed.barrier(group=group)

    def region(self, name: str) -> torch.Tensor:
        """A region every buffer has (only scale-factor and shared-expert regions can be absent)."""
        view = self.views.get(name)
        if view is None:
            raise RuntimeError(f"deep_gemm.mega: the symmetric buffer has no '{name}' region")
        return view

    def op_kwargs(self) -> dict[str, Any]:
        """The arguments every fused op takes from the buffer, by their schema names."""
        assert self.handle is not None, "the caller checks that the buffer was not destroyed"
        return {
            "sym_buffer": self.buffer,
            "sym_buffer_ptrs": self.handle.buffer_ptrs,
            "rank_idx": self.rank,
            "num_max_tokens_per_rank": self.num_max_tokens_per_rank,
            "num_experts": self.num_experts,
            "num_topk": self.num_topk,
        }

    def destroy(self) -> None:
        """Drop every reference to the buffer; the view attributes read None from then on."""
        self.buffer, self.handle, self.views = None, None, {}


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
        raise arg_error("SymmBuffer", "symmetric", f"is True, but symmetric memory cannot be used: {reason}")
    return possible if asked is None else asked


def get_symm_buffer_for_mega_moe(
    group: Any,
    num_experts: int,
    num_max_tokens_per_rank: int,
    num_topk: int,
    hidden: int,
    intermediate_hidden: int,
    use_fp8_dispatch: bool | None = None,
    mma_type: str = "fp8xfp4",
    activation: str = "swiglu",
    *,
    num_shared_experts: int = 0,
    device: torch.device | str | None = None,
    symmetric: bool | None = None,
) -> SymmBuffer:
    """A :class:`SymmBuffer` with num_max_tokens_per_rank rounded up to the token alignment (384).

    The positional parameters are upstream DeepGEMM's, in its order; the ones
    upstream lacks are keyword-only.  ``use_fp8_dispatch`` is deprecated; when
    given it must agree with ``mma_type``.
    """
    if use_fp8_dispatch is not None:
        warnings.warn(
            "get_symm_buffer_for_mega_moe: use_fp8_dispatch is deprecated; mma_type decides the dispatch format",
            DeprecationWarning,
            stacklevel=2,
        )
        if bool(use_fp8_dispatch) != mma_type.startswith("fp8"):
            raise arg_error(
                "get_symm_buffer_for_mega_moe",
                "use_fp8_dispatch",
                f"is {use_fp8_dispatch}, which contradicts mma_type '{mma_type}'",
            )
    alignment = _C.get_token_alignment_for_mega_moe()
    return SymmBuffer(
        group,
        num_experts,
        -(-num_max_tokens_per_rank // alignment) * alignment,
        num_topk,
        hidden,
        intermediate_hidden,
        mma_type,
        activation,
        num_shared_experts=num_shared_experts,
        device=device,
        symmetric=symmetric,
    )
