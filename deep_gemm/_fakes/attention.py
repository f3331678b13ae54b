"""Fakes of the attention family (csrc/apis/attention.hpp): the MQA logits and their schedule.

The logits are strided views whose row stride is a multiple of 1024 bytes;
the fakes build the same allocation and narrow it exactly as the C++ side does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .checks import align, by_name, check_same_device, check_shape, check_tensor, fail

_LOGITS_DTYPES = (torch.float32, torch.bfloat16)


def _check_query(op: str, q: torch.Tensor, q_sf: torch.Tensor | None, rank: int) -> tuple[bool, int]:
    """q FP8 [..., H, D] (q_sf None) or FP4 int8 [..., H, D/2] (q_sf int32 [..., H]): (fp4, heads)."""
    check_tensor(op, q, "q", [torch.float8_e4m3fn, torch.int8], [rank])
    fp4 = q.dtype == torch.int8
    heads, head_dim = q.shape[-2], q.shape[-1] * (2 if fp4 else 1)
    if fp4:
        if q_sf is None:
            fail(op, "q_sf", "is required for an FP4 q: packed UE8M0 int32 with q's shape minus its last dim")
        check_tensor(op, q_sf, "q_sf", [torch.int32], [rank - 1])
        check_shape(op, q_sf, "q_sf", q.shape[:-1])
        check_same_device(op, q_sf, "q_sf", q, "q")
    elif q_sf is not None:
        fail(op, "q_sf", "must be None for an FP8 q (only FP4 q carries scales)")
    if heads not in (8, 16, 32, 64):
        fail(op, "q", f"must have 8, 16, 32 or 64 heads (dim {rank - 2}), got {heads}")
    if head_dim not in ((64, 128) if fp4 else (32, 64, 128)):
        fail(op, "q", f"must have head dim D = {'64 or 128' if fp4 else '32, 64 or 128'}, got {head_dim}")
    return fp4, heads


def _check_fp8_query(op: str, q: torch.Tensor) -> None:
    """The FP8-only ops check q's dtype first (an int8 q would otherwise ask for FP4 scales)."""
    if isinstance(q, torch.Tensor) and q.dtype != torch.float8_e4m3fn:
        fail(op, "q", f"must be float8_e4m3fn, got {q.dtype}")


def _check_weights(
    op: str, weights: torch.Tensor, rows: int, heads: int, logits_dtype: torch.dtype, q: torch.Tensor
) -> None:
    if logits_dtype not in _LOGITS_DTYPES:
        fail(op, "logits_dtype", f"must be torch.float32 or torch.bfloat16, got {logits_dtype}")
    check_tensor(op, weights, "weights", [torch.float32, torch.bfloat16], [2])
    if weights.dtype == torch.bfloat16 and logits_dtype != torch.bfloat16:
        fail(op, "weights", f"may be bfloat16 only with logits_dtype=torch.bfloat16, got {logits_dtype} logits")
    check_shape(op, weights, "weights", (rows, heads))
    check_same_device(op, weights, "weights", q, "q")


def _check_int32(op: str, t: torch.Tensor, arg: str, shape: Sequence[int], q: torch.Tensor) -> None:
    check_tensor(op, t, arg, [torch.int32], [len(shape)])
    check_shape(op, t, arg, shape)
    check_same_device(op, t, arg, q, "q")


def _check_context_lens(op: str, context_lens: torch.Tensor) -> None:
    check_tensor(op, context_lens, "context_lens", [torch.int32], [2])
    if context_lens.shape[1] < 1:
        fail(op, "context_lens", f"must have next_n >= 1 columns, got shape {list(context_lens.shape)}")


def _check_indices(op: str, indices: torch.Tensor | None, context_lens: torch.Tensor) -> None:
    if indices is None:
        return
    check_tensor(op, indices, "indices", [torch.int32], [1])
    check_shape(op, indices, "indices", context_lens.shape[:1])
    check_same_device(op, indices, "indices", context_lens, "context_lens")
    if context_lens.shape[1] != 1:
        fail(op, "indices", f"needs next_n == 1, but context_lens has shape {list(context_lens.shape)}")


def _row_align(dtype: torch.dtype) -> int:
    """Elements of ``dtype`` in 1024 bytes."""
    return 1024 // dtype.itemsize


def _strided_logits(like: torch.Tensor, rows, alloc_rows, cols, row_stride, dtype: torch.dtype) -> torch.Tensor:
    return like.new_empty((alloc_rows, row_stride), dtype=dtype)[:rows, :cols]


def _mqa_logits(
    op: str,
    *,
    q: torch.Tensor,
    q_sf: torch.Tensor | None = None,
    kv: torch.Tensor,
    kv_sf: torch.Tensor,
    weights: torch.Tensor,
    cu_seq_len_k_start: torch.Tensor,
    cu_seq_len_k_end: torch.Tensor,
    clean_logits: bool = True,
    max_seqlen_k: int = 0,
    logits_dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    fp4, heads = _check_query(op, q, q_sf, 3)
    seq = q.shape[0]
    check_tensor(op, kv, "kv", [torch.int8 if fp4 else torch.float8_e4m3fn], [2])
    if kv.shape[1] != q.shape[-1]:
        fail(op, "kv", f"must have {q.shape[-1]} columns per token, got {kv.shape[1]}")
    check_same_device(op, kv, "kv", q, "q")
    seq_kv = kv.shape[0]
    check_tensor(op, kv_sf, "kv_sf", [torch.int32 if fp4 else torch.float32], [1])
    check_shape(op, kv_sf, "kv_sf", (seq_kv,))
    check_same_device(op, kv_sf, "kv_sf", q, "q")
    _check_weights(op, weights, seq, heads, logits_dtype, q)
    _check_int32(op, cu_seq_len_k_start, "cu_seq_len_k_start", (seq,), q)
    _check_int32(op, cu_seq_len_k_end, "cu_seq_len_k_end", (seq,), q)
    if max_seqlen_k < 0:
        fail(op, "max_seqlen_k", f"must be non-negative (0 selects the full [S, Skv] form), got {max_seqlen_k}")
    if max_seqlen_k > 0 and clean_logits:
        fail(op, "clean_logits", "must be False when max_seqlen_k > 0 (compressed logits are not cleaned), got True")
    elems = _row_align(logits_dtype)
    if max_seqlen_k > 0:
        cols, row_stride = max_seqlen_k, align(align(max_seqlen_k, 256), elems)
    else:
        cols, row_stride = seq_kv, align(seq_kv + 256, elems)
    return _strided_logits(q, seq, align(seq, 128 // heads), cols, row_stride, logits_dtype)


def fp8_fp4_mqa_logits(*args: Any, **kwargs: Any) -> torch.Tensor:
    return _mqa_logits("fp8_fp4_mqa_logits", **by_name("fp8_fp4_mqa_logits", args, kwargs))


def fp8_mqa_logits(*args: Any, **kwargs: Any) -> torch.Tensor:
    """The legacy form: an FP8 q without scales, float32 logits."""
    values = by_name("fp8_mqa_logits", args, kwargs)
    _check_fp8_query("fp8_mqa_logits", values["q"])
    return _mqa_logits("fp8_mqa_logits", **values)


def get_paged_mqa_logits_metadata(
    context_lens: torch.Tensor, block_kv: int, num_sms: int, indices: torch.Tensor | None = None
) -> torch.Tensor:
    op = "get_paged_mqa_logits_metadata"
    _check_context_lens(op, context_lens)
    if block_kv not in (32, 64):
        fail(op, "block_kv", f"must be 32 or 64, got {block_kv}")
    if num_sms < 1:
        fail(op, "num_sms", f"must be at least 1, got {num_sms}")
    _check_indices(op, indices, context_lens)
    return context_lens.new_empty((num_sms + 1, 2), dtype=torch.int32)


def _paged_mqa_logits(
    op: str,
    *,
    q: torch.Tensor,
    q_sf: torch.Tensor | None = None,
    kv_cache: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_table: torch.Tensor,
    schedule_meta: torch.Tensor,
    max_context_len: int,
    clean_logits: bool = False,
    logits_dtype: torch.dtype = torch.float32,
    indices: torch.Tensor | None = None,
) -> torch.Tensor:
    if clean_logits:
        raise RuntimeError(f"{op}: clean_logits=True is not supported for paged logits; pass clean_logits=False")
    _, heads = _check_query(op, q, q_sf, 4)
    batch, next_n = q.shape[0], q.shape[1]
    rows = batch * next_n
    token_bytes = q.shape[-1] + 4
    check_tensor(op, kv_cache, "kv_cache", [torch.uint8], [4])
    if kv_cache.shape[2] != 1 or kv_cache.shape[3] != token_bytes or kv_cache.shape[1] not in (32, 64):
        fail(op, "kv_cache", f"must have shape [num_blocks, 32 or 64, 1, {token_bytes}], got {list(kv_cache.shape)}")
    check_same_device(op, kv_cache, "kv_cache", q, "q")
    _check_weights(op, weights, rows, heads, logits_dtype, q)
    _check_context_lens(op, context_lens)
    check_shape(op, context_lens, "context_lens", (batch, next_n))
    check_same_device(op, context_lens, "context_lens", q, "q")
    check_tensor(op, block_table, "block_table", [torch.int32], [2])
    check_same_device(op, block_table, "block_table", q, "q")
    _check_indices(op, indices, context_lens)
    check_tensor(op, schedule_meta, "schedule_meta", [torch.int32], [2])
    check_same_device(op, schedule_meta, "schedule_meta", q, "q")
    if max_context_len < 0:
        fail(op, "max_context_len", f"must be non-negative, got {max_context_len}")
    row_stride = align(align(max_context_len, 256), _row_align(logits_dtype))
    return _strided_logits(q, rows, rows, max_context_len, row_stride, logits_dtype)


def fp8_fp4_paged_mqa_logits(*args: Any, **kwargs: Any) -> torch.Tensor:
    return _paged_mqa_logits("fp8_fp4_paged_mqa_logits", **by_name("fp8_fp4_paged_mqa_logits", args, kwargs))


def fp8_paged_mqa_logits(*args: Any, **kwargs: Any) -> torch.Tensor:
    """The legacy form: an FP8 q without scales, float32 logits."""
    values = by_name("fp8_paged_mqa_logits", args, kwargs)
    _check_fp8_query("fp8_paged_mqa_logits", values["q"])
    return _paged_mqa_logits("fp8_paged_mqa_logits", **values)
