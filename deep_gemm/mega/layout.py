"""The symmetric buffer's layout as Python sees it: ``layout_info`` by name, and the buffer cut into views.

The C++ layout (``csrc/reference/mega_layout.hpp``) is the only source of offsets:
``get_symm_buffer_size_for_mega_moe`` returns them as the 23-int
``layout_info``, and ``_get_symm_buffer_views_for_mega_moe`` describes every
region of a configuration.  This module names those ints and cuts a buffer into
typed views with torch view ops; see Note [Mega MoE buffer views] in
``csrc/apis/mega.hpp`` for why the ops return data and not views.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from deep_gemm import _C

from .errors import arg_error

__all__ = [
    "LAYOUT_FIELDS",
    "PUBLIC_REGIONS",
    "REGIONS",
    "WORKSPACE_WORDS",
    "LayoutInfo",
    "Region",
    "WorkspaceWords",
    "_slice_symm_buffer_for_mega_moe",
    "region_views",
]

_MMA_TYPES = ("fp8xfp4", "bf16xbf16")  # by mma_kind


class LayoutInfo(NamedTuple):
    """``layout_info``, field by field (``SymmBufferLayout::to_int_list`` in csrc/reference/mega_layout.hpp)."""

    num_bytes: int
    x_offset: int
    x_sf_offset: int
    topk_idx_offset: int
    topk_weights_offset: int
    shared_l1_sf_offset: int
    shared_l2_token_offset: int
    shared_l2_sf_offset: int
    l1_token_offset: int
    l1_sf_offset: int
    l2_token_offset: int
    l2_sf_offset: int
    mma_kind: int  # 0 fp8xfp4, 1 bf16xbf16
    with_sf: int
    sf_gran_k: int
    num_max_tokens_per_rank: int
    num_topk: int
    hidden: int
    intermediate_hidden: int
    num_shared_experts: int
    shared_intermediate_hidden: int
    num_ring_tokens: int
    num_sf_ring_tokens: int

    @classmethod
    def parse(cls, op: str, value: Any) -> LayoutInfo:
        """``value`` as a LayoutInfo, or the argument error ``op`` raises for it."""
        count = len(cls._fields)
        if isinstance(value, torch.Tensor) or not isinstance(value, Sequence):
            raise arg_error(op, "layout_info", f"must be a sequence of {count} ints, got {type(value).__name__}")
        ints = list(value)
        if len(ints) != count or not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            raise arg_error(
                op,
                "layout_info",
                f"must hold {count} ints (as returned by get_symm_buffer_size_for_mega_moe), got {ints!r}",
            )
        info = cls(*ints)
        if info.mma_kind not in range(len(_MMA_TYPES)):
            index = cls._fields.index("mma_kind")
            raise arg_error(
                op, "layout_info", f"field {index} (mma_kind) must be 0 (fp8xfp4) or 1 (bf16xbf16), got {info.mma_kind}"
            )
        return info

    @property
    def mma_type(self) -> str:
        return _MMA_TYPES[self.mma_kind]


LAYOUT_FIELDS: tuple[str, ...] = LayoutInfo._fields

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
# The regions whose offsets layout_info carries, in its order.
PUBLIC_REGIONS = tuple(f.removesuffix("_offset") for f in LAYOUT_FIELDS if f.endswith("_offset"))
_VIEW_FIELDS = 10  # ints per region in the views op's answer
_DTYPES = {1: torch.float8_e4m3fn, 2: torch.bfloat16, 3: torch.int32, 4: torch.int64, 5: torch.float32}


class Region(NamedTuple):
    """One region of the buffer: where it starts, how many bytes it reserves, and its typed view."""

    offset: int
    nbytes: int
    dtype: torch.dtype | None  # None: the configuration has no such region
    sizes: list[int]
    strides: list[int]


class WorkspaceWords(NamedTuple):
    """Indices of the int64 workspace words Python touches (see ``_get_workspace_words_for_mega_moe``)."""

    recv_rows: int
    stop: int


# Read from the C++ layout, so that the indices are written down in one place only.
WORKSPACE_WORDS = WorkspaceWords(*_C._get_workspace_words_for_mega_moe())


def _describe(op: str, info: LayoutInfo) -> tuple[int, dict[str, Region]]:
    """Ask the C++ layout for every region of ``info``'s configuration, and check ``info`` against it."""
    try:
        flat = _C._get_symm_buffer_views_for_mega_moe(
            mma_type=info.mma_type,
            num_max_tokens_per_rank=info.num_max_tokens_per_rank,
            num_topk=info.num_topk,
            hidden=info.hidden,
            intermediate_hidden=info.intermediate_hidden,
            num_shared_experts=info.num_shared_experts,
            num_ring_tokens=info.num_ring_tokens,
        )
    except (ValueError, RuntimeError) as exc:
        raise arg_error(op, "layout_info", f"holds a configuration the layout rejects: {exc}") from exc
    num_bytes, regions = flat[0], {}
    for i, name in enumerate(REGIONS):
        offset, nbytes, code, ndim, *rest = flat[1 + i * _VIEW_FIELDS : 1 + (i + 1) * _VIEW_FIELDS]
        regions[name] = Region(offset, nbytes, _DTYPES.get(code), rest[:ndim], rest[3 : 3 + ndim])
    with_sf = info.mma_kind == 0
    expected = info._replace(
        num_bytes=num_bytes,
        **{f"{name}_offset": regions[name].offset for name in PUBLIC_REGIONS},
        with_sf=int(with_sf),
        sf_gran_k=32 if with_sf else 0,
        shared_intermediate_hidden=info.num_shared_experts * info.intermediate_hidden,
        num_sf_ring_tokens=info.num_ring_tokens if with_sf else 0,
    )
    for i, (field, got, want) in enumerate(zip(LAYOUT_FIELDS, info, expected)):
        if got != want:
            raise arg_error(
                op,
                "layout_info",
                f"field {i} ({field}) is {got}, but the layout of its configuration has {want}; "
                "pass the list get_symm_buffer_size_for_mega_moe returned",
            )
    return num_bytes, regions


def region_views(op: str, buffer: Any, layout_info: Any) -> dict[str, torch.Tensor | None]:
    """Every region of ``buffer`` as a typed view (None for regions this configuration lacks)."""
    info = LayoutInfo.parse(op, layout_info)
    if not isinstance(buffer, torch.Tensor):
        raise arg_error(op, "buffer", f"must be a Tensor, got {type(buffer).__name__}")
    if buffer.dtype not in (torch.int8, torch.uint8) or buffer.dim() != 1 or not buffer.is_contiguous():
        raise arg_error(
            op,
            "buffer",
            f"must be a contiguous 1-D int8 or uint8 tensor, got {buffer.dtype} of shape {tuple(buffer.shape)}",
        )
    num_bytes, regions = _describe(op, info)
    if buffer.numel() < num_bytes:
        raise arg_error(op, "buffer", f"has {buffer.numel()} bytes, fewer than the layout's {num_bytes}")
    views: dict[str, torch.Tensor | None] = {}
    for name, region in regions.items():
        if region.dtype is None:
            views[name] = None
            continue
        bytes_ = buffer.narrow(0, region.offset, region.nbytes)
        views[name] = bytes_.view(region.dtype).as_strided(region.sizes, region.strides)
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
    views = region_views("_slice_symm_buffer_for_mega_moe", buffer, layout_info)
    return tuple(views[name] for name in PUBLIC_REGIONS)
