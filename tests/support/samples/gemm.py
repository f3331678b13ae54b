"""Samples for the dense GEMMs of the gemm family."""

from __future__ import annotations

import torch

from tests.support.operands import fp4_per_token, fp8_per_block, fp8_per_token

from . import Sample, samples

SHAPES = [(1, 64, 128), (33, 2112, 256), (16, 64, 200), (0, 64, 128), (8, 0, 128), (4, 32, 0)]


def _nt_samples(device: torch.device) -> list[Sample]:
    out = []
    for m, n, k in SHAPES:
        a, b = fp8_per_token(m, k, device), fp8_per_block(n, k, device)
        d = torch.randn(m, n, device=device).to(torch.bfloat16)
        out.append(Sample(f"bf16_{m}x{n}x{k}", (*a, *b, d)))
    a, b = fp8_per_token(8, 256, device), fp8_per_token(64, 256, device)
    d = torch.randn(8, 64, device=device)
    out.append(Sample("fp32_accumulate_into_d", (*a, *b, d, d), {"recipe": (1, 1, 128)}))
    a, b = fp8_per_token(8, 256, device, packed=True), fp8_per_token(48, 256, device, packed=True)
    out.append(Sample("packed_ue8m0", (*a, *b, torch.empty(8, 48, device=device, dtype=torch.bfloat16))))
    a, b = fp8_per_token(8, 256, device), fp4_per_token(32, 256, device)
    out.append(
        Sample(
            "fp8_x_fp4",
            (*a, *b, torch.empty(8, 32, device=device, dtype=torch.bfloat16)),
            {"recipe_a": (1, 128), "recipe_b": (1, 32)},
        )
    )
    return out


def _variant(device: torch.device, ta: bool, tb: bool) -> list[Sample]:
    """NT samples re-laid out for the NN / TN / TT forms (data and scales transposed together)."""
    out = []
    for s in _nt_samples(device):
        a, sfa, b, sfb, *rest = s.args
        if a.dtype == torch.int8 or b.dtype == torch.int8:
            continue
        if ta:
            a, sfa = a.t().contiguous(), sfa.t().contiguous()
        if tb:
            b, sfb = b.t().contiguous(), sfb.t().contiguous()
        out.append(Sample(s.name, (a, sfa, b, sfb, *rest), dict(s.kwargs)))
    return out


@samples("fp8_fp4_gemm_nt")
def _nt(device: torch.device) -> list[Sample]:
    return _nt_samples(device)


@samples("fp8_fp4_gemm_nn")
def _nn(device: torch.device) -> list[Sample]:
    return _variant(device, ta=False, tb=True)


@samples("fp8_fp4_gemm_tn")
def _tn(device: torch.device) -> list[Sample]:
    return _variant(device, ta=True, tb=True)


@samples("fp8_fp4_gemm_tt")
def _tt(device: torch.device) -> list[Sample]:
    return _variant(device, ta=True, tb=False)


def _bf16(device: torch.device, ta: bool, tb: bool) -> list[Sample]:
    out = []
    for m, n, k in SHAPES[:5]:
        a = torch.randn(k, m, device=device).bfloat16() if ta else torch.randn(m, k, device=device).bfloat16()
        b = torch.randn(n, k, device=device).bfloat16() if not tb else torch.randn(k, n, device=device).bfloat16()
        out.append(Sample(f"{m}x{n}x{k}", (a, b, torch.empty(m, n, device=device, dtype=torch.bfloat16))))
    m, n, k = 8, 24, 64
    a = torch.randn(k, m, device=device).bfloat16() if ta else torch.randn(m, k, device=device).bfloat16()
    b = torch.randn(n, k, device=device).bfloat16() if not tb else torch.randn(k, n, device=device).bfloat16()
    d = torch.randn(m, n, device=device)
    out.append(Sample("fp32_accumulate", (a, b, d, d)))
    return out


@samples("bf16_gemm_nt")
def _bnt(device: torch.device) -> list[Sample]:
    return _bf16(device, False, False)


@samples("bf16_gemm_nn")
def _bnn(device: torch.device) -> list[Sample]:
    return _bf16(device, False, True)


@samples("bf16_gemm_tn")
def _btn(device: torch.device) -> list[Sample]:
    return _bf16(device, True, True)


@samples("bf16_gemm_tt")
def _btt(device: torch.device) -> list[Sample]:
    return _bf16(device, True, False)
