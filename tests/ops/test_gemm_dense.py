"""Dense GEMMs against an independent float64 reference (D = C + (A*SFA)(B*SFB)^T)."""

from __future__ import annotations

import pytest
import torch

import deep_gemm
from deep_gemm import _C
from tests.support.operands import fp4_per_token, fp8_per_block, fp8_per_token
from tests.support.reference import F64, dequant_f64

# m = 1, ragged n (2112, 200), several k (incl. not a multiple of 128), empty m.
SHAPES = [(1, 2112, 256), (7, 200, 128), (64, 96, 384), (33, 2112, 200), (0, 64, 256), (5, 0, 128), (3, 40, 0)]


def reference(a, b, gran_a, gran_b, c=None):
    out = dequant_f64(*a, *gran_a) @ dequant_f64(*b, *gran_b).T
    return out if c is None else out + c.to(F64)


def assert_close_to(d: torch.Tensor, ref: torch.Tensor) -> None:
    """d must equal ref rounded to d's dtype, up to float32 accumulation order."""
    if d.numel() == 0:
        return
    scale = ref.abs().max().item() + 1e-30
    tol = (2**-8 if d.dtype == torch.bfloat16 else 2**-18) * scale
    err = (d.to(F64) - ref).abs().max().item()
    assert err <= tol, f"max error {err:.3e} > {tol:.3e}"
    assert deep_gemm.testing.calc_diff(d, ref) < (1e-5 if d.dtype == torch.bfloat16 else 1e-10)


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_fp8_default_recipe(m: int, n: int, k: int, out_dtype: torch.dtype) -> None:
    a, b = fp8_per_token(m, k), fp8_per_block(n, k)
    d = torch.full((m, n), float("nan"), dtype=out_dtype)
    _C.fp8_gemm_nt(a, b, d)
    if k == 0:
        assert torch.equal(d, torch.zeros_like(d))
    assert_close_to(d, reference(a, b, (1, 128), (128, 128)))


@pytest.mark.parametrize("m,n,k", [(1, 64, 256), (17, 2112, 384), (8, 24, 130)])
def test_fp8_per_row_recipe_with_accumulation_into_d(m: int, n: int, k: int) -> None:
    a, b = fp8_per_token(m, k), fp8_per_token(n, k)
    c = torch.randn(m, n)
    d = c.clone()
    deep_gemm.fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128))  # c is d itself: the wgrad path
    assert_close_to(d, reference(a, b, (1, 128), (1, 128), c))
    d2 = torch.empty(m, n)
    deep_gemm.fp8_gemm_nt(a, b, d2, c=c, recipe=(1, 1, 128))  # c separate: copied in first
    assert_close_to(d2, reference(a, b, (1, 128), (1, 128), c))


def test_fp8_packed_ue8m0_scales_default_to_per_row() -> None:
    a, b = fp8_per_token(9, 512, packed=True), fp8_per_token(40, 512, packed=True)
    assert a[1].dtype == torch.int32
    d = torch.empty(9, 40, dtype=torch.bfloat16)
    torch.ops.deep_gemm.fp8_fp4_gemm_nt(*a, *b, d)
    assert_close_to(d, reference(a, b, (1, 128), (1, 128)))


@pytest.mark.parametrize("gran_k_b", [32, 128])
def test_fp8_times_fp4_with_operand_recipes(gran_k_b: int) -> None:
    a, b = fp8_per_token(6, 256), fp4_per_token(48, 256, gran_k=gran_k_b)
    assert b[0].dtype == torch.int8 and b[0].shape == (48, 128)
    d = torch.empty(6, 48, dtype=torch.bfloat16)
    _C.fp8_fp4_gemm_nt(a, b, d, recipe_a=(1, 128), recipe_b=(1, gran_k_b))
    assert_close_to(d, reference(a, b, (1, 128), (1, gran_k_b)))


def test_fp4_times_fp4() -> None:
    a, b = fp4_per_token(5, 128), fp4_per_token(12, 128)
    d = torch.empty(5, 12)
    _C.fp8_fp4_gemm_nt(a, b, d, recipe_a=(1, 32), recipe_b=(1, 32))
    assert_close_to(d, reference(a, b, (1, 32), (1, 32)))


@pytest.mark.parametrize("layout", ["nn", "tn", "tt"])
def test_layout_variants_match_nt(layout: str) -> None:
    m, n, k = 12, 256, 384
    a, b = fp8_per_token(m, k), fp8_per_block(n, k)
    ref = reference(a, b, (1, 128), (128, 128))
    ta, tb = layout[0] == "t", layout[1] == "n"
    a_in = (a[0].t().contiguous(), a[1].t().contiguous()) if ta else a
    b_in = (b[0].t().contiguous(), b[1].t().contiguous()) if tb else b
    d = torch.empty(m, n, dtype=torch.bfloat16)
    getattr(_C, f"fp8_gemm_{layout}")(a_in, b_in, d)
    assert_close_to(d, ref)


@pytest.mark.parametrize("layout", ["nt", "nn", "tn", "tt"])
@pytest.mark.parametrize("m,n,k", [(1, 2112, 64), (31, 17, 96), (0, 8, 8)])
def test_bf16(layout: str, m: int, n: int, k: int) -> None:
    a = torch.randn(m, k).bfloat16()
    b = torch.randn(n, k).bfloat16()
    a_in = a.t().contiguous() if layout[0] == "t" else a
    b_in = b.t().contiguous() if layout[1] == "n" else b
    ref = a.to(F64) @ b.to(F64).T
    d = torch.empty(m, n, dtype=torch.bfloat16)
    getattr(deep_gemm, f"bf16_gemm_{layout}")(a_in, b_in, d)
    assert_close_to(d, ref)
    c = torch.randn(m, n)
    d32 = c.clone()
    getattr(deep_gemm, f"bf16_gemm_{layout}")(a_in, b_in, d32, d32)
    assert_close_to(d32, ref + c.to(F64))


# ---- bad input: a clear error naming the op and the argument, and d untouched ----------------


def _bad_calls():
    a, b = fp8_per_token(4, 256), fp8_per_block(8, 256)
    d = torch.empty(4, 8, dtype=torch.bfloat16)
    yield (
        "d dtype",
        (a, b, torch.empty(4, 8, dtype=torch.half)),
        {},
        ValueError,
        "fp8_fp4_gemm_nt: argument 'd' must be BFloat16 or Float, got Half",
    )
    yield (
        "d shape",
        (a, b, torch.empty(4, 9, dtype=torch.bfloat16)),
        {},
        ValueError,
        "argument 'd' must have shape [4, 8], got [4, 9]",
    )
    yield (
        "d stride",
        (a, b, torch.empty(8, 4, dtype=torch.bfloat16).t()),
        {},
        ValueError,
        "argument 'd' must be row-major",
    )
    yield (
        "a dtype",
        ((a[0].float(), a[1]), b, d),
        {},
        ValueError,
        "argument 'a' must be Float8_e4m3fn or Char, got Float",
    )
    yield "k mismatch", (a, fp8_per_block(8, 128), d), {}, ValueError, "argument 'b' has K=128 but 'a' has K=256"
    yield (
        "sfa shape",
        ((a[0], a[1][:, :1]), b, d),
        {},
        ValueError,
        "argument 'sfa' must have shape [4, 2] for granularity (1, 128), got [4, 1]",
    )
    yield "recipe length", (a, b, d), {"recipe": (1, 128)}, ValueError, "argument 'recipe' must have 3 entries, got 2"
    yield (
        "recipe values",
        (a, b, d),
        {"recipe": (1, 64, 128)},
        ValueError,
        "argument 'recipe' must give B an MN granularity of 1 or 128, got 64",
    )
    yield (
        "recipe and recipe_a",
        (a, b, d),
        {"recipe": (1, 128, 128), "recipe_a": (1, 128), "recipe_b": (1, 128)},
        ValueError,
        "argument 'recipe' cannot be combined with recipe_a/recipe_b",
    )
    yield (
        "recipe_a alone",
        (a, b, d),
        {"recipe_a": (1, 128)},
        ValueError,
        "argument 'recipe_b' must be given together with recipe_a",
    )
    yield (
        "compiled_dims",
        (a, b, d),
        {"compiled_dims": "nx"},
        ValueError,
        "argument 'compiled_dims' must list distinct dims",
    )
    yield (
        "c shape",
        (a, b, d),
        {"c": torch.zeros(4, 7, dtype=torch.bfloat16)},
        ValueError,
        "argument 'c' must have shape [4, 8]",
    )
    yield "1-d a", ((a[0][0], a[1]), b, d), {}, ValueError, "argument 'a' must be 2-D, got 1-D"


@pytest.mark.parametrize("case", list(_bad_calls()), ids=lambda c: c[0])
def test_bad_input_names_op_and_argument(case) -> None:
    _, args, kwargs, exc, message = case
    d = args[2]
    d.copy_(torch.randn(d.shape))
    before = d.clone()
    with pytest.raises(exc, match="^fp8_fp4_gemm_nt: ") as info:
        _C.fp8_gemm_nt(*args, **kwargs)
    assert message.split(": ", 1)[-1] in str(info.value)
    assert torch.equal(d, before), "a rejected call wrote into d"


def test_bad_input_through_torch_ops_and_layout_variant() -> None:
    a, b = fp8_per_token(4, 256), fp8_per_block(8, 256)
    with pytest.raises(ValueError, match="^fp8_fp4_gemm_nn: argument 'b' must be 2-D, got 1-D"):
        torch.ops.deep_gemm.fp8_fp4_gemm_nn(*a, b[0][0], b[1], torch.empty(4, 8))
    with pytest.raises(ValueError, match="^bf16_gemm_nt: argument 'a' must be BFloat16, got Float"):
        deep_gemm.bf16_gemm_nt(torch.randn(2, 8), torch.randn(3, 8).bfloat16(), torch.empty(2, 3))


@pytest.mark.gpu
def test_device_mismatch_is_named() -> None:
    a, b = fp8_per_token(4, 256), fp8_per_block(8, 256)
    d = torch.empty(4, 8, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="^fp8_fp4_gemm_nt: argument 'a' is on cpu but 'd' is on cuda"):
        _C.fp8_gemm_nt(a, (b[0].cuda(), b[1].cuda()), d)
