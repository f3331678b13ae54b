"""Samples for the hyperconnection family (tf32_hc_prenorm_gemm)."""

from __future__ import annotations

import torch

from . import Sample, samples


@samples("tf32_hc_prenorm_gemm")
def _prenorm(device: torch.device) -> list[Sample]:
    out = []
    for m, n, k, splits in [(13, 24, 72, None), (1, 3, 5, None), (0, 4, 16, None), (7, 24, 100, 4), (3, 2, 5, 8)]:
        a = torch.randn(m, k, device=device).bfloat16()
        b = torch.randn(n, k, device=device)
        lead = () if splits is None else (splits,)
        d = torch.empty(*lead, m, n, device=device)
        sqr_sum = torch.empty(*lead, m, device=device)
        kwargs = {} if splits is None else {"num_splits": splits}
        out.append(Sample(f"{m}x{n}x{k}_splits_{splits}", (a, b, d, sqr_sum), kwargs))
    return out
