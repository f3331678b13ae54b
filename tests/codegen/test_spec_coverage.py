"""Nothing goes missing: every name upstream DeepGEMM's pybind11 module binds is in ops.yaml."""

from __future__ import annotations

import pytest

from tests.support.manifest import MANIFEST

# The 52 m.def registrations of upstream DeepGEMM's pybind11 module, per header of its csrc/apis/.
SPEC_OPS = {
    "runtime": [
        "set_num_sms",
        "get_num_sms",
        "set_tc_util",
        "get_tc_util",
        "set_pdl",
        "get_pdl",
        "set_ignore_compile_dims",
        "set_block_size_multiple_of",
        "init",
    ],
    "layout": [
        "transform_sf_into_required_layout",
        "get_tma_aligned_size",
        "get_mn_major_tma_aligned_tensor",
        "get_mn_major_tma_aligned_packed_ue8m0_tensor",
        "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
        "set_mk_alignment_for_contiguous_layout",
        "get_mk_alignment_for_contiguous_layout",
        "get_theoretical_mk_alignment_for_contiguous_layout",
    ],
    "gemm": [
        "fp8_fp4_gemm_nt",
        "fp8_fp4_gemm_nn",
        "fp8_fp4_gemm_tn",
        "fp8_fp4_gemm_tt",
        "m_grouped_fp8_fp4_gemm_nt_contiguous",
        "m_grouped_fp8_fp4_gemm_nn_contiguous",
        "m_grouped_fp8_fp4_gemm_nt_masked",
        "k_grouped_fp8_gemm_tn_contiguous",
        "k_grouped_fp8_gemm_nt_contiguous",
        "bf16_gemm_nt",
        "bf16_gemm_nn",
        "bf16_gemm_tn",
        "bf16_gemm_tt",
        "m_grouped_bf16_gemm_nt_contiguous",
        "m_grouped_bf16_gemm_nn_contiguous",
        "m_grouped_bf16_gemm_nt_masked",
        "k_grouped_bf16_gemm_tn_contiguous",
        "cublaslt_gemm_nt",
        "cublaslt_gemm_nn",
        "cublaslt_gemm_tn",
        "cublaslt_gemm_tt",
    ],
    "einsum": ["einsum", "fp8_einsum"],
    "attention": [
        "fp8_gemm_nt_skip_head_mid",
        "fp8_fp4_mqa_logits",
        "get_paged_mqa_logits_metadata",
        "fp8_fp4_paged_mqa_logits",
        "fp8_mqa_logits",
        "fp8_paged_mqa_logits",
    ],
    "hyperconnection": ["tf32_hc_prenorm_gemm"],
    "mega": [
        "get_token_alignment_for_mega_moe",
        "get_ring_limit_for_mega_moe",
        "get_symm_buffer_size_for_mega_moe",
        "fp8_fp4_mega_moe",
        "bf16_mega_moe",
    ],
}
# The 7 m.attr aliases, plus the legacy aliases upstream's deep_gemm/__init__.py exports.
SPEC_ALIASES = {
    "fp8_gemm_nt": "fp8_fp4_gemm_nt",
    "fp8_gemm_nn": "fp8_fp4_gemm_nn",
    "fp8_gemm_tn": "fp8_fp4_gemm_tn",
    "fp8_gemm_tt": "fp8_fp4_gemm_tt",
    "m_grouped_fp8_gemm_nt_contiguous": "m_grouped_fp8_fp4_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nn_contiguous": "m_grouped_fp8_fp4_gemm_nn_contiguous",
    "m_grouped_fp8_gemm_nt_masked": "m_grouped_fp8_fp4_gemm_nt_masked",
    "fp8_m_grouped_gemm_nt_masked": "m_grouped_fp8_fp4_gemm_nt_masked",
    "bf16_m_grouped_gemm_nt_masked": "m_grouped_bf16_gemm_nt_masked",
}


def test_counts_match_the_spec() -> None:
    assert sum(len(v) for v in SPEC_OPS.values()) == 52


@pytest.mark.parametrize("family,name", [(f, n) for f, names in SPEC_OPS.items() for n in names])
def test_spec_op_is_in_the_manifest(family: str, name: str) -> None:
    ops = {op.name: op for op in MANIFEST.ops}
    assert name in ops, f"spec op '{name}' is missing from ops.yaml"
    assert ops[name].family == family


@pytest.mark.parametrize("alias,target", sorted(SPEC_ALIASES.items()))
def test_spec_alias_is_in_the_manifest(alias: str, target: str) -> None:
    ops = {op.name: op for op in MANIFEST.ops}
    assert alias in ops[target].aliases
