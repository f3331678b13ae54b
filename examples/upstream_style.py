"""deep_gemm used the way DeepGEMM's own test and benchmark scripts use it.

Each case builds inputs as those scripts do (random bf16 values quantised with the
``deep_gemm.utils`` casts, ``(data, scale)`` pairs, contiguous grouped layouts padded with
-1 rows), calls the op under its DeepGEMM name (aliases included: ``fp8_gemm_nt``,
``m_grouped_fp8_gemm_nt_contiguous``, ``bf16_m_grouped_gemm_nt_masked``, ...), checks the
result with ``calc_diff`` and times it with ``bench_kineto`` under the kernel-name substring
those scripts pass (``gemm_``, ``bf16_gemm``, ``nvjet``, ``bmn_bnk_mn_gemm_impl``, ...).

On a GPU the profile looks for CUDA kernels; a substring found in no kernel prints as
"not in the profile" (``--require-kernel-names`` turns that into a failure). Without a GPU
the same cases run on the CPU at small sizes and ``bench_kineto`` times the CPU operators
(``deep_gemm::<op>``). Exit status: 0 when every check passed.

    python examples/upstream_style.py [--require-kernel-names]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import deep_gemm
from deep_gemm.testing import bench_kineto, calc_diff, count_bytes, get_arch_major, test_filter
from deep_gemm.utils import align, get_mk_alignment_for_contiguous_layout, per_block_cast_to_fp8, per_token_cast_to_fp8

GPU = torch.cuda.is_available()
DEV = "cuda" if GPU else "cpu"
# Sizes: DeepSeek-V3 shapes on the GPU, the same structure scaled down on the CPU.
SCALE = 1 if GPU else 16


@dataclass
class Case:
    label: str
    op: str  # the deep_gemm op that runs (its CPU operator is deep_gemm::<op>)
    kernel: str  # the substring DeepGEMM's scripts profile for on the GPU
    run: Callable[[], object]
    diff: Callable[[], float]
    tolerance: float
    flops: int
    tensors: tuple[torch.Tensor, ...]


def randn(*shape: int, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    return torch.randn(shape, device=DEV, dtype=dtype)


def fp8_gemm() -> Case:
    m, n, k = 4096 // SCALE, 2112 // SCALE * 2, 7168 // SCALE
    a, b = randn(m, k), randn(n, k)
    use_ue8m0 = get_arch_major() >= 10
    a_fp8, b_fp8 = per_token_cast_to_fp8(a, use_ue8m0=use_ue8m0), per_block_cast_to_fp8(b, use_ue8m0=use_ue8m0)
    d = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    ref = a.float() @ b.float().t()

    def run() -> None:
        deep_gemm.fp8_gemm_nt(a_fp8, b_fp8, d, c=None, disable_ue8m0_cast=not use_ue8m0)

    return Case(
        "fp8_gemm_nt",
        "fp8_fp4_gemm_nt",
        "gemm_",
        run,
        lambda: calc_diff(d, ref),
        1e-3,
        2 * m * n * k,
        (*a_fp8, *b_fp8, d),
    )


def m_grouped_fp8() -> Case:
    groups, n, k = 4, 4096 // SCALE, 7168 // SCALE
    alignment = get_mk_alignment_for_contiguous_layout()
    real = [int((1024 // SCALE) * f) + 1 for f in (0.8, 1.1, 0.9, 1.2)]
    m = sum(align(r, alignment) for r in real)
    a, b = randn(m, k), randn(groups, n, k)
    layout = torch.full((m,), -1, device=DEV, dtype=torch.int32)
    ref = torch.zeros(m, n, device=DEV)
    start = 0
    for g, r in enumerate(real):
        layout[start : start + r] = g
        ref[start : start + r] = a[start : start + r].float() @ b[g].float().t()
        start += align(r, alignment)
    a_fp8 = per_token_cast_to_fp8(a, use_ue8m0=False)
    b_pairs = [per_block_cast_to_fp8(b[g], use_ue8m0=False) for g in range(groups)]
    b_fp8 = (torch.stack([p[0] for p in b_pairs]), torch.stack([p[1] for p in b_pairs]))
    d = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    rows = layout >= 0

    def run() -> None:
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(a_fp8, b_fp8, d, layout)

    flops = 2 * sum(real) * n * k
    return Case(
        "m_grouped_fp8_gemm_nt_contiguous",
        "m_grouped_fp8_fp4_gemm_nt_contiguous",
        "gemm_",
        run,
        lambda: calc_diff(d[rows], ref[rows]),
        1e-3,
        flops,
        (*a_fp8, *b_fp8, d),
    )


def bf16_gemm() -> Case:
    m, n, k = 4096 // SCALE, 7168 // SCALE, 2048 // SCALE
    a, b = randn(m, k), randn(n, k)
    c = randn(m, n, dtype=torch.float) * 32
    d = c.clone()
    ref = c + a.float() @ b.float().t()

    def run() -> None:
        d.copy_(c)
        deep_gemm.bf16_gemm_nt(a, b, d, c=d)

    return Case(
        "bf16_gemm_nt (+c)", "bf16_gemm_nt", "bf16_gemm", run, lambda: calc_diff(d, ref), 1e-5, 2 * m * n * k, (a, b, d)
    )


def bf16_masked() -> Case:
    groups, max_m, n, k = 6, 1024 // SCALE, 4096 // SCALE, 7168 // SCALE
    a, b = randn(groups, max_m, k), randn(groups, n, k)
    masked_m = torch.tensor([max_m * f // 10 for f in (7, 10, 3, 9, 0, 5)], device=DEV, dtype=torch.int32)
    d = torch.empty(groups, max_m, n, device=DEV, dtype=torch.bfloat16)
    ref = torch.einsum("gmk,gnk->gmn", a.float(), b.float())

    def diff() -> float:
        return max(
            calc_diff(d[g, : int(masked_m[g])], ref[g, : int(masked_m[g])]) for g in range(groups) if masked_m[g]
        )

    def run() -> None:
        deep_gemm.bf16_m_grouped_gemm_nt_masked(a, b, d, masked_m, max_m // 2)  # the legacy alias

    return Case(
        "bf16_m_grouped_gemm_nt_masked",
        "m_grouped_bf16_gemm_nt_masked",
        "bf16_gemm",
        run,
        diff,
        1e-5,
        2 * int(masked_m.sum()) * n * k,
        (a, b, d),
    )


def cublaslt() -> Case:
    m, n, k = 4096 // SCALE, 2112 // SCALE * 2, 7168 // SCALE
    a, b = randn(m, k), randn(n, k)
    d = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    ref = a.float() @ b.float().t()
    return Case(
        "cublaslt_gemm_nt",
        "cublaslt_gemm_nt",
        "nvjet",
        lambda: deep_gemm.cublaslt_gemm_nt(a, b, d),
        lambda: calc_diff(d, ref),
        1e-5,
        2 * m * n * k,
        (a, b, d),
    )


def einsum_bmk() -> Case:
    s, m, n, k = 4096 // SCALE, 256, 256, 256
    a, b = randn(s, m, k), randn(s, n, k)
    d = randn(m, n, dtype=torch.float)
    ref = d + torch.bmm(a.float(), b.float().mT).sum(0)
    return Case(
        "einsum bmk,bnk->mn",
        "einsum",
        "bmn_bnk_mn_gemm_impl",
        lambda: deep_gemm.einsum("bmk,bnk->mn", a, b, d, c=d),
        lambda: calc_diff(d, ref),
        1e-5,
        2 * s * m * n * k,
        (a, b, d),
    )


def einsum_bhr() -> Case:
    b_, h, r, dd = 4096 // SCALE, 8, 4096 // SCALE, 1024 // SCALE
    x = randn(b_, h, r)
    y = randn(h, dd, r + 128)[:, :, :r]  # a strided slice, as the scripts pass it
    z = torch.empty(b_, h, dd, device=DEV, dtype=torch.bfloat16)
    ref = torch.einsum("bhr,hdr->bhd", x, y)
    return Case(
        "einsum bhr,hdr->bhd",
        "einsum",
        "gemm",
        lambda: deep_gemm.einsum("bhr,hdr->bhd", x, y, z),
        lambda: calc_diff(z, ref),
        1e-10,
        2 * b_ * h * r * dd,
        (x, y, z),
    )


def hc_prenorm() -> Case:
    m, n, k = 4096 // SCALE, 24, 7168 // SCALE
    a, b = randn(m, k), randn(n, k, dtype=torch.float)
    d = torch.empty(m, n, device=DEV)
    s = torch.empty(m, device=DEV)
    ref_d, ref_s = a.double() @ b.double().t(), a.double().square().sum(-1)
    return Case(
        "tf32_hc_prenorm_gemm",
        "tf32_hc_prenorm_gemm",
        "tf32_hc_prenorm_gemm",
        lambda: deep_gemm.tf32_hc_prenorm_gemm(a, b, d, s),
        lambda: max(calc_diff(d, ref_d), calc_diff(s, ref_s)),
        1e-5,
        2 * m * n * k,
        (a, b, d, s),
    )


def legacy_m_grouped() -> Case:
    groups, n, k = 4, 4096 // SCALE, 2048 // SCALE
    alignment = get_mk_alignment_for_contiguous_layout()
    real = [int((2048 // SCALE) * f) + 1 for f in (0.7, 1.3, 1.0, 0.9)]
    m = sum(align(r, alignment) for r in real)
    a, b = randn(m, k), randn(groups, n, k)
    m_indices = torch.full((m,), -1, device=DEV, dtype=torch.int32)
    ref = torch.zeros(m, n, device=DEV)
    start = 0
    for g, r in enumerate(real):
        m_indices[start : start + r] = g
        ref[start : start + r] = a[start : start + r].float() @ b[g].float().t()
        start += align(r, alignment)
    d = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    # On the CPU, deep_gemm.legacy runs the package's m-grouped GEMM.
    op = "Triton" if GPU else "m_grouped_bf16_gemm_nt_contiguous"
    return Case(
        "legacy.m_grouped_bf16_gemm_nt_contiguous_tl",
        op,
        "m_grouped_bf16_gemm_contiguous_tl_impl",
        lambda: deep_gemm.legacy.m_grouped_bf16_gemm_nt_contiguous_tl(a, b, d, m_indices),
        lambda: calc_diff(d, ref),
        1e-3,
        2 * sum(real) * n * k,
        (a, b, d),
    )


CASES = [
    fp8_gemm,
    m_grouped_fp8,
    bf16_gemm,
    bf16_masked,
    cublaslt,
    einsum_bmk,
    einsum_bhr,
    hc_prenorm,
    legacy_m_grouped,
]


def run_case(build: Callable[[], Case], require_kernel_names: bool) -> bool:
    case = build()
    case.run()
    diff = case.diff()
    ok = diff < case.tolerance
    name = case.kernel if GPU else f"deep_gemm::{case.op}"
    try:
        t = bench_kineto(case.run, name, num_tests=10 if GPU else 2, suppress_kineto_output=True)
    except AssertionError as e:  # the name matches several different kernels
        t, timing = 0.0, str(e).removeprefix("bench_kineto: ")
    else:
        timing = f"'{name}' not in the profile"
    if t:
        timing = (
            f"{t * 1e6:9.1f} us | {case.flops / t / 1e12:7.1f} TFLOPS | {count_bytes(case.tensors) / t / 1e9:6.0f} GB/s"
        )
    else:
        ok = ok and not (GPU and require_kernel_names)
    verdict = "ok" if ok else "FAIL"
    print(f" {verdict:4} {case.label:45} diff {diff:.2e} (< {case.tolerance:.0e}) | {timing}")
    return ok


@test_filter(lambda: get_arch_major() >= 9)
def gpu_note() -> None:
    print(
        f"GPU: {torch.cuda.get_device_name()} (sm{get_arch_major()}x), kernel names as DeepGEMM's scripts profile them"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--require-kernel-names", action="store_true", help="fail when a kernel name is not found")
    args = parser.parse_args()
    torch.manual_seed(0)
    if GPU:
        gpu_note()
    else:
        print("no GPU: CPU operators at 1/16 of the sizes (kernel names are looked for on GPUs only)")
    results = [run_case(build, args.require_kernel_names) for build in CASES]
    print(f"upstream_style: {sum(results)} of {len(results)} cases ok")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
