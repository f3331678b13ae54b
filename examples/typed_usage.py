"""The legacy API, called the way a user calls it, with every value typed.

`mypy --strict examples/typed_usage.py` must pass (`make typecheck` runs it): it shows that the
generated stub (deep_gemm/_C.pyi) accepts real calls -- (tensor, scale) pairs, keyword arguments,
aliases -- and types what ops return.  tests/codegen/test_typing.py checks that it also rejects wrong
calls.  The script runs on the CPU too: `python examples/typed_usage.py`.
"""

from __future__ import annotations

import torch

import deep_gemm
from deep_gemm import _C
from deep_gemm.testing import calc_diff
from deep_gemm.utils import ceil_div, per_block_cast_to_fp8, per_custom_dims_cast_to_fp8, per_token_cast_to_fp8

FP8 = torch.float8_e4m3fn
Pair = tuple[torch.Tensor, torch.Tensor]


def runtime_settings() -> list[int]:
    sms: int = deep_gemm.get_num_sms()
    deep_gemm.set_num_sms(sms)  # positional only, as in the pybind11 module
    deep_gemm.set_block_size_multiple_of((32, 64))  # an int or a pair
    return _C.get_block_size_multiple_of()


def dense_gemms(m: int, n: int, k: int) -> float:
    x, w = torch.randn(m, k), torch.randn(n, k)
    a: Pair = per_token_cast_to_fp8(x, use_ue8m0=False)  # (FP8 data, float32 1x128 scales)
    b: Pair = per_block_cast_to_fp8(w, use_ue8m0=False)  # (FP8 data, float32 128x128 scales)
    d = torch.empty(m, n, dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt(a, b, d)  # the legacy alias of fp8_fp4_gemm_nt
    acc = torch.zeros(m, n)
    _C.fp8_fp4_gemm_nt(a, b, acc, c=acc, recipe=(1, 128, 128), compiled_dims="nk", disable_ue8m0_cast=False)
    ref = torch.empty(m, n, dtype=torch.bfloat16)
    deep_gemm.bf16_gemm_nt(x.bfloat16(), w.bfloat16(), ref, compiled_dims="nk")
    return max(calc_diff(d, x @ w.T), calc_diff(acc, x @ w.T))


def grouped_gemm(groups: int, max_m: int, n: int, k: int) -> torch.Tensor:
    a = per_token_cast_to_fp8(torch.randn(groups * max_m, k), use_ue8m0=False)
    a_pair: Pair = (a[0].view(groups, max_m, k), a[1].view(groups, max_m, -1))
    parts = [per_block_cast_to_fp8(torch.randn(n, k), use_ue8m0=False) for _ in range(groups)]
    b_pair: Pair = (torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts]))
    d = torch.zeros(groups, max_m, n, dtype=torch.bfloat16)
    masked_m = torch.tensor([max_m, max_m // 2][:groups], dtype=torch.int32)
    deep_gemm.fp8_m_grouped_gemm_nt_masked(a_pair, b_pair, d, masked_m, expected_m=max_m)
    return d


def scale_layouts(mn: int, k: int) -> torch.Tensor:
    sf = torch.rand(mn, ceil_div(k, 128)) + 0.5
    packed: torch.Tensor = deep_gemm.transform_sf_into_required_layout(sf, mn, k, (1, 128))
    aligned: torch.Tensor = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
    assert aligned.shape == sf.shape
    return packed


def prefill_logits(s: int, s_kv: int, heads: int, dim: int) -> torch.Tensor:
    q = torch.randn(s, heads, dim).to(FP8)
    kv: Pair = per_custom_dims_cast_to_fp8(torch.randn(s_kv, dim), (0,), use_ue8m0=False)
    kv = (kv[0], kv[1].view(s_kv))  # one float32 scale per key
    weights = torch.randn(s, heads)
    ks = torch.zeros(s, dtype=torch.int32)
    ke = torch.full((s,), s_kv, dtype=torch.int32)
    logits: torch.Tensor = deep_gemm.fp8_fp4_mqa_logits(
        (q, None), kv, weights, ks, ke, clean_logits=True, logits_dtype=torch.float32
    )
    legacy: torch.Tensor = deep_gemm.fp8_mqa_logits(q, kv, weights, ks, ke)
    assert torch.equal(logits, legacy)
    return logits


def decode_logits(batch: int, heads: int, dim: int, block_kv: int, context: int) -> torch.Tensor:
    blocks = ceil_div(context, block_kv)
    tokens, scales = per_custom_dims_cast_to_fp8(torch.randn(batch * blocks * block_kv, dim), (0,), use_ue8m0=False)
    # Each cache block holds block_kv tokens' FP8 values, then their float32 scales, as bytes.
    values = tokens.view(torch.uint8).reshape(batch * blocks, block_kv * dim)
    scale_bytes = scales.contiguous().view(torch.uint8).reshape(batch * blocks, block_kv * 4)
    kv_cache = torch.cat([values, scale_bytes], dim=1).view(batch * blocks, block_kv, 1, dim + 4)
    context_lens = torch.full((batch, 1), context, dtype=torch.int32)
    block_table = torch.arange(batch * blocks, dtype=torch.int32).view(batch, blocks)
    schedule: torch.Tensor = deep_gemm.get_paged_mqa_logits_metadata(context_lens, block_kv, deep_gemm.get_num_sms())
    q = torch.randn(batch, 1, heads, dim).to(FP8)
    return deep_gemm.fp8_fp4_paged_mqa_logits(
        (q, None),
        kv_cache=kv_cache,
        weights=torch.randn(batch, heads),
        context_lens=context_lens,
        block_table=block_table,
        schedule_meta=schedule,
        max_context_len=context,
    )


def main() -> None:
    print("block size multiples:", runtime_settings())
    print(f"fp8 GEMM calc_diff vs float: {dense_gemms(64, 256, 512):.2e}")
    print("masked grouped GEMM output:", tuple(grouped_gemm(2, 8, 128, 256).shape))
    print("packed UE8M0 scales:", tuple(scale_layouts(96, 512).shape))
    print("prefill logits:", tuple(prefill_logits(4, 40, 8, 64).shape))
    print("decode logits:", tuple(decode_logits(2, 8, 64, 32, 50).shape))


if __name__ == "__main__":
    main()
