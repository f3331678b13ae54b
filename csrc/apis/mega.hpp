#pragma once
// Family 'mega': Mega MoE and its symmetric buffer.
//
// The buffer's layout lives in kernels/mega_layout.hpp (one builder for every
// offset).  The ops here size it and describe it; slicing the buffer into
// views happens in Python (deep_gemm.mega), see Note [Mega MoE buffer views].
//
// Note [Mega MoE buffer views]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Upstream's pybind sizing returned a closure that cut the buffer into views.
// A TORCH_LIBRARY op can neither return a closure nor, usefully, views: an op
// whose schema returns `Tensor(a)` aliases of an input is rejected by
// functionalization ("Found a custom (non-ATen) operator whose output has alias
// annotations"), so opcheck's test_aot_dispatch_dynamic and torch.compile both
// fail on it, and returning fresh tensors would defeat a buffer whose whole
// point is that peers write into it.  So the ops return data only: the size op
// returns (num_bytes, layout_info) and _get_symm_buffer_views_for_mega_moe
// returns every region's offset, dtype, sizes and strides, computed from the
// small configuration ints that layout_info carries.  deep_gemm.mega then cuts
// the buffer with ordinary torch view ops, which autograd, functionalization
// and Dynamo all understand.  A second reason: int[] arguments reach an
// implementation as 32-bit ints, and real buffers have offsets beyond 2 GiB, so
// an op taking layout_info itself could not serve them.

#include <ATen/ATen.h>

#include <string>
#include <tuple>
#include <vector>

#include "kernels/mega_layout.hpp"
#include "utils/checks.hpp"

namespace deep_gemm::mega {

inline int get_token_alignment_for_mega_moe() { return kTokenAlignment; }

inline std::tuple<int64_t, std::vector<int64_t>> get_symm_buffer_size_for_mega_moe(
    int num_ranks, int num_experts, int num_max_tokens_per_rank, int num_topk, int hidden, int intermediate_hidden,
    const std::string& mma_type, const std::string& activation, int num_shared_experts) {
  const MmaType mma = parse_mma_type(mma_type, "mma_type");
  check_activation(activation, "activation");
  const auto config = make_layout_config(num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden,
                                         intermediate_hidden, mma, num_shared_experts);
  const auto layout = build_symm_buffer_layout(config);
  return {layout.num_bytes, layout.to_int_list()};
}

inline std::vector<int64_t> _get_symm_buffer_views_for_mega_moe(const std::string& mma_type,
                                                                int num_max_tokens_per_rank, int num_topk,
                                                                int hidden, int intermediate_hidden,
                                                                int num_shared_experts, int num_ring_tokens) {
  const MmaType mma = parse_mma_type(mma_type, "mma_type");
  check_sizes(mma, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_shared_experts);
  DG_CHECK_ARG(num_ring_tokens > 0 && num_ring_tokens % kTokenAlignment == 0, "num_ring_tokens",
               "must be a positive multiple of ", kTokenAlignment, ", got ", num_ring_tokens);
  LayoutConfig config;
  config.mma_type = mma;
  config.num_max_tokens_per_rank = num_max_tokens_per_rank;
  config.num_topk = num_topk;
  config.hidden = hidden;
  config.intermediate_hidden = intermediate_hidden;
  config.num_shared_experts = num_shared_experts;
  config.num_ring_tokens = num_ring_tokens;
  return build_symm_buffer_layout(config).to_view_list();
}

}  // namespace deep_gemm::mega
