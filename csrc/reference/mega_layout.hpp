#pragma once
// The symmetric buffer of Mega MoE: one flat byte buffer per rank, cut into
// regions.  build_symm_buffer_layout() is the single source of every offset:
// the size op returns them (as the 23-int layout_info), the views op describes
// them to Python, and the fused ops cut the buffer with them.
//
// Note [Mega MoE symmetric buffer layout]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// With T = num_max_tokens_per_rank, K = num_topk, H = hidden, I = intermediate
// hidden, S = num_shared_experts, R = num_ranks, E_l = num_experts / R, and
// Rcv = R * T * min(K, E_l) (the most rows one rank can receive: every token of
// every rank, once per local expert it picks; a token lists distinct experts),
// the regions are, in this order, each starting on a 128-byte boundary:
//
//   workspace        int64 [1064]            header: [0] = rows received by this call; the rest is
//                                            the state of the CUDA symmetric-memory path (kWs* below)
//   x                tok   [T, H]            staged input tokens (FP8 e4m3, or bf16)
//   x_sf             int32 [T, H/128]        their packed UE8M0 scales, gran 32, K-major
//   topk_idx         int64 [T, K]            staged routing (-1 = unused slot)
//   topk_weights     f32   [T, K]            staged routing weights
//   shared_l1_sf     int32 [T, H/128]        M-major (strides (1, T))        S > 0, FP8 only
//   shared_l2_token  tok   [T, S*I]                                          S > 0
//   shared_l2_sf     int32 [T, S*I/128]      M-major                         S > 0, FP8 only
//   l1_token         tok   [Rcv, H]          rows received for the local experts (L1 input)
//   l1_sf            int32 [Rcv, H/128]      M-major (strides (1, Rcv))      FP8 only
//   l2_token         tok   [Rcv, I]          SwiGLU output (L2 input)
//   l2_sf            int32 [Rcv, I/128]      M-major                         FP8 only
//   recv_info        int32 [Rcv, 4]          per received row: source rank, source token, slot, local expert
//   recv_weights     f32   [Rcv]             per received row: its top-k weight
//   l2_out           bf16  [Rcv, H]          per received row: the expert's output
//   combine          bf16  [K, T, H]         per own token and slot: the output that came back
//
// "tok" is FP8 e4m3 for mma_type 'fp8xfp4' and bf16 for 'bf16xbf16'.  Regions
// marked "FP8 only" or "S > 0" are empty (zero bytes, no view) otherwise.  The
// layout depends only on (mma_type, T, K, H, I, S, Rcv), which is why the
// 23-int layout_info (num_bytes, the 11 public offsets, then the configuration)
// is enough to rebuild it.

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "utils/error.hpp"
#include "utils/math.hpp"

namespace deep_gemm::mega {

// Token counts are multiples of the LCM of the kernel's candidate BLOCK_M
// values {8, 16, 32, 64, 96, 128, 192}.
inline constexpr int kTokenAlignment = 384;
// One UE8M0 scale per 32 elements along K; one int32 word packs four of them.
inline constexpr int kSfGranK = 32;
inline constexpr int kSfElemsPerWord = 4 * kSfGranK;
inline constexpr int64_t kRegionAlignment = 128;
// The workspace's words.  The CUDA symmetric-memory path (Note [Mega MoE on
// symmetric memory] in mega_moe.hpp) keeps its barrier there (epoch, timeout,
// one signal per rank) and the matrix of rows every rank sends to every rank
// (counts[s * kMaxRanks + d], written by rank s into every rank's buffer).
inline constexpr int64_t kMaxRanks = 32;
inline constexpr int64_t kWsRecvRows = 0;
inline constexpr int64_t kWsEpoch = 1;
inline constexpr int64_t kWsTimeout = 2;
inline constexpr int64_t kWsSignals = 8;
inline constexpr int64_t kWsCounts = kWsSignals + kMaxRanks;
inline constexpr int64_t kWorkspaceWords = kWsCounts + kMaxRanks * kMaxRanks;
inline constexpr int64_t kRecvInfoFields = 4;  // source rank, source token, slot, local expert
inline constexpr int kLayoutInfoSize = 23;

enum class MmaType : int { kFp8xFp4 = 0, kBf16xBf16 = 1 };

inline MmaType parse_mma_type(const std::string& text, const char* arg) {
  if (text == "fp8xfp4") return MmaType::kFp8xFp4;
  if (text == "bf16xbf16") return MmaType::kBf16xBf16;
  fail_argument(arg, c10::str("must be 'fp8xfp4' or 'bf16xbf16', got '", text, "'"));
}

inline const char* mma_type_name(MmaType t) { return t == MmaType::kFp8xFp4 ? "fp8xfp4" : "bf16xbf16"; }

inline void check_activation(const std::string& activation, const char* arg) {
  DG_CHECK_ARG(activation == "swiglu", arg, "must be 'swiglu', got '", activation, "'");
}

// The regions, in buffer order.  The first twelve are the workspace and the
// eleven regions whose offsets layout_info carries, in its order.
enum class Region : int {
  kWorkspace,
  kX,
  kXSf,
  kTopkIdx,
  kTopkWeights,
  kSharedL1Sf,
  kSharedL2Token,
  kSharedL2Sf,
  kL1Token,
  kL1Sf,
  kL2Token,
  kL2Sf,
  kRecvInfo,
  kRecvWeights,
  kL2Out,
  kCombine,
};
inline constexpr int kNumRegions = 16;
inline constexpr int kNumPublicOffsets = 11;  // kX .. kL2Sf

// Element types of region views, as the views op reports them to Python.
enum class ViewType : int { kNone = 0, kFloat8 = 1, kBFloat16 = 2, kInt32 = 3, kInt64 = 4, kFloat32 = 5 };

inline int64_t element_size(ViewType t) {
  switch (t) {
    case ViewType::kFloat8:
      return 1;
    case ViewType::kBFloat16:
      return 2;
    case ViewType::kInt32:
    case ViewType::kFloat32:
      return 4;
    case ViewType::kInt64:
      return 8;
    case ViewType::kNone:
      break;
  }
  return 0;
}

inline at::ScalarType scalar_type(ViewType t) {
  switch (t) {
    case ViewType::kFloat8:
      return at::kFloat8_e4m3fn;
    case ViewType::kBFloat16:
      return at::kBFloat16;
    case ViewType::kInt32:
      return at::kInt;
    case ViewType::kInt64:
      return at::kLong;
    case ViewType::kFloat32:
    case ViewType::kNone:
      break;
  }
  return at::kFloat;
}

struct RegionView {
  int64_t offset = 0;  // bytes from the start of the buffer
  int64_t num_bytes = 0;  // bytes the region reserves (the view may use fewer: padding)
  ViewType type = ViewType::kNone;
  std::vector<int64_t> sizes;  // in elements
  std::vector<int64_t> strides;  // in elements
};

// Everything the layout depends on (validated by make_layout_config / check_layout_config).
struct LayoutConfig {
  MmaType mma_type = MmaType::kFp8xFp4;
  int64_t num_max_tokens_per_rank = 0;
  int64_t num_topk = 0;
  int64_t hidden = 0;
  int64_t intermediate_hidden = 0;
  int64_t num_shared_experts = 0;
  int64_t num_ring_tokens = 0;  // Rcv: receive capacity in rows

  bool with_sf() const { return mma_type == MmaType::kFp8xFp4; }
  int64_t sf_gran_k() const { return with_sf() ? kSfGranK : 0; }
  int64_t shared_intermediate_hidden() const { return num_shared_experts * intermediate_hidden; }
  int64_t num_sf_ring_tokens() const { return with_sf() ? num_ring_tokens : 0; }
  ViewType token_type() const { return with_sf() ? ViewType::kFloat8 : ViewType::kBFloat16; }
};

namespace detail {

// a * b, or a named error when the product does not fit int64.
inline int64_t checked_mul(int64_t a, int64_t b, const char* arg) {
  int64_t out = 0;
  DG_CHECK_ARG(!__builtin_mul_overflow(a, b, &out), arg,
               "gives a symmetric buffer too large to address with 64-bit byte offsets");
  return out;
}

inline int64_t product(std::initializer_list<int64_t> values, const char* arg) {
  int64_t out = 1;
  for (const auto v : values) out = checked_mul(out, v, arg);
  return out;
}

inline void check_positive(int64_t v, const char* arg) { DG_CHECK_ARG(v > 0, arg, "must be positive, got ", v); }

inline void check_fits_int(int64_t v, const char* arg, const char* what) {
  DG_CHECK_ARG(v <= std::numeric_limits<int>::max(), arg, "gives ", what, " = ", v,
               ", which does not fit a 32-bit int");
}

}  // namespace detail

// Checks the parts of a configuration that do not involve ranks or experts.
// `hidden_arg` and `intermediate_arg` name the arguments the sizes came from.
inline void check_sizes(MmaType mma_type, int64_t num_max_tokens_per_rank, int64_t num_topk, int64_t hidden,
                        int64_t intermediate_hidden, int64_t num_shared_experts,
                        const char* tokens_arg = "num_max_tokens_per_rank", const char* hidden_arg = "hidden",
                        const char* intermediate_arg = "intermediate_hidden") {
  DG_CHECK_ARG(num_max_tokens_per_rank > 0 && num_max_tokens_per_rank % kTokenAlignment == 0, tokens_arg,
               "must be a positive multiple of ", kTokenAlignment, " (get_token_alignment_for_mega_moe()), got ",
               num_max_tokens_per_rank);
  detail::check_positive(num_topk, "num_topk");
  detail::check_positive(hidden, hidden_arg);
  detail::check_positive(intermediate_hidden, intermediate_arg);
  if (mma_type == MmaType::kFp8xFp4) {
    DG_CHECK_ARG(hidden % kSfElemsPerWord == 0, hidden_arg, "must be a multiple of ", kSfElemsPerWord,
                 " for mma_type 'fp8xfp4' (one packed UE8M0 scale word per ", kSfElemsPerWord, " elements), got ",
                 hidden);
    DG_CHECK_ARG(intermediate_hidden % kSfElemsPerWord == 0, intermediate_arg, "must be a multiple of ",
                 kSfElemsPerWord, " for mma_type 'fp8xfp4' (one packed UE8M0 scale word per ", kSfElemsPerWord,
                 " elements), got ", intermediate_hidden);
  } else {
    DG_CHECK_ARG(intermediate_hidden % 8 == 0, intermediate_arg,
                 "must be a multiple of 8 (gate and up rows are interleaved in chunks of 8), got ",
                 intermediate_hidden);
  }
  DG_CHECK_ARG(num_shared_experts >= 0, "num_shared_experts", "must be non-negative, got ", num_shared_experts);
}

// Names of the arguments a configuration came from (they differ between the
// size op, which takes them directly, and the fused ops, which infer some).
struct ConfigArgNames {
  const char* num_ranks = "num_ranks";
  const char* num_max_tokens_per_rank = "num_max_tokens_per_rank";
  const char* hidden = "hidden";
  const char* intermediate_hidden = "intermediate_hidden";
};

// The layout configuration of a Mega MoE call, validated; every check names its argument.
inline LayoutConfig make_layout_config(int64_t num_ranks, int64_t num_experts, int64_t num_max_tokens_per_rank,
                                       int64_t num_topk, int64_t hidden, int64_t intermediate_hidden, MmaType mma_type,
                                       int64_t num_shared_experts, const ConfigArgNames& names = {}) {
  detail::check_positive(num_ranks, names.num_ranks);
  detail::check_positive(num_experts, "num_experts");
  DG_CHECK_ARG(num_experts % num_ranks == 0, "num_experts", "must be divisible by the number of ranks (", num_ranks,
               "), got ", num_experts);
  check_sizes(mma_type, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_shared_experts,
              names.num_max_tokens_per_rank, names.hidden, names.intermediate_hidden);
  DG_CHECK_ARG(num_topk <= num_experts, "num_topk", "must not exceed num_experts (", num_experts,
               "): a token picks distinct experts, got ", num_topk);
  const int64_t experts_per_rank = num_experts / num_ranks;
  LayoutConfig config;
  config.mma_type = mma_type;
  config.num_max_tokens_per_rank = num_max_tokens_per_rank;
  config.num_topk = num_topk;
  config.hidden = hidden;
  config.intermediate_hidden = intermediate_hidden;
  config.num_shared_experts = num_shared_experts;
  config.num_ring_tokens = detail::product({num_ranks, num_max_tokens_per_rank, std::min(num_topk, experts_per_rank)},
                                           names.num_max_tokens_per_rank);
  detail::check_fits_int(config.num_ring_tokens, names.num_max_tokens_per_rank,
                         "a receive capacity (num_ranks * num_max_tokens_per_rank * min(num_topk, experts per rank))");
  return config;
}

// Builds the layout (see the Note above).  The configuration must have passed
// make_layout_config or check_sizes.
inline std::array<RegionView, kNumRegions> region_views(const LayoutConfig& c, int64_t* total_bytes) {
  const char* arg = "num_max_tokens_per_rank";
  const int64_t T = c.num_max_tokens_per_rank, K = c.num_topk, H = c.hidden, I = c.intermediate_hidden;
  const int64_t SI = detail::checked_mul(c.num_shared_experts, I, "num_shared_experts");
  const int64_t Rcv = c.num_ring_tokens;
  const ViewType tok = c.token_type();
  const bool sf = c.with_sf();
  const bool shared = c.num_shared_experts > 0;

  std::array<RegionView, kNumRegions> out{};
  int64_t cursor = 0;
  // Places a region of `sizes`/`strides` elements of `type` reserving `elements` elements.
  auto place = [&](Region r, bool present, ViewType type, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                   int64_t elements) {
    RegionView& v = out[static_cast<int>(r)];
    v.offset = cursor;
    if (!present) return;
    v.type = type;
    v.sizes = std::move(sizes);
    v.strides = std::move(strides);
    v.num_bytes = detail::checked_mul(elements, element_size(type), arg);
    int64_t end = 0;
    DG_CHECK_ARG(!__builtin_add_overflow(cursor, v.num_bytes + kRegionAlignment, &end), arg,
                 "gives a symmetric buffer too large to address with 64-bit byte offsets");
    cursor = align<int64_t>(cursor + v.num_bytes, kRegionAlignment);
  };
  const int64_t h_words = H / kSfElemsPerWord, i_words = I / kSfElemsPerWord, si_words = SI / kSfElemsPerWord;
  place(Region::kWorkspace, true, ViewType::kInt64, {kWorkspaceWords}, {1}, kWorkspaceWords);
  place(Region::kX, true, tok, {T, H}, {H, 1}, detail::product({T, H}, arg));
  place(Region::kXSf, sf, ViewType::kInt32, {T, h_words}, {h_words, 1}, detail::product({T, h_words}, arg));
  place(Region::kTopkIdx, true, ViewType::kInt64, {T, K}, {K, 1}, detail::product({T, K}, arg));
  place(Region::kTopkWeights, true, ViewType::kFloat32, {T, K}, {K, 1}, detail::product({T, K}, arg));
  place(Region::kSharedL1Sf, sf && shared, ViewType::kInt32, {T, h_words}, {1, T}, detail::product({T, h_words}, arg));
  place(Region::kSharedL2Token, shared, tok, {T, SI}, {SI, 1}, detail::product({T, SI}, arg));
  place(Region::kSharedL2Sf, sf && shared, ViewType::kInt32, {T, si_words}, {1, T},
        detail::product({T, si_words}, arg));
  place(Region::kL1Token, true, tok, {Rcv, H}, {H, 1}, detail::product({Rcv, H}, arg));
  place(Region::kL1Sf, sf, ViewType::kInt32, {Rcv, h_words}, {1, c.num_sf_ring_tokens()},
        detail::product({c.num_sf_ring_tokens(), h_words}, arg));
  place(Region::kL2Token, true, tok, {Rcv, I}, {I, 1}, detail::product({Rcv, I}, arg));
  place(Region::kL2Sf, sf, ViewType::kInt32, {Rcv, i_words}, {1, c.num_sf_ring_tokens()},
        detail::product({c.num_sf_ring_tokens(), i_words}, arg));
  place(Region::kRecvInfo, true, ViewType::kInt32, {Rcv, kRecvInfoFields}, {kRecvInfoFields, 1},
        detail::product({Rcv, kRecvInfoFields}, arg));
  place(Region::kRecvWeights, true, ViewType::kFloat32, {Rcv}, {1}, Rcv);
  place(Region::kL2Out, true, ViewType::kBFloat16, {Rcv, H}, {H, 1}, detail::product({Rcv, H}, arg));
  place(Region::kCombine, true, ViewType::kBFloat16, {K, T, H}, {T * H, H, 1}, detail::product({K, T, H}, arg));
  *total_bytes = cursor;
  return out;
}

struct SymmBufferLayout {
  LayoutConfig config;
  std::array<RegionView, kNumRegions> regions;
  int64_t num_bytes = 0;

  const RegionView& operator[](Region r) const { return regions[static_cast<int>(r)]; }

  // layout_info: num_bytes, the 11 public offsets, mma kind, with_sf, sf_gran_k,
  // num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden,
  // num_shared_experts, shared_intermediate_hidden, num_ring_tokens, num_sf_ring_tokens.
  std::vector<int64_t> to_int_list() const {
    std::vector<int64_t> out;
    out.reserve(kLayoutInfoSize);
    out.push_back(num_bytes);
    for (int r = static_cast<int>(Region::kX); r <= static_cast<int>(Region::kL2Sf); ++r) {
      out.push_back(regions[r].offset);
    }
    const auto& c = config;
    out.insert(out.end(), {static_cast<int64_t>(c.mma_type), c.with_sf() ? 1 : 0, c.sf_gran_k(),
                           c.num_max_tokens_per_rank, c.num_topk, c.hidden, c.intermediate_hidden, c.num_shared_experts,
                           c.shared_intermediate_hidden(), c.num_ring_tokens, c.num_sf_ring_tokens()});
    return out;
  }

  // Every region as 10 ints: offset, num_bytes, ViewType, ndim, sizes[3], strides[3]
  // (unused dims 0), after num_bytes; in Region order.
  std::vector<int64_t> to_view_list() const {
    std::vector<int64_t> out{num_bytes};
    for (const auto& v : regions) {
      out.insert(out.end(),
                 {v.offset, v.num_bytes, static_cast<int64_t>(v.type), static_cast<int64_t>(v.sizes.size())});
      for (size_t d = 0; d < 3; ++d) out.push_back(d < v.sizes.size() ? v.sizes[d] : 0);
      for (size_t d = 0; d < 3; ++d) out.push_back(d < v.strides.size() ? v.strides[d] : 0);
    }
    return out;
  }

  // The typed view of region `r` inside `buffer` (a 1-D byte tensor of num_bytes).
  at::Tensor view(const at::Tensor& buffer, Region r) const {
    const RegionView& v = (*this)[r];
    const auto bytes = buffer.narrow(0, v.offset, v.num_bytes);
    return bytes.view(scalar_type(v.type)).as_strided(v.sizes, v.strides);
  }
};

inline SymmBufferLayout build_symm_buffer_layout(const LayoutConfig& config) {
  SymmBufferLayout layout;
  layout.config = config;
  layout.regions = region_views(config, &layout.num_bytes);
  return layout;
}

}  // namespace deep_gemm::mega
