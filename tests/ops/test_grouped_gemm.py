"""Grouped GEMMs (M-grouped contiguous / masked, K-grouped) and the cuBLASLt GEMMs.

Over 400 lines: the three grouped layouts share one float64 reference and one set of layout builders.

Expected values come from float64 references written here from the definitions in the ops'
docs (docs/ops.md; tests/support/reference.py decodes the operands); nothing calls deep_gemm
to make an expected value.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import torch

import deep_gemm
from codegen.spelling.python import params
from tests.support.build import present
from tests.support.manifest import OPS
from tests.support.reference import F64, ceil_div, dequant_f64, ue8m0_to_f64
from tests.support.samples import grouped_gemm as gs

ENTRIES = ["legacy", "package", "torch_ops"]

GROUPED_OPS = [
    "m_grouped_fp8_fp4_gemm_nt_contiguous",
    "m_grouped_fp8_fp4_gemm_nn_contiguous",
    "m_grouped_fp8_fp4_gemm_nt_masked",
    "k_grouped_fp8_gemm_tn_contiguous",
    "k_grouped_fp8_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous",
    "m_grouped_bf16_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous",
]
CUBLASLT_OPS = [f"cublaslt_gemm_{layout}" for layout in ("nt", "nn", "tn", "tt")]


def call(entry: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
    """Run op `name` with schema-form arguments through one of the three entry points."""
    kwargs = kwargs or {}
    if entry == "torch_ops":
        getattr(torch.ops.deep_gemm, name)(*args, **kwargs)
        return
    largs, lkwargs = legacy_args(name, args, kwargs)
    fn = getattr(deep_gemm._C if entry == "legacy" else deep_gemm, name)
    fn(*largs, **lkwargs)


def legacy_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Schema-form arguments -> the legacy call: (tensor, scale) pairs packed, positional up to the
    first argument left out, keywords (by Python name) after it."""
    op = OPS[name]
    bound = dict(zip(op.schema.arg_names, args))
    bound.update(kwargs)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    gap = False
    for p in params(op):
        members = [m.name for m in p.members]
        if not all(m in bound for m in members):
            gap = True
            continue
        value = tuple(bound[m] for m in members) if p.is_pack else bound[members[0]]
        if gap or p.kind == "kwonly":
            keywords[p.name] = value
        else:
            positional.append(value)
    return tuple(positional), keywords


def bits(x: torch.Tensor) -> torch.Tensor:
    """The raw bytes of x (a copy with default strides, so any layout can be viewed as bytes)."""
    return torch.empty(x.shape, dtype=x.dtype, device=x.device).copy_(x).view(torch.uint8)


def assert_same_bits(x: torch.Tensor, y: torch.Tensor) -> None:
    assert x.dtype == y.dtype and x.shape == y.shape
    assert torch.equal(bits(x), bits(y))


def assert_close(got: torch.Tensor, ref: torch.Tensor, rel: float | None = None) -> None:
    """got (bf16 or float32, computed in float32) against a float64 reference, to `rel` of its
    largest magnitude (default: bf16's 2^-7, float32's 1e-5)."""
    tol = rel if rel is not None else 2.0**-7 if got.dtype == torch.bfloat16 else 1e-5
    scale = ref.abs().max().item() if ref.numel() else 0.0
    torch.testing.assert_close(got.to(F64), ref, rtol=tol, atol=tol * scale + 1e-6)


# ---- float64 references --------------------------------------------------------------------

B_GRAN = {"block": (128, 128), "token": (1, 128), "packed": (1, 128), "fp4": (1, 32)}


def dequant_b_f64(b: torch.Tensor, sfb: torch.Tensor, kind: str, nn: bool = False) -> list[torch.Tensor]:
    """Per group: B[g] dequantized to float64 [N, K] (nn: b is [G, K, N] and sfb transposed with it)."""
    gran_mn, gran_k = B_GRAN[kind]
    out = []
    for g in range(b.shape[0]):
        data, sf = (b[g].t(), sfb[g].t()) if nn else (b[g], sfb[g])
        out.append(dequant_f64(data, sf, gran_mn, gran_k))
    return out


def ref_rows(a_f64: torch.Tensor, b_f64: list[torch.Tensor], row_group: list[int]) -> dict[int, torch.Tensor]:
    """Row r of group row_group[r] (>= 0): a_f64[r] . b_f64[g]^T."""
    return {r: a_f64[r] @ b_f64[g].t() for r, g in enumerate(row_group) if g >= 0}


def no_group_rows(ids: list[int], groups: int) -> set[int]:
    """Rows of a row-id layout whose id lies outside [0, groups): the op writes them as zero."""
    return {r for r, g in enumerate(ids) if not 0 <= g < groups}


def check_rows(d_before: torch.Tensor, d_after: torch.Tensor, expected: dict[int, torch.Tensor], zero_rows=()) -> None:
    """Rows in `expected` match, `zero_rows` are exactly zero and every other row is untouched."""
    for r in range(d_after.shape[0]):
        if r in expected:
            assert_close(d_after[r], expected[r])
        elif r in zero_rows:
            assert torch.equal(d_after[r], torch.zeros_like(d_after[r])), f"row {r} should be zero"
        else:
            assert_same_bits(d_after[r], d_before[r])


def psum_membership(ends: list[int], m: int, alignment: int) -> tuple[list[int], set[int]]:
    """Group of each row (-1: none) and the padding rows [end, align(end)) of a psum layout."""
    group = [-1] * m
    padding: set[int] = set()
    prev = 0
    for g, end in enumerate(ends):
        start = ceil_div(prev, alignment) * alignment
        for r in range(start, min(end, m)):
            group[r] = g
        padding.update(range(end, min(ceil_div(end, alignment) * alignment, m)))
        prev = end
    return group, {r for r in padding if group[r] < 0}


def k_scales_f64(sf: torch.Tensor, ks: list[int], gran_k: int) -> list[torch.Tensor]:
    """Per group: the per-channel scale of every element, float64 [k, mn] (K-stacked scales [rows, mn])."""
    out, row = [], 0
    for k in ks:
        blocks = ceil_div(k, gran_k)
        if sf.dtype == torch.int32:
            words = ceil_div(blocks, 4)
            # A fresh [mn, words] copy: ue8m0_to_f64 views the int32 words as bytes.
            per_block = ue8m0_to_f64(sf[row : row + words].t().clone(memory_format=torch.contiguous_format))
            per_block = per_block[:, :blocks].t()
            row += words
        else:
            per_block = sf[row : row + blocks].to(F64)
            row += blocks
        out.append(per_block[torch.arange(k) // gran_k])
    return out


def k_starts(ks: list[int], psum: bool, alignment: int = gs.ALIGNMENT) -> list[int]:
    starts, end = [], 0
    for k in ks:
        start = ceil_div(end, alignment) * alignment if psum else end
        starts.append(start)
        end = start + k
    return starts


def ref_k_grouped(a_groups: list[torch.Tensor], b_groups: list[torch.Tensor], c: torch.Tensor) -> torch.Tensor:
    """D[g] = C[g] + A_g^T B_g with A_g [k, M], B_g [k, N] in float64."""
    return torch.stack([c[g].to(F64) + a_groups[g].t() @ b_groups[g] for g in range(len(a_groups))])


# ---- M-grouped contiguous -----------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("nn", [False, True], ids=["nt", "nn"])
@pytest.mark.parametrize("case", gs.M_CASES, ids=[c[0] for c in gs.M_CASES])
def test_m_grouped_fp8_contiguous_ids(case: tuple, nn: bool, entry: str, device: torch.device) -> None:
    _, rows, pad, n, k, kind = case
    if nn and kind == "fp4":
        pytest.skip("FP4 B is packed along K: no [G, K, N] form")
    ids = gs.row_ids(rows, pad, device)
    m = ids.numel()
    a, sfa = gs.fp8_per_token(m, k, device)
    b, sfb = gs.grouped_b(len(rows), n, k, device, kind)
    if nn:
        b, sfb = b.transpose(1, 2).contiguous(), sfb.transpose(1, 2).contiguous()
    d = torch.randn(m, n, device=device).to(torch.bfloat16)
    before = d.clone()
    name = f"m_grouped_fp8_fp4_gemm_{'nn' if nn else 'nt'}_contiguous"
    call(entry, name, (a, sfa, b, sfb, d, ids), gs.recipe_kwargs(kind))
    a_f64 = dequant_f64(a.cpu(), sfa.cpu(), 1, 128)
    b_f64 = dequant_b_f64(b.cpu(), sfb.cpu(), kind, nn)
    zero_rows = no_group_rows(ids.tolist(), len(rows))
    assert pad == 0 or zero_rows, "padded cases must have rows of no group"
    check_rows(before.cpu(), d.cpu(), ref_rows(a_f64, b_f64, ids.tolist()), zero_rows)


@pytest.mark.parametrize("alignment", [128, 32])
@pytest.mark.parametrize("zero_padding", [True, False])
@pytest.mark.parametrize("bf16", [False, True], ids=["fp8", "bf16"])
def test_m_grouped_contiguous_psum(alignment: int, zero_padding: bool, bf16: bool, device: torch.device) -> None:
    group_rows = [5, 0, 70, 1, 33]
    ends = gs.psum_ends(group_rows, alignment)
    m = ends[-1] + 7  # rows past the last group's padding stay untouched too
    n, k = 24, 256
    layout = torch.tensor(ends, dtype=torch.int32, device=device)
    d = torch.randn(m, n, device=device).to(torch.bfloat16)
    before = d.clone()
    # Rows in the gaps hold garbage (NaN) data: they must never be read.
    if bf16:
        a = gs.bf16(m, k, device=device)
        b = gs.bf16(len(group_rows), n, k, device=device)
    else:
        a, sfa = gs.fp8_per_token(m, k, device)
        b, sfb = gs.grouped_b(len(group_rows), n, k, device, "token")
    group, padding = psum_membership(ends, m, alignment)
    gaps = torch.tensor([g < 0 for g in group], device=device)
    previous = deep_gemm.get_mk_alignment_for_contiguous_layout()
    deep_gemm.set_mk_alignment_for_contiguous_layout(alignment)
    try:
        if bf16:
            a[gaps] = float("nan")
            deep_gemm.m_grouped_bf16_gemm_nt_contiguous(
                a, b, d, layout, use_psum_layout=True, ensure_zero_padding=zero_padding
            )
            a_f64, b_f64 = a.cpu().to(F64), [x.to(F64) for x in b.cpu()]
        else:
            sfa[gaps] = float("nan")
            deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous(
                (a, sfa),
                (b, sfb),
                d,
                layout,
                recipe=(1, 1, 128),
                use_psum_layout=True,
                ensure_zero_padding=zero_padding,
                expected_m_for_psum_layout=20,
            )
            a_f64 = dequant_f64(a.cpu(), sfa.cpu(), 1, 128)
            b_f64 = dequant_b_f64(b.cpu(), sfb.cpu(), "token")
    finally:
        deep_gemm.set_mk_alignment_for_contiguous_layout(previous)
    assert padding, "the layout must have padding rows for this test to mean anything"
    check_rows(before.cpu(), d.cpu(), ref_rows(a_f64, b_f64, group), padding if zero_padding else ())


def test_m_grouped_contiguous_out_of_range_values() -> None:
    """Ids outside [0, G) mark padding rows written as zero (even without ensure_zero_padding); psum
    ends past M or going backwards select no extra rows and leave the rest untouched."""
    a, sfa = gs.fp8_per_token(6, 128)
    b, sfb = gs.grouped_b(2, 16, 128, "cpu", "token")
    ids = torch.tensor([0, 7, -1, 1, -5, 2], dtype=torch.int32)
    d = torch.randn(6, 16).to(torch.bfloat16)
    before = d.clone()
    deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous(
        (a, sfa), (b, sfb), d, ids, recipe=(1, 1, 128), ensure_zero_padding=False
    )
    a_f64, b_f64 = dequant_f64(a, sfa, 1, 128), dequant_b_f64(b, sfb, "token")
    check_rows(before, d, ref_rows(a_f64, b_f64, [0, -1, -1, 1, -1, -1]), {1, 2, 4, 5})

    # psum ends: group 0 ends past M (clipped), group 1 ends before its aligned start (empty).
    a, sfa = gs.fp8_per_token(200, 128)
    d = torch.randn(200, 16).to(torch.bfloat16)
    before = d.clone()
    layout = torch.tensor([150, 100], dtype=torch.int32)
    deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous(
        (a, sfa), (b, sfb), d, layout, recipe=(1, 1, 128), use_psum_layout=True, ensure_zero_padding=False
    )
    check_rows(before, d, ref_rows(dequant_f64(a, sfa, 1, 128), b_f64, [0] * 150 + [-1] * 50))


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("nn", [False, True], ids=["nt", "nn"])
def test_m_grouped_bf16_contiguous(nn: bool, entry: str, device: torch.device) -> None:
    rows, n, k = [2, 0, 1, 5], 40, 72
    ids = gs.row_ids(rows, 3, device)
    m = ids.numel()
    a = gs.bf16(m, k, device=device)
    b = gs.bf16(len(rows), n, k, device=device)
    d = gs.bf16(m, n, device=device)
    before = d.clone()
    name = f"m_grouped_bf16_gemm_{'nn' if nn else 'nt'}_contiguous"
    call(entry, name, (a, b.transpose(1, 2).contiguous() if nn else b, d, ids))
    zero_rows = no_group_rows(ids.tolist(), len(rows))
    check_rows(before.cpu(), d.cpu(), ref_rows(a.cpu().to(F64), list(b.cpu().to(F64)), ids.tolist()), zero_rows)


# ---- M-grouped masked --------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("case", gs.MASKED_CASES, ids=[c[0] for c in gs.MASKED_CASES])
def test_m_grouped_fp8_masked(case: tuple, entry: str, device: torch.device) -> None:
    _, masked, max_m, n, k, kind = case
    groups = len(masked)
    packed = kind == "packed"
    a, sfa = gs.stack_pairs([gs.fp8_per_token(max_m, k, device, packed=packed) for _ in range(groups)])
    b, sfb = gs.grouped_b(groups, n, k, device, kind)
    d = torch.randn(groups, max_m, n, device=device).to(torch.bfloat16)
    before = d.clone()
    masked_m = torch.tensor(masked, dtype=torch.int32, device=device)
    call(entry, "m_grouped_fp8_fp4_gemm_nt_masked", (a, sfa, b, sfb, d, masked_m, 3), gs.recipe_kwargs(kind))
    b_f64 = dequant_b_f64(b.cpu(), sfb.cpu(), kind)
    for g in range(groups):
        a_f64 = dequant_f64(a[g].cpu(), sfa[g].cpu(), 1, 128)
        expected = {r: a_f64[r] @ b_f64[g].t() for r in range(min(masked[g], max_m))}
        check_rows(before[g].cpu(), d[g].cpu(), expected)


@pytest.mark.parametrize("entry", ENTRIES)
def test_m_grouped_bf16_masked(entry: str, device: torch.device) -> None:
    masked, max_m, n, k = [0, 5, 1, 9], 6, 20, 48  # 9 > max_m: every row of that group
    groups = len(masked)
    a, b = gs.bf16(groups, max_m, k, device=device), gs.bf16(groups, n, k, device=device)
    d = gs.bf16(groups, max_m, n, device=device)
    before = d.clone()
    call(entry, "m_grouped_bf16_gemm_nt_masked", (a, b, d, torch.tensor(masked, dtype=torch.int32, device=device), 4))
    for g in range(groups):
        a_g, b_g = a[g].cpu().to(F64), b[g].cpu().to(F64)
        check_rows(before[g].cpu(), d[g].cpu(), {r: a_g[r] @ b_g.t() for r in range(min(masked[g], max_m))})


# ---- K-grouped -----------------------------------------------------------------------------------

K_FP8_CASES = [
    # name, ks, M, N, gran_k, packed (a, b), psum, pass ks_cpu
    ("aligned", [128, 256, 128], 24, 40, 128, (False, False), False, True),
    ("zero_k_group", [256, 0, 128, 0], 8, 16, 128, (False, False), False, True),
    ("packed_gran32", [128, 0, 384], 12, 8, 32, (True, True), False, True),
    ("mixed_scales", [128, 128], 4, 12, 128, (True, False), False, True),
    ("psum_unaligned", [5, 0, 130, 64], 16, 8, 128, (False, False), True, True),
    ("psum_no_ks", [33, 1, 0, 100], 8, 16, 32, (False, True), True, False),
]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("accumulate", ["c_is_d", "separate_c"])
@pytest.mark.parametrize("case", K_FP8_CASES, ids=[c[0] for c in K_FP8_CASES])
def test_k_grouped_fp8_tn(case: tuple, accumulate: str, entry: str, device: torch.device) -> None:
    _, ks, m, n, gran_k, (packed_a, packed_b), psum, pass_ks = case
    a, sfa = gs.k_grouped_fp8(ks, m, device, gran_k=gran_k, packed=packed_a, psum=psum)
    b, sfb = gs.k_grouped_fp8(ks, n, device, gran_k=gran_k, packed=packed_b, psum=psum)
    layout = torch.tensor(gs.psum_ends(ks) if psum else ks, dtype=torch.int32, device=device)
    c = torch.randn(len(ks), m, n, device=device) * 32
    d = c if accumulate == "c_is_d" else torch.randn_like(c)
    c_before = c.clone()
    kwargs: dict[str, Any] = {"recipe": (1, 1, gran_k), "use_psum_layout": psum}
    call(entry, "k_grouped_fp8_gemm_tn_contiguous", (a, sfa, b, sfb, d, ks if pass_ks else None, layout, c), kwargs)
    starts = k_starts(ks, psum)
    a64 = [a[s : s + k].cpu().to(F64) * sc for s, k, sc in zip(starts, ks, k_scales_f64(sfa.cpu(), ks, gran_k))]
    b64 = [b[s : s + k].cpu().to(F64) * sc for s, k, sc in zip(starts, ks, k_scales_f64(sfb.cpu(), ks, gran_k))]
    expected = ref_k_grouped(a64, b64, c_before.cpu())
    assert_close(d.cpu(), expected)
    for g, k in enumerate(ks):
        if k == 0:  # an empty group is exactly C
            assert_same_bits(d[g].cpu(), c_before[g].cpu())
    if accumulate == "separate_c":
        assert_same_bits(c, c_before)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("ks", [[128, 256], [0, 128, 0, 384], [128]], ids=["two", "zero_k", "one"])
def test_k_grouped_fp8_nt(ks: list[int], entry: str, device: torch.device) -> None:
    m, n = 12, 20
    a, sfa = gs.k_grouped_fp8(ks, m, device)
    b, sfb = gs.k_grouped_fp8(ks, n, device)
    a_flat, sfa_t = gs.k_major_flat(a, sfa, ks)
    b_flat, sfb_t = gs.k_major_flat(b, sfb, ks)
    d = torch.randn(len(ks), m, n, device=device)
    c_before = d.clone()
    layout = torch.tensor(ks, dtype=torch.int32, device=device)
    call(entry, "k_grouped_fp8_gemm_nt_contiguous", (a_flat, sfa_t, b_flat, sfb_t, d, ks, layout, d))
    # The reference reads the K-major blocks directly: group g of a_flat is [M, k] row-major.
    a64, b64, offset, block = [], [], 0, 0
    for k in ks:
        blocks = torch.arange(k) // 128 + block
        a_g = a_flat[offset * m : (offset + k) * m].cpu().view(m, k).to(F64) * sfa_t.cpu().to(F64)[:, blocks]
        b_g = b_flat[offset * n : (offset + k) * n].cpu().view(n, k).to(F64) * sfb_t.cpu().to(F64)[:, blocks]
        a64.append(a_g.t())
        b64.append(b_g.t())
        offset += k
        block += ceil_div(k, 128)
    # On sm90 the FP8 products go through wgmma (Note [FP8 tensor-core accumulation] in
    # test_cuda.py): float32 output, but not float32's 1e-5.
    assert_close(d.cpu(), ref_k_grouped(a64, b64, c_before.cpu()), rel=2.0**-9 if device.type == "cuda" else None)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("psum", [False, True], ids=["ks", "psum"])
def test_k_grouped_bf16_tn(psum: bool, entry: str, device: torch.device) -> None:
    ks, m, n = ([3, 0, 129, 40] if psum else [128, 0, 256]), 10, 6
    rows = gs.psum_ends(ks)[-1] if psum else sum(ks)
    a, b = gs.bf16(rows, m, device=device), gs.bf16(rows, n, device=device)
    layout = torch.tensor(gs.psum_ends(ks) if psum else ks, dtype=torch.int32, device=device)
    d = torch.randn(len(ks), m, n, device=device)
    c_before = d.clone()
    call(
        entry,
        "k_grouped_bf16_gemm_tn_contiguous",
        (a, b, d, None if psum else ks, layout, d),
        {"use_psum_layout": psum},
    )
    starts = k_starts(ks, psum)
    a64 = [a[s : s + k].cpu().to(F64) for s, k in zip(starts, ks)]
    b64 = [b[s : s + k].cpu().to(F64) for s, k in zip(starts, ks)]
    assert_close(d.cpu(), ref_k_grouped(a64, b64, c_before.cpu()))


# ---- Python surface: signatures, aliases, guarded ops ---------------------------------------------

LEGACY_SIGNATURES = {
    "m_grouped_fp8_fp4_gemm_nt_contiguous": "(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None, "
    "compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False, ensure_zero_padding=True, "
    "expected_m_for_psum_layout=None)",
    "m_grouped_fp8_fp4_gemm_nn_contiguous": "(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None, "
    "compiled_dims='nk', disable_ue8m0_cast=False, use_psum_layout=False, ensure_zero_padding=True)",
    "m_grouped_fp8_fp4_gemm_nt_masked": "(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None, "
    "compiled_dims='nk', disable_ue8m0_cast=False)",
    "k_grouped_fp8_gemm_tn_contiguous": "(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128), "
    "compiled_dims='mn', use_psum_layout=False)",
    "k_grouped_fp8_gemm_nt_contiguous": "(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128), "
    "compiled_dims='mn', use_psum_layout=False)",
    "m_grouped_bf16_gemm_nt_contiguous": "(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False, "
    "ensure_zero_padding=True, expected_m_for_psum_layout=None)",
    "m_grouped_bf16_gemm_nn_contiguous": "(a, b, d, grouped_layout, compiled_dims='nk', use_psum_layout=False, "
    "ensure_zero_padding=True)",
    "m_grouped_bf16_gemm_nt_masked": "(a, b, d, masked_m, expected_m, compiled_dims='nk')",
    "k_grouped_bf16_gemm_tn_contiguous": "(a, b, d, ks_cpu, grouped_layout, c=None, compiled_dims='mn', "
    "use_psum_layout=False)",
}


@pytest.mark.parametrize("name", GROUPED_OPS)
def test_legacy_signature(name: str) -> None:
    for module in (deep_gemm._C, deep_gemm):
        assert str(inspect.signature(getattr(module, name))) == LEGACY_SIGNATURES[name]


ALIASES = {
    "m_grouped_fp8_gemm_nt_contiguous": "m_grouped_fp8_fp4_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nn_contiguous": "m_grouped_fp8_fp4_gemm_nn_contiguous",
    "m_grouped_fp8_gemm_nt_masked": "m_grouped_fp8_fp4_gemm_nt_masked",
    "fp8_m_grouped_gemm_nt_masked": "m_grouped_fp8_fp4_gemm_nt_masked",
    "bf16_m_grouped_gemm_nt_masked": "m_grouped_bf16_gemm_nt_masked",
}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases_are_the_same_object(alias: str) -> None:
    target = getattr(deep_gemm._C, ALIASES[alias])
    assert getattr(deep_gemm._C, alias) is target
    assert getattr(deep_gemm, alias) is target
    assert alias in deep_gemm._C.__all__
    assert not hasattr(torch.ops.deep_gemm, alias)  # aliases are Python names, not extra ops


def test_cublaslt_ops_are_in_every_build() -> None:
    """All four are registered, exported and listed whatever the build (callers look them up by name)."""
    for name in CUBLASLT_OPS:
        assert present(name), f"torch.ops.deep_gemm.{name}"
        for where in (deep_gemm._C, deep_gemm):
            assert callable(getattr(where, name, None)), f"{where.__name__}.{name}"
        assert name in deep_gemm._C.__all__
        assert name in deep_gemm._C.FAMILIES["gemm"]
        assert OPS[name].guard is None


@pytest.mark.parametrize("layout", ["nt", "nn", "tn", "tt"])
@pytest.mark.parametrize(
    "dtype,out_dtype",
    [
        (torch.bfloat16, torch.bfloat16),
        (torch.bfloat16, torch.float32),
        (torch.float32, torch.float32),
        (torch.float8_e4m3fn, torch.bfloat16),
    ],
    ids=["bf16", "bf16_fp32out", "fp32", "fp8"],
)
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("entry", ENTRIES)
# N = 129 keeps FP8 off cuBLASLt's FP8 path (N % 16 != 0): the float32 fallback; N = 128 takes it.
@pytest.mark.parametrize("shape", [(65, 129, 256), (64, 128, 256)], ids=["n129", "n128"])
def test_cublaslt_numerics(
    layout: str,
    dtype: torch.dtype,
    out_dtype: torch.dtype,
    accumulate: bool,
    entry: str,
    shape: tuple[int, int, int],
    device: torch.device,
) -> None:
    # Every build has them: on the CPU they run the ATen reference, on a GPU cuBLAS(Lt).
    name = f"cublaslt_gemm_{layout}"
    m, n, k = shape
    a = gs.randn(m, k, device=device, dtype=dtype)
    b = gs.randn(n, k, device=device, dtype=dtype)
    a_arg = a.t().contiguous() if layout[0] == "t" else a
    b_arg = b.t().contiguous() if layout[1] == "n" else b
    d = gs.randn(m, n, device=device, dtype=out_dtype)
    c = d.clone() if accumulate else None
    call(entry, name, (a_arg, b_arg, d, c))
    expected = a.cpu().to(F64) @ b.cpu().to(F64).t()
    if c is not None:
        expected = expected + c.cpu().to(F64)
    tol = 2.0**-7 if out_dtype == torch.bfloat16 else 2e-3  # fp32 inputs may run as TF32 on the GPU
    scale = expected.abs().max().item()
    torch.testing.assert_close(d.cpu().to(F64), expected, rtol=tol, atol=tol * scale)


# ---- bad input: pinned messages, d untouched ------------------------------------------------------


def _m_contig_args(m: int = 6, n: int = 16, k: int = 128, groups: int = 2):
    a = gs.fp8_per_token(m, k)
    b = gs.grouped_b(groups, n, k, "cpu", "block")
    d = torch.randn(m, n).to(torch.bfloat16)
    ids = torch.tensor([0, 1, -1, 1, 0, 0][:m], dtype=torch.int32)
    return list(a), list(b), d, ids


def _k_args(ks=(128, 0, 128), m: int = 8, n: int = 4):
    ks = list(ks)
    a, b = gs.k_grouped_fp8(ks, m), gs.k_grouped_fp8(ks, n)
    d = torch.randn(len(ks), m, n)
    return list(a), list(b), d, ks, torch.tensor(ks, dtype=torch.int32)


def _case_m_contig(change: Callable[[dict], None]) -> tuple[str, dict]:
    (a, sfa), (b, sfb), d, ids = _m_contig_args()
    args = {"a": a, "sfa": sfa, "b": b, "sfb": sfb, "d": d, "grouped_layout": ids}
    change(args)
    return "m_grouped_fp8_fp4_gemm_nt_contiguous", args


def _case_k(change: Callable[[dict], None], name: str = "k_grouped_fp8_gemm_tn_contiguous") -> tuple[str, dict]:
    (a, sfa), (b, sfb), d, ks, layout = _k_args()
    args = {"a": a, "sfa": sfa, "b": b, "sfb": sfb, "d": d, "ks_cpu": ks, "grouped_layout": layout, "c": d}
    change(args)
    return name, args


def _set(**kv: Any) -> Callable[[dict], None]:
    return lambda args: args.update({k: (v(args) if callable(v) else v) for k, v in kv.items()})


BAD_INPUT = [
    # (case id, builder, exception, message)
    (
        "d_dtype",
        lambda: _case_m_contig(_set(d=torch.zeros(6, 16))),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'd' must be BFloat16, got Float",
    ),
    (
        "b_rank",
        lambda: _case_m_contig(_set(b=lambda a: a["b"][0])),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'b' must be 3-D, got 2-D with shape [16, 128]",
    ),
    (
        "b_layout",
        lambda: _case_m_contig(_set(b=lambda a: a["b"].transpose(0, 2).contiguous().transpose(0, 2))),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'b' must be K-major (stride(-1) == 1) or MN-major "
        "(stride(-2) == 1), got strides [1, 2, 32]",
    ),
    (
        "sfb_group_count",
        lambda: _case_m_contig(_set(sfb=lambda a: a["sfb"][:1])),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'sfb' has 1 groups in dim 0, but 'b' has 2",
    ),
    (
        "layout_length",
        lambda: _case_m_contig(_set(grouped_layout=lambda a: a["grouped_layout"][:5])),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'grouped_layout' must hold one group id per row of 'a' "
        "(6 entries), got 5",
    ),
    (
        "layout_dtype",
        lambda: _case_m_contig(_set(grouped_layout=lambda a: a["grouped_layout"].long())),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'grouped_layout' must be Int, got Long",
    ),
    (
        "psum_length",
        lambda: _case_m_contig(_set(use_psum_layout=True)),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'grouped_layout' must hold one end row per group with "
        "use_psum_layout=True (2 entries, the groups of 'b'), got 6",
    ),
    (
        "expected_m_without_psum",
        lambda: _case_m_contig(_set(expected_m_for_psum_layout=64)),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'expected_m_for_psum_layout' is only allowed with "
        "use_psum_layout=True",
    ),
    (
        "bad_recipe",
        lambda: _case_m_contig(_set(recipe=(1, 64, 128))),
        ValueError,
        "m_grouped_fp8_fp4_gemm_nt_contiguous: argument 'recipe' must give B an MN granularity of 1 or 128, got 64",
    ),
    (
        "k_c_missing",
        lambda: _case_k(_set(c=None)),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'c' is required: K-grouped GEMMs accumulate (D = C + A^T B); "
        "pass d itself to accumulate in place",
    ),
    (
        "k_bad_recipe",
        lambda: _case_k(_set(recipe=(1, 128, 128))),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'recipe' must be (1, 1, 32) or (1, 1, 128), got (1, 128, 128)",
    ),
    (
        "k_nt_recipe",
        lambda: _case_k(_set(recipe=(1, 1, 32)), "k_grouped_fp8_gemm_nt_contiguous"),
        ValueError,
        "k_grouped_fp8_gemm_nt_contiguous: argument 'recipe' must be (1, 1, 128), got (1, 1, 32)",
    ),
    (
        "k_nt_psum",
        lambda: _case_k(_set(use_psum_layout=True), "k_grouped_fp8_gemm_nt_contiguous"),
        ValueError,
        "k_grouped_fp8_gemm_nt_contiguous: argument 'use_psum_layout' must be False: the K-major K-grouped layout "
        "has no psum form",
    ),
    (
        "k_nt_rank",
        lambda: _case_k(lambda a: None, "k_grouped_fp8_gemm_nt_contiguous"),
        ValueError,
        "k_grouped_fp8_gemm_nt_contiguous: argument 'a' must be 1-D, got 2-D with shape [256, 8]",
    ),
    (
        "k_unaligned",
        lambda: _case_k(_set(ks_cpu=[128, 0, 100])),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'ks_cpu' entries must be multiples of "
        "get_mk_alignment_for_contiguous_layout() (128) without use_psum_layout, got 100",
    ),
    (
        "k_no_ks",
        lambda: _case_k(_set(ks_cpu=[])),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'ks_cpu' may be None or empty only with use_psum_layout=True",
    ),
    (
        "k_ks_count",
        lambda: _case_k(_set(ks_cpu=[128, 128])),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'ks_cpu' has 2 entries but 'd' has 3 groups",
    ),
    (
        "k_layout_mismatch",
        lambda: _case_k(_set(grouped_layout=torch.tensor([128, 128, 0], dtype=torch.int32))),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'grouped_layout' entry 1 is 128 but ks_cpu gives 0 "
        "(the group's K size)",
    ),
    (
        "k_rows",
        lambda: _case_k(_set(ks_cpu=[128, 128, 128], grouped_layout=torch.tensor([128] * 3, dtype=torch.int32))),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'a' has 256 rows (K), but the groups' K sizes sum to 384",
    ),
    (
        "k_sf_shape",
        lambda: _case_k(_set(sfa=lambda a: a["sfa"][:1])),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'sfa' must have shape [2, 8] (K blocks of 128 per group), "
        "got [1, 8]",
    ),
    (
        "k_d_dtype",
        lambda: _case_k(_set(d=lambda a: a["d"].bfloat16(), c=lambda a: a["d"].bfloat16())),
        ValueError,
        "k_grouped_fp8_gemm_tn_contiguous: argument 'd' must be Float, got BFloat16",
    ),
]


def _k_nt_form(args: dict) -> None:
    ks = args["ks_cpu"]
    args["a"], args["sfa"] = gs.k_major_flat(args["a"], args["sfa"], ks)
    args["b"], args["sfb"] = gs.k_major_flat(args["b"], args["sfb"], ks)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("case", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_rejected_before_writing(case: tuple, entry: str) -> None:
    case_id, build, exc, message = case
    name, args = build()
    if name == "k_grouped_fp8_gemm_nt_contiguous" and case_id != "k_nt_rank":
        _k_nt_form(args)
    schema_names = OPS[name].schema.arg_names
    positional = tuple(args.pop(n) for n in schema_names if n in args and not OPS[name].schema.arg(n).has_default)
    d = positional[schema_names.index("d")]
    before = d.clone()
    with pytest.raises(exc) as info:
        call(entry, name, positional, args)
    assert str(info.value).splitlines()[0] == message
    assert_same_bits(d, before)


def test_masked_bad_input() -> None:
    a = gs.stack_pairs([gs.fp8_per_token(4, 128) for _ in range(2)])
    b = gs.grouped_b(2, 16, 128, "cpu", "block")
    d = torch.randn(2, 4, 16).to(torch.bfloat16)
    before = d.clone()
    masked_m = torch.tensor([1, 2], dtype=torch.int32)
    op = deep_gemm.m_grouped_fp8_fp4_gemm_nt_masked
    with pytest.raises(ValueError, match=r"^m_grouped_fp8_fp4_gemm_nt_masked: argument 'expected_m' must be positive"):
        op(a, b, d, masked_m, 0)
    with pytest.raises(ValueError, match=r"argument 'masked_m' must hold one row count per group \(2 entries\), got 3"):
        op(a, b, d, torch.tensor([1, 2, 3], dtype=torch.int32), 2)
    with pytest.raises(ValueError, match=r"argument 'b' has 1 groups but 'a' has 2"):
        op(a, (b[0][:1], b[1][:1]), d, masked_m, 2)
    with pytest.raises(ValueError, match=r"argument 'd' must have shape \[2, 4, 16\], got \[2, 4, 8\]"):
        op(a, b, d[..., :8], masked_m, 2)
    with pytest.raises(TypeError, match=r"argument 'a' must be a \(tensor, scale\) pair"):
        op(a[0], b, d, masked_m, 2)
    assert_same_bits(d, before)


def test_bf16_grouped_bad_input() -> None:
    a, b = gs.bf16(4, 32), gs.bf16(2, 8, 32)
    d = gs.bf16(4, 8)
    before = d.clone()
    ids = torch.tensor([0, 1, 1, -1], dtype=torch.int32)
    with pytest.raises(
        ValueError, match=r"^m_grouped_bf16_gemm_nt_contiguous: argument 'a' must be BFloat16, got Float$"
    ):
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a.float(), b, d, ids)
    with pytest.raises(ValueError, match=r"^m_grouped_bf16_gemm_nn_contiguous: argument 'b' has K=8 but 'a' has K=32$"):
        deep_gemm.m_grouped_bf16_gemm_nn_contiguous(a, b, d, ids)
    with pytest.raises(ValueError, match=r"argument 'compiled_dims' must list distinct dims"):
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, ids, compiled_dims="mm")
    with pytest.raises(ValueError, match=r"^k_grouped_bf16_gemm_tn_contiguous: argument 'grouped_layout' entry 1 ends"):
        dk = torch.zeros(2, 4, 8)
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(
            gs.bf16(300, 4),
            gs.bf16(300, 8),
            dk,
            None,
            torch.tensor([200, 210], dtype=torch.int32),
            dk,
            use_psum_layout=True,
        )
    assert_same_bits(d, before)
