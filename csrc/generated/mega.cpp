// @generated from ops.yaml by python -m codegen — do not edit
// Family 'mega': Mega MoE (fused expert-parallel dispatch, two GEMMs, activation and combine) and its symmetric buffer.
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/mega.hpp"

namespace {

// get_token_alignment_for_mega_moe() -> int
int64_t wrap_get_token_alignment_for_mega_moe() {
  const deep_gemm::OpScope scope("get_token_alignment_for_mega_moe");
  return ::deep_gemm::mega::get_token_alignment_for_mega_moe();
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

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("get_token_alignment_for_mega_moe() -> int");
  m.def("get_symm_buffer_size_for_mega_moe(int num_ranks, int num_experts, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, str mma_type, str activation, int num_shared_experts=0) -> (int, int[])");
  m.def("_get_symm_buffer_views_for_mega_moe(str mma_type, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden, int num_shared_experts, int num_ring_tokens) -> int[]");
}

TORCH_LIBRARY_IMPL(deep_gemm, CompositeExplicitAutograd, m) {
  m.impl("get_token_alignment_for_mega_moe", TORCH_FN(wrap_get_token_alignment_for_mega_moe));
  m.impl("get_symm_buffer_size_for_mega_moe", TORCH_FN(wrap_get_symm_buffer_size_for_mega_moe));
  m.impl("_get_symm_buffer_views_for_mega_moe", TORCH_FN(wrap__get_symm_buffer_views_for_mega_moe));
}
