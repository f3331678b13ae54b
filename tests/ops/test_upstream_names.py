"""Every public name DeepGEMM 2.6.1 (commit 54e2261) exports from deep_gemm, deep_gemm.testing,
deep_gemm.utils, deep_gemm.utils.dist, deep_gemm.mega and deep_gemm.legacy exists here.

The lists are written out: they are facts about that release, not derived from this package.
Left out are names its modules expose only by accident of a star import (``torch``, ``os``,
``Tuple`` and the like, and the submodules ``math``/``layout``/``dist`` leaking into deep_gemm).
"""

from __future__ import annotations

import importlib

import pytest

RUNTIME = [
    "set_num_sms",
    "get_num_sms",
    "set_tc_util",
    "get_tc_util",
    "set_ignore_compile_dims",
    "set_block_size_multiple_of",
    "set_pdl",
    "get_pdl",
]
CUBLASLT = ["cublaslt_gemm_nt", "cublaslt_gemm_nn", "cublaslt_gemm_tn", "cublaslt_gemm_tt"]
KERNELS = [
    "fp8_fp4_gemm_nt",
    "fp8_fp4_gemm_nn",
    "fp8_fp4_gemm_tn",
    "fp8_fp4_gemm_tt",
    "m_grouped_fp8_fp4_gemm_nt_contiguous",
    "m_grouped_fp8_fp4_gemm_nn_contiguous",
    "m_grouped_fp8_fp4_gemm_nt_masked",
    "fp8_gemm_nt",
    "fp8_gemm_nn",
    "fp8_gemm_tn",
    "fp8_gemm_tt",
    "fp8_gemm_nt_skip_head_mid",
    "m_grouped_fp8_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nn_contiguous",
    "m_grouped_fp8_gemm_nt_masked",
    "k_grouped_fp8_gemm_nt_contiguous",
    "k_grouped_fp8_gemm_tn_contiguous",
    "bf16_gemm_nt",
    "bf16_gemm_nn",
    "bf16_gemm_tn",
    "bf16_gemm_tt",
    "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous",
    "m_grouped_bf16_gemm_nt_masked",
    "k_grouped_bf16_gemm_tn_contiguous",
    "einsum",
    "fp8_einsum",
    "fp8_fp4_mqa_logits",
    "get_paged_mqa_logits_metadata",
    "fp8_fp4_paged_mqa_logits",
    "fp8_mqa_logits",
    "fp8_paged_mqa_logits",
    "tf32_hc_prenorm_gemm",
    "transform_sf_into_required_layout",
    "fp8_m_grouped_gemm_nt_masked",
    "bf16_m_grouped_gemm_nt_masked",
]
MEGA = [
    "SymmBuffer",
    "get_symm_buffer_for_mega_moe",
    "transform_weights_for_mega_moe",
    "fp8_fp4_mega_moe",
    "bf16_mega_moe",
]
UTILS_MATH = [
    "ceil_div",
    "align",
    "ceil_to_ue8m0",
    "pack_ue8m0_to_int",
    "per_token_cast_to_fp8",
    "per_channel_cast_to_fp8",
    "per_block_cast_to_fp8",
    "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4",
    "transpose_packed_fp4",
    "unpack_ue8m0_from_int",
    "cast_back_from_fp4",
]
UTILS_LAYOUT = [
    "get_tma_aligned_size",
    "get_mn_major_tma_aligned_tensor",
    "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
    "set_mk_alignment_for_contiguous_layout",
    "get_mk_alignment_for_contiguous_layout",
    "get_theoretical_mk_alignment_for_contiguous_layout",
    "get_m_alignment_for_contiguous_layout",
    "get_k_alignment_for_contiguous_layout",
]
UTILS_DIST = ["init_dist", "uneven_all_gather", "dist_print"]
UTILS = [*UTILS_MATH, *UTILS_LAYOUT, "init_dist", "uneven_all_gather", "math", "layout", "dist"]
TESTING = [
    "bench",
    "bench_kineto",
    "empty_suppress",
    "suppress_stdout_stderr",
    "calc_diff",
    "count_bytes",
    "assert_bitwise_equal",
    "get_arch_major",
    "test_filter",
    "ignore_env",
    "numeric",
    "utils",
]
LEGACY = [
    "m_grouped_bf16_gemm_nt_contiguous_tl",
    "m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
    "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
]
TOP = [
    *RUNTIME,
    *CUBLASLT,
    *KERNELS,
    *MEGA,
    *UTILS_MATH,
    *UTILS_LAYOUT,
    "init_dist",
    "uneven_all_gather",
    "testing",
    "utils",
    "legacy",
    "mega",
    "__version__",
]

MODULES = {
    "deep_gemm": TOP,
    "deep_gemm.testing": TESTING,
    "deep_gemm.utils": UTILS,
    "deep_gemm.utils.dist": UTILS_DIST,
    "deep_gemm.mega": MEGA,
    "deep_gemm.legacy": LEGACY,
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_name_is_importable(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name in MODULES[module] if not hasattr(mod, name)]
    assert not missing, f"{module} lacks {missing}"
    for name in MODULES[module]:
        # `from <module> import <name>`, the form scripts use, finds each one.
        exec(f"from {module} import {name}", {})


def test_names_are_what_they_are_upstream() -> None:
    import types

    import deep_gemm
    from deep_gemm import testing, utils

    assert deep_gemm.__version__ == "2.6.1"
    for name in (*RUNTIME, *CUBLASLT, *KERNELS, *UTILS_MATH, *UTILS_LAYOUT, *LEGACY, *TESTING[:10]):
        owner = deep_gemm.legacy if name in LEGACY else testing if name in TESTING else deep_gemm
        assert callable(getattr(owner, name)), name
    for name in ("testing", "utils", "legacy", "mega"):
        assert isinstance(getattr(deep_gemm, name), types.ModuleType)
    assert isinstance(utils.dist, types.ModuleType) and isinstance(testing.numeric, types.ModuleType)
    assert testing.bench.__module__ == "deep_gemm.testing.bench"  # the function, not its module
    assert deep_gemm.fp8_m_grouped_gemm_nt_masked is deep_gemm.m_grouped_fp8_gemm_nt_masked
    assert deep_gemm.bf16_m_grouped_gemm_nt_masked is deep_gemm.m_grouped_bf16_gemm_nt_masked
    assert deep_gemm.get_m_alignment_for_contiguous_layout is deep_gemm.get_mk_alignment_for_contiguous_layout
    assert isinstance(deep_gemm.SymmBuffer, type)
