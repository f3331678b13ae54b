"""Triton kernels of deep_gemm.legacy (imported only when a call gets CUDA tensors).

Four entry kernels, named as profiles look for them, share two tile bodies:
- ``_m_grouped_tile``: one [BLOCK_M, BLOCK_N] tile of D = A_rows . B[g]^T, g the
  group of the tile's rows (read from the per-row group ids), A's rows optionally
  gathered through a row map;
- ``_k_grouped_tile``: one tile of D[g] (+)= A[k]^T . B[k] summed over the K range
  of group g, one operand's K rows gathered through a K map.
Both accumulate in float32 and round once into d's dtype. Arguments were checked
by the caller (deep_gemm/legacy/__init__.py); indices outside their table count
as zero rows, so no load leaves its tensor.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Tile sizes: a 128 x 128 float32 accumulator over 64-wide K steps, three stages deep.
_BLOCK_N = 128
_BLOCK_K = 64
_NUM_WARPS = 8
_NUM_STAGES = 3
# Consecutive M tiles launched together over the N tiles (keeps their A rows and B columns in L2).
_SWIZZLE = 8


@triton.jit
def _tile_coords(pid, num_m_tiles, num_n_tiles, SWIZZLE: tl.constexpr):
    # Programs walk SWIZZLE M tiles down before stepping one N tile right.
    band = pid // (SWIZZLE * num_n_tiles)
    first_m = band * SWIZZLE
    band_rows = tl.minimum(num_m_tiles - first_m, SWIZZLE)
    local = pid - band * SWIZZLE * num_n_tiles
    return first_m + local % band_rows, local // band_rows


@triton.jit
def _m_grouped_tile(
    a_ptr,
    b_ptr,
    d_ptr,
    group_ptr,
    row_map_ptr,
    M,
    N,
    K,
    num_groups,
    num_a_rows,
    stride_am,
    stride_bg,
    stride_bn,
    stride_bk,
    GATHER_A: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    pid_m, pid_n = _tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), SWIZZLE)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    in_m = offs_m < M
    in_n = offs_n < N

    # A tile lies inside one aligned group block: its group is the largest id among its rows,
    # and rows with another id (padding, -1) produce zeros.
    ids = tl.load(group_ptr + offs_m, mask=in_m, other=-1)
    group = tl.max(ids, axis=0)
    valid_group = (group >= 0) & (group < num_groups)
    row_ok = in_m & (ids == group) & valid_group
    if GATHER_A:
        src = tl.load(row_map_ptr + offs_m, mask=row_ok, other=-1).to(tl.int64)
        a_ok = row_ok & (src >= 0) & (src < num_a_rows)
        a_rows = tl.where(a_ok, src, 0)
    else:
        a_ok = row_ok
        a_rows = offs_m
    b_base = b_ptr + tl.where(valid_group, group, 0).to(tl.int64) * stride_bg

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    num_k_tiles = tl.cdiv(K, BLOCK_K) * valid_group.to(tl.int32)
    for kt in range(0, num_k_tiles):
        offs_k = (kt * BLOCK_K + tl.arange(0, BLOCK_K)).to(tl.int64)
        in_k = offs_k < K
        a_tile = tl.load(
            a_ptr + a_rows[:, None] * stride_am + offs_k[None, :], mask=a_ok[:, None] & in_k[None, :], other=0.0
        )
        b_tile = tl.load(
            b_base + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
            mask=in_k[:, None] & in_n[None, :],
            other=0.0,
        )
        acc = tl.dot(a_tile, b_tile, acc=acc)

    out = tl.where(row_ok[:, None], acc, 0.0).to(d_ptr.dtype.element_ty)
    tl.store(d_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=in_m[:, None] & in_n[None, :])


@triton.jit
def m_grouped_bf16_gemm_contiguous_tl_impl(
    a_ptr,
    b_ptr,
    d_ptr,
    group_ptr,
    M,
    N,
    K,
    num_groups,
    stride_bg,
    stride_bn,
    stride_bk,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    _m_grouped_tile(
        a_ptr,
        b_ptr,
        d_ptr,
        group_ptr,
        group_ptr,
        M,
        N,
        K,
        num_groups,
        M,
        K,
        stride_bg,
        stride_bn,
        stride_bk,
        False,
        BLOCK_M,
        BLOCK_N,
        BLOCK_K,
        SWIZZLE,
    )


@triton.jit
def a_fused_m_grouped_bf16_gemm_contiguous_tl_impl(
    a_ptr,
    b_ptr,
    d_ptr,
    group_ptr,
    row_map_ptr,
    M,
    N,
    K,
    num_groups,
    num_a_rows,
    stride_bg,
    stride_bn,
    stride_bk,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    _m_grouped_tile(
        a_ptr,
        b_ptr,
        d_ptr,
        group_ptr,
        row_map_ptr,
        M,
        N,
        K,
        num_groups,
        num_a_rows,
        K,
        stride_bg,
        stride_bn,
        stride_bk,
        True,
        BLOCK_M,
        BLOCK_N,
        BLOCK_K,
        SWIZZLE,
    )


@triton.jit
def _k_grouped_tile(
    a_ptr,
    b_ptr,
    d_ptr,
    k_map_ptr,
    k_start_ptr,
    k_end_ptr,
    M,
    N,
    K,
    num_src_rows,
    GATHER_A: tl.constexpr,
    ACC: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    pid_m, pid_n = _tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), SWIZZLE)
    g = tl.program_id(1).to(tl.int64)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    in_m = offs_m < M
    in_n = offs_n < N

    # Group g sums over K positions [k_start[g], k_end[g]), clipped to [0, K).
    k_lo = tl.maximum(tl.load(k_start_ptr + g), 0).to(tl.int64)
    k_hi = tl.minimum(tl.load(k_end_ptr + g), K).to(tl.int64)
    num_k_tiles = tl.cdiv(tl.maximum(k_hi - k_lo, 0), BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(0, num_k_tiles):
        offs_k = k_lo + kt * BLOCK_K + tl.arange(0, BLOCK_K).to(tl.int64)
        in_k = offs_k < k_hi
        src = tl.load(k_map_ptr + offs_k, mask=in_k, other=-1).to(tl.int64)
        src_ok = in_k & (src >= 0) & (src < num_src_rows)
        src = tl.where(src_ok, src, 0)
        if GATHER_A:
            a_rows = src
            a_ok = src_ok
            b_rows = offs_k
            b_ok = in_k
        else:
            a_rows = offs_k
            a_ok = in_k
            b_rows = src
            b_ok = src_ok
        # A is [rows, M] row-major: its tile, read transposed, is [BLOCK_M, BLOCK_K].
        a_tile = tl.load(a_ptr + a_rows[None, :] * M + offs_m[:, None], mask=a_ok[None, :] & in_m[:, None], other=0.0)
        b_tile = tl.load(b_ptr + b_rows[:, None] * N + offs_n[None, :], mask=b_ok[:, None] & in_n[None, :], other=0.0)
        acc = tl.dot(a_tile, b_tile, acc=acc)

    d_ptrs = d_ptr + g * M * N + offs_m[:, None] * N + offs_n[None, :]
    d_mask = in_m[:, None] & in_n[None, :]
    if ACC:
        acc += tl.load(d_ptrs, mask=d_mask, other=0.0).to(tl.float32)
    tl.store(d_ptrs, acc.to(d_ptr.dtype.element_ty), mask=d_mask)


@triton.jit
def a_fused_k_grouped_bf16_gemm_contiguous_tl_impl(
    a_ptr,
    b_ptr,
    d_ptr,
    k_map_ptr,
    k_start_ptr,
    k_end_ptr,
    M,
    N,
    K,
    num_src_rows,
    ACC: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    _k_grouped_tile(
        a_ptr,
        b_ptr,
        d_ptr,
        k_map_ptr,
        k_start_ptr,
        k_end_ptr,
        M,
        N,
        K,
        num_src_rows,
        True,
        ACC,
        BLOCK_M,
        BLOCK_N,
        BLOCK_K,
        SWIZZLE,
    )


@triton.jit
def b_fused_k_grouped_bf16_gemm_contiguous_tl_impl(
    a_ptr,
    b_ptr,
    d_ptr,
    k_map_ptr,
    k_start_ptr,
    k_end_ptr,
    M,
    N,
    K,
    num_src_rows,
    ACC: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SWIZZLE: tl.constexpr,
):
    _k_grouped_tile(
        a_ptr,
        b_ptr,
        d_ptr,
        k_map_ptr,
        k_start_ptr,
        k_end_ptr,
        M,
        N,
        K,
        num_src_rows,
        False,
        ACC,
        BLOCK_M,
        BLOCK_N,
        BLOCK_K,
        SWIZZLE,
    )


def _m_tiles(m: int, block_m: int, n: int) -> int:
    return triton.cdiv(m, block_m) * triton.cdiv(n, _BLOCK_N)


def launch_m_grouped(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    groups: torch.Tensor,
    row_map: torch.Tensor | None,
    block_m: int,
) -> None:
    """d [M, N] = per row r: A[row_map[r] or r] . b[groups[r]]^T (zero rows outside any group).

    ``a`` is row-major [rows, K], ``b`` [G, N, K] with any strides, ``d`` contiguous,
    ``groups`` (and ``row_map``) int32 [M]; ``block_m`` divides the group alignment."""
    m, n = d.shape
    k = a.size(1)
    grid = (_m_tiles(m, block_m, n),)
    sizes = dict(BLOCK_M=block_m, BLOCK_N=_BLOCK_N, BLOCK_K=_BLOCK_K, SWIZZLE=_SWIZZLE)
    tuning = dict(num_warps=_NUM_WARPS, num_stages=_NUM_STAGES)
    strides = (b.stride(0), b.stride(1), b.stride(2))
    if row_map is None:
        m_grouped_bf16_gemm_contiguous_tl_impl[grid](a, b, d, groups, m, n, k, b.size(0), *strides, **sizes, **tuning)
    else:
        a_fused_m_grouped_bf16_gemm_contiguous_tl_impl[grid](
            a, b, d, groups, row_map, m, n, k, b.size(0), a.size(0), *strides, **sizes, **tuning
        )


def launch_k_grouped(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    k_map: torch.Tensor,
    k_start: torch.Tensor,
    k_end: torch.Tensor,
    gather_a: bool,
    acc: bool,
) -> None:
    """d[g] (+)= sum over k in [k_start[g], k_end[g]) of A[k]^T B[k], the rows of A (gather_a)
    or of B taken through ``k_map``. ``a`` [rows, M], ``b`` [rows, N] and ``d`` [G, M, N]
    contiguous; index tensors int32."""
    num_groups, m, n = d.shape
    k = k_map.numel()
    num_src_rows = a.size(0) if gather_a else b.size(0)
    block_m = 128
    grid = (_m_tiles(m, block_m, n), num_groups)
    kernel = (
        a_fused_k_grouped_bf16_gemm_contiguous_tl_impl if gather_a else b_fused_k_grouped_bf16_gemm_contiguous_tl_impl
    )
    kernel[grid](
        a,
        b,
        d,
        k_map,
        k_start,
        k_end,
        m,
        n,
        k,
        num_src_rows,
        ACC=acc,
        BLOCK_M=block_m,
        BLOCK_N=_BLOCK_N,
        BLOCK_K=_BLOCK_K,
        SWIZZLE=_SWIZZLE,
        num_warps=_NUM_WARPS,
        num_stages=_NUM_STAGES,
    )
