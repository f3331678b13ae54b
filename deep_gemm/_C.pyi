# @generated from ops.yaml by python -m codegen — do not edit
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    'set_num_sms',
    'get_num_sms',
    'set_tc_util',
    'get_tc_util',
    'set_pdl',
    'get_pdl',
    'set_ignore_compile_dims',
    'get_ignore_compile_dims',
    'set_block_size_multiple_of',
    'get_block_size_multiple_of',
    'transform_sf_into_required_layout',
    'get_tma_aligned_size',
    'get_mn_major_tma_aligned_tensor',
    'get_mn_major_tma_aligned_packed_ue8m0_tensor',
    'get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor',
    'set_mk_alignment_for_contiguous_layout',
    'get_mk_alignment_for_contiguous_layout',
    'get_theoretical_mk_alignment_for_contiguous_layout',
    'fp8_fp4_gemm_nt',
    'fp8_gemm_nt',
    'fp8_fp4_gemm_nn',
    'fp8_gemm_nn',
    'fp8_fp4_gemm_tn',
    'fp8_gemm_tn',
    'fp8_fp4_gemm_tt',
    'fp8_gemm_tt',
    'bf16_gemm_nt',
    'bf16_gemm_nn',
    'bf16_gemm_tn',
    'bf16_gemm_tt',
    'einsum',
    'fp8_einsum',
    'tf32_hc_prenorm_gemm',
]

FAMILIES: dict[str, list[str]]

def set_num_sms(new_num_sms: int, /) -> None:
    """Limit the compute units kernels may use. 0 restores the default (all of them).
    The value must lie in [0, N], N being the current GPU's SM count, or, without a GPU,
    the number of CPU threads ATen uses.
    """

def get_num_sms() -> int:
    """The compute units kernels use: the value set by set_num_sms, else the current GPU's SM
    count, or, in a build or process without a GPU, the number of CPU threads ATen uses.
    """

def set_tc_util(new_tc_util: int, /) -> None:
    """Set the approximate tensor-core utilisation (percent, 0..100) the heuristics assume; 0 unsets it."""

def get_tc_util() -> int:
    """The tensor-core utilisation the heuristics assume (100 when unset)."""

def set_pdl(new_enable_pdl: bool, /) -> None:
    """Enable or disable Programmatic Dependent Launch for kernels that support it."""

def get_pdl() -> bool:
    """Whether Programmatic Dependent Launch is enabled (False by default)."""

def set_ignore_compile_dims(new_value: bool, /) -> None:
    """When True, the compiled_dims argument of every GEMM is ignored (all sizes are run-time values)."""

def get_ignore_compile_dims() -> bool:
    """The value last given to set_ignore_compile_dims (False by default)."""

def set_block_size_multiple_of(value: int | tuple[int, int], /) -> None:
    """Constrain BLOCK_M / BLOCK_N to multiples of the given sizes: an int x means (x, x), a pair
    (bm, bn) sets both. Each entry must lie in [1, 256].
    """

def get_block_size_multiple_of() -> list[int]:
    """The (BLOCK_M, BLOCK_N) multiples last set by set_block_size_multiple_of ([1, 1] by default)."""

def init(library_root_path: str, cuda_home_path_by_python: str, /) -> None:
    """Record the package directory and the CUDA home; deep_gemm calls it at import.
    The library root must be an existing directory.
    """

def transform_sf_into_required_layout(sf: Tensor, mn: int, k: int, recipe: tuple[int, int] | tuple[int, int, int], num_groups: int | None = None, is_sfa: bool | None = None, disable_ue8m0_cast: bool = False, psum_layout: Tensor | None = None) -> Tensor:
    """Convert user scale factors into the layout the kernels read.
    recipe is (gran_mn, gran_k), or (gran_m_a, gran_n_b, gran_k) together with is_sfa.
    sf must be [(num_groups,) ceil(mn/gran_mn), ceil(k/gran_k)] float32, or packed UE8M0 int32
    [(num_groups,) mn, ceil(k/(4*gran_k))] in the MN-major TMA-aligned layout.
    float32 scales become float32 MN-major TMA-aligned (SM90 rules: on an SM90 GPU, or on the CPU
    with disable_ue8m0_cast=True) or packed UE8M0 int32 (SM100 rules; rows of 128-row blocks are
    broadcast first). Always returns a new tensor.
    """

def get_tma_aligned_size(x: int, element_size: int, /) -> int:
    """x rounded up so that x * element_size is a multiple of 16 bytes."""

def get_mn_major_tma_aligned_tensor(sf: Tensor, /) -> Tensor:
    """float32 scales [(B,) mn, sf_k] -> the same values in MN-major layout with mn padded to a
    multiple of 4: strides (tma_mn * sf_k, 1, tma_mn), tma_mn = align(mn, 4). Always a new tensor.
    """

def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf: Tensor, psum_layout: Tensor | None = None) -> Tensor:
    """float32 power-of-two scales [(B,) mn, sf_k] -> int32 [(B,) mn, ceil(sf_k/4)], MN-major and
    TMA-aligned; byte j of word w is the exponent byte of K-group 4w+j, zero-padded.
    With psum_layout (a psum grouped layout over mn; one batch, contiguous sf) the rows between
    groups are not read and come out zero.
    """

def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf: Tensor, grouped_layout: Tensor, ks_cpu: Sequence[int] | None, gran_k: int, k_alignment: int, use_psum_layout: bool = False) -> Tensor:
    """K-grouped float32 scales [sum ceil(k_g/gran_k), mn] (contiguous, mn % 4 == 0, at most 128
    groups) -> int32 [sum ceil(k_g/(4*gran_k)), mn], each group's K range packed on its own,
    4 K-groups per int. gran_k is 32 or 128 and k_alignment a multiple of 32. Without ks_cpu
    (None or []) use_psum_layout must be set; sizes then come from grouped_layout and the
    result has the upper-bound row count (sf_k + 3 * groups) / 4, zero-filled past the data.
    """

def set_mk_alignment_for_contiguous_layout(new_value: int, /) -> None:
    """Set the group alignment of M (m-grouped) and K (k-grouped) contiguous layouts; a positive multiple of 32 (default 128)."""

def get_mk_alignment_for_contiguous_layout() -> int:
    """The current group alignment of contiguous grouped layouts (128 by default)."""

def get_theoretical_mk_alignment_for_contiguous_layout(expected_m: int | None = None) -> int:
    """The alignment the kernels would pick: 128 except on SM100, where it starts at 224 and drops
    by 32 while it stays above 32 and the next value down is still at least expected_m.
    """

def fp8_fp4_gemm_nt(a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor], d: Tensor, c: Tensor | None = None, recipe: tuple[int, int, int] | None = None, recipe_a: tuple[int, int] | None = None, recipe_b: tuple[int, int] | None = None, compiled_dims: str = "nk", disable_ue8m0_cast: bool = False) -> None:
    """D = C + (A * SFA)(B * SFB)^T with A [M, K] and B [N, K] block-scaled.
    Data is FP8 e4m3, or FP4 e2m1 packed two per int8 byte (low nibble first) along the
    contiguous dim. Scales are float32 [ceil(MN/gran_mn), ceil(K/gran_k)] or packed UE8M0 int32
    [MN, ceil(K/(4*gran_k))]. Pass recipe (1, gran_n, gran_k) or recipe_a + recipe_b
    ((gran_mn, gran_k) each); by default (1, 128, 128) for float32 SFB and (1, 1, 128) for packed
    SFB. d is bf16 or float32, row-major [M, N]; c (optional, may be d itself) is added.
    """
fp8_gemm_nt = fp8_fp4_gemm_nt

def fp8_fp4_gemm_nn(a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor], d: Tensor, c: Tensor | None = None, recipe: tuple[int, int, int] | None = None, recipe_a: tuple[int, int] | None = None, recipe_b: tuple[int, int] | None = None, compiled_dims: str = "nk", disable_ue8m0_cast: bool = False) -> None:
    """fp8_fp4_gemm_nt with B given as [K, N] and SFB transposed with it."""
fp8_gemm_nn = fp8_fp4_gemm_nn

def fp8_fp4_gemm_tn(a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor], d: Tensor, c: Tensor | None = None, recipe: tuple[int, int, int] | None = None, recipe_a: tuple[int, int] | None = None, recipe_b: tuple[int, int] | None = None, compiled_dims: str = "mn", disable_ue8m0_cast: bool = False) -> None:
    """fp8_fp4_gemm_nt with A given as [K, M] and B as [K, N], each scale tensor transposed with its data."""
fp8_gemm_tn = fp8_fp4_gemm_tn

def fp8_fp4_gemm_tt(a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor], d: Tensor, c: Tensor | None = None, recipe: tuple[int, int, int] | None = None, recipe_a: tuple[int, int] | None = None, recipe_b: tuple[int, int] | None = None, compiled_dims: str = "mn", disable_ue8m0_cast: bool = False) -> None:
    """fp8_fp4_gemm_nt with A given as [K, M] (SFA transposed with it) and B as [N, K]."""
fp8_gemm_tt = fp8_fp4_gemm_tt

def bf16_gemm_nt(a: Tensor, b: Tensor, d: Tensor, c: Tensor | None = None, compiled_dims: str = "nk") -> None:
    """D = C + A B^T with bf16 A [M, K] and B [N, K] (either major); d is bf16 or float32, row-major [M, N]."""

def bf16_gemm_nn(a: Tensor, b: Tensor, d: Tensor, c: Tensor | None = None, compiled_dims: str = "nk") -> None:
    """bf16_gemm_nt with B given as [K, N]."""

def bf16_gemm_tn(a: Tensor, b: Tensor, d: Tensor, c: Tensor | None = None, compiled_dims: str = "mn") -> None:
    """bf16_gemm_nt with A given as [K, M] and B as [K, N]."""

def bf16_gemm_tt(a: Tensor, b: Tensor, d: Tensor, c: Tensor | None = None, compiled_dims: str = "mn") -> None:
    """bf16_gemm_nt with A given as [K, M] and B as [N, K]."""

def einsum(expr: str, a: Tensor, b: Tensor, d: Tensor, c: Tensor | None = None, use_cublaslt: bool = False) -> None:
    """One of three fixed contractions of bf16 operands, accumulated in float32 (expr is matched exactly):
    'bmk,bnk->mn': D[m, n] = C[m, n] + sum over b, k of A[b, m, k] * B[b, n, k], with A, B and D
    contiguous. A float32 d accumulates: c is required, d itself (accumulate in place) or another
    float32 [m, n] tensor. A bf16 d is overwritten: c must be None. use_cublaslt must be False.
    'bhr,hdr->bhd': D[b, h, d] = sum over r of A[b, h, r] * B[h, d, r].
    'bhd,hdr->bhr': D[b, h, r] = sum over d of A[b, h, d] * B[h, d, r].
    In these two, A, B and D are bf16 with stride(-1) == 1 and free other strides (B may be a strided
    slice), c must be None, and use_cublaslt only selects the GPU backend (same result).
    """

def fp8_einsum(expr: str, a: tuple[Tensor, Tensor], b: tuple[Tensor, Tensor], d: Tensor, c: Tensor | None = None, recipe: tuple[int, int, int] = (1, 128, 128)) -> None:
    """Block-scaled FP8 e4m3 contractions with float32 scales; recipe is (gran_m_a, gran_n_b, gran_k).
    'bhr,hdr->bhd': D[b, h, d] = sum over r of (A * SFA)[b, h, r] * (B * SFB)[h, d, r], with
    A [b, h, r], SFA [b, h, ceil(r/gran_k)], B [h, d, r], SFB [h, ceil(d/gran_n), ceil(r/gran_k)].
    'bhd,hdr->bhr': D[b, h, r] = sum over d of (A * SFA)[b, h, d] * (B * SFB)[h, d, r], with
    A [b, h, d], SFA [b, h, ceil(d/gran_k)], B [h, d, r], SFB [h, ceil(d/gran_k), ceil(r/gran_n)].
    For both, recipe is (1, 128, 128) or (1, 1, 128), d is bf16 and c must be None.
    'bhd,bhr->hdr': D[h, d, r] = C + sum over b of (A * SFA)[b, h, d] * (B * SFB)[b, h, r], scales
    per channel over b: SFA [ceil(b/128), h, d], SFB [ceil(b/128), h, r]; recipe must be (1, 1, 128),
    d float32 [h, d, r], and c is required: d itself (accumulate in place) or another float32 tensor.
    FP8 data and d need stride(-1) == 1; their other strides are free (B may be a strided slice).
    """

def tf32_hc_prenorm_gemm(a: Tensor, b: Tensor, d: Tensor, sqr_sum: Tensor, num_splits: int | None = None) -> None:
    """D = float32(A) B^T and sqr_sum[m] = sum over k of float32(A[m, k])^2, with A bf16 [M, K] and
    B float32 [N, K] (both stride(-1) == 1), N > 0 and K > 0; d and sqr_sum are contiguous float32.
    Without num_splits: d [M, N], sqr_sum [M]. With num_splits = S >= 1: split-K partials,
    d [S, M, N] and sqr_sum [S, M]; split s covers k in [s * c, min((s + 1) * c, K)) with
    c = ceil(K / S) (a split starting at or past K is empty and gives zeros), so summing over
    dim 0 gives the unsplit result. M == 0 is a no-op.
    """
