"""Fake (meta) kernels for the attention family's ops that return tensors.

Each mirrors its op's output shape, strides and dtype (see ops.yaml) without
reading a tensor value, so torch.compile and FakeTensor can trace the op.  The
logits are strided views whose row stride is a multiple of 1024 bytes; the
fakes build the same allocation and narrow it exactly as the C++ side does.
"""

from __future__ import annotations

import torch


def _align(x, multiple):  # ints or SymInts
    return (x + multiple - 1) // multiple * multiple


def _row_align(dtype: torch.dtype) -> int:
    """Elements of ``dtype`` in 1024 bytes."""
    return 1024 // dtype.itemsize


def _strided_logits(like: torch.Tensor, rows, alloc_rows, cols, row_stride, dtype: torch.dtype) -> torch.Tensor:
    return like.new_empty((alloc_rows, row_stride), dtype=dtype)[:rows, :cols]


def fp8_fp4_mqa_logits(
    q: torch.Tensor,
    q_sf: torch.Tensor | None,
    kv: torch.Tensor,
    kv_sf: torch.Tensor,
    weights: torch.Tensor,
    cu_seq_len_k_start: torch.Tensor,
    cu_seq_len_k_end: torch.Tensor,
    clean_logits: bool = True,
    max_seqlen_k: int = 0,
    logits_dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    seq, heads = q.shape[0], q.shape[1]
    seq_kv = kv.shape[0]
    elems = _row_align(logits_dtype)
    if max_seqlen_k > 0:
        cols, row_stride = max_seqlen_k, _align(_align(max_seqlen_k, 256), elems)
    else:
        cols, row_stride = seq_kv, _align(seq_kv + 256, elems)
    return _strided_logits(q, seq, _align(seq, 128 // heads), cols, row_stride, logits_dtype)


def fp8_mqa_logits(
    q: torch.Tensor,
    kv: torch.Tensor,
    kv_sf: torch.Tensor,
    weights: torch.Tensor,
    cu_seq_len_k_start: torch.Tensor,
    cu_seq_len_k_end: torch.Tensor,
    clean_logits: bool = True,
    max_seqlen_k: int = 0,
) -> torch.Tensor:
    return fp8_fp4_mqa_logits(
        q, None, kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k
    )


def get_paged_mqa_logits_metadata(
    context_lens: torch.Tensor, block_kv: int, num_sms: int, indices: torch.Tensor | None = None
) -> torch.Tensor:
    return context_lens.new_empty((num_sms + 1, 2), dtype=torch.int32)


def fp8_fp4_paged_mqa_logits(
    q: torch.Tensor,
    q_sf: torch.Tensor | None,
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
    rows = q.shape[0] * q.shape[1]
    row_stride = _align(_align(max_context_len, 256), _row_align(logits_dtype))
    return _strided_logits(q, rows, rows, max_context_len, row_stride, logits_dtype)


def fp8_paged_mqa_logits(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_table: torch.Tensor,
    schedule_meta: torch.Tensor,
    max_context_len: int,
    clean_logits: bool = False,
    indices: torch.Tensor | None = None,
) -> torch.Tensor:
    return fp8_fp4_paged_mqa_logits(
        q, None, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits
    )
