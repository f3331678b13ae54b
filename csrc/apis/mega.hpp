#pragma once
// Family 'mega': Mega MoE and its symmetric buffer.
//
// The buffer's layout lives in reference/mega_layout.hpp (one builder for every
// offset, used by every op here); the computation in reference/mega_moe.hpp.
// The ops size the buffer, describe its regions and run the fused MoE;
// slicing the buffer into views happens in Python (deep_gemm.mega), see
// Note [Mega MoE buffer views], and so does the exchange between ranks when
// there is no symmetric memory, see Note [Mega MoE across ranks].
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

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reference/mega_layout.hpp"
#include "reference/mega_moe.hpp"
#include "utils/checks.hpp"

namespace deep_gemm::mega {

inline int get_token_alignment_for_mega_moe() { return kTokenAlignment; }

// The range of ring sizes (in tokens) that serves a configuration: at least every rank's tokens
// for one expert per wave, at most all routed tokens plus a partial block per local expert.
inline std::tuple<int64_t, int64_t> get_ring_limit_for_mega_moe(int num_max_tokens_per_rank, int num_experts_per_rank,
                                                                int num_topk, int num_ranks) {
  DG_CHECK_ARG(num_max_tokens_per_rank > 0 && num_max_tokens_per_rank % kTokenAlignment == 0, "num_max_tokens_per_rank",
               "must be a positive multiple of ", kTokenAlignment, ", got ", num_max_tokens_per_rank);
  DG_CHECK_ARG(num_experts_per_rank > 0, "num_experts_per_rank", "must be positive, got ", num_experts_per_rank);
  DG_CHECK_ARG(num_topk > 0, "num_topk", "must be positive, got ", num_topk);
  DG_CHECK_ARG(num_ranks > 0, "num_ranks", "must be positive, got ", num_ranks);
  const int64_t tokens = static_cast<int64_t>(num_max_tokens_per_rank) * num_ranks;
  const int64_t most = align<int64_t>(
      tokens * num_topk + static_cast<int64_t>(num_experts_per_rank) * (kTokenAlignment - 1), kTokenAlignment);
  return {tokens, std::min<int64_t>(tokens * num_experts_per_rank, most)};
}

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
                                                                int num_max_tokens_per_rank, int num_topk, int hidden,
                                                                int intermediate_hidden, int num_shared_experts,
                                                                int num_ring_tokens) {
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

// The two workspace words deep_gemm.mega touches from Python: the rows this rank received in the
// last call (it writes them when it moves rows itself) and the stop word of the barrier (a failed
// rank writes 1 + its rank there in every peer's buffer).  Python reads the indices from here.
inline std::tuple<int64_t, int64_t> _get_workspace_words_for_mega_moe() { return {kWsRecvRows, kWsTimeout}; }

namespace detail {

// The arguments both fused ops share, checked in order (options, ranks, output,
// sizes, buffer, stats, then the data the call reads from the buffer).
struct FusedArgs {
  MmaType mma;
  const at::Tensor& y;
  const at::Tensor& l1;
  const at::Tensor& l2;
  const std::optional<at::Tensor>& stats;
  const at::Tensor& buffer;
  const std::vector<int64_t>& ptrs;
  int rank_idx;
  int num_max_tokens_per_rank;
  int num_experts;
  int num_topk;
  const std::string& activation;
  std::optional<float> clamp;
  bool has_shared;
};

inline void check_weight(const at::Tensor& w, const char* arg, at::ScalarType dtype, at::IntArrayRef shape) {
  checks::dtype(w, arg, {dtype});
  checks::dim(w, arg, 3);
  checks::shape(w, arg, shape);
  DG_CHECK_ARG(w.numel() == 0 || w.stride(-1) == 1, arg, "must be K-major (stride(-1) == 1), got strides ",
               w.strides());
}

inline MoeCall check_fused(const FusedArgs& a) {
  check_activation(a.activation, "activation");
  if (a.clamp.has_value()) {
    DG_CHECK_ARG(*a.clamp >= 0, "activation_clamp", "must be non-negative (None means no clamp), got ", *a.clamp);
  }
  DG_CHECK_SUPPORTED(!a.has_shared,
                     "shared experts are not implemented by the reference Mega MoE; pass None for the shared_* "
                     "weights");
  const int64_t R = static_cast<int64_t>(a.ptrs.size());
  DG_CHECK_ARG(R >= 1, "sym_buffer_ptrs", "must hold one entry per rank, got none");
  DG_CHECK_ARG(a.rank_idx >= 0 && a.rank_idx < R, "rank_idx", "must lie in [0, ", R, ") (one rank per entry of ",
               "sym_buffer_ptrs), got ", a.rank_idx);
  const bool fp8 = a.mma == MmaType::kFp8xFp4;
  checks::dtype(a.y, "y", {at::kBFloat16});
  checks::dim(a.y, "y", 2);
  checks::row_major(a.y, "y");
  checks::no_internal_overlap(a.y, "y");
  const int64_t T = a.y.size(0), H = a.y.size(1);
  DG_CHECK_ARG(H > 0 && (!fp8 || H % kSfElemsPerWord == 0), "y", "must have a hidden size (size(1)) that is ",
               fp8 ? "a positive multiple of 128 for FP8 x FP4" : "positive", ", got ", H);
  DG_CHECK_ARG(T <= a.num_max_tokens_per_rank, "y", "has ", T, " tokens, more than num_max_tokens_per_rank (",
               a.num_max_tokens_per_rank, ")");
  checks::dim(a.l2, "l2_weights", 3);
  const int64_t I = a.l2.size(2) * (fp8 ? 2 : 1);
  DG_CHECK_ARG(I > 0 && I % (fp8 ? kSfElemsPerWord : 8) == 0, "l2_weights", "must have an intermediate size (",
               fp8 ? "2 * size(2), FP4 packs two per byte" : "size(2)", ") that is a positive multiple of ",
               fp8 ? 128 : 8, ", got ", I);
  ConfigArgNames names;
  names.num_ranks = "sym_buffer_ptrs";
  names.hidden = "y";
  names.intermediate_hidden = "l2_weights";
  MoeCall call;
  call.layout = build_symm_buffer_layout(
      make_layout_config(R, a.num_experts, a.num_max_tokens_per_rank, a.num_topk, H, I, a.mma, 0, names));
  call.num_ranks = R;
  call.rank = a.rank_idx;
  call.num_experts = a.num_experts;
  call.experts_per_rank = a.num_experts / R;
  call.num_tokens = T;
  call.clamp = a.clamp;
  const int64_t E_l = call.experts_per_rank;
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a.l1, "l1_weights"},
                                {a.l2, "l2_weights"},
                                {a.buffer, "sym_buffer"}}) {
    checks::same_device(t, name, a.y, "y");
  }
  if (fp8) {
    check_weight(a.l1, "l1_weights", at::kChar, {E_l, 2 * I, H / 2});
    check_weight(a.l2, "l2_weights", at::kChar, {E_l, H, I / 2});
  } else {
    check_weight(a.l1, "l1_weights", at::kBFloat16, {E_l, 2 * I, H});
    check_weight(a.l2, "l2_weights", at::kBFloat16, {E_l, H, I});
  }
  checks::dtype(a.buffer, "sym_buffer", {at::kChar, at::kByte});
  checks::dim(a.buffer, "sym_buffer", 1);
  DG_CHECK_ARG(a.buffer.is_contiguous(), "sym_buffer", "must be contiguous");
  // Its regions are viewed as int64, float32 and int32 tensors (and read by TMA on the GPU).
  DG_CHECK_ARG(a.buffer.storage_offset() % 16 == 0, "sym_buffer", "must start 16-byte aligned in its storage, got ",
               "storage offset ", a.buffer.storage_offset());
  DG_CHECK_ARG(a.buffer.numel() == call.layout.num_bytes, "sym_buffer", "has ", a.buffer.numel(),
               " bytes, but the layout of this call (", R, " ranks, ", a.num_experts, " experts, ",
               a.num_max_tokens_per_rank, " tokens per rank, top-", a.num_topk, ", hidden ", H, ", intermediate ", I,
               ", ", mma_type_name(a.mma), ") needs ", call.layout.num_bytes,
               "; build the buffer for the same configuration");
  DG_CHECK_ARG(!a.y.is_alias_of(a.buffer), "y", "must not share memory with 'sym_buffer'");
  if (a.stats.has_value()) {
    checks::same_device(*a.stats, "cumulative_local_expert_recv_stats", a.y, "y");
    checks::dtype(*a.stats, "cumulative_local_expert_recv_stats", {at::kInt});
    checks::shape(*a.stats, "cumulative_local_expert_recv_stats", {E_l});
    checks::no_internal_overlap(*a.stats, "cumulative_local_expert_recv_stats");
    DG_CHECK_ARG(!a.stats->is_alias_of(a.buffer) && !a.stats->is_alias_of(a.y), "cumulative_local_expert_recv_stats",
                 "must not share memory with 'sym_buffer' or 'y'");
  }
  // sym_buffer_ptrs: zeros (the caller moves the rows), or every rank's buffer address.
  const auto mapped = std::count_if(a.ptrs.begin(), a.ptrs.end(), [](int64_t p) { return p != 0; });
  DG_CHECK_ARG(mapped == 0 || mapped == R, "sym_buffer_ptrs", "must hold every rank's buffer address (symmetric ",
               "memory) or only zeros (no symmetric memory), got ", at::IntArrayRef(a.ptrs));
  if (R > 1 && mapped == R) {
    DG_CHECK_ARG(a.buffer.is_cuda(), "sym_buffer_ptrs", "holds peer addresses, which needs CUDA symmetric memory; ",
                 "sym_buffer is on ", a.buffer.device());
    DG_CHECK_ARG(R <= kMaxRanks, "sym_buffer_ptrs", "holds ", R, " ranks; symmetric memory supports at most ",
                 kMaxRanks);
    DG_CHECK_ARG(a.ptrs[a.rank_idx] == reinterpret_cast<int64_t>(a.buffer.data_ptr()), "sym_buffer_ptrs", "entry ",
                 a.rank_idx, " (rank_idx) must be the address of sym_buffer on this rank");
    DG_CHECK_ARG(call.layout.view(a.buffer, Region::kWorkspace)[kWsTimeout].item<int64_t>() == 0, "sym_buffer",
                 "is out of step with its peers after an earlier call timed out at a barrier; rebuild the ",
                 "SymmBuffer on every rank");
    call.peers = a.ptrs;
  }
  if (R == 1 || !call.peers.empty()) {
    check_staged_routing(call.layout.view(a.buffer, Region::kTopkIdx).narrow(0, 0, T), a.num_experts);
  } else {
    check_received_rows(call, a.buffer);
  }
  return call;
}

inline void run_fused(const MoeCall& call, const at::Tensor& y, const std::pair<at::Tensor, at::Tensor>& l1,
                      const std::pair<at::Tensor, at::Tensor>& l2, const std::optional<at::Tensor>& stats,
                      const at::Tensor& buffer) {
  if (!call.peers.empty()) {
#ifdef DG_WITH_CUDA
    run_on_symmetric_memory(call, buffer, y, l1, l2, stats);
    return;
#else
    fail_unsupported("sym_buffer_ptrs holds peer addresses, but this build has no CUDA");
#endif
  }
  if (call.num_ranks == 1) dispatch_locally(call, buffer);
  run_local_experts(call, buffer, l1, l2, stats);
  if (call.num_ranks == 1) combine_locally(call, buffer, y);
}

}  // namespace detail

// See Note [Mega MoE across ranks] (reference/mega_moe.hpp) for what one call does.
inline void fp8_fp4_mega_moe(const at::Tensor& y, const std::pair<at::Tensor, at::Tensor>& l1_weights,
                             const std::pair<at::Tensor, at::Tensor>& l2_weights,
                             const std::optional<at::Tensor>& shared_l1_weights,
                             const std::optional<at::Tensor>& shared_l1_weights_sf,
                             const std::optional<at::Tensor>& shared_l2_weights,
                             const std::optional<at::Tensor>& shared_l2_weights_sf,
                             const std::optional<at::Tensor>& cumulative_local_expert_recv_stats,
                             const at::Tensor& sym_buffer, const std::vector<int64_t>& sym_buffer_ptrs, int rank_idx,
                             int num_max_tokens_per_rank, int num_experts, int num_topk,
                             const std::tuple<int, int, int>& recipe, const std::string& activation,
                             std::optional<float> activation_clamp, bool fast_math, std::optional<float> situ_beta,
                             std::optional<float> situ_linear_beta) {
  (void)fast_math;  // selects fast exp / reciprocal on GPUs; no effect on the reference
  DG_CHECK_ARG(recipe == std::make_tuple(1, 1, 32), "recipe", "must be (1, 1, 32) (per-token activations, FP4 ",
               "weights with 1 x 32 UE8M0 scales), got (", std::get<0>(recipe), ", ", std::get<1>(recipe), ", ",
               std::get<2>(recipe), ")");
  DG_CHECK_ARG(!situ_beta.has_value(), "situ_beta", "only applies to activation 'situ', which is not supported");
  DG_CHECK_ARG(!situ_linear_beta.has_value(), "situ_linear_beta",
               "only applies to activation 'situ', which is not supported");
  const bool has_shared = shared_l1_weights.has_value() || shared_l1_weights_sf.has_value() ||
                          shared_l2_weights.has_value() || shared_l2_weights_sf.has_value();
  const auto call =
      detail::check_fused({MmaType::kFp8xFp4, y, l1_weights.first, l2_weights.first, cumulative_local_expert_recv_stats,
                           sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk,
                           activation, activation_clamp, has_shared});
  const int64_t E_l = call.experts_per_rank, H = call.layout.config.hidden;
  const int64_t I = call.layout.config.intermediate_hidden;
  checks::same_device(l1_weights.second, "l1_weights_sf", y, "y");
  checks::same_device(l2_weights.second, "l2_weights_sf", y, "y");
  checks::dtype(l1_weights.second, "l1_weights_sf", {at::kInt});
  checks::shape(l1_weights.second, "l1_weights_sf", {E_l, 2 * I, H / kSfElemsPerWord});
  checks::dtype(l2_weights.second, "l2_weights_sf", {at::kInt});
  checks::shape(l2_weights.second, "l2_weights_sf", {E_l, H, I / kSfElemsPerWord});
  detail::run_fused(call, y, l1_weights, l2_weights, cumulative_local_expert_recv_stats, sym_buffer);
}

inline void bf16_mega_moe(const at::Tensor& y, const at::Tensor& l1_weights, const at::Tensor& l2_weights,
                          const std::optional<at::Tensor>& shared_l1_weights,
                          const std::optional<at::Tensor>& shared_l2_weights,
                          const std::optional<at::Tensor>& cumulative_local_expert_recv_stats,
                          const at::Tensor& sym_buffer, const std::vector<int64_t>& sym_buffer_ptrs, int rank_idx,
                          int num_max_tokens_per_rank, int num_experts, int num_topk, const std::string& activation,
                          std::optional<float> activation_clamp, bool fast_math) {
  (void)fast_math;
  const auto call = detail::check_fused({MmaType::kBf16xBf16, y, l1_weights, l2_weights,
                                         cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx,
                                         num_max_tokens_per_rank, num_experts, num_topk, activation, activation_clamp,
                                         shared_l1_weights.has_value() || shared_l2_weights.has_value()});
  detail::run_fused(call, y, {l1_weights, at::Tensor()}, {l2_weights, at::Tensor()}, cumulative_local_expert_recv_stats,
                    sym_buffer);
}

inline void _sum_combined_for_mega_moe(const at::Tensor& y, const at::Tensor& combine, const at::Tensor& topk_idx) {
  checks::dtype(y, "y", {at::kBFloat16});
  checks::dim(y, "y", 2);
  checks::no_internal_overlap(y, "y");
  checks::dtype(combine, "combine", {at::kBFloat16});
  checks::dim(combine, "combine", 3);
  checks::same_device(combine, "combine", y, "y");
  DG_CHECK_ARG(combine.size(2) == y.size(1) && combine.size(1) >= y.size(0), "combine",
               "must be [num_topk, T_max >= ", y.size(0), ", ", y.size(1), "] to cover 'y', got ", combine.sizes());
  checks::dtype(topk_idx, "topk_idx", {at::kLong});
  checks::dim(topk_idx, "topk_idx", 2);
  checks::same_device(topk_idx, "topk_idx", y, "y");
  DG_CHECK_ARG(topk_idx.size(1) == combine.size(0) && topk_idx.size(0) >= y.size(0), "topk_idx",
               "must be [T_max >= ", y.size(0), ", ", combine.size(0), "], got ", topk_idx.sizes());
  DG_CHECK_ARG(!y.is_alias_of(combine), "y", "must not share memory with 'combine'");
  sum_combined(y, combine, topk_idx);
}

}  // namespace deep_gemm::mega
