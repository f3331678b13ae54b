"""The reference (ATen) path of fp8_fp4_mqa_logits holds at most one bounded chunk of head scores.

DG_MQA_LOGITS_REF_CHUNK sets the chunk (elements of heads x keys, default 2^26).  With a small
chunk the largest single allocation of a call must stay far below the S x H x Skv scores an
unchunked evaluation would hold, and the result must still match the float64 definition.  The
same measurement with the default chunk must see the whole scores block (so it can fail).
"""

from __future__ import annotations

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import deep_gemm
from tests.ops.test_attention import assert_logits, mqa_inputs, mqa_reference


def _largest_allocation(fn) -> int:
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return max(e.self_cpu_memory_usage for e in prof.events())


@pytest.mark.parametrize("fp4,max_seqlen_k", [(False, 0), (True, 0), (False, 700)])
def test_reference_is_chunked(monkeypatch, fp4, max_seqlen_k):
    s, s_kv, h, d = 32, 2048, 64, 64
    x = mqa_inputs(s, s_kv, h, d, fp4, torch.device("cpu"))
    scores_bytes = s * h * s_kv * 4  # 16 MiB

    def call():
        return deep_gemm.fp8_fp4_mqa_logits(
            (x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke,
            clean_logits=max_seqlen_k == 0, max_seqlen_k=max_seqlen_k,
        )  # fmt: skip

    monkeypatch.delenv("DG_MQA_LOGITS_REF_CHUNK", raising=False)
    assert _largest_allocation(call) >= scores_bytes  # the default chunk holds every head score here
    monkeypatch.setenv("DG_MQA_LOGITS_REF_CHUNK", str(1 << 14))
    assert _largest_allocation(call) <= 1 << 20  # O(S x Skv) pieces and one 64 KiB chunk
    assert_logits(call(), mqa_reference(x, max_seqlen_k))


def test_odd_chunk_sizes(monkeypatch):
    x = mqa_inputs(7, 300, 16, 32, False, torch.device("cpu"))
    want = mqa_reference(x)
    for chunk in ("1", "17", "5000", "100000000"):
        monkeypatch.setenv("DG_MQA_LOGITS_REF_CHUNK", chunk)
        assert_logits(deep_gemm.fp8_fp4_mqa_logits((x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke), want)
