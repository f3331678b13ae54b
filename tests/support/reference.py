"""Independent float64 references, written from the ops' definitions in their docs (ops.yaml, docs/ops.md).

Nothing here calls deep_gemm: values are decoded bit by bit from the raw
operands (FP8 via torch's own e4m3 decoding, FP4 and UE8M0 from their bit
layouts) and multiplied out in float64.
"""

from __future__ import annotations

import torch

from deep_gemm.utils import ceil_div

F64 = torch.float64


def fp4_to_f64(packed: torch.Tensor) -> torch.Tensor:
    """int8 [..., w] holding two e2m1 codes per byte (low nibble = even index) -> float64 [..., 2w]."""
    raw = packed.view(torch.uint8).to(torch.int64)
    codes = torch.stack((raw & 0xF, raw >> 4), dim=-1).reshape(*raw.shape[:-1], -1)
    magnitude = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=F64, device=packed.device)
    values = magnitude[codes & 7]
    return torch.where((codes & 8) != 0, -values, values)


def data_to_f64(x: torch.Tensor) -> torch.Tensor:
    """FP8 e4m3, or FP4 packed along the contiguous dim (K-major or MN-major), as float64."""
    if x.dtype == torch.int8:
        if x.stride(-1) == 1 or x.shape[-1] == 1:
            return fp4_to_f64(x)
        return fp4_to_f64(x.transpose(-1, -2).contiguous()).transpose(-1, -2)
    return x.to(F64)


def ue8m0_to_f64(packed: torch.Tensor) -> torch.Tensor:
    """int32 words of 4 exponent bytes (byte 0 first) -> float64 2^(e - 127), last dim x4."""
    shape = (*packed.shape[:-1], packed.shape[-1] * 4)
    raw = packed.contiguous().view(-1).view(torch.uint8).view(shape).to(F64)
    return torch.pow(2.0, raw - 127)


def expand_scales_f64(sf: torch.Tensor, mn: int, k: int, gran_mn: int, gran_k: int) -> torch.Tensor:
    """Scale per element [mn, k] from float32 [ceil(mn/g), ceil(k/g)] or packed UE8M0 [mn, words]."""
    if sf.dtype == torch.int32:
        per_group = ue8m0_to_f64(sf)[:, : ceil_div(k, gran_k)]
    else:
        per_group = sf.to(F64)
    rows = torch.arange(mn) // gran_mn
    cols = torch.arange(k) // gran_k
    return per_group[rows][:, cols]


def dequant_f64(data: torch.Tensor, sf: torch.Tensor, gran_mn: int, gran_k: int) -> torch.Tensor:
    values = data_to_f64(data)
    mn, k = values.shape
    return values * expand_scales_f64(sf, mn, k, gran_mn, gran_k)
