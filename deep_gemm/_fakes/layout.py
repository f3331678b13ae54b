"""Fakes of the layout family (csrc/apis/layout.hpp): scale-factor layouts."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .checks import align, ceil_div, check_same_device, check_tensor, fail


def mn_major_empty(
    batch_shape: Sequence[int], mn: int, cols: int, like: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """An MN-major, TMA-aligned [(B,) mn, cols] tensor (strides (tma_mn * cols, 1, tma_mn)).

    The strides are those of the C++ allocation, a contiguous [(B,) cols, tma_mn]
    buffer seen transposed; like every contiguous torch tensor, it counts a size
    of 0 as 1 in its strides (so an empty result has strides (1, 1), not (1, 0)).
    """
    col_stride = torch.sym_max(align(mn, 4), 1)
    if batch_shape:
        batch_stride = col_stride * torch.sym_max(cols, 1)
        return like.new_empty_strided((*batch_shape, mn, cols), (batch_stride, 1, col_stride), dtype=dtype)
    return like.new_empty_strided((mn, cols), (1, col_stride), dtype=dtype)


def _arch_major(sf: torch.Tensor) -> int:
    if sf.device.type != "cuda":
        return 0
    return torch.cuda.get_device_capability(sf.device)[0]


def get_mn_major_tma_aligned_tensor(sf: torch.Tensor) -> torch.Tensor:
    check_tensor("get_mn_major_tma_aligned_tensor", sf, "sf", [torch.float32], [2, 3])
    return mn_major_empty(list(sf.shape[:-2]), sf.shape[-2], sf.shape[-1], sf, torch.float32)


def _check_psum_layout(op: str, psum_layout: torch.Tensor, sf: torch.Tensor, sf_contiguous: bool) -> None:
    check_tensor(op, psum_layout, "psum_layout", [torch.int32], [1])
    check_same_device(op, psum_layout, "psum_layout", sf, "sf")
    if sf.dim() == 3 and sf.shape[0] != 1:
        fail(op, "sf", f"must hold a single batch when psum_layout is given, got {sf.shape[0]}")
    if not sf_contiguous:
        fail(op, "sf", f"must be contiguous when psum_layout is given, got strides {sf.stride()}")


def get_mn_major_tma_aligned_packed_ue8m0_tensor(
    sf: torch.Tensor, psum_layout: torch.Tensor | None = None
) -> torch.Tensor:
    op = "get_mn_major_tma_aligned_packed_ue8m0_tensor"
    check_tensor(op, sf, "sf", [torch.float32], [2, 3])
    if psum_layout is not None:
        _check_psum_layout(op, psum_layout, sf, sf.is_contiguous())
    return mn_major_empty(list(sf.shape[:-2]), sf.shape[-2], ceil_div(sf.shape[-1], 4), sf, torch.int32)


def transform_sf_into_required_layout(
    sf: torch.Tensor,
    mn: int,
    k: int,
    recipe: Sequence[int],
    num_groups: int | None = None,
    is_sfa: bool | None = None,
    disable_ue8m0_cast: bool = False,
    psum_layout: torch.Tensor | None = None,
) -> torch.Tensor:
    op = "transform_sf_into_required_layout"
    if len(recipe) not in (2, 3):
        fail(op, "recipe", f"must have 2 or 3 entries, got {len(recipe)}")
    if len(recipe) == 3 and is_sfa is None:
        fail(op, "is_sfa", "is required with a 3-entry recipe (it picks recipe[0] or recipe[1])")
    if len(recipe) == 2 and is_sfa is not None:
        fail(op, "is_sfa", "must be None with a 2-entry recipe (gran_mn, gran_k)")
    gran_mn = (recipe[0] if is_sfa else recipe[1]) if len(recipe) == 3 else recipe[0]
    gran_k = recipe[-1]
    if gran_mn not in (1, 128):
        fail(op, "recipe", f"gives an MN granularity of {gran_mn}; expected 1 or 128")
    if gran_k not in (32, 128):
        fail(op, "recipe", f"gives a K granularity of {gran_k}; expected 32 or 128")
    for name, value in (("mn", mn), ("k", k)):
        if value < 0:
            fail(op, name, f"must be non-negative, got {value}")
    check_tensor(op, sf, "sf", [torch.float32, torch.int32], [3] if num_groups is not None else [2])
    if num_groups is not None and sf.shape[0] != num_groups:
        fail(op, "sf", f"has {sf.shape[0]} groups in dim 0, but num_groups is {num_groups}")
    is_int = sf.dtype == torch.int32
    rows, cols = ceil_div(mn, gran_mn), ceil_div(k, 4 * gran_k if is_int else gran_k)
    if sf.shape[-2] != rows or sf.shape[-1] != cols:
        fail(op, "sf", f"must end in shape [{rows}, {cols}] for mn={mn}, k={k}, got {tuple(sf.shape)}")
    batch = list(sf.shape[:-2])
    if is_int:
        if gran_mn != 1:
            fail(op, "recipe", f"must have MN granularity 1 for packed UE8M0 scales, got {gran_mn}")
        return sf.new_empty_strided(sf.shape, sf.stride())
    arch = _arch_major(sf)
    keep_float = arch == 9 or (arch == 0 and disable_ue8m0_cast)
    if keep_float:
        if gran_k != 128:
            raise RuntimeError(f"{op}: float32 scales with K granularity {gran_k} need UE8M0 packing")
        if gran_mn == 1:
            return mn_major_empty(batch, sf.shape[-2], sf.shape[-1], sf, torch.float32)
        return sf.new_empty_strided(sf.shape, sf.stride())
    if disable_ue8m0_cast:
        raise RuntimeError(f"{op}: disable_ue8m0_cast=True is not supported on this GPU (it needs UE8M0 scales)")
    if psum_layout is not None:
        # With gran_mn > 1 the rows are broadcast first, into a new (contiguous) tensor.
        _check_psum_layout(op, psum_layout, sf, gran_mn != 1 or sf.is_contiguous())
    return mn_major_empty(batch, mn, ceil_div(sf.shape[-1], 4), sf, torch.int32)


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
    sf: torch.Tensor,
    grouped_layout: torch.Tensor,
    ks_cpu: Sequence[int] | None,
    gran_k: int,
    k_alignment: int,
    use_psum_layout: bool = False,
) -> torch.Tensor:
    op = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor"
    check_tensor(op, sf, "sf", [torch.float32], [2])
    if not sf.is_contiguous():
        fail(op, "sf", f"must be contiguous, got strides {sf.stride()}")
    check_tensor(op, grouped_layout, "grouped_layout", [torch.int32], [1])
    check_same_device(op, grouped_layout, "grouped_layout", sf, "sf")
    if gran_k not in (32, 128):
        fail(op, "gran_k", f"must be 32 or 128, got {gran_k}")
    if k_alignment <= 0 or k_alignment % 32 != 0:
        fail(op, "k_alignment", f"must be a positive multiple of 32, got {k_alignment}")
    mn, num_groups = sf.shape[1], grouped_layout.shape[0]
    if mn % 4 != 0:
        fail(op, "sf", f"must have a multiple of 4 columns (MN), got {mn}")
    if num_groups > 128:
        fail(op, "grouped_layout", f"may describe at most 128 groups, got {num_groups}")
    if ks_cpu:
        if len(ks_cpu) != num_groups:
            fail(op, "ks_cpu", f"has {len(ks_cpu)} entries but grouped_layout describes {num_groups} groups")
        for k in ks_cpu:
            if k < 0 or k % k_alignment != 0:
                fail(op, "ks_cpu", f"entries must be non-negative multiples of k_alignment ({k_alignment}), got {k}")
        sf_rows = sum(ceil_div(k, gran_k) for k in ks_cpu)
        if sf_rows != sf.shape[0]:
            fail(op, "sf", f"has {sf.shape[0]} rows, but the groups' K sizes need {sf_rows}")
        rows = sum(ceil_div(ceil_div(k, gran_k), 4) for k in ks_cpu)
    else:
        if not use_psum_layout:
            fail(op, "ks_cpu", "may be None or empty only with use_psum_layout=True")
        rows = (sf.shape[0] + 3 * num_groups) // 4
    return sf.new_empty((rows, mn), dtype=torch.int32)
