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

def get_token_alignment_for_mega_moe() -> int:
    """The multiple every num_max_tokens_per_rank must be: 384, the LCM of the candidate BLOCK_M
    values {8, 16, 32, 64, 96, 128, 192}.
    """

def get_symm_buffer_size_for_mega_moe(num_ranks: int, num_experts: int, num_max_tokens_per_rank: int, num_topk: int, hidden: int, intermediate_hidden: int, mma_type: str, activation: str, num_shared_experts: int = 0) -> tuple[int, list[int]]:
    """Size the symmetric buffer of one rank: returns (num_bytes, layout_info).
    layout_info is 23 ints: num_bytes; the byte offsets of x, x_sf, topk_idx, topk_weights,
    shared_l1_sf, shared_l2_token, shared_l2_sf, l1 token, l1 sf, l2 token, l2 sf; then mma kind
    (0 fp8xfp4, 1 bf16xbf16), with_sf, sf_gran_k, num_max_tokens_per_rank, num_topk, hidden,
    intermediate_hidden, num_shared_experts, shared_intermediate_hidden, num_ring_tokens,
    num_sf_ring_tokens. num_experts must be divisible by num_ranks, num_max_tokens_per_rank a
    positive multiple of 384, 1 <= num_topk <= num_experts, mma_type 'fp8xfp4' (then hidden and
    intermediate_hidden are multiples of 128) or 'bf16xbf16' (intermediate_hidden a multiple of 8),
    activation 'swiglu'. Upstream returned a closure that sliced the buffer; a schema returns data
    only, and deep_gemm.mega._slice_symm_buffer_for_mega_moe(buffer, layout_info) cuts the views
    in Python (see _get_symm_buffer_views_for_mega_moe for why).
    """

def _get_symm_buffer_views_for_mega_moe(mma_type: str, num_max_tokens_per_rank: int, num_topk: int, hidden: int, intermediate_hidden: int, num_shared_experts: int, num_ring_tokens: int) -> list[int]:
    """Describe every region of the symmetric buffer whose layout_info carries this configuration
    (its fields 12..22): num_bytes, then 16 regions of 10 ints each (byte offset, bytes reserved,
    element type 0 none / 1 float8_e4m3fn / 2 bfloat16 / 3 int32 / 4 int64 / 5 float32, ndim,
    3 sizes, 3 strides in elements), in buffer order: workspace, x, x_sf, topk_idx, topk_weights,
    shared_l1_sf, shared_l2_token, shared_l2_sf, l1_token, l1_sf, l2_token, l2_sf, recv_info,
    recv_weights, l2_out, combine. Returning data, not views, is deliberate: an op returning
    Tensor(a) aliases of its input cannot be functionalized (opcheck and torch.compile reject it),
    and int[] arguments arrive as 32-bit ints while real offsets pass 2 GiB, so deep_gemm.mega
    cuts the views itself with torch view ops from this description.
    """

def fp8_fp4_mega_moe(y: Tensor, l1_weights: tuple[Tensor, Tensor], l2_weights: tuple[Tensor, Tensor], shared_l1_weights: Tensor | None, shared_l1_weights_sf: Tensor | None, shared_l2_weights: Tensor | None, shared_l2_weights_sf: Tensor | None, cumulative_local_expert_recv_stats: Tensor | None, sym_buffer: Tensor, sym_buffer_ptrs: Sequence[int], rank_idx: int, num_max_tokens_per_rank: int, num_experts: int, num_topk: int, recipe: tuple[int, int, int], activation: str, activation_clamp: float | None, fast_math: bool, situ_beta: float | None = None, situ_linear_beta: float | None = None) -> None:
    """Mega MoE with FP8 tokens and FP4 experts, one rank's part (call it through
    deep_gemm.mega.fp8_fp4_mega_moe). The caller stages x [T, H] FP8 e4m3, x_sf [T, H/128] packed
    UE8M0 (gran 32), topk_idx [T, K] int64 (-1 = unused slot, distinct experts per token) and
    topk_weights [T, K] float32 in sym_buffer, T = y.size(0) <= num_max_tokens_per_rank. Weights of
    the E/R local experts, after transform_weights_for_mega_moe: l1 [E_l, 2I, H/2] FP4 + sf
    [E_l, 2I, H/128], l2 [E_l, H, I/2] + sf [E_l, H, I/128]; recipe (1, 1, 32), activation 'swiglu',
    activation_clamp >= 0 or None. Each used slot's token runs L1, SwiGLU (up clamped to [-c, c],
    gate to <= c, times its top-k weight), FP8 requantisation with per-32 UE8M0 scales, and L2;
    y (bf16) gets the sum over the token's slots, and cumulative_local_expert_recv_stats (int32
    [E_l]) the rows each local expert received. sym_buffer_ptrs has one entry per rank (values
    unused: there is no symmetric memory on the CPU). With one rank the op does everything. With
    more, a TORCH_LIBRARY op cannot run collectives: the op runs only the local experts, on the
    rows the caller dispatched into sym_buffer's receive region, and leaves y alone; the
    deep_gemm.mega wrapper does dispatch and combine with the process group.
    Shared experts and the 'situ' activation are not supported.
    """

def bf16_mega_moe(y: Tensor, l1_weights: Tensor, l2_weights: Tensor, shared_l1_weights: Tensor | None, shared_l2_weights: Tensor | None, cumulative_local_expert_recv_stats: Tensor | None, sym_buffer: Tensor, sym_buffer_ptrs: Sequence[int], rank_idx: int, num_max_tokens_per_rank: int, num_experts: int, num_topk: int, activation: str, activation_clamp: float | None, fast_math: bool) -> None:
    """fp8_fp4_mega_moe with bf16 tokens and weights (l1 [E_l, 2I, H] gate/up interleaved, l2
    [E_l, H, I]); the SwiGLU output is rounded to bf16 instead of requantised.
    """

def _sum_combined_for_mega_moe(y: Tensor, combine: Tensor, topk_idx: Tensor) -> None:
    """The last step of a multi-rank Mega MoE call: y[t] = sum over the slots k with
    topk_idx[t, k] >= 0, in slot order, of combine[k, t] (float32 from zero, rounded once to
    bf16). combine is the buffer's [K, T_max, H] bf16 region, topk_idx its staged [T_max, K];
    the one-rank path of the fused ops ends with the same summation.
    """
