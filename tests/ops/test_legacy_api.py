"""The legacy Python API: names, signatures, aliases and tuple unpacking, as users call it."""

from __future__ import annotations

import inspect

import pytest
import torch

import deep_gemm
from deep_gemm import _C
from tests.support.build import present
from tests.support.manifest import MANIFEST, OPS

P = inspect.Parameter
POS_ONLY = object()  # marker: every parameter positional-only

# (name, [(param, default or P.empty), ...], positional-only?) from upstream DeepGEMM's pybind11 registrations (the m.def calls of its csrc/apis/*.hpp).
GEMM_FP8 = [
    ("a", P.empty),
    ("b", P.empty),
    ("d", P.empty),
    ("c", None),
    ("recipe", None),
    ("recipe_a", None),
    ("recipe_b", None),
]
SPEC_SIGNATURES = {
    "set_num_sms": ([("new_num_sms", P.empty)], True),
    "get_num_sms": ([], False),
    "set_tc_util": ([("new_tc_util", P.empty)], True),
    "get_tc_util": ([], False),
    "set_pdl": ([("new_enable_pdl", P.empty)], True),
    "get_pdl": ([], False),
    "set_ignore_compile_dims": ([("new_value", P.empty)], True),
    "set_block_size_multiple_of": ([("value", P.empty)], True),
    "init": ([("library_root_path", P.empty), ("cuda_home_path_by_python", P.empty)], True),
    "transform_sf_into_required_layout": (
        [
            ("sf", P.empty),
            ("mn", P.empty),
            ("k", P.empty),
            ("recipe", P.empty),
            ("num_groups", None),
            ("is_sfa", None),
            ("disable_ue8m0_cast", False),
            ("psum_layout", None),
        ],
        False,
    ),
    "get_tma_aligned_size": ([("x", P.empty), ("element_size", P.empty)], True),
    "get_mn_major_tma_aligned_tensor": ([("sf", P.empty)], True),
    "get_mn_major_tma_aligned_packed_ue8m0_tensor": ([("sf", P.empty), ("psum_layout", None)], False),
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor": (
        [
            ("sf", P.empty),
            ("grouped_layout", P.empty),
            ("ks_cpu", P.empty),
            ("gran_k", P.empty),
            ("k_alignment", P.empty),
            ("use_psum_layout", False),
        ],
        False,
    ),
    "set_mk_alignment_for_contiguous_layout": ([("new_value", P.empty)], True),
    "get_mk_alignment_for_contiguous_layout": ([], False),
    "get_theoretical_mk_alignment_for_contiguous_layout": ([("expected_m", None)], False),
    "fp8_fp4_gemm_nt": ([*GEMM_FP8, ("compiled_dims", "nk"), ("disable_ue8m0_cast", False)], False),
    "fp8_fp4_gemm_nn": ([*GEMM_FP8, ("compiled_dims", "nk"), ("disable_ue8m0_cast", False)], False),
    "fp8_fp4_gemm_tn": ([*GEMM_FP8, ("compiled_dims", "mn"), ("disable_ue8m0_cast", False)], False),
    "fp8_fp4_gemm_tt": ([*GEMM_FP8, ("compiled_dims", "mn"), ("disable_ue8m0_cast", False)], False),
    "bf16_gemm_nt": ([("a", P.empty), ("b", P.empty), ("d", P.empty), ("c", None), ("compiled_dims", "nk")], False),
    "bf16_gemm_nn": ([("a", P.empty), ("b", P.empty), ("d", P.empty), ("c", None), ("compiled_dims", "nk")], False),
    "bf16_gemm_tn": ([("a", P.empty), ("b", P.empty), ("d", P.empty), ("c", None), ("compiled_dims", "mn")], False),
    "bf16_gemm_tt": ([("a", P.empty), ("b", P.empty), ("d", P.empty), ("c", None), ("compiled_dims", "mn")], False),
}
SPEC_ALIASES = {
    "fp8_gemm_nt": "fp8_fp4_gemm_nt",
    "fp8_gemm_nn": "fp8_fp4_gemm_nn",
    "fp8_gemm_tn": "fp8_fp4_gemm_tn",
    "fp8_gemm_tt": "fp8_fp4_gemm_tt",
}


@pytest.mark.parametrize("name", sorted(SPEC_SIGNATURES))
def test_signature_matches_upstream(name: str) -> None:
    expected, positional_only = SPEC_SIGNATURES[name]
    sig = inspect.signature(getattr(_C, name))
    got = [(p.name, p.default) for p in sig.parameters.values()]
    assert got == expected
    kinds = {p.kind for p in sig.parameters.values()}
    if positional_only:
        assert kinds <= {P.POSITIONAL_ONLY}
    else:
        assert P.POSITIONAL_ONLY not in kinds


@pytest.mark.parametrize("alias,target", sorted(SPEC_ALIASES.items()))
def test_alias_is_the_same_object(alias: str, target: str) -> None:
    assert getattr(_C, alias) is getattr(_C, target)
    assert getattr(deep_gemm, alias) is getattr(_C, target)


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_manifest_op_is_reachable_three_ways(op: str) -> None:
    entry = OPS[op]
    guard_on = entry.guard is None or present(op)
    if not guard_on:
        # A guard that is off in this build leaves no trace anywhere.
        for name in (op, *entry.aliases):
            assert not hasattr(_C, name) and not hasattr(deep_gemm, name)
        pytest.skip(f"guard '{entry.guard}' is off in this build")
    assert isinstance(getattr(torch.ops.deep_gemm, op).default, torch._ops.OpOverload)
    for name in (op, *entry.aliases):
        assert getattr(_C, name) is getattr(_C, op)
        if name in deep_gemm.mega.__all__:
            # deep_gemm.<name> is the Mega MoE wrapper that stages the SymmBuffer, as upstream.
            assert getattr(deep_gemm, name) is getattr(deep_gemm.mega, name)
        else:
            assert hasattr(deep_gemm, name) == entry.python.export
    assert getattr(_C, op).__doc__.strip().splitlines()[0] == entry.doc.splitlines()[0]


def test_registered_schemas_are_the_manifests() -> None:
    for op in MANIFEST.ops:
        if not present(op.name):
            continue
        registered = str(getattr(torch.ops.deep_gemm, op.name).default._schema)
        assert registered.startswith(f"deep_gemm::{op.name}(")
        assert len(getattr(torch.ops.deep_gemm, op.name).default._schema.arguments) == len(op.schema.args)


def test_tuple_unpacking_and_pack_errors() -> None:
    from tests.support.operands import fp8_per_block, fp8_per_token

    a, b = fp8_per_token(4, 128), fp8_per_block(8, 128)
    d1 = torch.empty(4, 8, dtype=torch.bfloat16)
    d2 = torch.empty(4, 8, dtype=torch.bfloat16)
    _C.fp8_gemm_nt(a, b, d1)  # tuples
    _C.fp8_gemm_nt(list(a), list(b), d2)  # lists work as they did under pybind11
    assert torch.equal(d1, d2)
    torch.ops.deep_gemm.fp8_fp4_gemm_nt(*a, *b, d2)
    assert torch.equal(d1, d2)
    with pytest.raises(TypeError, match=r"fp8_fp4_gemm_nt: argument 'a' must be a \(tensor, scale\) pair"):
        _C.fp8_gemm_nt(a[0], b, d1)
    with pytest.raises(TypeError, match=r"fp8_fp4_gemm_nt: argument 'b' must be a \(tensor, scale\) pair"):
        _C.fp8_gemm_nt(a, (b[0],), d1)
    with pytest.raises(TypeError, match=r"fp8_fp4_gemm_nt: argument 'b'"):
        _C.fp8_gemm_nt(a, None, d1)


def test_kwargs_and_positional_only() -> None:
    from tests.support.operands import fp8_per_token

    a, b = fp8_per_token(4, 128), fp8_per_token(8, 128)
    d = torch.empty(4, 8)
    ref = torch.empty(4, 8)
    _C.fp8_gemm_nt(a, b, ref, None, (1, 1, 128))
    _C.fp8_gemm_nt(a=a, b=b, d=d, recipe=(1, 1, 128), compiled_dims="nk", disable_ue8m0_cast=False)
    assert torch.equal(d, ref)
    with pytest.raises(TypeError):
        _C.set_num_sms(new_num_sms=1)  # positional-only, as the pybind11 lambda was
    with pytest.raises(TypeError):
        _C.fp8_gemm_nt(a, b, d, fused=True)  # an unknown keyword is rejected


def test_block_size_multiple_of_converter() -> None:
    old = _C.get_block_size_multiple_of()
    try:
        _C.set_block_size_multiple_of(64)
        assert _C.get_block_size_multiple_of() == [64, 64]
        _C.set_block_size_multiple_of((32, 128))
        assert _C.get_block_size_multiple_of() == [32, 128]
        with pytest.raises(TypeError, match="set_block_size_multiple_of: argument 'value' must be an int or a pair"):
            _C.set_block_size_multiple_of((1, 2, 3))
    finally:
        _C.set_block_size_multiple_of(tuple(old))
