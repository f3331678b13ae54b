"""The attention family (over 400 lines: the ragged and paged MQA logits share their references and
input builders, which would otherwise cross files): fp8_gemm_nt_skip_head_mid, the MQA logits (ragged and paged) and the
paged schedule.

Expected values come from float64 references written from the formulas of the ops' docs (docs/ops.md:
fp8_fp4_mqa_logits, fp8_fp4_paged_mqa_logits):
    logits[i, j] = sum_h w[i, h] * relu(sum_d q[i, h, d] * kv_deq[j, d])   for ks[i] <= j < ke[i]
with the paged form reading token j of a sequence through its block table.  Nothing here
calls deep_gemm to make an expected value.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
from pathlib import Path
from typing import NamedTuple

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import deep_gemm
from codegen.spelling.python import params
from deep_gemm.utils import align
from tests.support.manifest import OPS
from tests.support.operands import fp4_per_token, fp8_per_block, fp8_per_token
from tests.support.reference import F64, data_to_f64, dequant_f64, fp4_to_f64, ue8m0_to_f64
from tests.support.samples import clone_args, load_all
from tests.support.samples.attention import (
    FP8,
    PagedInputs,
    encode_kv_cache,
    mqa_inputs,
    paged_args,
    paged_inputs,
    quantize_rows,
)

OPS_HERE = [
    "fp8_gemm_nt_skip_head_mid",
    "fp8_fp4_mqa_logits",
    "fp8_mqa_logits",
    "get_paged_mqa_logits_metadata",
    "fp8_fp4_paged_mqa_logits",
    "fp8_paged_mqa_logits",
]
ENTRIES = ["torch.ops", "deep_gemm", "deep_gemm._C"]
NEG_INF = float("-inf")
ROOT = Path(__file__).resolve().parents[2]


def legacy_form(op: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Schema-form arguments -> the legacy call (pairs packed).  Once a parameter is left at its
    default, the ones after it go by keyword (tests/support/manifest.py's legacy_call would shift them)."""
    bound = {**dict(zip(OPS[op].schema.arg_names, args)), **kwargs}
    out_args: list = []
    out_kwargs: dict = {}
    skipped = False
    for p in params(OPS[op]):
        members = [m.name for m in p.members]
        if not all(m in bound for m in members):
            skipped = True
            continue
        value = tuple(bound[m] for m in members) if p.is_pack else bound[members[0]]
        if skipped or p.kind == "kwonly":
            out_kwargs[p.name] = value
        else:
            out_args.append(value)
    return tuple(out_args), out_kwargs


def call(entry: str, op: str, args: tuple, kwargs: dict | None = None):
    """Call ``op`` through one entry point, from schema-form arguments."""
    kwargs = kwargs or {}
    if entry == "torch.ops":
        return getattr(torch.ops.deep_gemm, op)(*args, **kwargs)
    largs, lkwargs = legacy_form(op, args, kwargs)
    module = deep_gemm if entry == "deep_gemm" else deep_gemm._C
    return getattr(module, op)(*largs, **lkwargs)


# ---- float64 references --------------------------------------------------------------


def gran32_f64(values: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """values [..., D] times UE8M0 scales per 32 along D, from int32 words [...] (byte g -> group g)."""
    d = values.shape[-1]
    scales = ue8m0_to_f64(packed.unsqueeze(-1))[..., : d // 32]
    return values * scales.repeat_interleave(32, dim=-1)


def query_f64(q: torch.Tensor, q_sf: torch.Tensor | None) -> torch.Tensor:
    if q_sf is None:
        return q.to(F64)
    return gran32_f64(fp4_to_f64(q), q_sf)


def rows_f64(data: torch.Tensor, sf: torch.Tensor) -> torch.Tensor:
    """Quantized rows (FP8 with float32 per-row scales, or FP4 with packed gran-32 scales) as float64."""
    if data.dtype == torch.int8:
        return gran32_f64(fp4_to_f64(data), sf)
    return data.to(F64) * sf.to(F64).unsqueeze(-1)


class Expected(NamedTuple):
    """Reference logits and, per entry, the sum of the magnitudes of their terms
    (sum_h |w| * sum_d |q| |kv|): the scale that rounding errors are relative to."""

    value: torch.Tensor
    magnitude: torch.Tensor

    def select(self, index) -> Expected:
        return Expected(self.value[index], self.magnitude[index])


def indexer_f64(q: torch.Tensor, kv: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """sum_h w[i, h] * relu(q[i, h] . kv[j]) for float64 q [S, H, D], kv [J, D], w [S, H] -> [S, J],
    and the magnitude of its terms."""
    scores = torch.einsum("shd,jd->shj", q, kv).clamp_min(0)
    value = torch.einsum("sh,shj->sj", w.to(F64), scores)
    magnitude = torch.einsum("sh,shd,jd->sj", w.to(F64).abs(), q.abs(), kv.abs())
    return value, magnitude


def mqa_reference(x, max_seqlen_k: int = 0) -> Expected:
    """The logits of fp8_fp4_mqa_logits's doc with -inf outside [ks, ke); compressed: column t is key ks[i] + t."""
    full, full_mag = indexer_f64(query_f64(x.q, x.q_sf), rows_f64(x.kv, x.kv_sf), x.weights)
    s, s_kv = full.shape
    cols = max_seqlen_k if max_seqlen_k > 0 else s_kv
    out = torch.full((s, cols), NEG_INF, dtype=F64)
    mag = torch.zeros(s, cols, dtype=F64)
    for i in range(s):
        for t in range(cols):
            j = int(x.ks[i]) + t if max_seqlen_k > 0 else t
            if int(x.ks[i]) <= j < int(x.ke[i]) and j < s_kv:
                out[i, t], mag[i, t] = full[i, j], full_mag[i, j]
    return Expected(out, mag)


def paged_reference(p: PagedInputs) -> Expected:
    """Row r = b * next_n + t, column j < context_lens[b, t]: token j of the row's sequence, read
    through block_table (block j // block_kv, slot j % block_kv); -inf elsewhere."""
    batch, next_n = p.q.shape[:2]
    q = query_f64(p.q, p.q_sf).reshape(batch * next_n, *p.q.shape[2:-1], -1)
    tokens = rows_f64(p.tokens, p.token_sf)  # [num_blocks, block_kv, D]
    w = p.weights.to(F64)
    bk = p.block_kv
    out = torch.full((batch * next_n, p.max_context_len), NEG_INF, dtype=F64)
    mag = torch.zeros(batch * next_n, p.max_context_len, dtype=F64)
    for b in range(batch):
        seq = b if p.indices is None else int(p.indices[b])
        for t in range(next_n):
            r = b * next_n + t
            n = min(int(p.context_lens[b, t]), p.max_context_len)
            if n == 0:
                continue
            kv = torch.stack([tokens[int(p.block_table[seq, j // bk]), j % bk] for j in range(n)])
            value, magnitude = indexer_f64(q[r : r + 1], kv, w[r : r + 1])
            out[r, :n], mag[r, :n] = value[0], magnitude[0]
    return Expected(out, mag)


def assert_logits(out: torch.Tensor, ref: Expected) -> None:
    """-inf exactly where the reference has it; finite values within float32 (or bf16) rounding
    of the reference, relative to the magnitude of the terms summed."""
    assert out.shape == ref.value.shape
    masked = ref.value == NEG_INF
    assert torch.equal(out.double() == NEG_INF, masked)
    got, want, mag = out.double()[~masked], ref.value[~masked], ref.magnitude[~masked]
    assert torch.isfinite(got).all()
    if out.dtype == torch.bfloat16:  # float32 result rounded once to bf16 (relative 2^-9)
        bound = 2**-8 * want.abs() + 1e-5 * mag
    else:
        bound = 1e-5 * mag
    excess = (got - want).abs() - bound
    assert (excess <= 1e-30).all(), f"max error over bound: {excess.max().item()} (n={int((excess > 0).sum())})"


def snapshot(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)):
        return type(x)(snapshot(v) for v in x)
    return x


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        a, b = a.view(torch.uint8), b.view(torch.uint8)
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


# ---- fp8_gemm_nt_skip_head_mid -----------------------------------------------------


def skip_head_mid_case(m: int, heads: int, splits: tuple[int, int, int], k: int, packed: bool = False):
    left, mid, right = splits
    n = heads * (left + right)
    if packed:
        a, b = fp8_per_token(m, k, packed=True), fp8_per_token(n, k, packed=True)
        expected = dequant_f64(*a, 1, 128) @ dequant_f64(*b, 1, 128).T
    else:
        a, b = fp8_per_token(m, k), fp8_per_block(n, k)
        expected = dequant_f64(*a, 1, 128) @ dequant_f64(*b, 128, 128).T
    d = torch.randn(m, heads * (left + mid + right)).to(torch.bfloat16)
    return a, b, d, expected


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(
    "m,heads,splits,k,packed",
    [
        (1, 2, (16, 8, 16), 128, False),
        (33, 3, (32, 16, 8), 256, False),
        (7, 5, (8, 0, 24), 200, False),
        (4, 2, (0, 8, 16), 128, False),
        (9, 4, (16, 32, 0), 384, True),
    ],
)
def test_skip_head_mid_writes_left_and_right_and_skips_mid(entry, m, heads, splits, k, packed):
    left, mid, right = splits
    a, b, d, expected = skip_head_mid_case(m, heads, splits, k, packed)
    before = d.clone()
    call(entry, "fp8_gemm_nt_skip_head_mid", (*a, *b, d, splits))
    width = left + mid + right
    got = d.view(m, heads, width)
    exp = expected.view(m, heads, left + right)
    torch.testing.assert_close(got[:, :, :left].double(), exp[:, :, :left], rtol=2**-8, atol=1e-3)
    torch.testing.assert_close(got[:, :, left + mid :].double(), exp[:, :, left:], rtol=2**-8, atol=1e-3)
    mid_cols = before.view(m, heads, width)[:, :, left : left + mid]
    assert torch.equal(got[:, :, left : left + mid], mid_cols)  # untouched, bit for bit


def test_skip_head_mid_strided_d_and_empty_m():
    a, b, _, expected = skip_head_mid_case(3, 2, (16, 16, 16), 128)
    big = torch.randn(3, 200).to(torch.bfloat16)
    d = big[:, 10:106]  # row stride 200
    outside = torch.cat([big[:, :10], big[:, 106:]], 1).clone()
    deep_gemm.fp8_gemm_nt_skip_head_mid(a, b, d, (16, 16, 16))
    got = d.view(3, 2, 48)
    torch.testing.assert_close(got[:, :, 32:].double(), expected.view(3, 2, 32)[:, :, 16:], rtol=2**-8, atol=1e-3)
    assert torch.equal(torch.cat([big[:, :10], big[:, 106:]], 1), outside)
    a0 = fp8_per_token(0, 128)
    d0 = torch.empty(0, 96, dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt_skip_head_mid(a0, b, d0, (16, 16, 16))  # no rows: nothing to do


def _skip_bad_cases():
    a, b = fp8_per_token(4, 256), fp8_per_block(64, 256)
    d = torch.randn(4, 96).to(torch.bfloat16)
    ok = (a, b, d, (16, 16, 16))
    fp4 = fp4_per_token(64, 256)
    return ok, [
        ("dtype_a", (fp4, b, d, (16, 16, 16)), {}, ValueError, "argument 'a' must be Float8_e4m3fn, got Char"),
        ("dtype_d", (a, b, d.float(), (16, 16, 16)), {}, ValueError, "argument 'd' must be BFloat16, got Float"),
        (
            "shape_d",
            (a, b, d[:, :80], (16, 16, 16)),
            {},
            ValueError,
            "argument 'd' must have shape [4, 96], got [4, 80]",
        ),
        (
            "splits_n",
            (a, b, d, (16, 16, 8)),
            {},
            ValueError,
            "argument 'b' has N=64 rows, which is not a multiple of left + right = 24",
        ),
        (
            "splits_neg",
            (a, b, d, (16, -16, 16)),
            {},
            ValueError,
            "argument 'head_splits' must be (left, mid, right) with non-negative entries",
        ),
        ("splits_zero", (a, b, d, (0, 16, 0)), {}, ValueError, "and left + right > 0, got (0, 16, 0)"),
        (
            "recipe_gran_k",
            (a, b, d, (16, 16, 16)),
            {"recipe": (1, 128, 32)},
            ValueError,
            "argument 'recipe' must use K granularity 128",
        ),
        (
            "layout_b",
            (a, (b[0].t().contiguous().t(), b[1]), d, (16, 16, 16)),
            {},
            ValueError,
            "argument 'b' must be K-major",
        ),
        (
            "layout_d",
            (a, b, torch.randn(96, 4).to(torch.bfloat16).t(), (16, 16, 16)),
            {},
            ValueError,
            "argument 'd' must be row-major",
        ),
        (
            "shape_sfb",
            (a, (b[0], b[1][:, :1]), d, (16, 16, 16)),
            {},
            ValueError,
            "argument 'sfb' must have shape [1, 2]",
        ),
        (
            "compiled_dims",
            (a, b, d, (16, 16, 16)),
            {"compiled_dims": "nx"},
            ValueError,
            "argument 'compiled_dims' must list distinct dims",
        ),
    ]


@pytest.mark.parametrize("case", [c[0] for c in _skip_bad_cases()[1]])
def test_skip_head_mid_rejects_bad_input_and_leaves_d_untouched(case):
    _, cases = _skip_bad_cases()
    _, args, kwargs, exc, text = next(c for c in cases if c[0] == case)
    d = args[2]
    before = d.clone()
    with pytest.raises(exc) as info:
        deep_gemm._C.fp8_gemm_nt_skip_head_mid(*args, **kwargs)
    assert str(info.value).startswith("fp8_gemm_nt_skip_head_mid: ")
    assert text in str(info.value)
    assert bitwise_equal(d, before)


def test_skip_head_mid_head_splits_must_have_three_entries():
    a, b = fp8_per_token(4, 128), fp8_per_block(32, 128)
    d = torch.randn(4, 48).to(torch.bfloat16)
    before = d.clone()
    with pytest.raises(ValueError, match=r"argument 'head_splits' must have 3 entries, got 2"):
        torch.ops.deep_gemm.fp8_gemm_nt_skip_head_mid(*a, *b, d, [8, 8])
    assert torch.equal(d, before)


# ---- fp8_fp4_mqa_logits / fp8_mqa_logits ---------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(
    "s,s_kv,h,d,fp4",
    [
        (1, 1, 8, 32, False),
        (5, 37, 16, 64, False),
        (17, 300, 64, 128, False),
        (4, 70, 8, 64, True),
        (9, 129, 32, 128, True),
        (3, 0, 16, 64, False),
    ],
)
def test_mqa_logits_match_reference(entry, s, s_kv, h, d, fp4):
    x = mqa_inputs(s, s_kv, h, d, fp4, torch.device("cpu"))
    out = call(entry, "fp8_fp4_mqa_logits", x.args())
    assert out.dtype == torch.float32
    assert_logits(out, mqa_reference(x))


@pytest.mark.parametrize("fp4", [False, True])
@pytest.mark.parametrize("weights_dtype", [torch.float32, torch.bfloat16])
def test_mqa_logits_bf16(fp4, weights_dtype):
    x = mqa_inputs(11, 140, 16, 128, fp4, torch.device("cpu"), weights_dtype=weights_dtype)
    out = deep_gemm.fp8_fp4_mqa_logits(
        (x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke, logits_dtype=torch.bfloat16
    )
    assert out.dtype == torch.bfloat16
    assert_logits(out, mqa_reference(x))


@pytest.mark.parametrize("max_seqlen_k", [1, 23, 200])
@pytest.mark.parametrize("fp4", [False, True])
def test_mqa_logits_compressed(max_seqlen_k, fp4):
    x = mqa_inputs(13, 150, 8, 64, fp4, torch.device("cpu"))
    out = deep_gemm.fp8_fp4_mqa_logits(
        (x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke, clean_logits=False, max_seqlen_k=max_seqlen_k
    )
    assert out.shape == (13, max_seqlen_k)
    assert out.stride() == (align(align(max_seqlen_k, 256), 256), 1)
    assert_logits(out, mqa_reference(x, max_seqlen_k))


@pytest.mark.parametrize("logits_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("s,s_kv,h", [(1, 1, 8), (5, 300, 16), (70, 1000, 64), (0, 20, 32), (33, 0, 8)])
def test_mqa_logits_layout_and_fake(logits_dtype, s, s_kv, h):
    """[S, Skv] view of [align(S, 128/H), align(Skv + 256, E)], E = 1024 bytes / element; the fake agrees."""
    x = mqa_inputs(s, s_kv, h, 32, False, torch.device("cpu"), weights_dtype=logits_dtype)
    args = x.args()
    kwargs = {"logits_dtype": logits_dtype}
    out = torch.ops.deep_gemm.fp8_fp4_mqa_logits(*args, **kwargs)
    elems = 1024 // out.element_size()
    assert out.shape == (s, s_kv)
    assert out.stride() == (align(s_kv + 256, elems), 1)
    assert out.stride(0) * out.element_size() % 1024 == 0
    assert out.untyped_storage().nbytes() == align(s, 128 // h) * align(s_kv + 256, elems) * out.element_size()
    for t in (x.q, x.kv, x.kv_sf, x.weights, x.ks, x.ke):
        assert out.numel() == 0 or t.numel() == 0 or out.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    with FakeTensorMode() as mode:
        fake = torch.ops.deep_gemm.fp8_fp4_mqa_logits(
            *(mode.from_tensor(a) if a is not None else None for a in args), **kwargs
        )
    assert (fake.shape, fake.stride(), fake.dtype) == (out.shape, out.stride(), out.dtype)
    assert fake.untyped_storage().nbytes() == out.untyped_storage().nbytes()


def test_mqa_logits_compressed_fake_matches():
    x = mqa_inputs(6, 40, 16, 64, True, torch.device("cpu"))
    kwargs = {"clean_logits": False, "max_seqlen_k": 300, "logits_dtype": torch.bfloat16}
    out = torch.ops.deep_gemm.fp8_fp4_mqa_logits(*x.args(), **kwargs)
    assert out.stride() == (align(align(300, 256), 512), 1)
    with FakeTensorMode() as mode:
        fake = torch.ops.deep_gemm.fp8_fp4_mqa_logits(*(mode.from_tensor(a) for a in x.args()), **kwargs)
    assert (fake.shape, fake.stride(), fake.dtype) == (out.shape, out.stride(), out.dtype)


def test_mqa_logits_deterministic_and_fresh():
    x = mqa_inputs(8, 90, 32, 128, True, torch.device("cpu"))
    first = deep_gemm.fp8_fp4_mqa_logits((x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke)
    for _ in range(3):
        again = deep_gemm.fp8_fp4_mqa_logits((x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke)
        assert torch.equal(again, first)
        assert again.data_ptr() != first.data_ptr()


@pytest.mark.parametrize("entry", ENTRIES)
def test_legacy_fp8_mqa_logits(entry):
    x = mqa_inputs(7, 60, 32, 64, False, torch.device("cpu"))
    out = call(entry, "fp8_mqa_logits", (x.q, x.kv, x.kv_sf, x.weights, x.ks, x.ke))
    assert out.dtype == torch.float32
    assert_logits(out, mqa_reference(x))
    out = call(
        entry,
        "fp8_mqa_logits",
        (x.q, x.kv, x.kv_sf, x.weights, x.ks, x.ke),
        {"clean_logits": False, "max_seqlen_k": 17},
    )
    assert_logits(out, mqa_reference(x, 17))


def _mqa_bad_cases():
    x = mqa_inputs(4, 20, 16, 64, False, torch.device("cpu"))
    y = mqa_inputs(4, 20, 16, 64, True, torch.device("cpu"))
    q, kv, w, ks, ke = (x.q, None), (x.kv, x.kv_sf), x.weights, x.ks, x.ke
    return [
        ("dtype_q", ((x.q.float(), None), kv, w, ks, ke), {}, "argument 'q' must be Float8_e4m3fn or Char, got Float"),
        ("q_sf_missing", ((y.q, None), (y.kv, y.kv_sf), w, ks, ke), {}, "argument 'q_sf' is required for an FP4 q"),
        ("q_sf_for_fp8", ((x.q, y.q_sf), kv, w, ks, ke), {}, "argument 'q_sf' must be None for an FP8 q"),
        (
            "q_sf_shape",
            ((y.q, y.q_sf[:, :8]), (y.kv, y.kv_sf), w, ks, ke),
            {},
            "argument 'q_sf' must have shape [4, 16], got [4, 8]",
        ),
        ("mixed_kv", (q, (y.kv, y.kv_sf), w, ks, ke), {}, "argument 'kv' must be FP8 e4m3 like 'q', got Char"),
        ("kv_sf_dtype", (q, (x.kv, x.kv_sf.double()), w, ks, ke), {}, "argument 'kv_sf' must be Float, got Double"),
        ("kv_cols", (q, (x.kv[:, :32], x.kv_sf), w, ks, ke), {}, "argument 'kv' must have 64 columns per token"),
        (
            "heads",
            ((x.q[:, :4], None), kv, w[:, :4], ks, ke),
            {},
            "argument 'q' must have 8, 16, 32 or 64 heads (dim 1), got 4",
        ),
        (
            "head_dim",
            ((x.q[:, :, :48], None), (x.kv[:, :48], x.kv_sf), w, ks, ke),
            {},
            "argument 'q' must have head dim D = 32, 64 or 128, got 48",
        ),
        ("rank_q", ((x.q[0], None), kv, w, ks, ke), {}, "argument 'q' must be 3-D [S, H, D]"),
        (
            "weights_bf16",
            (q, kv, w.bfloat16(), ks, ke),
            {},
            "argument 'weights' may be bfloat16 only with logits_dtype=torch.bfloat16",
        ),
        ("weights_shape", (q, kv, w[:, :8], ks, ke), {}, "argument 'weights' must have shape [4, 16], got [4, 8]"),
        ("weights_layout", (q, kv, w.t().contiguous().t(), ks, ke), {}, "argument 'weights' must have stride(1) == 1"),
        ("ks_dtype", (q, kv, w, ks.long(), ke), {}, "argument 'cu_seq_len_k_start' must be Int, got Long"),
        ("ke_shape", (q, kv, w, ks, ke[:3]), {}, "argument 'cu_seq_len_k_end' must have shape [4], got [3]"),
        (
            "ke_layout",
            (q, kv, w, ks, torch.stack([ke, ke], 1)[:, 0]),
            {},
            "argument 'cu_seq_len_k_end' must be contiguous",
        ),
        (
            "logits_dtype",
            (q, kv, w, ks, ke),
            {"logits_dtype": torch.float16},
            "argument 'logits_dtype' must be torch.float32 or torch.bfloat16, got Half",
        ),
        (
            "compressed_clean",
            (q, kv, w, ks, ke),
            {"max_seqlen_k": 8},
            "argument 'clean_logits' must be False when max_seqlen_k > 0",
        ),
        (
            "max_seqlen_k",
            (q, kv, w, ks, ke),
            {"clean_logits": False, "max_seqlen_k": -1},
            "argument 'max_seqlen_k' must be non-negative",
        ),
    ]


@pytest.mark.parametrize("case", [c[0] for c in _mqa_bad_cases()])
def test_mqa_logits_rejects_bad_input(case):
    _, args, kwargs, text = next(c for c in _mqa_bad_cases() if c[0] == case)
    with pytest.raises(ValueError) as info:
        deep_gemm._C.fp8_fp4_mqa_logits(*args, **kwargs)
    assert str(info.value).startswith("fp8_fp4_mqa_logits: ")
    assert text in str(info.value)


def test_legacy_fp8_mqa_logits_rejects_fp4_q():
    y = mqa_inputs(2, 5, 8, 64, True, torch.device("cpu"))
    with pytest.raises(ValueError, match=r"^fp8_mqa_logits: argument 'q' must be Float8_e4m3fn, got Char"):
        deep_gemm.fp8_mqa_logits(y.q, (y.kv, y.kv_sf), y.weights, y.ks, y.ke)


# ---- get_paged_mqa_logits_metadata ---------------------------------------------------


def check_schedule(meta: torch.Tensor, context_lens: torch.Tensor, block_kv: int, num_sms: int) -> None:
    """The invariants of Note [Paged MQA schedule], checked against blocks counted from context_lens."""
    assert meta.dtype == torch.int32 and meta.shape == (num_sms + 1, 2) and meta.device == context_lens.device
    lens = context_lens.cpu().tolist()
    blocks = [math.ceil(max(0, max(row)) / block_kv) for row in lens]
    starts = [sum(blocks[:b]) for b in range(len(blocks) + 1)]
    total = starts[-1]
    rows = [tuple(r) for r in meta.cpu().tolist()]
    assert rows == sorted(rows)  # lexicographically monotone
    assert rows[-1] == (len(blocks), 0)
    position = []
    for b, k in rows:
        assert 0 <= b <= len(blocks)
        if b < len(blocks):
            assert 0 <= k < blocks[b]  # names a real block (so empty groups are skipped)
        else:
            assert k == 0
        position.append(starts[b] + k)
    assert position[0] == 0 and position[-1] == total  # covers every block, in order
    sizes = [hi - lo for lo, hi in itertools.pairwise(position)]
    assert sum(sizes) == total
    assert max(sizes) - min(sizes) <= 1  # balanced within one block
    assert sizes == sorted(sizes, reverse=True)  # the longer runs come first


def test_metadata_pinned_example():
    lens = torch.tensor([[100], [0], [33]], dtype=torch.int32)  # 4, 0 and 2 blocks of 32
    meta = deep_gemm.get_paged_mqa_logits_metadata(lens, 32, 4)
    assert meta.tolist() == [[0, 0], [0, 2], [2, 0], [2, 1], [3, 0]]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("block_kv", [32, 64])
@pytest.mark.parametrize("num_sms", [1, 3, 8, 132])
@pytest.mark.parametrize("batch,next_n", [(1, 1), (7, 1), (5, 2), (16, 4), (0, 1)])
def test_metadata_invariants(entry, block_kv, num_sms, batch, next_n):
    lens = torch.randint(0, 2000, (batch, next_n), dtype=torch.int32)
    if batch > 2:
        lens[2] = 0  # an empty group
    meta = call(entry, "get_paged_mqa_logits_metadata", (lens, block_kv, num_sms))
    check_schedule(meta, lens, block_kv, num_sms)


def test_metadata_uses_the_longest_query_of_each_group_and_ignores_negatives():
    lens = torch.tensor([[10, 70], [-5, -1], [64, 129]], dtype=torch.int32)  # 2, 0, 3 blocks of 64
    meta = deep_gemm.get_paged_mqa_logits_metadata(lens, 64, 2)
    assert meta.tolist() == [[0, 0], [2, 1], [3, 0]]
    check_schedule(meta, lens, 64, 2)


def test_metadata_varlen_indices_do_not_change_the_schedule():
    lens = torch.randint(0, 900, (9, 1), dtype=torch.int32)
    indices = torch.randint(0, 3, (9,), dtype=torch.int32)
    with_indices = deep_gemm.get_paged_mqa_logits_metadata(lens, 32, 5, indices)
    assert torch.equal(with_indices, deep_gemm.get_paged_mqa_logits_metadata(lens, 32, 5))
    check_schedule(with_indices, lens, 32, 5)


def test_metadata_fake():
    lens = torch.randint(0, 900, (9, 2), dtype=torch.int32)
    with FakeTensorMode() as mode:
        fake = torch.ops.deep_gemm.get_paged_mqa_logits_metadata(mode.from_tensor(lens), 64, 11)
    assert (fake.shape, fake.dtype) == ((12, 2), torch.int32)


@pytest.mark.parametrize(
    "args,text",
    [
        ((torch.zeros(4, dtype=torch.int32), 32, 4), "argument 'context_lens' must be 2-D [B, next_n], got 1-D"),
        ((torch.zeros(4, 1, dtype=torch.int64), 32, 4), "argument 'context_lens' must be Int, got Long"),
        ((torch.zeros(4, 0, dtype=torch.int32), 32, 4), "argument 'context_lens' must have next_n >= 1 columns"),
        ((torch.zeros(4, 1, dtype=torch.int32), 16, 4), "argument 'block_kv' must be 32 or 64, got 16"),
        ((torch.zeros(4, 1, dtype=torch.int32), 32, 0), "argument 'num_sms' must be at least 1, got 0"),
        (
            (torch.zeros(4, 2, dtype=torch.int32), 32, 4, torch.zeros(4, dtype=torch.int32)),
            "argument 'indices' needs next_n == 1",
        ),
        (
            (torch.zeros(4, 1, dtype=torch.int32), 32, 4, torch.zeros(3, dtype=torch.int32)),
            "argument 'indices' must have shape [4], got [3]",
        ),
        (
            (torch.zeros(4, 1, dtype=torch.int32), 2**40, 4),
            "argument 'block_kv' is 1099511627776, which does not fit a 32-bit int",
        ),
    ],
)
def test_metadata_rejects_bad_input(args, text):
    with pytest.raises(ValueError) as info:
        deep_gemm.get_paged_mqa_logits_metadata(*args)
    assert str(info.value).startswith("get_paged_mqa_logits_metadata: ")
    assert text in str(info.value)


# ---- fp8_fp4_paged_mqa_logits / fp8_paged_mqa_logits ---------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(
    "batch,next_n,h,d,block_kv,fp4,ctx,pad",
    [
        (1, 1, 8, 32, 32, False, 1, 0),
        (3, 1, 16, 64, 64, False, 200, 0),
        (4, 2, 8, 128, 32, False, 150, 12),
        (2, 2, 32, 64, 64, True, 130, 0),
        (3, 2, 64, 128, 32, True, 75, 4),
        (2, 3, 8, 64, 32, True, 96, 0),
    ],
)
def test_paged_logits_match_reference(entry, batch, next_n, h, d, block_kv, fp4, ctx, pad):
    p = paged_inputs(batch, next_n, h, d, block_kv, fp4, torch.device("cpu"), ctx, pad=pad)
    out = call(entry, "fp8_fp4_paged_mqa_logits", paged_args(p))
    assert out.dtype == torch.float32
    assert out.shape == (batch * next_n, ctx)
    assert out.stride() == (align(align(ctx, 256), 256), 1)
    assert_logits(out, paged_reference(p))


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("fp4", [False, True])
def test_paged_logits_varlen_indices(entry, fp4):
    p = paged_inputs(7, 1, 16, 64, 32, fp4, torch.device("cpu"), 120, num_seqs=3)
    out = call(entry, "fp8_fp4_paged_mqa_logits", paged_args(p), {"indices": p.indices})
    assert_logits(out, paged_reference(p))


@pytest.mark.parametrize("fp4", [False, True])
def test_paged_logits_bf16(fp4):
    p = paged_inputs(3, 2, 32, 128, 64, fp4, torch.device("cpu"), 140, logits_bf16_weights=True)
    out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*paged_args(p), logits_dtype=torch.bfloat16)
    assert out.dtype == torch.bfloat16
    assert out.stride() == (align(align(140, 256), 512), 1)
    assert_logits(out, paged_reference(p))


def test_paged_logits_truncate_at_max_context_len_and_fake():
    p = paged_inputs(3, 2, 8, 64, 32, False, torch.device("cpu"), 300)
    p.max_context_len = 45  # shorter than most contexts: the tail is cut off
    args = paged_args(p)
    out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args)
    assert out.shape == (6, 45) and out.stride() == (256, 1)
    assert_logits(out, paged_reference(p))
    with FakeTensorMode() as mode:
        fake = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(
            *(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args)
        )
    assert (fake.shape, fake.stride(), fake.dtype) == (out.shape, out.stride(), out.dtype)
    assert fake.untyped_storage().nbytes() == out.untyped_storage().nbytes()


def test_paged_logits_cache_byte_layout():
    """One block built by hand: values of token t at bytes [t*D, (t+1)*D), its float32 scale at
    bytes block_kv*D + 4t; a scale change must move exactly that token's logit."""
    d, bk, h = 32, 32, 8
    tokens = torch.randn(1, bk, d).to(FP8)
    scales = torch.rand(1, bk) + 0.5
    raw = torch.zeros(1, bk * (d + 4), dtype=torch.uint8)
    raw[0, : bk * d] = tokens.view(torch.uint8).flatten()
    raw[0, bk * d :] = scales.view(torch.uint8).flatten()
    cache = raw.view(1, bk, 1, d + 4)
    q = torch.rand(1, 1, h, d).to(FP8)  # positive q and tokens so no relu clips to zero
    tokens = tokens.abs()
    raw[0, : bk * d] = tokens.view(torch.uint8).flatten()
    w = torch.ones(1, h)
    lens = torch.tensor([[bk]], dtype=torch.int32)
    table = torch.zeros(1, 1, dtype=torch.int32)
    meta = deep_gemm.get_paged_mqa_logits_metadata(lens, bk, deep_gemm.get_num_sms())
    out = deep_gemm.fp8_paged_mqa_logits(q, cache, w, lens, table, meta, bk)
    expected = (q.to(F64)[0, 0] @ (tokens.to(F64)[0] * scales.to(F64)[0, :, None]).T).sum(0)
    torch.testing.assert_close(out[0].double(), expected, rtol=1e-5, atol=1e-5)
    raw[0, bk * d + 4 * 5 : bk * d + 4 * 6] = torch.tensor([2 * scales[0, 5].item()]).view(torch.uint8)
    out2 = deep_gemm.fp8_paged_mqa_logits(q, cache, w, lens, table, meta, bk)
    changed = (out2 != out)[0].nonzero().flatten().tolist()
    assert changed == [5]
    torch.testing.assert_close(out2[0, 5].double(), 2 * expected[5], rtol=1e-5, atol=1e-5)


def test_paged_logits_bad_block_ids_give_nan_not_a_crash():
    p = paged_inputs(3, 1, 8, 32, 32, False, torch.device("cpu"), 100)
    nb = p.kv_cache.shape[0]
    p.context_lens = torch.tensor([[70], [64], [100]], dtype=torch.int32)
    # row 0 needs 3 blocks, the 2nd out of range; row 1 needs 2 (junk after); row 2 needs 4 but the table has 3
    p.block_table = torch.tensor([[0, nb + 100, 1], [2, 3, -7], [1, 0, 2]], dtype=torch.int32)
    out = deep_gemm.fp8_fp4_paged_mqa_logits((p.q, None), *paged_args(p)[2:])
    assert torch.isnan(out[0, 32:64]).all() and torch.isnan(out[2, 96:]).all()
    assert (out[0, 70:] == NEG_INF).all() and (out[1, 64:] == NEG_INF).all()
    p.block_table[0, 1] = 0
    p.block_table = torch.cat([p.block_table, torch.zeros(3, 1, dtype=torch.int32)], 1)
    ref = paged_reference(p)
    keep = torch.ones_like(ref.value, dtype=torch.bool)
    keep[0, 32:64] = False
    keep[2, 96:] = False
    assert_logits(out[keep], ref.select(keep))


def test_paged_logits_kv_cache_keyword():
    p = paged_inputs(2, 1, 8, 32, 32, False, torch.device("cpu"), 50)
    q, _, cache, w, lens, table, meta, ctx = paged_args(p)
    ref = paged_reference(p)
    for fn in (deep_gemm._C.fp8_fp4_paged_mqa_logits, deep_gemm.fp8_fp4_paged_mqa_logits):
        assert_logits(
            fn(
                (q, None),
                kv_cache=cache,
                weights=w,
                context_lens=lens,
                block_table=table,
                schedule_meta=meta,
                max_context_len=ctx,
            ),
            ref,
        )
        with pytest.raises(TypeError, match="fused_kv_cache"):
            fn(
                (q, None),
                fused_kv_cache=cache,
                weights=w,
                context_lens=lens,
                block_table=table,
                schedule_meta=meta,
                max_context_len=ctx,
            )
    for fn in (deep_gemm._C.fp8_paged_mqa_logits, deep_gemm.fp8_paged_mqa_logits):
        assert_logits(
            fn(
                q,
                kv_cache=cache,
                weights=w,
                context_lens=lens,
                block_table=table,
                schedule_meta=meta,
                max_context_len=ctx,
            ),
            ref,
        )
        with pytest.raises(TypeError, match="fused_kv_cache"):
            fn(
                q,
                fused_kv_cache=cache,
                weights=w,
                context_lens=lens,
                block_table=table,
                schedule_meta=meta,
                max_context_len=ctx,
            )
    assert_logits(
        torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(
            q,
            None,
            kv_cache=cache,
            weights=w,
            context_lens=lens,
            block_table=table,
            schedule_meta=meta,
            max_context_len=ctx,
        ),
        ref,
    )
    with pytest.raises((TypeError, RuntimeError), match="kv_cache"):
        torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(
            q,
            None,
            fused_kv_cache=cache,
            weights=w,
            context_lens=lens,
            block_table=table,
            schedule_meta=meta,
            max_context_len=ctx,
        )
    stub = (ROOT / "deep_gemm" / "_C.pyi").read_text()
    assert "fused_kv_cache" not in stub
    for name in ("fp8_fp4_paged_mqa_logits", "fp8_paged_mqa_logits"):
        assert "kv_cache" in OPS[name].schema.arg_names
        assert list(inspect.signature(getattr(deep_gemm._C, name)).parameters)[1] == "kv_cache"
        line = next(ln for ln in stub.splitlines() if ln.startswith(f"def {name}("))
        assert "kv_cache: Tensor" in line


def test_paged_logits_clean_logits_is_unsupported():
    p = paged_inputs(2, 2, 8, 32, 32, False, torch.device("cpu"), 40)
    for fn, head in (
        (
            lambda **kw: deep_gemm.fp8_fp4_paged_mqa_logits((p.q, None), *paged_args(p)[2:], **kw),
            "fp8_fp4_paged_mqa_logits",
        ),
        (lambda **kw: deep_gemm.fp8_paged_mqa_logits(p.q, *paged_args(p)[2:], **kw), "fp8_paged_mqa_logits"),
    ):
        with pytest.raises(RuntimeError) as info:
            fn(clean_logits=True)
        assert not isinstance(info.value, ValueError)
        assert str(info.value).startswith(
            f"{head}: clean_logits=True is not supported for paged logits (context_lens is 2-D [B, next_n]); "
            "pass clean_logits=False, the default"
        )


def _paged_bad_cases():
    p = paged_inputs(2, 2, 8, 64, 32, False, torch.device("cpu"), 60)
    f = paged_inputs(2, 2, 8, 64, 32, True, torch.device("cpu"), 60)
    q, q_sf, cache, w, lens, table, meta, ctx = paged_args(p)
    n = deep_gemm.get_num_sms()
    good = [q, q_sf, cache, w, lens, table, meta, ctx]

    def with_(i, value):
        args = list(good)
        args[i] = value
        return tuple(args)

    wide = torch.zeros(cache.shape[0], 32 * 68 + 2, dtype=torch.uint8)
    return [
        ("dtype_q", with_(0, q.float()), {}, "argument 'q' must be Float8_e4m3fn or Char, got Float"),
        ("rank_q", with_(0, q[0]), {}, "argument 'q' must be 4-D [B, next_n, H, D]"),
        ("fp4_q_without_sf", (f.q, None, *paged_args(f)[2:]), {}, "argument 'q_sf' is required for an FP4 q"),
        ("dtype_cache", with_(2, cache.view(torch.int8)), {}, "argument 'kv_cache' must be Byte, got Char"),
        (
            "shape_cache",
            with_(2, cache[..., :60]),
            {},
            "argument 'kv_cache' must have shape [num_blocks, block_kv, 1, 68]",
        ),
        (
            "fp4_cache_for_fp8_q",
            with_(2, f.kv_cache),
            {},
            "argument 'kv_cache' must have shape [num_blocks, block_kv, 1, 68]",
        ),
        ("block_kv", with_(2, cache[:, :16]), {}, "argument 'kv_cache' must have block_kv (dim 1) 32 or 64, got 16"),
        (
            "stride_cache",
            with_(2, wide[:, 2:].as_strided(cache.shape, (32 * 68 + 2, 68, 68, 1))),
            {},
            "argument 'kv_cache' must have stride(0) a multiple of 4",
        ),
        ("weights_shape", with_(3, w[:3]), {}, "argument 'weights' must have shape [4, 8], got [3, 8]"),
        ("lens_rank", with_(4, lens.flatten()), {}, "argument 'context_lens' must be 2-D [B, next_n], got 1-D"),
        ("lens_shape", with_(4, lens[:, :1]), {}, "argument 'context_lens' must have shape [2, 2], got [2, 1]"),
        ("table_dtype", with_(5, table.long()), {}, "argument 'block_table' must be Int, got Long"),
        (
            "table_rows",
            with_(5, table[:1]),
            {},
            "argument 'block_table' must have one row per sequence (2), got shape [1,",
        ),
        ("table_layout", with_(5, table.t().contiguous().t()), {}, "argument 'block_table' must have stride(1) == 1"),
        (
            "meta_shape",
            with_(6, torch.zeros(n + 2, 2, dtype=torch.int32)),
            {},
            f"argument 'schedule_meta' must have shape [{n + 1}, 2] (get_num_sms() is {n}",
        ),
        ("meta_dtype", with_(6, meta.long()), {}, "argument 'schedule_meta' must be Int, got Long"),
        ("max_context_len", with_(7, -1), {}, "argument 'max_context_len' must be non-negative, got -1"),
        (
            "indices_next_n",
            good,
            {"indices": torch.zeros(2, dtype=torch.int32)},
            "argument 'indices' needs next_n == 1",
        ),
        (
            "logits_dtype",
            good,
            {"logits_dtype": torch.float64},
            "argument 'logits_dtype' must be torch.float32 or torch.bfloat16, got Double",
        ),
    ]


@pytest.mark.parametrize("case", [c[0] for c in _paged_bad_cases()])
def test_paged_logits_rejects_bad_input(case):
    _, args, kwargs, text = next(c for c in _paged_bad_cases() if c[0] == case)
    with pytest.raises(ValueError) as info:
        torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args, **kwargs)
    assert str(info.value).startswith("fp8_fp4_paged_mqa_logits: ")
    assert text in str(info.value)


def test_paged_logits_schedule_follows_set_num_sms():
    p = paged_inputs(2, 1, 8, 32, 32, False, torch.device("cpu"), 64)
    original = deep_gemm.get_num_sms()
    try:
        deep_gemm.set_num_sms(1)
        with pytest.raises(
            ValueError, match=r"argument 'schedule_meta' must have shape \[2, 2\] \(get_num_sms\(\) is 1"
        ):
            torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*paged_args(p)[:6], torch.zeros(7, 2, dtype=torch.int32), 64)
        out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*paged_args(p))  # schedule built for one unit
        assert_logits(out, paged_reference(p))
    finally:
        deep_gemm.set_num_sms(0)
    assert deep_gemm.get_num_sms() == original


@pytest.mark.parametrize("entry", ENTRIES)
def test_legacy_fp8_paged_mqa_logits(entry):
    p = paged_inputs(3, 2, 16, 64, 64, False, torch.device("cpu"), 110)
    q, _, *rest = paged_args(p)
    assert_logits(call(entry, "fp8_paged_mqa_logits", (q, *rest)), paged_reference(p))
    v = paged_inputs(5, 1, 8, 32, 32, False, torch.device("cpu"), 70, num_seqs=2)
    q, _, *rest = paged_args(v)
    assert_logits(call(entry, "fp8_paged_mqa_logits", (q, *rest), {"indices": v.indices}), paged_reference(v))


def test_legacy_fp8_paged_mqa_logits_rejects_fp4_q():
    f = paged_inputs(2, 1, 8, 64, 32, True, torch.device("cpu"), 40)
    with pytest.raises(ValueError, match=r"^fp8_paged_mqa_logits: argument 'q' must be Float8_e4m3fn, got Char"):
        deep_gemm.fp8_paged_mqa_logits(f.q, *paged_args(f)[2:])


# ---- legacy signatures -------------------------------------------------------------------

SIGNATURES = {
    "fp8_gemm_nt_skip_head_mid": [
        ("a", None),
        ("b", None),
        ("d", None),
        ("head_splits", None),
        ("recipe", None),
        ("compiled_dims", "nk"),
        ("disable_ue8m0_cast", False),
    ],
    "fp8_fp4_mqa_logits": [
        ("q", None),
        ("kv", None),
        ("weights", None),
        ("cu_seq_len_k_start", None),
        ("cu_seq_len_k_end", None),
        ("clean_logits", True),
        ("max_seqlen_k", 0),
        ("logits_dtype", torch.float32),
    ],
    "fp8_mqa_logits": [
        ("q", None),
        ("kv", None),
        ("weights", None),
        ("cu_seq_len_k_start", None),
        ("cu_seq_len_k_end", None),
        ("clean_logits", True),
        ("max_seqlen_k", 0),
    ],
    "get_paged_mqa_logits_metadata": [("context_lens", None), ("block_kv", None), ("num_sms", None), ("indices", None)],
    "fp8_fp4_paged_mqa_logits": [
        ("q", None),
        ("kv_cache", None),
        ("weights", None),
        ("context_lens", None),
        ("block_table", None),
        ("schedule_meta", None),
        ("max_context_len", None),
        ("clean_logits", False),
        ("logits_dtype", torch.float32),
        ("indices", None),
    ],
    "fp8_paged_mqa_logits": [
        ("q", None),
        ("kv_cache", None),
        ("weights", None),
        ("context_lens", None),
        ("block_table", None),
        ("schedule_meta", None),
        ("max_context_len", None),
        ("clean_logits", False),
        ("indices", None),
    ],
}
REQUIRED = {
    "a",
    "b",
    "d",
    "head_splits",
    "q",
    "kv",
    "weights",
    "cu_seq_len_k_start",
    "cu_seq_len_k_end",
    "context_lens",
    "block_kv",
    "num_sms",
    "kv_cache",
    "block_table",
    "schedule_meta",
    "max_context_len",
}


@pytest.mark.parametrize("name", OPS_HERE)
def test_legacy_signature(name):
    for fn in (getattr(deep_gemm._C, name), getattr(deep_gemm, name)):
        params = list(inspect.signature(fn).parameters.values())
        got = [(p.name, None if p.default is inspect.Parameter.empty else p.default) for p in params]
        assert got == SIGNATURES[name]
        for p in params:
            assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            assert (p.default is inspect.Parameter.empty) == (p.name in REQUIRED)
    assert getattr(deep_gemm, name) is getattr(deep_gemm._C, name)
    assert name in deep_gemm._C.FAMILIES["attention"]


def test_logits_dtype_default_is_float32_everywhere():
    for name in ("fp8_fp4_mqa_logits", "fp8_fp4_paged_mqa_logits"):
        assert inspect.signature(getattr(deep_gemm._C, name)).parameters["logits_dtype"].default is torch.float32
        schema = getattr(torch.ops.deep_gemm, name).default._schema
        arg = next(a for a in schema.arguments if a.name == "logits_dtype")
        assert arg.default_value in (torch.float32, 6)  # ScalarType::Float


def test_legacy_pairs_are_required():
    x = mqa_inputs(2, 5, 8, 32, False, torch.device("cpu"))
    with pytest.raises(TypeError, match=r"fp8_fp4_mqa_logits: argument 'q' must be a \(tensor, scale\) pair"):
        deep_gemm.fp8_fp4_mqa_logits(x.q, (x.kv, x.kv_sf), x.weights, x.ks, x.ke)
    with pytest.raises(TypeError, match=r"fp8_mqa_logits: argument 'kv' must be a \(tensor, scale\) pair"):
        deep_gemm.fp8_mqa_logits(x.q, x.kv, x.weights, x.ks, x.ke)


# ---- every sample: opcheck and immutability ---------------------------------------------

SAMPLES = load_all()
CASES = [(op, s) for op in OPS_HERE for s in SAMPLES[op](torch.device("cpu"))]


@pytest.mark.parametrize("op,sample", CASES, ids=[f"{op}-{s.name}" for op, s in CASES])
def test_inputs_are_not_modified(op, sample):
    s = clone_args(sample)
    writes = set(OPS[op].writes)
    names = OPS[op].schema.arg_names
    bound = {**dict(zip(names, s.args)), **s.kwargs}
    before = {k: snapshot(v) for k, v in bound.items() if isinstance(v, torch.Tensor) and k not in writes}
    out = getattr(torch.ops.deep_gemm, op)(*s.args, **s.kwargs)
    for k, v in before.items():
        assert bitwise_equal(bound[k], v), f"{op} modified input '{k}'"
    if isinstance(out, torch.Tensor) and out.numel() > 0:
        for k, v in bound.items():
            if isinstance(v, torch.Tensor) and v.numel() > 0:
                assert out.untyped_storage().data_ptr() != v.untyped_storage().data_ptr(), f"output aliases '{k}'"


def test_samples_cover_every_attention_op():
    family = [op.name for op in OPS.values() if op.family == "attention"]
    assert sorted(family) == sorted(OPS_HERE)
    for op in OPS_HERE:
        assert len(SAMPLES[op](torch.device("cpu"))) >= 3


def test_quantize_rows_helper_roundtrip():
    """The input builder's encodings decode (by the reference helpers) close to their source."""
    x = torch.randn(5, 64)
    for fp4, tol in ((False, 0.07), (True, 0.6)):
        data, sf = quantize_rows(x, fp4)
        torch.testing.assert_close(rows_f64(data, sf), x.to(F64), rtol=0, atol=tol * x.abs().max().item())
    assert data_to_f64(data).shape == (5, 64)
    cache = encode_kv_cache(*quantize_rows(torch.randn(2, 32, 64), False), pad=8)
    assert cache.shape == (2, 32, 1, 68) and cache.stride() == (32 * 68 + 8, 68, 68, 1)


# ---- CUDA only: one device per call, and no host synchronisation ---------------------------


@pytest.mark.gpu
def test_logits_ops_reject_mixed_devices_on_cuda():
    x = mqa_inputs(4, 20, 16, 64, False, torch.device("cuda"))
    with pytest.raises(ValueError, match=r"argument 'weights' is on cpu but 'q' is on cuda:0"):
        deep_gemm.fp8_fp4_mqa_logits((x.q, None), (x.kv, x.kv_sf), x.weights.cpu(), x.ks, x.ke)
    p = paged_inputs(2, 2, 8, 64, 32, False, torch.device("cuda"), 60)
    args = list(paged_args(p))
    args[5] = args[5].cpu()
    with pytest.raises(ValueError, match=r"argument 'block_table' is on cpu but 'q' is on cuda:0"):
        torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args)
    a, b, d, _ = skip_head_mid_case(4, 2, (16, 16, 16), 128)
    d = d.cuda()
    before = d.clone()
    with pytest.raises(ValueError, match=r"argument 'a' is on cpu but 'd' is on cuda:0"):
        deep_gemm.fp8_gemm_nt_skip_head_mid(a, b, d, (16, 16, 16))
    assert torch.equal(d, before)


@pytest.mark.gpu
def test_logits_ops_do_not_synchronise_on_cuda():
    cuda = torch.device("cuda")
    x = mqa_inputs(9, 70, 32, 128, True, cuda)
    p = paged_inputs(3, 2, 8, 64, 32, False, cuda, 90)
    v = paged_inputs(5, 1, 8, 64, 32, True, cuda, 90, num_seqs=2)
    args, vargs = paged_args(p), paged_args(v)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        mqa = deep_gemm.fp8_fp4_mqa_logits((x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke)
        compressed = deep_gemm.fp8_fp4_mqa_logits(
            (x.q, x.q_sf), (x.kv, x.kv_sf), x.weights, x.ks, x.ke, clean_logits=False, max_seqlen_k=33
        )
        meta = deep_gemm.get_paged_mqa_logits_metadata(p.context_lens, 32, deep_gemm.get_num_sms())
        paged = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args[:6], meta, args[7])
        varlen = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*vargs, indices=v.indices)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    x, p, v = on_cpu(x), on_cpu(p), on_cpu(v)  # the references run on the CPU
    assert_logits(mqa.cpu(), mqa_reference(x))
    assert_logits(compressed.cpu(), mqa_reference(x, 33))
    assert_logits(paged.cpu(), paged_reference(p))
    assert_logits(varlen.cpu(), paged_reference(v))


def on_cpu(inputs):
    """A copy of a dataclass of inputs with every tensor moved to the CPU."""
    moved = {f.name: getattr(inputs, f.name) for f in dataclasses.fields(inputs)}
    return type(inputs)(**{k: t.cpu() if isinstance(t, torch.Tensor) else t for k, t in moved.items()})


def test_paged_logits_bad_indices_give_nan_rows():
    p = paged_inputs(4, 1, 8, 32, 32, False, torch.device("cpu"), 80, num_seqs=2)
    p.context_lens = torch.tensor([[50], [0], [80], [7]], dtype=torch.int32)
    p.indices = torch.tensor([0, 1, 99, -1], dtype=torch.int32)  # rows 2 and 3 name no sequence
    p.block_table[0, :2] = torch.tensor([0, 1], dtype=p.block_table.dtype)  # sequence 0 holds 50 tokens
    args = paged_args(p)
    out = torch.ops.deep_gemm.fp8_fp4_paged_mqa_logits(*args, indices=p.indices)
    assert torch.isnan(out[2]).all() and torch.isnan(out[3, :7]).all() and (out[3, 7:] == NEG_INF).all()
    assert (out[1] == NEG_INF).all()
    assert torch.isfinite(out[0, :50]).all()
