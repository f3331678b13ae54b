"""Quantisation helpers: build FP8 / FP4 operands and their scale factors.

All arithmetic is float32 on the input's device.  Scales follow DeepGEMM's
conventions: ``sf = amax / max_representable`` per group (amax clamped to at
least 1e-4), optionally rounded up to a power of two (UE8M0), and the data is
multiplied by the reciprocal of its scale.

The FP8 casts keep their scratch small, since tests and engines call them on
operands of several GiB: the amax is a reduction over the input itself (no
``|x|`` or float32 copy), and the float32 products are made a slice of rows at
a time (at most ``_SLICE_ELEMENTS`` values) straight into the FP8 result.  The
block cast copies the input (in its own dtype) only to pad it to whole tiles;
the token cast reads a partial last group in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from deep_gemm._arith import align, ceil_div

FP8_MAX = 448.0
FP4_MAX = 6.0
_AMAX_FLOOR = 1e-4
_E2M1_THRESHOLDS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)

__all__ = [
    "align",
    "cast_back_from_fp4",
    "ceil_div",
    "ceil_to_ue8m0",
    "pack_ue8m0_to_int",
    "per_block_cast_to_fp8",
    "per_channel_cast_to_fp8",
    "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4",
    "per_token_cast_to_fp8",
    "transpose_packed_fp4",
    "unpack_ue8m0_from_int",
]


def ceil_to_ue8m0(x: torch.Tensor) -> torch.Tensor:
    """The smallest power of two >= |x| (exponent clamped to the normal range)."""
    bits = x.abs().float().contiguous().view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    exponent = exponent + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    return (exponent.clamp(1, 254) << 23).view(torch.float32)


def pack_ue8m0_to_int(x: torch.Tensor) -> torch.Tensor:
    """float32 powers of two [..., 4w] -> int32 [..., w], 4 exponent bytes per int (byte 0 first)."""
    if x.dtype != torch.float32 or x.shape[-1] % 4 != 0:
        raise ValueError(
            f"pack_ue8m0_to_int: expected float32 with a last dim divisible by 4, got {x.dtype} {tuple(x.shape)}"
        )
    return ((x.contiguous().view(torch.int32) >> 23) & 0xFF).to(torch.uint8).view(torch.int32)


def unpack_ue8m0_from_int(packed: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`pack_ue8m0_to_int`."""
    shape = (*packed.shape[:-1], packed.shape[-1] * 4)
    raw = packed.contiguous().view(-1).view(torch.uint8).view(shape)
    return (raw.to(torch.int32) << 23).view(torch.float32)


def _scale(amax: torch.Tensor, max_value: float, use_ue8m0: bool) -> torch.Tensor:
    sf = amax.float().clamp(min=_AMAX_FLOOR) / max_value
    return ceil_to_ue8m0(sf) if use_ue8m0 else sf


# Values per float32 product slice of the FP8 casts (64 MiB).
_SLICE_ELEMENTS = 1 << 24


def _amax_abs(x: torch.Tensor, dim: int | tuple[int, ...]) -> torch.Tensor:
    """max |x| over `dim`, reduced from x itself (exact, NaN kept), as float32."""
    amax: torch.Tensor = torch.linalg.vector_norm(x, ord=float("inf"), dim=dim)
    return amax.float()


def _quantize_rows(groups: torch.Tensor, inv_sf: torch.Tensor) -> torch.Tensor:
    """FP8 of float32(groups) * inv_sf (broadcast), made a slice along dim 0 at a time."""
    out = torch.empty(groups.shape, dtype=torch.float8_e4m3fn, device=groups.device)
    rows = groups.shape[0]
    per_row = groups.numel() // rows if rows else 1
    step = max(1, _SLICE_ELEMENTS // max(per_row, 1))
    for r in range(0, rows, step):
        part = groups[r : r + step]
        if part.element_size() > 4:  # float64 rounds to float32 first, as the other dtypes promote
            part = part.float()
        out[r : r + step] = part * inv_sf[r : r + step]
    return out


def _pad_last(x: torch.Tensor, multiple: int, value: float = 0.0) -> torch.Tensor:
    extra = align(x.shape[-1], multiple) - x.shape[-1]
    if extra == 0:
        return x
    return torch.nn.functional.pad(x, (0, extra), value=value)


def _pack_scales(sf: torch.Tensor) -> torch.Tensor:
    return pack_ue8m0_to_int(_pad_last(sf, 4, value=1.0))


def per_token_cast_to_fp8(
    x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128, use_packed_ue8m0: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """[m, n] -> (FP8 [m, n], scales [m, ceil(n / gran_k)]), one scale per 1 x gran_k group."""
    if x.dim() != 2:
        raise ValueError(f"per_token_cast_to_fp8: expected a 2-D tensor, got {x.dim()}-D")
    m, n = x.shape
    # The whole groups and the last, partial one (if any) are two segments, each read in place
    # and quantised on its own, then joined: no padded copy, and no slice of a padded result
    # (torch.compile's CPU backend in torch 2.13 miscomputes a broadcast product that is viewed
    # and sliced that way: the partial group's values came out as garbage).
    whole = n // gran_k
    full = whole * gran_k
    amax = [_amax_abs(x[:, :full].reshape(m, whole, gran_k), 2)]
    if full < n:
        amax.append(_amax_abs(x[:, full:], 1).unsqueeze(1))
    sf = _scale(torch.cat(amax, 1) if len(amax) > 1 else amax[0], FP8_MAX, use_ue8m0)
    inv = 1.0 / sf
    parts = [_quantize_rows(x[:, :full].reshape(m, whole, gran_k), inv[:, :whole].unsqueeze(2)).view(m, full)]
    if full < n:
        parts.append(_quantize_rows(x[:, full:], inv[:, whole:]))
    data = torch.cat(parts, 1) if len(parts) > 1 else parts[0]
    if use_packed_ue8m0:
        if not use_ue8m0:
            raise ValueError("per_token_cast_to_fp8: use_packed_ue8m0 needs use_ue8m0=True")
        return data, _pack_scales(sf)
    return data, sf


def per_channel_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """[m, n] with m % gran_k == 0 -> (FP8 [m, n], scales [m / gran_k, n]): one scale per gran_k rows of a column."""
    if x.dim() != 2 or x.shape[0] % gran_k != 0:
        raise ValueError(f"per_channel_cast_to_fp8: expected 2-D with rows divisible by {gran_k}, got {tuple(x.shape)}")
    m, n = x.shape
    groups = x.reshape(m // gran_k, gran_k, n)
    sf = _scale(_amax_abs(groups, 1), FP8_MAX, use_ue8m0)
    data = _quantize_rows(groups, (1.0 / sf).unsqueeze(1)).view(m, n)
    return data, sf


def per_block_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """[m, n] -> (FP8 [m, n], scales [ceil(m / g), ceil(n / g)]), one scale per g x g tile."""
    if x.dim() != 2:
        raise ValueError(f"per_block_cast_to_fp8: expected a 2-D tensor, got {x.dim()}-D")
    m, n = x.shape
    g = gran_k
    mp, np_ = align(m, g), align(n, g)
    padded = x
    if (mp, np_) != (m, n):
        padded = torch.zeros(mp, np_, dtype=x.dtype, device=x.device)
        padded[:m, :n] = x
    tiles = padded.reshape(mp // g, g, np_ // g, g)
    sf = _scale(_amax_abs(tiles, (1, 3)), FP8_MAX, use_ue8m0)
    data = _quantize_rows(tiles, (1.0 / sf).view(sf.shape[0], 1, sf.shape[1], 1))
    return data.view(mp, np_)[:m, :n].contiguous(), sf


def per_custom_dims_cast_to_fp8(
    x: torch.Tensor, dims: Sequence[int], use_ue8m0: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale per index of ``dims``, over all other dims (e.g. dims=(0,) on [S, D]: per-token [S])."""
    keep = {d % x.dim() for d in dims}
    reduce = tuple(d for d in range(x.dim()) if d not in keep)
    sf = _scale(x.float().abs().amax(dim=reduce, keepdim=True), FP8_MAX, use_ue8m0)
    data = (x.float() * (1.0 / sf)).to(torch.float8_e4m3fn)
    return data, sf.squeeze(reduce) if reduce else sf


def _e2m1_codes(x: torch.Tensor) -> torch.Tensor:
    """float32 -> e2m1 codes (uint8 0..15), ties rounded down; sign only for nonzero codes."""
    mag = x.abs()
    code = torch.zeros_like(mag, dtype=torch.uint8)
    for t in _E2M1_THRESHOLDS:
        code += (mag > t).to(torch.uint8)
    sign = ((x < 0) & (code > 0)).to(torch.uint8) << 3
    return code | sign


def _e2m1_values(codes: torch.Tensor) -> torch.Tensor:
    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=torch.float32, device=codes.device)
    values = table[(codes & 7).long()]
    return torch.where((codes & 8) != 0, -values, values)


def _pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """uint8 codes [..., 2w] -> int8 [..., w], even element in the low nibble."""
    pairs = codes.view(*codes.shape[:-1], codes.shape[-1] // 2, 2)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).view(torch.int8)


def _unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    raw = packed.view(torch.uint8)
    return torch.stack((raw & 0xF, raw >> 4), dim=-1).view(*raw.shape[:-1], raw.shape[-1] * 2)


def per_token_cast_to_fp4(
    x: torch.Tensor, use_ue8m0: bool, gran_k: int = 128, use_packed_ue8m0: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """[m, n] (n even) -> (packed FP4 int8 [m, n / 2], scales [m, ceil(n / gran_k)])."""
    if x.dim() != 2 or x.shape[1] % 2 != 0:
        raise ValueError(f"per_token_cast_to_fp4: expected 2-D with an even number of columns, got {tuple(x.shape)}")
    m, n = x.shape
    groups = _pad_last(x.float(), gran_k).view(m, ceil_div(n, gran_k), gran_k)
    sf = _scale(groups.abs().amax(dim=2), FP4_MAX, use_ue8m0)
    codes = _e2m1_codes(groups * (1.0 / sf).unsqueeze(2)).view(m, groups.shape[1] * gran_k)[:, :n].contiguous()
    packed = _pack_nibbles(codes)
    if use_packed_ue8m0:
        if not use_ue8m0:
            raise ValueError("per_token_cast_to_fp4: use_packed_ue8m0 needs use_ue8m0=True")
        return packed, _pack_scales(sf)
    return packed, sf


def transpose_packed_fp4(a: torch.Tensor) -> torch.Tensor:
    """Packed FP4 [m, n / 2] -> packed FP4 [n, m / 2] holding the transposed matrix."""
    if a.dim() != 2 or a.dtype != torch.int8 or a.shape[0] % 2 != 0:
        raise ValueError(f"transpose_packed_fp4: expected int8 [m, n/2] with even m, got {a.dtype} {tuple(a.shape)}")
    return _pack_nibbles(_unpack_nibbles(a).t().contiguous())


def cast_back_from_fp4(
    packed: torch.Tensor, sf: torch.Tensor, gran_k: int = 128, use_packed_ue8m0: bool = False
) -> torch.Tensor:
    """Packed FP4 [m, n / 2] and its per-token scales -> float32 [m, n]."""
    values = _e2m1_values(_unpack_nibbles(packed))
    n = values.shape[1]
    scales = unpack_ue8m0_from_int(sf) if use_packed_ue8m0 else sf.float()
    expanded = scales.repeat_interleave(gran_k, dim=1)[:, :n]
    return values * expanded
