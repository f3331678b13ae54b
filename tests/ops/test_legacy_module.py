"""deep_gemm.legacy: the BF16 grouped GEMMs with DeepGEMM's legacy names.

CPU calls run the package's reference; CUDA calls run the Triton kernels (the gpu tests),
and the kernels themselves also run in Triton's CPU interpreter when Triton is installed.
Expected values are float64 references from tests/support/legacy_cases.py on fresh random inputs.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import deep_gemm
from deep_gemm import legacy
from deep_gemm.testing import calc_diff
from tests.support.legacy_cases import (
    MGrouped,
    assert_close,
    k_grouped_case,
    k_grouped_ref,
    m_grouped_case,
    m_grouped_ref,
)

ROOT = Path(__file__).resolve().parents[2]
BF16 = torch.bfloat16


def _m_call(layout: str, fused: bool, case: MGrouped, d: torch.Tensor) -> None:
    name = f"{'a_fused_' if fused else ''}m_grouped_bf16_gemm_{layout}_contiguous_tl"
    b = case.b if layout == "nt" else case.b.transpose(1, 2)  # nn takes B as [G, K, N]
    index = (case.groups, case.row_map) if fused else case.groups
    getattr(legacy, name)(case.a, b, d, index)


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("n_major_b", [False, True])
def test_m_grouped(layout: str, fused: bool, n_major_b: bool, device: torch.device) -> None:
    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    case = m_grouped_case([150, 0, 37, 256], 96, 72, align, BF16, fused, n_major_b, str(device))
    d = torch.full((case.groups.numel(), 96), float("nan"), dtype=BF16, device=device)
    _m_call(layout, fused, case, d)
    ref, bound = m_grouped_ref(case)
    assert_close(d, ref, bound, 72, f"{layout} fused={fused}")
    assert calc_diff(d.cpu(), ref) < 1e-3
    padding = (case.groups < 0).cpu()
    assert padding.any() and torch.equal(d.cpu()[padding], torch.zeros_like(d.cpu()[padding]))


@pytest.mark.parametrize("fused", ["a", "b"])
@pytest.mark.parametrize("acc", [False, True])
@pytest.mark.parametrize("out_dtype", [torch.float32, BF16])
def test_k_grouped(fused: str, acc: bool, out_dtype: torch.dtype, device: torch.device) -> None:
    case = k_grouped_case([128, 0, 40, 256], 80, 48, BF16, fused == "a", str(device), gap=5)
    d0 = torch.randn(4, 80, 48, device=device).to(out_dtype)
    d = d0.clone()
    fn = getattr(legacy, f"{fused}_fused_k_grouped_bf16_gemm_tn_contiguous_tl")
    fn(case.a, case.b, d, (case.k_map, case.k_start, case.k_end), acc)
    ref, bound = k_grouped_ref(case, d0, acc)
    assert_close(d, ref, bound, 256, f"{fused}-fused acc={acc}")
    assert calc_diff(d.cpu(), ref) < 1e-3
    # Group 1 is empty: it keeps d0 with acc and becomes zero without.
    assert torch.equal(d[1], d0[1] if acc else torch.zeros_like(d0[1]))


def test_the_names_upstream_scripts_call() -> None:
    expected = {
        "m_grouped_bf16_gemm_nt_contiguous_tl",
        "m_grouped_bf16_gemm_nn_contiguous_tl",
        "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl",
        "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
        "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
        "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
    }
    assert set(legacy.__all__) == expected
    assert all(callable(getattr(legacy, n)) for n in expected)


def _m_args() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    case = m_grouped_case([10], 32, 16, align, BF16, False, False, "cpu")
    return case.a, case.b, torch.randn(case.groups.numel(), 32).to(BF16), case.groups


def test_bad_m_grouped_arguments_name_function_and_argument() -> None:
    a, b, d, groups = _m_args()
    d0 = d.clone()
    fn = legacy.m_grouped_bf16_gemm_nt_contiguous_tl
    p = "m_grouped_bf16_gemm_nt_contiguous_tl: argument"
    with pytest.raises(ValueError, match=f"^{p} 'a' must be bfloat16, got float32$"):
        fn(a.float(), b, d, groups)
    with pytest.raises(ValueError, match=f"^{p} 'm_indices' must be int32, got int64$"):
        fn(a, b, d, groups.long())
    with pytest.raises(ValueError, match=rf"^{p} 'a' has size 15 in dim 1, expected 16 \(K"):
        fn(a[:, :15].contiguous(), b, d, groups)
    with pytest.raises(ValueError, match=f"^{p} 'd' has {d.size(0) - 1} rows, not a multiple of the contiguous"):
        fn(a[1:], b, d[1:], groups[1:])
    with pytest.raises(TypeError, match=f"^{p} 'b' must be a torch.Tensor, got list$"):
        fn(a, [b], d, groups)
    with pytest.raises(
        TypeError, match="^a_fused_m_grouped_bf16_gemm_nt_contiguous_tl: argument 'mappings' must be a tuple of 2"
    ):
        legacy.a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, groups)
    with pytest.raises(
        ValueError, match=r"^m_grouped_bf16_gemm_nn_contiguous_tl: argument 'a' has size 16 in dim 1, expected 32"
    ):
        legacy.m_grouped_bf16_gemm_nn_contiguous_tl(a, b, d, groups)  # b read as [G, K, N]
    assert torch.equal(d, d0)  # rejected calls leave d alone


def test_bad_k_grouped_arguments_name_function_and_argument() -> None:
    case = k_grouped_case([32, 16], 16, 24, BF16, True, "cpu")
    d = torch.zeros(2, 16, 24)
    handle = (case.k_map, case.k_start, case.k_end)
    fn = legacy.a_fused_k_grouped_bf16_gemm_tn_contiguous_tl
    p = "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl: argument"
    with pytest.raises(TypeError, match=f"^{p} 'acc' must be a bool, got int$"):
        fn(case.a, case.b, d, handle, 1)
    with pytest.raises(TypeError, match=f"^{p} 'handle' must be a tuple of 3 tensors"):
        fn(case.a, case.b, d, handle[:2], True)
    with pytest.raises(ValueError, match=rf"^{p} 'handle\[1\]' has size 1 in dim 0, expected 2 \(one start per group"):
        fn(case.a, case.b, d, (case.k_map, case.k_start[:1], case.k_end), True)
    with pytest.raises(ValueError, match=rf"^{p} 'd' must be float32 or bfloat16, got float16$"):
        fn(case.a, case.b, d.half(), handle, True)
    with pytest.raises(ValueError, match=rf"^{p} 'handle\[0\]' has size 47 in dim 0, expected 48"):
        fn(case.a, case.b, d, (case.k_map[1:], case.k_start, case.k_end), False)
    assert torch.equal(d, torch.zeros_like(d))  # rejected calls leave d alone


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
@pytest.mark.skipif(
    torch.cuda.is_available(), reason="with a GPU the kernels run compiled (test_m_grouped, test_k_grouped)"
)
def test_triton_kernels_in_the_interpreter() -> None:
    # The kernels' own code (not the CPU reference), run by Triton's interpreter on the CPU.
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "legacy_cases.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "interpreter checks passed" in proc.stdout
