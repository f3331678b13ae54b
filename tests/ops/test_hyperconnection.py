"""tf32_hc_prenorm_gemm: float64 references (whole and split-K), argument checks, samples, signature.

Split-K boundaries (the op's documented contract): with S splits and c = ceil(K / S),
split s covers k in [s * c, min((s + 1) * c, K)); a split that starts at or past K is empty.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch

import deep_gemm
from tests.support.manifest import OPS, legacy_call
from tests.support.reference import F64, ceil_div
from tests.support.samples import clone_args, load_all

ENTRIES = ("legacy", "package", "torch_ops")
NAME = "tf32_hc_prenorm_gemm"


def call(entry: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
    kwargs = kwargs or {}
    if entry == "torch_ops":
        return torch.ops.deep_gemm.tf32_hc_prenorm_gemm(*args, **kwargs)
    legacy_args, legacy_kwargs = legacy_call(OPS[NAME], args, kwargs)
    module = deep_gemm._C if entry == "legacy" else deep_gemm
    return module.tf32_hc_prenorm_gemm(*legacy_args, **legacy_kwargs)


def reference(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(D, sqr_sum) in float64 from the definition, and magnitude bounds for both."""
    a64, b64 = a.to(F64), b.to(F64)
    d = (a64[:, None, :] * b64[None, :, :]).sum(-1)
    d_bound = (a64.abs()[:, None, :] * b64.abs()[None, :, :]).sum(-1)
    sqr = (a64 * a64).sum(-1)
    return d, d_bound, sqr, sqr


def assert_within(out: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor, k: int) -> None:
    """float32 accumulation over k terms: |out - ref| <= (k + 2) * 2^-23 * bound."""
    assert out.shape == ref.shape and out.dtype == torch.float32
    err = (out.to(F64) - ref).abs()
    assert bool((err <= (k + 2) * 2.0**-23 * bound + 1e-30).all()), f"max error {err.max().item():.3e}"


def operands(m: int, n: int, k: int, strided: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    if strided:  # row slices of wider tensors: stride(-1) == 1, stride(0) > K
        return torch.randn(m, k + 5).bfloat16()[:, :k], torch.randn(n, k + 3)[:, :k]
    return torch.randn(m, k).bfloat16(), torch.randn(n, k)


SHAPES = [(1, 1, 1), (13, 24, 72), (137, 24, 300), (4, 3, 5), (2, 7, 1)]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("strided", [False, True])
def test_unsplit(entry: str, m: int, n: int, k: int, strided: bool) -> None:
    a, b = operands(m, n, k, strided)
    d, sqr_sum = torch.randn(m, n), torch.randn(m)
    call(entry, (a, b, d, sqr_sum))
    ref_d, d_bound, ref_sqr, sqr_bound = reference(a, b)
    assert_within(d, ref_d, d_bound, k)
    assert_within(sqr_sum, ref_sqr, sqr_bound, k)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("splits", [1, 2, 3, 7, 16])
def test_split_k_partials(entry: str, m: int, n: int, k: int, splits: int) -> None:
    a, b = operands(m, n, k)
    d, sqr_sum = torch.randn(splits, m, n), torch.randn(splits, m)
    call(entry, (a, b, d, sqr_sum), {"num_splits": splits})
    chunk = ceil_div(k, splits)
    for s in range(splits):
        lo, hi = min(s * chunk, k), min((s + 1) * chunk, k)
        ref_d, d_bound, ref_sqr, sqr_bound = reference(a[:, lo:hi], b[:, lo:hi])
        assert_within(d[s], ref_d, d_bound, hi - lo)
        assert_within(sqr_sum[s], ref_sqr, sqr_bound, hi - lo)
        if lo == hi:  # an empty split (more splits than K allows) is exactly zero
            assert torch.equal(d[s], torch.zeros(m, n)) and torch.equal(sqr_sum[s], torch.zeros(m))
    # Summing the partials over dim 0 gives the unsplit result.
    ref_d, d_bound, ref_sqr, sqr_bound = reference(a, b)
    assert_within(d.sum(0), ref_d, d_bound, k + splits)
    assert_within(sqr_sum.sum(0), ref_sqr, sqr_bound, k + splits)


def test_split_boundaries_are_ceil_k_over_s() -> None:
    # K = 10, S = 4: c = 3, splits [0, 3), [3, 6), [6, 9), [9, 10).  A one-hot A row picks out
    # which split holds each k exactly.
    k, splits = 10, 4
    b = torch.ones(1, k)
    for col in range(k):
        a = torch.zeros(1, k).bfloat16()
        a[0, col] = 2.0
        d, sqr_sum = torch.empty(splits, 1, 1), torch.empty(splits, 1)
        deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=splits)
        expected = torch.zeros(splits)
        expected[col // 3] = 1.0
        assert torch.equal(d.flatten(), 2.0 * expected)
        assert torch.equal(sqr_sum.flatten(), 4.0 * expected)


@pytest.mark.parametrize("splits", [None, 3])
def test_m_zero_is_a_no_op(splits: int | None) -> None:
    a, b = operands(0, 4, 16)
    lead = () if splits is None else (splits,)
    d, sqr_sum = torch.empty(*lead, 0, 4), torch.empty(*lead, 0)
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=splits)
    assert d.shape == (*lead, 0, 4) and sqr_sum.shape == (*lead, 0)


# ---- rejected calls: pinned messages, outputs untouched ----------------------------------------------


def assert_rejected(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    outputs = [t for t in args[2:4] if isinstance(t, torch.Tensor)]
    before = [t.clone() for t in outputs]
    for entry in ENTRIES:
        with pytest.raises(ValueError, match=message):
            call(entry, args, kwargs)
    for t, was in zip(outputs, before):
        assert torch.equal(t, was), "a rejected call modified an output"


def test_errors() -> None:
    m, n, k = 5, 4, 24
    a, b = operands(m, n, k)
    d, s = torch.randn(m, n), torch.randn(m)
    p = "^tf32_hc_prenorm_gemm: argument "
    assert_rejected((a.float(), b, d, s), {}, p + r"'a' must be BFloat16, got Float$")
    assert_rejected((a, b.bfloat16(), d, s), {}, p + r"'b' must be Float, got BFloat16$")
    assert_rejected((a, b, d.bfloat16(), s), {}, p + r"'d' must be Float, got BFloat16$")
    assert_rejected((a, b, d, s.double()), {}, p + r"'sqr_sum' must be Float, got Double$")
    assert_rejected((a[None], b, d, s), {}, p + r"'a' must be 2-D, got 3-D with shape \[1, 5, 24\]$")
    assert_rejected((a, b[:, :20], d, s), {}, p + r"'b' has K=20 but 'a' has K=24$")
    assert_rejected((a, b[:0], d[:, :0], s), {}, p + r"'b' must have N > 0 rows, got shape \[0, 24\]$")
    assert_rejected((a[:, :0], b[:, :0], d, s), {}, p + r"'a' must have K > 0 columns, got shape \[5, 0\]$")
    a_mn_major = a.t().contiguous().t()
    assert_rejected(
        (a_mn_major, b, d, s),
        {},
        p + r"'a' must have stride\(-1\) == 1 \(its last dim contiguous\), got strides \[1, 5\]$",
    )
    assert_rejected((a, b, d[:4], s), {}, p + r"'d' must have shape \[5, 4\], got \[4, 4\]$")
    assert_rejected((a, b, d, s[:4]), {}, p + r"'sqr_sum' must have shape \[5\], got \[4\]$")
    # With num_splits the outputs carry a leading split dim.
    assert_rejected((a, b, d, s), {"num_splits": 2}, p + r"'d' must have shape \[2, 5, 4\], got \[5, 4\]$")
    d2 = torch.randn(2, m, n)
    assert_rejected((a, b, d2, s), {"num_splits": 2}, p + r"'sqr_sum' must have shape \[2, 5\], got \[5\]$")
    assert_rejected(
        (a, b, d2, torch.randn(2, m)), {"num_splits": 0}, p + r"'num_splits' must be None or at least 1, got 0$"
    )
    assert_rejected(
        (a, b, d2, torch.randn(2, m)), {"num_splits": -3}, p + r"'num_splits' must be None or at least 1, got -3$"
    )
    wide = torch.randn(m, n + 2)
    assert_rejected((a, b, wide[:, :n], s), {}, p + r"'d' must be contiguous, got shape \[5, 4\] and strides \[6, 1\]$")
    shared = torch.randn(m * n + m)
    assert_rejected(
        (a, b, shared[: m * n].view(m, n), shared[m * n - 1 : m * n - 1 + m]),
        {},
        p + r"'sqr_sum' overlaps 'd' in memory; the two outputs need separate memory$",
    )


def test_adjacent_outputs_in_one_buffer_are_fine() -> None:
    m, n, k = 3, 2, 8
    a, b = operands(m, n, k)
    buf = torch.empty(m * n + m)
    d, s = buf[: m * n].view(m, n), buf[m * n :]
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, s)
    ref_d, d_bound, ref_sqr, sqr_bound = reference(a, b)
    assert_within(d, ref_d, d_bound, k)
    assert_within(s, ref_sqr, sqr_bound, k)


# ---- samples, immutability, signature --------------------------------------------------------------

SAMPLES = load_all()[NAME](torch.device("cpu"))


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_inputs_immutable_and_entries_agree(sample: Any) -> None:
    results = []
    for entry in ENTRIES:
        s = clone_args(sample)
        a, b = s.args[0].clone(), s.args[1].clone()
        call(entry, s.args, s.kwargs)
        assert torch.equal(a, s.args[0]) and torch.equal(b, s.args[1])
        results.append((s.args[2], s.args[3]))
    for d, sqr_sum in results[1:]:
        assert torch.equal(d, results[0][0]) and torch.equal(sqr_sum, results[0][1])


def test_legacy_signature() -> None:
    empty = inspect.Parameter.empty
    for fn in (deep_gemm._C.tf32_hc_prenorm_gemm, deep_gemm.tf32_hc_prenorm_gemm):
        params = [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
        assert params == [("a", empty), ("b", empty), ("d", empty), ("sqr_sum", empty), ("num_splits", None)]
    schema = torch.ops.deep_gemm.tf32_hc_prenorm_gemm.default._schema
    assert [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write] == ["d", "sqr_sum"]
