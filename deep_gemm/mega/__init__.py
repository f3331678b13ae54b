"""Mega MoE: the symmetric buffer, the weight layout and the fused MoE calls.

A Mega MoE call runs one MoE layer across the ranks of a process group: each
token goes to the ranks owning its top-k experts, every rank runs its local
experts (L1 GEMM, SwiGLU, FP8 requantisation, L2 GEMM) on what it received,
and the outputs come back to the token's own rank, where they are summed into
``y``.  Inputs are staged in a per-rank :class:`SymmBuffer` before each call.

The package's rooms: ``layout`` (layout_info by name, the buffer cut into
views), ``buffer`` (:class:`SymmBuffer` and its handle), ``weights`` (the
weight transform), ``exchange`` (a call across ranks) and ``fused`` (the two
fused calls).
"""

from __future__ import annotations

from .buffer import SymmBuffer, get_symm_buffer_for_mega_moe
from .fused import bf16_mega_moe, fp8_fp4_mega_moe
from .layout import LAYOUT_FIELDS as LAYOUT_FIELDS
from .layout import PUBLIC_REGIONS as PUBLIC_REGIONS
from .layout import REGIONS as REGIONS
from .layout import LayoutInfo as LayoutInfo
from .layout import _slice_symm_buffer_for_mega_moe as _slice_symm_buffer_for_mega_moe
from .weights import transform_weights_for_mega_moe

# What ``from deep_gemm.mega import *`` and ``deep_gemm`` itself re-export, as upstream's deep_gemm.mega does.
__all__ = [
    "SymmBuffer",
    "bf16_mega_moe",
    "fp8_fp4_mega_moe",
    "get_symm_buffer_for_mega_moe",
    "transform_weights_for_mega_moe",
]
