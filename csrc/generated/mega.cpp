// @generated from ops.yaml by python -m codegen — do not edit
// Family 'mega': Mega MoE (fused expert-parallel dispatch, two GEMMs, activation and combine) and its symmetric buffer.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/mega.hpp"

namespace {

// get_token_alignment_for_mega_moe() -> int
int64_t wrap_get_token_alignment_for_mega_moe() {
  const deep_gemm::OpScope scope("get_token_alignment_for_mega_moe");
  return ::deep_gemm::mega::get_token_alignment_for_mega_moe();
}

// get_ring_limit_for_mega_moe(int num_max_tokens_per_rank, int num_experts_per_rank, int num_topk, int num_ranks) -> (int, int)
std::tuple<int64_t, int64_t> wrap_get_ring_limit_for_mega_moe(int64_t num_max_tokens_per_rank, int64_t num_experts_per_rank, int64_t num_topk, int64_t num_ranks) {
  const deep_gemm::OpScope scope("get_ring_limit_for_mega_moe");
  return ::deep_gemm::mega::get_ring_limit_for_mega_moe(deep_gemm::torch_utils::to_int(num_max_tokens_per_rank, "num_max_tokens_per_rank"), deep_gemm::torch_utils::to_int(num_experts_per_rank, "num_experts_per_rank"), deep_gemm::torch_utils::to_int(num_topk, "num_topk"), deep_gemm::torch_utils::to_int(num_ranks, "num_ranks"));
}

// get_symm_buffer_size_for_mega_moe(int num_ranks, int num_experts, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, str mma_type, str activation, int num_shared_experts=0) -> (int, int[])
std::tuple<int64_t, std::vector<int64_t>> wrap_get_symm_buffer_size_for_mega_moe(int64_t num_ranks, int64_t num_experts, int64_t num_max_tokens_per_rank, int64_t num_topk, int64_t hidden, int64_t intermediate_hidden, c10::string_view mma_type, c10::string_view activation, int64_t num_shared_experts) {
  const deep_gemm::OpScope scope("get_symm_buffer_size_for_mega_moe");
  return ::deep_gemm::mega::get_symm_buffer_size_for_mega_moe(deep_gemm::torch_utils::to_int(num_ranks, "num_ranks"), deep_gemm::torch_utils::to_int(num_experts, "num_experts"), deep_gemm::torch_utils::to_int(num_max_tokens_per_rank, "num_max_tokens_per_rank"), deep_gemm::torch_utils::to_int(num_topk, "num_topk"), deep_gemm::torch_utils::to_int(hidden, "hidden"), deep_gemm::torch_utils::to_int(intermediate_hidden, "intermediate_hidden"), deep_gemm::torch_utils::to_string(mma_type, "mma_type"), deep_gemm::torch_utils::to_string(activation, "activation"), deep_gemm::torch_utils::to_int(num_shared_experts, "num_shared_experts"));
}

// _get_symm_buffer_views_for_mega_moe(str mma_type, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, int num_shared_experts, int num_ring_tokens) -> int[]
std::vector<int64_t> wrap__get_symm_buffer_views_for_mega_moe(c10::string_view mma_type, int64_t num_max_tokens_per_rank, int64_t num_topk, int64_t hidden, int64_t intermediate_hidden, int64_t num_shared_experts, int64_t num_ring_tokens) {
  const deep_gemm::OpScope scope("_get_symm_buffer_views_for_mega_moe");
  return ::deep_gemm::mega::_get_symm_buffer_views_for_mega_moe(deep_gemm::torch_utils::to_string(mma_type, "mma_type"), deep_gemm::torch_utils::to_int(num_max_tokens_per_rank, "num_max_tokens_per_rank"), deep_gemm::torch_utils::to_int(num_topk, "num_topk"), deep_gemm::torch_utils::to_int(hidden, "hidden"), deep_gemm::torch_utils::to_int(intermediate_hidden, "intermediate_hidden"), deep_gemm::torch_utils::to_int(num_shared_experts, "num_shared_experts"), deep_gemm::torch_utils::to_int(num_ring_tokens, "num_ring_tokens"));
}

// _get_workspace_words_for_mega_moe() -> (int, int)
std::tuple<int64_t, int64_t> wrap__get_workspace_words_for_mega_moe() {
  const deep_gemm::OpScope scope("_get_workspace_words_for_mega_moe");
  return ::deep_gemm::mega::_get_workspace_words_for_mega_moe();
}

// fp8_fp4_mega_moe(Tensor(y!) y, Tensor l1_weights, Tensor l1_weights_sf, Tensor l2_weights, Tensor l2_weights_sf, Tensor? shared_l1_weights, Tensor? shared_l1_weights_sf, Tensor? shared_l2_weights, Tensor? shared_l2_weights_sf, Tensor(cumulative_local_expert_recv_stats!)? cumulative_local_expert_recv_stats, Tensor(sym_buffer!) sym_buffer, int[] sym_buffer_ptrs, int rank_idx, int num_max_tokens_per_rank, int num_experts, int num_topk, int[3] recipe, str activation, float? activation_clamp, bool fast_math, float? situ_beta=None, float? situ_linear_beta=None) -> ()
void wrap_fp8_fp4_mega_moe(const at::Tensor& y, const at::Tensor& l1_weights, const at::Tensor& l1_weights_sf, const at::Tensor& l2_weights, const at::Tensor& l2_weights_sf, const std::optional<at::Tensor>& shared_l1_weights, const std::optional<at::Tensor>& shared_l1_weights_sf, const std::optional<at::Tensor>& shared_l2_weights, const std::optional<at::Tensor>& shared_l2_weights_sf, const std::optional<at::Tensor>& cumulative_local_expert_recv_stats, const at::Tensor& sym_buffer, at::IntArrayRef sym_buffer_ptrs, int64_t rank_idx, int64_t num_max_tokens_per_rank, int64_t num_experts, int64_t num_topk, at::IntArrayRef recipe, c10::string_view activation, std::optional<double> activation_clamp, bool fast_math, std::optional<double> situ_beta, std::optional<double> situ_linear_beta) {
  const deep_gemm::OpScope scope("fp8_fp4_mega_moe");
  ::deep_gemm::mega::fp8_fp4_mega_moe(y, std::pair<at::Tensor, at::Tensor>(l1_weights, l1_weights_sf), std::pair<at::Tensor, at::Tensor>(l2_weights, l2_weights_sf), shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, deep_gemm::torch_utils::to_int_list(sym_buffer_ptrs, "sym_buffer_ptrs"), deep_gemm::torch_utils::to_int(rank_idx, "rank_idx"), deep_gemm::torch_utils::to_int(num_max_tokens_per_rank, "num_max_tokens_per_rank"), deep_gemm::torch_utils::to_int(num_experts, "num_experts"), deep_gemm::torch_utils::to_int(num_topk, "num_topk"), deep_gemm::torch_utils::to_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_string(activation, "activation"), deep_gemm::torch_utils::to_optional_float(activation_clamp, "activation_clamp"), fast_math, deep_gemm::torch_utils::to_optional_float(situ_beta, "situ_beta"), deep_gemm::torch_utils::to_optional_float(situ_linear_beta, "situ_linear_beta"));
}

// bf16_mega_moe(Tensor(y!) y, Tensor l1_weights, Tensor l2_weights, Tensor? shared_l1_weights, Tensor? shared_l2_weights, Tensor(cumulative_local_expert_recv_stats!)? cumulative_local_expert_recv_stats, Tensor(sym_buffer!) sym_buffer, int[] sym_buffer_ptrs, int rank_idx, int num_max_tokens_per_rank, int num_experts, int num_topk, str activation, float? activation_clamp, bool fast_math) -> ()
void wrap_bf16_mega_moe(const at::Tensor& y, const at::Tensor& l1_weights, const at::Tensor& l2_weights, const std::optional<at::Tensor>& shared_l1_weights, const std::optional<at::Tensor>& shared_l2_weights, const std::optional<at::Tensor>& cumulative_local_expert_recv_stats, const at::Tensor& sym_buffer, at::IntArrayRef sym_buffer_ptrs, int64_t rank_idx, int64_t num_max_tokens_per_rank, int64_t num_experts, int64_t num_topk, c10::string_view activation, std::optional<double> activation_clamp, bool fast_math) {
  const deep_gemm::OpScope scope("bf16_mega_moe");
  ::deep_gemm::mega::bf16_mega_moe(y, l1_weights, l2_weights, shared_l1_weights, shared_l2_weights, cumulative_local_expert_recv_stats, sym_buffer, deep_gemm::torch_utils::to_int_list(sym_buffer_ptrs, "sym_buffer_ptrs"), deep_gemm::torch_utils::to_int(rank_idx, "rank_idx"), deep_gemm::torch_utils::to_int(num_max_tokens_per_rank, "num_max_tokens_per_rank"), deep_gemm::torch_utils::to_int(num_experts, "num_experts"), deep_gemm::torch_utils::to_int(num_topk, "num_topk"), deep_gemm::torch_utils::to_string(activation, "activation"), deep_gemm::torch_utils::to_optional_float(activation_clamp, "activation_clamp"), fast_math);
}

// _sum_combined_for_mega_moe(Tensor(y!) y, Tensor combine, Tensor topk_idx) -> ()
void wrap__sum_combined_for_mega_moe(const at::Tensor& y, const at::Tensor& combine, const at::Tensor& topk_idx) {
  const deep_gemm::OpScope scope("_sum_combined_for_mega_moe");
  ::deep_gemm::mega::_sum_combined_for_mega_moe(y, combine, topk_idx);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("get_token_alignment_for_mega_moe() -> int");
  m.def("get_ring_limit_for_mega_moe(int num_max_tokens_per_rank, int num_experts_per_rank, int num_topk, int num_ranks) -> (int, int)");
  m.def("get_symm_buffer_size_for_mega_moe(int num_ranks, int num_experts, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, str mma_type, str activation, int num_shared_experts=0) -> (int, int[])");
  m.def("_get_symm_buffer_views_for_mega_moe(str mma_type, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, int num_shared_experts, int num_ring_tokens) -> int[]");
  m.def("_get_workspace_words_for_mega_moe() -> (int, int)");
  m.def("fp8_fp4_mega_moe(Tensor(y!) y, Tensor l1_weights, Tensor l1_weights_sf, Tensor l2_weights, Tensor l2_weights_sf, Tensor? shared_l1_weights, Tensor? shared_l1_weights_sf, Tensor? shared_l2_weights, Tensor? shared_l2_weights_sf, Tensor(cumulative_local_expert_recv_stats!)? cumulative_local_expert_recv_stats, Tensor(sym_buffer!) sym_buffer, int[] sym_buffer_ptrs, int rank_idx, int num_max_tokens_per_rank, int num_experts, int num_topk, int[3] recipe, str activation, float? activation_clamp, bool fast_math, float? situ_beta=None, float? situ_linear_beta=None) -> ()");
  m.def("bf16_mega_moe(Tensor(y!) y, Tensor l1_weights, Tensor l2_weights, Tensor? shared_l1_weights, Tensor? shared_l2_weights, Tensor(cumulative_local_expert_recv_stats!)? cumulative_local_expert_recv_stats, Tensor(sym_buffer!) sym_buffer, int[] sym_buffer_ptrs, int rank_idx, int num_max_tokens_per_rank, int num_experts, int num_topk, str activation, float? activation_clamp, bool fast_math) -> ()");
  m.def("_sum_combined_for_mega_moe(Tensor(y!) y, Tensor combine, Tensor topk_idx) -> ()");
}

TORCH_LIBRARY_IMPL(deep_gemm, CompositeExplicitAutograd, m) {
  m.impl("get_token_alignment_for_mega_moe", TORCH_FN(wrap_get_token_alignment_for_mega_moe));
  m.impl("get_ring_limit_for_mega_moe", TORCH_FN(wrap_get_ring_limit_for_mega_moe));
  m.impl("get_symm_buffer_size_for_mega_moe", TORCH_FN(wrap_get_symm_buffer_size_for_mega_moe));
  m.impl("_get_symm_buffer_views_for_mega_moe", TORCH_FN(wrap__get_symm_buffer_views_for_mega_moe));
  m.impl("_get_workspace_words_for_mega_moe", TORCH_FN(wrap__get_workspace_words_for_mega_moe));
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("fp8_fp4_mega_moe", TORCH_FN(wrap_fp8_fp4_mega_moe));
  m.impl("bf16_mega_moe", TORCH_FN(wrap_bf16_mega_moe));
  m.impl("_sum_combined_for_mega_moe", TORCH_FN(wrap__sum_combined_for_mega_moe));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("fp8_fp4_mega_moe", TORCH_FN(wrap_fp8_fp4_mega_moe));
  m.impl("bf16_mega_moe", TORCH_FN(wrap_bf16_mega_moe));
  m.impl("_sum_combined_for_mega_moe", TORCH_FN(wrap__sum_combined_for_mega_moe));
}
#endif  // guard 'cuda'
