"""Helpers to build the inputs of deep_gemm ops (quantisation, scale layouts), and multi-process helpers."""

from . import dist, layout, math  # noqa: F401  (submodules, reachable as deep_gemm.utils.<name>)
from .dist import init_dist, uneven_all_gather
from .layout import (
    get_k_alignment_for_contiguous_layout,
    get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_m_alignment_for_contiguous_layout,
    get_mk_alignment_for_contiguous_layout,
    get_mn_major_tma_aligned_packed_ue8m0_tensor,
    get_mn_major_tma_aligned_tensor,
    get_theoretical_mk_alignment_for_contiguous_layout,
    get_tma_aligned_size,
    set_mk_alignment_for_contiguous_layout,
)
from .math import (
    align,
    cast_back_from_fp4,
    ceil_div,
    ceil_to_ue8m0,
    pack_ue8m0_to_int,
    per_block_cast_to_fp8,
    per_channel_cast_to_fp8,
    per_custom_dims_cast_to_fp8,
    per_token_cast_to_fp4,
    per_token_cast_to_fp8,
    transpose_packed_fp4,
    unpack_ue8m0_from_int,
)

# A literal list, so that type checkers see the re-exports; tests/codegen/test_typing.py checks that it
# is exactly layout.__all__ + math.__all__ + the two names of dist re-exported here.
__all__ = [
    "align",
    "cast_back_from_fp4",
    "ceil_div",
    "ceil_to_ue8m0",
    "get_k_alignment_for_contiguous_layout",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_m_alignment_for_contiguous_layout",
    "get_mk_alignment_for_contiguous_layout",
    "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_mn_major_tma_aligned_tensor",
    "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_tma_aligned_size",
    "init_dist",
    "pack_ue8m0_to_int",
    "per_block_cast_to_fp8",
    "per_channel_cast_to_fp8",
    "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4",
    "per_token_cast_to_fp8",
    "set_mk_alignment_for_contiguous_layout",
    "transpose_packed_fp4",
    "uneven_all_gather",
    "unpack_ue8m0_from_int",
]
