"""deep_gemm.mega.transform_weights_for_mega_moe: which row goes where, and its errors.

The expected row moves are written here from the function's docstring (the gate/up interleave
in chunks of 8, the 4 x 32 transpose of scale rows inside each 128-row block).
"""

from __future__ import annotations

import re

import pytest
import torch

import deep_gemm.mega as mega


def _escape(text: str) -> str:
    return re.escape(text)


def _row_tagged(e: int, rows: int, cols: int, dtype: torch.dtype = torch.int32) -> torch.Tensor:
    """[e, rows, cols] whose row r of expert x holds x * 100000 + r in every column (plus noise in col 0)."""
    tags = torch.arange(e).view(e, 1, 1) * 100000 + torch.arange(rows).view(1, rows, 1)
    return (tags + torch.zeros(1, 1, cols, dtype=torch.int64)).to(dtype)


def _interleaved_source(q: int, inter: int) -> int:
    """Source row (in [gate | up]) of interleaved row q: chunks of 8 gate rows, then 8 up rows."""
    chunk, within = divmod(q, 16)
    return (inter if within >= 8 else 0) + chunk * 8 + within % 8


def _utccp_source(q: int) -> int:
    """Source row of row q after the 4 x 32 transpose inside each 128-row block (32i + j -> 4j + i)."""
    block, within = divmod(q, 128)
    j, i = divmod(within, 4)
    return block * 128 + 32 * i + j


def test_transform_weights_fp8_fp4_moves_rows_as_its_doc_says() -> None:
    e, h, inter = 2, 256, 128
    w1, sf1 = torch.randint(-128, 127, (e, 2 * inter, h // 2), dtype=torch.int8), _row_tagged(e, 2 * inter, h // 128)
    w2, sf2 = torch.randint(-128, 127, (e, h, inter // 2), dtype=torch.int8), _row_tagged(e, h, inter // 128)
    originals = [t.clone() for t in (w1, sf1, w2, sf2)]
    (tw1, tsf1), (tw2, tsf2) = mega.transform_weights_for_mega_moe((w1, sf1), (w2, sf2))
    for before, t in zip(originals, (w1, sf1, w2, sf2)):
        assert torch.equal(before, t)  # inputs untouched
    for out in (tw1, tsf1, tw2, tsf2):
        assert out.is_contiguous()
    for q in range(2 * inter):
        assert torch.equal(tw1[:, q], w1[:, _interleaved_source(q, inter)])
        assert torch.equal(tsf1[:, q], sf1[:, _interleaved_source(_utccp_source(q), inter)])
    for q in range(h):
        assert torch.equal(tsf2[:, q], sf2[:, _utccp_source(q)])
    assert torch.equal(tw2, w2)


def test_transform_weights_bf16_interleaves_l1_only() -> None:
    e, h, inter = 3, 64, 24
    w1, w2 = torch.randn(e, 2 * inter, h).bfloat16(), torch.randn(e, h, inter).bfloat16().transpose(1, 2)
    tw1, tw2 = mega.transform_weights_for_mega_moe(w1, w2.transpose(1, 2))
    for q in range(2 * inter):
        assert torch.equal(tw1[:, q], w1[:, _interleaved_source(q, inter)])
    assert torch.equal(tw2, w2.transpose(1, 2)) and tw2.is_contiguous()


def test_transform_weights_errors() -> None:
    w1, sf1 = torch.zeros(1, 256, 64, dtype=torch.int8), torch.zeros(1, 256, 1, dtype=torch.int32)
    w2, sf2 = torch.zeros(1, 128, 64, dtype=torch.int8), torch.zeros(1, 128, 1, dtype=torch.int32)
    t = mega.transform_weights_for_mega_moe
    prefix = "transform_weights_for_mega_moe: argument "
    with pytest.raises(ValueError, match=_escape(prefix + "'activation' must be 'swiglu', got 'relu'")):
        t((w1, sf1), (w2, sf2), activation="relu")
    with pytest.raises(ValueError, match=_escape(prefix + "'l2_weights' must be a (data, sf) pair")):
        t((w1, sf1), w2)
    with pytest.raises(
        ValueError, match=_escape(prefix + "'l1_weights' must have a row count that is a multiple of 16")
    ):
        t((w1[:, :8], sf1[:, :8]), (w2, sf2))
    with pytest.raises(
        ValueError, match=_escape(prefix + "'l2_weights_sf' must have a row count that is a multiple of 128")
    ):
        t((w1, sf1), (w2[:, :64], sf2[:, :64]))
    with pytest.raises(ValueError, match=_escape(prefix + "'l1_weights_sf' must be a 3-D tensor")):
        t((w1, sf1[0]), (w2, sf2))
    with pytest.raises(
        ValueError, match=_escape(prefix + "'l1_weights_sf' must have the experts and rows of its data")
    ):
        t((w1, sf1.expand(2, -1, -1)), (w2, sf2))
    with pytest.raises(ValueError, match=_escape(prefix + "'l2_weights' must be a bf16 tensor, like l1_weights")):
        t(torch.zeros(1, 16, 8), (w2, sf2))
