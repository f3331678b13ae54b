"""Scale-factor layout helpers, re-exported from the ops."""

from __future__ import annotations

from .. import _C

get_tma_aligned_size = _C.get_tma_aligned_size
get_mn_major_tma_aligned_tensor = _C.get_mn_major_tma_aligned_tensor
get_mn_major_tma_aligned_packed_ue8m0_tensor = _C.get_mn_major_tma_aligned_packed_ue8m0_tensor
get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor = _C.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor
set_mk_alignment_for_contiguous_layout = _C.set_mk_alignment_for_contiguous_layout
get_mk_alignment_for_contiguous_layout = _C.get_mk_alignment_for_contiguous_layout
get_theoretical_mk_alignment_for_contiguous_layout = _C.get_theoretical_mk_alignment_for_contiguous_layout
get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout

__all__ = [
    "get_k_alignment_for_contiguous_layout",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_m_alignment_for_contiguous_layout",
    "get_mk_alignment_for_contiguous_layout",
    "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_mn_major_tma_aligned_tensor",
    "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_tma_aligned_size",
    "set_mk_alignment_for_contiguous_layout",
]
