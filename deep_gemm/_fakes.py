"""Fake (meta) kernels for ops whose output shape the C++ side cannot derive on meta tensors.

Each mirrors the shape, strides and dtype rules of its op (see ops.yaml) without
reading tensor values, so torch.compile and FakeTensor can trace the op.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def _ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def _align(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def mn_major_empty(
    batch_shape: Sequence[int], mn: int, cols: int, like: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """An MN-major, TMA-aligned [(B,) mn, cols] tensor (strides (tma_mn * cols, 1, tma_mn))."""
    tma_mn = _align(mn, 4)
    if batch_shape:
        return like.new_empty_strided((*batch_shape, mn, cols), (tma_mn * cols, 1, tma_mn), dtype=dtype)
    return like.new_empty_strided((mn, cols), (1, tma_mn), dtype=dtype)


def _arch_major(sf: torch.Tensor) -> int:
    if sf.device.type != "cuda":
        return 0
    return torch.cuda.get_device_capability(sf.device)[0]


def get_mn_major_tma_aligned_tensor(sf: torch.Tensor) -> torch.Tensor:
    return mn_major_empty(list(sf.shape[:-2]), sf.shape[-2], sf.shape[-1], sf, torch.float32)


def get_mn_major_tma_aligned_packed_ue8m0_tensor(
    sf: torch.Tensor, psum_layout: torch.Tensor | None = None
) -> torch.Tensor:
    return mn_major_empty(list(sf.shape[:-2]), sf.shape[-2], _ceil_div(sf.shape[-1], 4), sf, torch.int32)


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
    batch = list(sf.shape[:-2])
    if sf.dtype == torch.int32:
        return sf.new_empty_strided(sf.shape, sf.stride())
    gran_mn = (recipe[0] if is_sfa else recipe[1]) if len(recipe) == 3 else recipe[0]
    arch = _arch_major(sf)
    keep_float = arch == 9 or (arch == 0 and disable_ue8m0_cast)
    if keep_float:
        if gran_mn == 1:
            return mn_major_empty(batch, sf.shape[-2], sf.shape[-1], sf, torch.float32)
        return sf.new_empty_strided(sf.shape, sf.stride())
    return mn_major_empty(batch, mn, _ceil_div(sf.shape[-1], 4), sf, torch.int32)


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(
    sf: torch.Tensor,
    grouped_layout: torch.Tensor,
    ks_cpu: Sequence[int] | None,
    gran_k: int,
    k_alignment: int,
    use_psum_layout: bool = False,
) -> torch.Tensor:
    mn = sf.shape[1]
    if ks_cpu:
        rows = sum(_ceil_div(_ceil_div(k, gran_k), 4) for k in ks_cpu)
    else:
        rows = (sf.shape[0] + 3 * grouped_layout.shape[0]) // 4
    return sf.new_empty((rows, mn), dtype=torch.int32)
