"""The reference (CPU) paged MQA logits walk rows x KV blocks in bounded chunks
(Note [Paged MQA reference chunks], DG_PAGED_MQA_REF_CHUNK): every chunk size gives the
definition's logits, including chunks of one row and one block, chunks that split a
row's blocks, and tables that end before max_context_len."""

from __future__ import annotations

import pytest
import torch

import deep_gemm  # noqa: F401  (registers torch.ops.deep_gemm)
from tests.ops.test_attention import assert_logits, paged_reference
from tests.support.samples.attention import paged_args, paged_inputs


@pytest.mark.parametrize("chunk", ["1", "3000", "70000", None])
@pytest.mark.parametrize(("next_n", "fp4", "varlen"), [(1, False, False), (2, False, False), (1, True, True)])
def test_chunked_reference_matches(monkeypatch, chunk, next_n, fp4, varlen):
    torch.manual_seed(7)
    if chunk is None:
        monkeypatch.delenv("DG_PAGED_MQA_REF_CHUNK", raising=False)
    else:
        monkeypatch.setenv("DG_PAGED_MQA_REF_CHUNK", chunk)
    p = paged_inputs(5, next_n, 16, 64, 32, fp4, torch.device("cpu"), 200, num_seqs=3 if varlen else None)
    out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*paged_args(p), indices=p.indices)
    assert_logits(out, paged_reference(p))


def test_chunked_reference_short_table(monkeypatch):
    torch.manual_seed(8)
    monkeypatch.setenv("DG_PAGED_MQA_REF_CHUNK", "2000")
    p = paged_inputs(4, 2, 16, 64, 32, False, torch.device("cpu"), 300)
    table = p.block_table[:, :2].contiguous()  # ends at column 64
    args = list(paged_args(p))
    args[5] = table
    out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args)
    lens = p.context_lens.reshape(-1, 1).long()
    keys = torch.arange(p.max_context_len).unsqueeze(0)
    past = (keys >= 64) & (keys < lens)
    assert torch.isnan(out[past]).all()
    assert torch.equal(out == float("-inf"), keys >= lens)
    monkeypatch.setenv("DG_PAGED_MQA_REF_CHUNK", "1")
    again = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args)
    assert torch.equal(torch.isnan(again), torch.isnan(out))
    fin = torch.isfinite(out)
    assert torch.allclose(again[fin], out[fin], rtol=1e-5, atol=1e-5)
