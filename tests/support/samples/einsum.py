"""Samples for the einsum family (einsum, fp8_einsum)."""

from __future__ import annotations

import torch

from deep_gemm.utils import align, ceil_div, per_block_cast_to_fp8, per_channel_cast_to_fp8, per_token_cast_to_fp8

from . import Sample, samples


def bf16(*shape: int, device: torch.device) -> torch.Tensor:
    return torch.randn(*shape, device=device).bfloat16()


def strided_slice(*shape: int, device: torch.device, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """A random [*shape] view cut from a larger tensor: stride(-1) == 1, the other strides padded."""
    big = torch.randn(*(s + 3 for s in shape), device=device).to(dtype)
    return big[tuple(slice(0, s) for s in shape)]


def fp8_per_token_3d(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [p, q, k] -> (FP8 [p, q, k], float32 scales [p, q, ceil(k/128)]), one scale per 1 x 128 group."""
    p, q, k = x.shape
    data, sf = per_token_cast_to_fp8(x.reshape(p * q, k), use_ue8m0=False)
    return data.view(p, q, k), sf.view(p, q, ceil_div(k, 128))


def fp8_per_block_3d(x: torch.Tensor, per_row: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """x [h, p, q] -> (FP8, float32 scales [h, ceil(p/128), ceil(q/128)]) with 128 x 128 blocks per h.

    per_row=True gives 1 x 128 blocks instead: scales [h, p, ceil(q/128)].
    """
    pairs = [per_token_cast_to_fp8(t, use_ue8m0=False) if per_row else per_block_cast_to_fp8(t, False) for t in x]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def fp8_per_channel_over_b(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [b, h, c] -> (FP8 [b, h, c], float32 scales [ceil(b/128), h, c]): one scale per 128 b's of a channel."""
    b, h, c = x.shape
    padded = torch.zeros(align(b, 128), h * c, device=x.device)
    padded[:b] = x.reshape(b, h * c)
    data, sf = per_channel_cast_to_fp8(padded, use_ue8m0=False)
    return data[:b].reshape(b, h, c).contiguous(), sf.view(ceil_div(b, 128), h, c)


def bhd_bhr_operands(b: int, h: int, d: int, r: int, device: torch.device):
    x = fp8_per_channel_over_b(torch.randn(b, h, d, device=device))
    y = fp8_per_channel_over_b(torch.randn(b, h, r, device=device))
    return x, y


@samples("einsum")
def _einsum(device: torch.device) -> list[Sample]:
    out = []
    for s, m, n, k in [(3, 5, 7, 9), (1, 16, 8, 32), (0, 4, 4, 8)]:
        a, b = bf16(s, m, k, device=device), bf16(s, n, k, device=device)
        d = torch.randn(m, n, device=device)
        out.append(Sample(f"bmk_bnk_mn_fp32_acc_{s}x{m}x{n}x{k}", ("bmk,bnk->mn", a, b, d, d)))
    a, b = bf16(2, 3, 16, device=device), bf16(2, 5, 16, device=device)
    c = torch.randn(3, 5, device=device)
    out.append(Sample("bmk_bnk_mn_fp32_separate_c", ("bmk,bnk->mn", a, b, torch.empty_like(c), c)))
    out.append(Sample("bmk_bnk_mn_bf16", ("bmk,bnk->mn", a, b, torch.empty(3, 5, device=device).bfloat16())))
    for bs, h, r, dd in [(1, 1, 1, 1), (4, 3, 33, 17), (0, 2, 8, 8)]:
        a, b = bf16(bs, h, r, device=device), bf16(h, dd, r, device=device)
        d = torch.empty(bs, h, dd, device=device).bfloat16()
        out.append(Sample(f"bhr_hdr_bhd_{bs}x{h}x{r}x{dd}", ("bhr,hdr->bhd", a, b, d)))
    a, b = bf16(3, 2, 24, device=device), strided_slice(2, 40, 24, device=device)
    d = torch.empty(3, 2, 40, device=device).bfloat16()
    # c is spelled out (None) wherever a later argument is given by keyword.
    out.append(Sample("bhr_hdr_bhd_strided_b_cublaslt", ("bhr,hdr->bhd", a, b, d, None), {"use_cublaslt": True}))
    for bs, h, dd, r in [(1, 2, 16, 8), (5, 3, 9, 31)]:
        a, b = bf16(bs, h, dd, device=device), strided_slice(h, dd, r, device=device)
        d = torch.empty(bs, h, r, device=device).bfloat16()
        out.append(Sample(f"bhd_hdr_bhr_{bs}x{h}x{dd}x{r}", ("bhd,hdr->bhr", a, b, d)))
    return out


@samples("fp8_einsum")
def _fp8_einsum(device: torch.device) -> list[Sample]:
    out = []
    for bs, h, r, dd in [(1, 1, 128, 64), (3, 2, 200, 130), (0, 2, 128, 16)]:
        x = fp8_per_token_3d(torch.randn(bs, h, r, device=device))
        y = fp8_per_block_3d(torch.randn(h, dd, r, device=device))
        d = torch.empty(bs, h, dd, device=device).bfloat16()
        out.append(Sample(f"bhr_hdr_bhd_{bs}x{h}x{r}x{dd}", ("bhr,hdr->bhd", *x, *y, d)))
    x = fp8_per_token_3d(torch.randn(2, 2, 256, device=device))
    y = fp8_per_block_3d(torch.randn(2, 24, 256, device=device), per_row=True)
    d = torch.empty(2, 2, 24, device=device).bfloat16()
    out.append(Sample("bhr_hdr_bhd_per_row_b", ("bhr,hdr->bhd", *x, *y, d, None), {"recipe": (1, 1, 128)}))
    for bs, h, dd, r in [(1, 1, 64, 128), (3, 2, 130, 72)]:
        x = fp8_per_token_3d(torch.randn(bs, h, dd, device=device))
        y = fp8_per_block_3d(torch.randn(h, dd, r, device=device))
        d = torch.empty(bs, h, r, device=device).bfloat16()
        out.append(Sample(f"bhd_hdr_bhr_{bs}x{h}x{dd}x{r}", ("bhd,hdr->bhr", *x, *y, d)))
    for bs, h, dd, r in [(1, 1, 8, 16), (130, 2, 24, 40), (0, 2, 8, 8)]:
        x, y = bhd_bhr_operands(bs, h, dd, r, device)
        d = torch.randn(h, dd, r, device=device)
        out.append(Sample(f"bhd_bhr_hdr_{bs}x{h}x{dd}x{r}", ("bhd,bhr->hdr", *x, *y, d, d), {"recipe": (1, 1, 128)}))
    x, y = bhd_bhr_operands(3, 1, 4, 8, device)
    c = torch.randn(1, 4, 8, device=device)
    out.append(
        Sample("bhd_bhr_hdr_separate_c", ("bhd,bhr->hdr", *x, *y, torch.empty_like(c), c), {"recipe": (1, 1, 128)})
    )
    return out
