"""einsum and fp8_einsum: float64 references, argument checks, samples and legacy signatures.

Over 400 lines: four expressions, BF16 and FP8, each with its reference, in one file so they share them.

The references below are written from the definitions (a broadcast product
summed over the contracted letters, FP8 values times the scale of their block)
and never call deep_gemm or torch.einsum; only test_head_contractions_agree_with_torch_einsum
compares with torch.einsum, because agreeing with it is the property it pins.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

import pytest
import torch

import deep_gemm
from tests.support.manifest import OPS, legacy_call
from tests.support.reference import F64
from tests.support.samples import clone_args, load_all
from tests.support.samples.einsum import (
    bf16,
    bhd_bhr_operands,
    fp8_per_block_3d,
    fp8_per_token_3d,
    strided_slice,
)

ENTRIES = ("legacy", "package", "torch_ops")
BF16_EXPRS = ("bmk,bnk->mn", "bhr,hdr->bhd", "bhd,hdr->bhr")
FP8_EXPRS = ("bhr,hdr->bhd", "bhd,hdr->bhr", "bhd,bhr->hdr")


def call(entry: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
    """Call op `name` with schema-form arguments through one of the three entry points."""
    kwargs = kwargs or {}
    names = OPS[name].schema.arg_names
    # legacy_call skips an absent argument and shifts the later positional ones, so an omitted
    # c followed by keyword arguments is spelled out as None.
    if kwargs and len(args) == names.index("c"):
        args = (*args, None)
    if entry == "torch_ops":
        return getattr(torch.ops.deep_gemm, name)(*args, **kwargs)
    legacy_args, legacy_kwargs = legacy_call(OPS[name], args, kwargs)
    module = deep_gemm._C if entry == "legacy" else deep_gemm
    return getattr(module, name)(*legacy_args, **legacy_kwargs)


# ---- float64 references ----------------------------------------------------------------------


def contract_f64(expr: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The contraction `expr` of float64 a and b, as a broadcast product summed over the missing letters."""
    if expr == "bmk,bnk->mn":  # a [b, m, k], b [b, n, k]
        return (a[:, :, None, :] * b[:, None, :, :]).sum(dim=(0, 3))
    if expr == "bhr,hdr->bhd":  # a [b, h, r], b [h, d, r]
        return (a[:, :, None, :] * b[None, :, :, :]).sum(dim=3)
    if expr == "bhd,hdr->bhr":  # a [b, h, d], b [h, d, r]
        return (a[:, :, :, None] * b[None, :, :, :]).sum(dim=2)
    if expr == "bhd,bhr->hdr":  # a [b, h, d], b [b, h, r]
        return (a[:, :, :, None] * b[:, :, None, :]).sum(dim=0)
    raise AssertionError(expr)


def dequant_f64(data: torch.Tensor, sf: torch.Tensor, grans: Sequence[int]) -> torch.Tensor:
    """FP8 data times the scale of its block; grans[i] elements of dim i share one scale."""
    scale = sf.to(F64)
    for dim, (size, gran) in enumerate(zip(data.shape, grans)):
        scale = scale.index_select(dim, torch.arange(size) // gran)
    return data.to(F64) * scale


def assert_close_to(out: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor, k: int) -> None:
    """|out - ref| within float32 accumulation over k terms (k * 2^-23 of the magnitude bound),
    plus one bf16 rounding (2^-8 relative) when out is bf16."""
    rel = (k + 2) * 2.0**-23 + (2.0**-8 if out.dtype == torch.bfloat16 else 0.0)
    err = (out.to(F64) - ref).abs()
    limit = rel * bound + 1e-30
    assert out.shape == ref.shape
    worst = (err - limit).max().item() if err.numel() else -1.0
    assert worst <= 0, f"max error {err.max().item():.3e} exceeds the bound (worst excess {worst:.3e})"


# ---- einsum (bf16) ---------------------------------------------------------------------------

BMK_SHAPES = [(1, 1, 1, 1), (3, 5, 7, 9), (1, 16, 8, 32), (4, 33, 17, 64), (0, 4, 6, 8), (2, 0, 3, 8), (5, 3, 1, 130)]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("s,m,n,k", BMK_SHAPES)
@pytest.mark.parametrize("in_place", [True, False])
def test_bmk_bnk_mn_fp32_accumulates(entry: str, s: int, m: int, n: int, k: int, in_place: bool) -> None:
    a, b = bf16(s, m, k, device="cpu"), bf16(s, n, k, device="cpu")
    c = torch.randn(m, n)
    c0 = c.clone()
    d = c if in_place else torch.randn(m, n)
    call(entry, "einsum", ("bmk,bnk->mn", a, b, d, c))
    ref = c0.to(F64) + contract_f64("bmk,bnk->mn", a.to(F64), b.to(F64))
    bound = c0.to(F64).abs() + contract_f64("bmk,bnk->mn", a.to(F64).abs(), b.to(F64).abs())
    assert_close_to(d, ref, bound, s * k)
    if not in_place:
        assert torch.equal(c, c0), "a separate c was modified"


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("s,m,n,k", BMK_SHAPES)
def test_bmk_bnk_mn_bf16_overwrites_d(entry: str, s: int, m: int, n: int, k: int) -> None:
    a, b = bf16(s, m, k, device="cpu"), bf16(s, n, k, device="cpu")
    d = torch.randn(m, n).bfloat16()
    call(entry, "einsum", ("bmk,bnk->mn", a, b, d))
    ref = contract_f64("bmk,bnk->mn", a.to(F64), b.to(F64))
    bound = contract_f64("bmk,bnk->mn", a.to(F64).abs(), b.to(F64).abs())
    assert_close_to(d, ref, bound, s * k)
    if s == 0:
        assert torch.equal(d, torch.zeros_like(d))


# (b, h, k, n): k is the contracted size (r or d), n the kept one.
HEAD_SHAPES = [(1, 1, 1, 1), (1, 3, 33, 17), (5, 4, 64, 16), (7, 2, 130, 129), (0, 2, 8, 8), (2, 3, 16, 0)]


def head_operands(expr: str, nb: int, h: int, k: int, n: int, strided: bool) -> tuple[torch.Tensor, torch.Tensor]:
    a = strided_slice(nb, h, k, device="cpu") if strided else bf16(nb, h, k, device="cpu")
    b_shape = (h, n, k) if expr == "bhr,hdr->bhd" else (h, k, n)
    b = strided_slice(*b_shape, device="cpu") if strided else bf16(*b_shape, device="cpu")
    return a, b


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("nb,h,k,n", HEAD_SHAPES)
@pytest.mark.parametrize("strided", [False, True])
def test_head_contractions(entry: str, expr: str, nb: int, h: int, k: int, n: int, strided: bool) -> None:
    a, b = head_operands(expr, nb, h, k, n, strided)
    if strided and min(b.shape) > 1:
        assert not b.is_contiguous() and b.stride(-1) == 1
    d = strided_slice(nb, h, n, device="cpu") if strided else torch.randn(nb, h, n).bfloat16()
    call(entry, "einsum", (expr, a, b, d))
    ref = contract_f64(expr, a.to(F64), b.to(F64))
    assert_close_to(d, ref, contract_f64(expr, a.to(F64).abs(), b.to(F64).abs()), k)


@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
def test_use_cublaslt_gives_the_same_result(expr: str) -> None:
    a, b = head_operands(expr, 3, 2, 40, 24, strided=True)
    d1, d2 = torch.empty(3, 2, 24).bfloat16(), torch.empty(3, 2, 24).bfloat16()
    deep_gemm.einsum(expr, a, b, d1)
    deep_gemm.einsum(expr, a, b, d2, use_cublaslt=True)
    assert torch.equal(d1, d2)
    ref, bound = contract_f64(expr, a.to(F64), b.to(F64)), contract_f64(expr, a.to(F64).abs(), b.to(F64).abs())
    assert_close_to(d2, ref, bound, 40)


@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("nb,h,k,n", [(4, 16, 512, 128), (33, 8, 1024, 256)])
def test_head_contractions_agree_with_torch_einsum(
    expr: str, nb: int, h: int, k: int, n: int, device: torch.device
) -> None:
    # Callers compare these two with torch.einsum on the same bf16 operands and require
    # calc_diff < 1e-10: a float32 accumulation rounded once to bf16, as torch.einsum does.
    a = torch.randn(nb, h, k, device=device).bfloat16()
    full = (
        torch.randn(h, n + 128, k, device=device)
        if expr == "bhr,hdr->bhd"
        else torch.randn(h, k, n + 128, device=device)
    )
    b = full.bfloat16()[:, :n, :] if expr == "bhr,hdr->bhd" else full.bfloat16()[:, :, :n]
    assert not b.is_contiguous() and b.stride(-1) == 1
    d = torch.full((nb, h, n), float("nan"), device=device, dtype=torch.bfloat16)
    deep_gemm.einsum(expr, a, b, d)
    expected = torch.einsum(expr, a, b)
    assert deep_gemm.testing.calc_diff(d, expected) < 1e-10
    assert torch.equal(d, expected)
    ref = contract_f64(expr, a.cpu().to(F64), b.cpu().to(F64))
    assert_close_to(d.cpu(), ref, contract_f64(expr, a.cpu().to(F64).abs(), b.cpu().to(F64).abs()), k)


# ---- fp8_einsum --------------------------------------------------------------------------------


def fp8_case(expr: str, nb: int, h: int, k: int, n: int, per_row_b: bool = False):
    """Schema-form (a, sfa, b, sfb), the per-dim scale granularities of a and b, the contracted length."""
    if expr == "bhd,bhr->hdr":  # k = d, n = r, contracted over nb
        x, y = bhd_bhr_operands(nb, h, k, n, torch.device("cpu"))
        return (*x, *y), (128, 1, 1), (128, 1, 1), nb
    x = fp8_per_token_3d(torch.randn(nb, h, k))
    gran_b = 1 if per_row_b else 128
    if expr == "bhr,hdr->bhd":
        y = fp8_per_block_3d(torch.randn(h, n, k), per_row=per_row_b)
        return (*x, *y), (1, 1, 128), (1, gran_b, 128), k
    # bhd,hdr->bhr: y [h, d, r] is blocked like a [K, N] operand: 128 d's x (128 r's, or 1 r).
    if per_row_b:
        yt = fp8_per_block_3d(torch.randn(h, n, k), per_row=True)  # [h, r, d], one scale per r and 128 d's
        y = (yt[0].transpose(1, 2).contiguous(), yt[1].transpose(1, 2).contiguous())
    else:
        y = fp8_per_block_3d(torch.randn(h, k, n))
    return (*x, *y), (1, 1, 128), (1, 128, gran_b), k


FP8_SHAPES = [(1, 1, 128, 64), (3, 2, 200, 130), (2, 3, 64, 1), (0, 2, 128, 16), (4, 1, 257, 33)]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("nb,h,k,n", FP8_SHAPES)
@pytest.mark.parametrize("per_row_b", [False, True])
def test_fp8_head_contractions(entry: str, expr: str, nb: int, h: int, k: int, n: int, per_row_b: bool) -> None:
    args, ga, gb, klen = fp8_case(expr, nb, h, k, n, per_row_b)
    d = torch.randn(nb, h, n).bfloat16()
    kwargs = {"recipe": (1, 1, 128)} if per_row_b else {}
    call(entry, "fp8_einsum", (expr, *args, d), kwargs)
    x, y = dequant_f64(args[0], args[1], ga), dequant_f64(args[2], args[3], gb)
    assert_close_to(d, contract_f64(expr, x, y), contract_f64(expr, x.abs(), y.abs()), klen)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("nb,h,dd,r", [(1, 1, 8, 16), (130, 2, 24, 40), (256, 3, 5, 7), (0, 2, 8, 8), (7, 1, 1, 1)])
@pytest.mark.parametrize("in_place", [True, False])
def test_fp8_bhd_bhr_hdr_accumulates(entry: str, nb: int, h: int, dd: int, r: int, in_place: bool) -> None:
    args, ga, gb, klen = fp8_case("bhd,bhr->hdr", nb, h, dd, r)
    c = torch.randn(h, dd, r)
    c0 = c.clone()
    d = c if in_place else torch.randn(h, dd, r)
    call(entry, "fp8_einsum", ("bhd,bhr->hdr", *args, d, c), {"recipe": (1, 1, 128)})
    x, y = dequant_f64(args[0], args[1], ga), dequant_f64(args[2], args[3], gb)
    ref = c0.to(F64) + contract_f64("bhd,bhr->hdr", x, y)
    assert_close_to(d, ref, c0.to(F64).abs() + contract_f64("bhd,bhr->hdr", x.abs(), y.abs()), klen)
    if not in_place:
        assert torch.equal(c, c0), "a separate c was modified"


def test_fp8_strided_b_slice() -> None:
    x = fp8_per_token_3d(torch.randn(3, 2, 256))
    y_full, sf_full = fp8_per_block_3d(torch.randn(2, 256, 256))
    y, sfy = y_full[:, :200, :], sf_full[:, :2, :]  # the first 200 d's; the 128-blocks still line up
    assert not y.is_contiguous() and y.stride(-1) == 1
    d = torch.empty(3, 2, 200).bfloat16()
    deep_gemm.fp8_einsum("bhr,hdr->bhd", x, (y, sfy), d)
    xf, yf = dequant_f64(*x, (1, 1, 128)), dequant_f64(y, sfy, (1, 128, 128))
    assert_close_to(d, contract_f64("bhr,hdr->bhd", xf, yf), contract_f64("bhr,hdr->bhd", xf.abs(), yf.abs()), 256)


# ---- rejected calls: pinned messages, d untouched ----------------------------------------------

Case = tuple[tuple[Any, ...], dict[str, Any], str]


def assert_rejected(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    """Every entry point raises ValueError matching `message` and leaves every tensor untouched."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    before = [t.clone() for t in tensors]
    for entry in ENTRIES:
        with pytest.raises(ValueError, match=message):
            call(entry, name, args, kwargs)
    for t, was in zip(tensors, before):
        assert torch.equal(t.contiguous().view(torch.uint8), was.contiguous().view(torch.uint8)), "a tensor changed"


def one_of(exprs: Sequence[str]) -> str:
    quoted = [f"'{e}'" for e in exprs]
    return re.escape(", ".join(quoted[:-1]) + " or " + quoted[-1])


@pytest.mark.parametrize("expr", ["bmk,bnk->nm", "bhr,hdr -> bhd", "", "ij,jk->ik", "bhd,bhr->hdr"])
def test_einsum_rejects_other_expressions(expr: str) -> None:
    a, b, d = bf16(2, 3, 8, device="cpu"), bf16(2, 4, 8, device="cpu"), torch.randn(3, 4)
    msg = rf"^einsum: argument 'expr' must be {one_of(BF16_EXPRS)} \(spelled exactly, no spaces\), got '{re.escape(expr)}'$"
    assert_rejected("einsum", (expr, a, b, d, d), {}, msg)


@pytest.mark.parametrize("expr", ["bmk,bnk->mn", "bhr,hdr->bhd ", "BHR,HDR->BHD"])
def test_fp8_einsum_rejects_other_expressions(expr: str) -> None:
    args, *_ = fp8_case("bhr,hdr->bhd", 2, 2, 128, 16)
    d = torch.randn(2, 2, 16).bfloat16()
    msg = rf"^fp8_einsum: argument 'expr' must be {one_of(FP8_EXPRS)} \(spelled exactly, no spaces\), got '{re.escape(expr)}'$"
    assert_rejected("fp8_einsum", (expr, *args, d), {}, msg)


def bmk_cases() -> dict[str, Case]:
    e = "bmk,bnk->mn"
    a, b, d = bf16(2, 3, 8, device="cpu"), bf16(2, 4, 8, device="cpu"), torch.randn(3, 4)
    d16 = d.bfloat16()
    buf = torch.randn(13)
    p = "^einsum: argument "
    return {
        "a_dtype": ((e, a.float(), b, d, d), {}, p + r"'a' must be BFloat16, got Float$"),
        "a_rank": ((e, a[0], b, d, d), {}, p + r"'a' must be 3-D, got 2-D with shape \[3, 8\]$"),
        "b_layout": (
            (e, a, b[..., :4], d, d),
            {},
            p + r"'b' must be contiguous, got shape \[2, 4, 4\] and strides \[32, 8, 1\]$",
        ),
        "batch": ((e, a, b[:1], d, d), {}, p + r"'b' has batch size 1 but 'a' has 2 \('bmk,bnk->mn' sums over b\)$"),
        "k": ((e, a, b[:, :, :4].contiguous(), d, d), {}, p + r"'b' has K=4 but 'a' has K=8$"),
        "d_dtype": ((e, a, b, d.half()), {}, p + r"'d' must be Float or BFloat16, got Half$"),
        "d_shape": ((e, a, b, d[:, :3], d[:, :3]), {}, p + r"'d' must have shape \[3, 4\], got \[3, 3\]$"),
        "fp32_d_without_c": (
            (e, a, b, d),
            {},
            p + r"'c' must be given for 'bmk,bnk->mn' with a float32 'd' \(D = C \+ \.\.\.; pass d itself to "
            r"accumulate in place\), got None$",
        ),
        "bf16_d_with_c": (
            (e, a, b, d16, d16),
            {},
            p
            + r"'c' must be None for 'bmk,bnk->mn' with a bfloat16 'd' \(d is overwritten; only a float32 d accumulates\)$",
        ),
        "c_dtype": ((e, a, b, d, d.double()), {}, p + r"'c' must be Float, got Double$"),
        "c_shape": ((e, a, b, d, d[:2]), {}, p + r"'c' must have shape \[3, 4\], got \[2, 4\]$"),
        "c_overlaps_d": (
            (e, a, b, buf[:12].view(3, 4), buf[1:13].view(3, 4)),
            {},
            p + r"'c' shares memory with 'd'; expected 'd' itself \(same offset and strides\) or a separate tensor$",
        ),
        "use_cublaslt": (
            (e, a, b, d, d),
            {"use_cublaslt": True},
            p + r"'use_cublaslt' must be False for 'bmk,bnk->mn' \(it has no cuBLASLt path\)$",
        ),
    }


@pytest.mark.parametrize("case", list(bmk_cases()))
def test_einsum_bmk_rejects(case: str) -> None:
    args, kwargs, msg = bmk_cases()[case]
    assert_rejected("einsum", args, kwargs, msg)


def head_cases(expr: str) -> dict[str, Case]:
    a, b = head_operands(expr, 3, 2, 16, 8, strided=False)
    d = torch.randn(3, 2, 8).bfloat16()
    letter, dim = ("r", 2) if expr == "bhr,hdr->bhd" else ("d", 1)
    short_b = b.narrow(dim, 0, 15)
    p = "^einsum: argument "
    return {
        "b_dtype": ((expr, a, b.half(), d), {}, p + r"'b' must be BFloat16, got Half$"),
        "b_rank": ((expr, a, b[0], d), {}, p + r"'b' must be 3-D, got 2-D with shape"),
        "a_layout": (
            (expr, a.transpose(1, 2).contiguous().transpose(1, 2), b, d),
            {},
            p + r"'a' must have stride\(-1\) == 1 \(its last dim contiguous\), got strides \[32, 1, 2\]$",
        ),
        "h": ((expr, a, b[:1], d), {}, p + r"'b' has h=1 \(dim 0\) but 'a' has h=2 \(dim 1\)$"),
        "k": ((expr, a, short_b, d), {}, p + rf"'b' has {letter}=15 \(dim {dim}\) but 'a' has {letter}=16 \(dim 2\)$"),
        "d_dtype": ((expr, a, b, d.float()), {}, p + r"'d' must be BFloat16, got Float$"),
        "d_shape": ((expr, a, b, d[:, :, :7]), {}, p + r"'d' must have shape \[3, 2, 8\], got \[3, 2, 7\]$"),
        "d_layout": (
            (expr, a, b, d.transpose(0, 2).contiguous().transpose(0, 2)),
            {},
            p + r"'d' must have stride\(-1\) == 1 \(its last dim contiguous\)",
        ),
        "d_expanded": (
            (expr, a, b, torch.zeros(1, 2, 8).bfloat16().expand(3, 2, 8)),
            {},
            p
            + r"'d' has elements that share memory \(e\.g\. an expanded tensor\); an output needs one location per element$",
        ),
        "c_given": (
            (expr, a, b, d, d),
            {},
            p + rf"'c' must be None for '{re.escape(expr)}' \(d is overwritten, nothing is accumulated\)$",
        ),
    }


@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("case", list(head_cases("bhr,hdr->bhd")))
def test_einsum_head_rejects(expr: str, case: str) -> None:
    args, kwargs, msg = head_cases(expr)[case]
    assert_rejected("einsum", args, kwargs, msg)


def fp8_head_cases(expr: str) -> dict[str, Case]:
    (x, sfx, y, sfy), *_ = fp8_case(expr, 2, 2, 256, 128)
    d = torch.randn(2, 2, 128).bfloat16()
    layout_a = "[b, h, ceil(r/128)]" if expr == "bhr,hdr->bhd" else "[b, h, ceil(d/128)]"
    want_b = "[2, 1, 2], got [1, 1, 2]" if expr == "bhr,hdr->bhd" else "[2, 2, 1], got [1, 2, 1]"
    p = "^fp8_einsum: argument "
    return {
        "recipe": (
            (expr, x, sfx, y, sfy, d),
            {"recipe": (1, 64, 128)},
            p + rf"'recipe' must be \(1, 128, 128\) or \(1, 1, 128\) for '{re.escape(expr)}', got \(1, 64, 128\)$",
        ),
        "recipe_gran_k": (
            (expr, x, sfx, y, sfy, d),
            {"recipe": (1, 128, 32)},
            p + r"'recipe' must be \(1, 128, 128\) or \(1, 1, 128\) for .* got \(1, 128, 32\)$",
        ),
        "recipe_length": (
            (expr, x, sfx, y, sfy, d),
            {"recipe": (1, 128)},
            p + r"'recipe' must have 3 entries, got 2 \(\[1, 128\]\)$",
        ),
        "a_dtype": ((expr, x.to(torch.bfloat16), sfx, y, sfy, d), {}, p + r"'a' must be Float8_e4m3fn, got BFloat16$"),
        "b_layout": (
            (expr, x, sfx, y.transpose(1, 2).contiguous().transpose(1, 2), sfy, d),
            {},
            p + r"'b' must have stride\(-1\) == 1 \(its last dim contiguous\)",
        ),
        "sfa_dtype": ((expr, x, sfx.double(), y, sfy, d), {}, p + r"'sfa' must be Float, got Double$"),
        "sfa_shape": (
            (expr, x, sfx[:, :, :1], y, sfy, d),
            {},
            p + rf"'sfa' must have shape {re.escape(layout_a)} = \[2, 2, 2\], got \[2, 2, 1\]$",
        ),
        "sfb_shape": (
            (expr, x, sfx, y, sfy[:1], d),
            {},
            p + rf"'sfb' must have shape \[h, ceil\(d/128\), ceil\(r/128\)\] = {re.escape(want_b)}$",
        ),
        "sfb_rank": ((expr, x, sfx, y, sfy[0], d), {}, p + r"'sfb' must be 3-D, got 2-D"),
        "h": ((expr, x, sfx, y[:1], sfy[:1], d), {}, p + r"'b' has h=1 \(dim 0\) but 'a' has h=2 \(dim 1\)$"),
        "d_dtype": ((expr, x, sfx, y, sfy, d.float()), {}, p + r"'d' must be BFloat16, got Float$"),
        "d_shape": ((expr, x, sfx, y, sfy, d[:1]), {}, p + r"'d' must have shape \[2, 2, 128\], got \[1, 2, 128\]$"),
        "c_given": ((expr, x, sfx, y, sfy, d, d), {}, p + rf"'c' must be None for '{re.escape(expr)}'"),
    }


def test_fp8_einsum_per_row_b_scale_shape_message() -> None:
    (x, sfx, y, sfy), *_ = fp8_case("bhr,hdr->bhd", 2, 2, 256, 24, per_row_b=True)
    d = torch.empty(2, 2, 24).bfloat16()
    msg = r"^fp8_einsum: argument 'sfb' must have shape \[h, d, ceil\(r/128\)\] = \[2, 24, 2\], got \[2, 23, 2\]$"
    assert_rejected("fp8_einsum", ("bhr,hdr->bhd", x, sfx, y, sfy[:, :23], d, None), {"recipe": (1, 1, 128)}, msg)
    # The default recipe (1, 128, 128) expects 128-row blocks of d instead.
    msg = r"^fp8_einsum: argument 'sfb' must have shape \[h, ceil\(d/128\), ceil\(r/128\)\] = \[2, 1, 2\], got \[2, 24, 2\]$"
    assert_rejected("fp8_einsum", ("bhr,hdr->bhd", x, sfx, y, sfy, d), {}, msg)


@pytest.mark.parametrize("expr", ["bhr,hdr->bhd", "bhd,hdr->bhr"])
@pytest.mark.parametrize("case", list(fp8_head_cases("bhr,hdr->bhd")))
def test_fp8_einsum_head_rejects(expr: str, case: str) -> None:
    args, kwargs, msg = fp8_head_cases(expr)[case]
    assert_rejected("fp8_einsum", args, kwargs, msg)


def fp8_wgrad_cases() -> dict[str, Case]:
    e = "bhd,bhr->hdr"
    (x, sfx, y, sfy), *_ = fp8_case(e, 130, 2, 8, 16)
    d = torch.randn(2, 8, 16)
    r3 = {"recipe": (1, 1, 128)}
    p = "^fp8_einsum: argument "
    return {
        "default_recipe": (
            (e, x, sfx, y, sfy, d, d),
            {},
            p
            + r"'recipe' must be \(1, 1, 128\) for 'bhd,bhr->hdr' \(per-channel scales over b\), got \(1, 128, 128\)$",
        ),
        "no_c": (
            (e, x, sfx, y, sfy, d),
            r3,
            p + r"'c' must be given for 'bhd,bhr->hdr' with a float32 'd' \(D = C \+ \.\.\.; pass d itself to "
            r"accumulate in place\), got None$",
        ),
        "d_dtype": ((e, x, sfx, y, sfy, d.bfloat16(), d.bfloat16()), r3, p + r"'d' must be Float, got BFloat16$"),
        "d_shape": (
            (e, x, sfx, y, sfy, d[:, :, :3], d[:, :, :3]),
            r3,
            p + r"'d' must have shape \[2, 8, 16\], got \[2, 8, 3\]$",
        ),
        "c_shape": ((e, x, sfx, y, sfy, d, d[:1]), r3, p + r"'c' must have shape \[2, 8, 16\], got \[1, 8, 16\]$"),
        "sfa_shape": (
            (e, x, sfx[:1], y, sfy, d, d),
            r3,
            p + r"'sfa' must have shape \[ceil\(b/128\), h, d\] = \[2, 2, 8\], got \[1, 2, 8\]$",
        ),
        "sfb_shape": (
            (e, x, sfx, y, sfy[:, :, :15], d, d),
            r3,
            p + r"'sfb' must have shape \[ceil\(b/128\), h, r\] = \[2, 2, 16\], got \[2, 2, 15\]$",
        ),
        "b": ((e, x, sfx, y[:129], sfy, d, d), r3, p + r"'b' has b=129 \(dim 0\) but 'a' has b=130 \(dim 0\)$"),
        "h": ((e, x, sfx, y[:, :1], sfy, d, d), r3, p + r"'b' has h=1 \(dim 1\) but 'a' has h=2 \(dim 1\)$"),
    }


@pytest.mark.parametrize("case", list(fp8_wgrad_cases()))
def test_fp8_einsum_bhd_bhr_hdr_rejects(case: str) -> None:
    args, kwargs, msg = fp8_wgrad_cases()[case]
    assert_rejected("fp8_einsum", args, kwargs, msg)


def test_legacy_pairs_are_required() -> None:
    args, *_ = fp8_case("bhr,hdr->bhd", 1, 1, 128, 16)
    d = torch.empty(1, 1, 16).bfloat16()
    with pytest.raises(TypeError, match=r"fp8_einsum: argument 'a' must be a \(tensor, scale\) pair"):
        deep_gemm._C.fp8_einsum("bhr,hdr->bhd", args[0], (args[2], args[3]), d)


# ---- samples: opcheck, immutability, entry points agree ------------------------------------------

SAMPLES = [(op, s) for op in ("einsum", "fp8_einsum") for s in load_all()[op](torch.device("cpu"))]


def written(op: str, args: tuple[Any, ...]) -> set[int]:
    names = OPS[op].schema.arg_names
    return {i for i, n in enumerate(names[: len(args)]) if n in ("d", "c")}


@pytest.mark.parametrize("op,sample", SAMPLES, ids=[f"{op}-{s.name}" for op, s in SAMPLES])
def test_inputs_immutable_and_entries_agree(op: str, sample: Any) -> None:
    results = []
    for entry in ENTRIES:
        s = clone_args(sample)
        inputs = {
            i: a.clone() for i, a in enumerate(s.args) if isinstance(a, torch.Tensor) and i not in written(op, s.args)
        }
        call(entry, op, s.args, s.kwargs)
        for i, before in inputs.items():
            assert torch.equal(before.view(torch.uint8), s.args[i].view(torch.uint8)), f"input {i} was modified"
        results.append(s.args[OPS[op].schema.arg_names.index("d")])
    for r in results[1:]:
        assert torch.equal(r, results[0])


# ---- legacy signatures ---------------------------------------------------------------------------


def signature(fn: Any) -> list[tuple[str, Any]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_legacy_signatures() -> None:
    empty = inspect.Parameter.empty
    for module in (deep_gemm._C, deep_gemm):
        assert signature(module.einsum) == [
            ("expr", empty),
            ("a", empty),
            ("b", empty),
            ("d", empty),
            ("c", None),
            ("use_cublaslt", False),
        ]
        assert signature(module.fp8_einsum) == [
            ("expr", empty),
            ("a", empty),
            ("b", empty),
            ("d", empty),
            ("c", None),
            ("recipe", (1, 128, 128)),
        ]
    assert deep_gemm.einsum is deep_gemm._C.einsum
    assert deep_gemm.fp8_einsum is deep_gemm._C.fp8_einsum
    schema = torch.ops.deep_gemm.fp8_einsum.default._schema
    assert [a.name for a in schema.arguments] == ["expr", "a", "sfa", "b", "sfb", "d", "c", "recipe"]
    assert [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write] == ["d"]
    schema = torch.ops.deep_gemm.einsum.default._schema
    assert [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write] == ["d"]
