#pragma once
// Family 'attention': the head-splitting FP8 GEMM and the MQA "lightning
// indexer" logits (ragged prefill and paged decode), with the decode schedule.  Over 400
// lines: the ragged and paged forms share their checks, query and weight handling and logits layout.
//
// This is the reference (ATen) implementation.  It runs on every device ATen
// supports, computes in float32 and never synchronises with the host: ranges,
// masks and gathers are tensor operations, so ks / ke / context_lens /
// block_table values are read on the device only.  Every check runs before
// anything is written.

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "apis/runtime.hpp"
#include "reference/output.hpp"
#include "reference/quant.hpp"
#include "reference/scaled.hpp"
#include "utils/checks.hpp"
#include "utils/math.hpp"

#ifdef DG_WITH_SM90_KERNELS
#include "apis/mqa_logits_cuda.hpp"
#endif

namespace deep_gemm::attention {

using scaled::Pair;
using scaled::Recipe;
using QueryPair = std::pair<at::Tensor, std::optional<at::Tensor>>;

// ---------------------------------------------------------------------------
// fp8_gemm_nt_skip_head_mid
// ---------------------------------------------------------------------------

inline void fp8_gemm_nt_skip_head_mid(const Pair& a, const Pair& b, const at::Tensor& d,
                                      const std::tuple<int, int, int>& head_splits, const std::optional<Recipe>& recipe,
                                      const std::string& compiled_dims, bool disable_ue8m0_cast) {
  (void)disable_ue8m0_cast;  // only selects the scale format on GPUs; the reference accepts both
  scaled::check_compiled_dims(compiled_dims);
  const auto [left, mid, right] = head_splits;
  DG_CHECK_ARG(left >= 0 && mid >= 0 && right >= 0 && left + right > 0, "head_splits",
               "must be (left, mid, right) with non-negative entries and left + right > 0, got (", left, ", ", mid,
               ", ", right, ")");
  checks::dtype(a.first, "a", {at::kFloat8_e4m3fn});
  checks::dtype(b.first, "b", {at::kFloat8_e4m3fn});
  const auto A = scaled::check_operand(a, "a", "sfa");
  const auto B = scaled::check_operand(b, "b", "sfb");
  DG_CHECK_ARG(checks::is_k_major(A.data), "a", "must be K-major (stride(-1) == 1), got strides ", A.data.strides());
  DG_CHECK_ARG(checks::is_k_major(B.data), "b", "must be K-major (stride(-1) == 1), got strides ", B.data.strides());
  checks::same_device(A.data, "a", d, "d");
  checks::same_device(A.sf, "sfa", d, "d");
  checks::same_device(B.data, "b", d, "d");
  checks::same_device(B.sf, "sfb", d, "d");
  DG_CHECK_ARG(A.k == B.k, "b", "has K=", B.k, " but 'a' has K=", A.k);
  const int64_t kept = left + right;
  DG_CHECK_ARG(B.mn % kept == 0, "b", "has N=", B.mn, " rows, which is not a multiple of left + right = ", kept,
               " (N = heads * (left + right))");
  const int64_t heads = B.mn / kept;
  const int64_t width = kept + mid;
  output::check(d, std::nullopt, {A.mn, heads * width}, {at::kBFloat16});
  const auto recipes = scaled::resolve_recipes(recipe, std::nullopt, std::nullopt, B.sf);
  DG_CHECK_ARG(recipes.a.k == 128 && recipes.b.k == 128, "recipe", "must use K granularity 128 for both operands, got ",
               recipes.a.k, " and ", recipes.b.k);
  scaled::check_scale_shape(A, recipes.a);
  scaled::check_scale_shape(B, recipes.b);
  if (A.mn == 0 || heads == 0) return;

  const auto product = A.k == 0 ? at::zeros({A.mn, B.mn}, d.options().dtype(at::kFloat))
                                : at::matmul(scaled::dequantize(A, recipes.a), scaled::dequantize(B, recipes.b).t());
  const auto per_head = product.view({A.mn, heads, kept});
  auto d_heads = d.view({A.mn, heads, width});  // splits the contiguous last dim: valid for any row stride
  if (left > 0) d_heads.narrow(2, 0, left).copy_(per_head.narrow(2, 0, left));
  if (right > 0) d_heads.narrow(2, left + mid, right).copy_(per_head.narrow(2, left, right));
}

// ---------------------------------------------------------------------------
// Shared pieces of the logits ops
// ---------------------------------------------------------------------------

namespace detail {

inline void check_logits_dtype(at::ScalarType dtype) {
  DG_CHECK_ARG(dtype == at::kFloat || dtype == at::kBFloat16, "logits_dtype",
               "must be torch.float32 or torch.bfloat16, got ", c10::toString(dtype));
}

// Elements of the logits dtype in 1024 bytes: row strides are multiples of it.
inline int64_t row_align(at::ScalarType dtype) { return 1024 / static_cast<int64_t>(c10::elementSize(dtype)); }

// [rows, cols] view of a fresh [alloc_rows, row_stride] allocation.
inline at::Tensor strided_logits(int64_t rows, int64_t alloc_rows, int64_t cols, int64_t row_stride,
                                 at::ScalarType dtype, const at::Device& device) {
  return at::empty({alloc_rows, row_stride}, at::TensorOptions().dtype(dtype).device(device))
      .narrow(0, 0, rows)
      .narrow(1, 0, cols);
}

struct Query {
  bool fp4;
  int64_t heads;
  int64_t head_dim;  // logical D (FP4 stores D / 2 bytes)
};

// q: FP8 e4m3 [..., H, D] with q_sf None, or FP4 int8 [..., H, D/2] with q_sf
// packed UE8M0 int32 [..., H]; `rank` is q's expected dimension count.
inline Query check_query(const QueryPair& q, int64_t rank, const char* shape_text) {
  const auto& [data, sf] = q;
  checks::dtype(data, "q", {at::kFloat8_e4m3fn, at::kChar});
  DG_CHECK_ARG(data.dim() == rank, "q", "must be ", rank, "-D ", shape_text, ", got ", data.dim(), "-D with shape ",
               data.sizes());
  DG_CHECK_ARG(data.size(-1) <= 1 || data.stride(-1) == 1, "q",
               "must be contiguous along D (stride(-1) == 1), got strides ", data.strides());
  const bool fp4 = quant::is_fp4(data);
  const int64_t heads = data.size(-2);
  const int64_t head_dim = fp4 ? data.size(-1) * 2 : data.size(-1);
  if (fp4) {
    DG_CHECK_ARG(sf.has_value(), "q_sf",
                 "is required for an FP4 q: packed UE8M0 int32 with q's shape minus its last dim");
    checks::dtype(*sf, "q_sf", {at::kInt});
    checks::shape(*sf, "q_sf", data.sizes().slice(0, rank - 1));
    checks::same_device(*sf, "q_sf", data, "q");
  } else {
    DG_CHECK_ARG(!sf.has_value(), "q_sf", "must be None for an FP8 q (only FP4 q carries scales)");
  }
  DG_CHECK_ARG(heads == 8 || heads == 16 || heads == 32 || heads == 64, "q", "must have 8, 16, 32 or 64 heads (dim ",
               rank - 2, "), got ", heads);
  if (fp4) {
    DG_CHECK_ARG(head_dim == 64 || head_dim == 128, "q",
                 "must have head dim D = 64 or 128 for FP4 (D/2 bytes stored), got ", head_dim);
  } else {
    DG_CHECK_ARG(head_dim == 32 || head_dim == 64 || head_dim == 128, "q", "must have head dim D = 32, 64 or 128, got ",
                 head_dim);
  }
  return {fp4, heads, head_dim};
}

// weights [rows, H]: float32, or bfloat16 with bfloat16 logits; stride(1) == 1.
inline void check_weights(const at::Tensor& weights, int64_t rows, int64_t heads, at::ScalarType logits_dtype,
                          const at::Tensor& q) {
  checks::dtype(weights, "weights", {at::kFloat, at::kBFloat16});
  DG_CHECK_ARG(weights.scalar_type() == at::kFloat || logits_dtype == at::kBFloat16, "weights",
               "may be bfloat16 only with logits_dtype=torch.bfloat16; got bfloat16 weights with ",
               c10::toString(logits_dtype), " logits");
  checks::dim(weights, "weights", 2);
  checks::shape(weights, "weights", {rows, heads});
  DG_CHECK_ARG(heads <= 1 || weights.stride(1) == 1, "weights", "must have stride(1) == 1, got strides ",
               weights.strides());
  checks::same_device(weights, "weights", q, "q");
}

// FP4 values [..., D] (float32) times UE8M0 scales of granularity 32 along D
// (sf: int32 [...], byte g of each word scales elements [32g, 32g + 32)).
inline at::Tensor scale_gran32(const at::Tensor& values, const at::Tensor& sf) {
  const int64_t d = values.size(-1);
  const auto per_group = quant::unpack_ue8m0(sf.unsqueeze(-1)).narrow(-1, 0, d / 32);
  return values * per_group.repeat_interleave(32, -1);
}

// q as float32 [..., H, D].
inline at::Tensor dequantize_query(const QueryPair& q) {
  if (!quant::is_fp4(q.first)) return q.first.to(at::kFloat);
  return scale_gran32(quant::unpack_fp4(q.first), *q.second);
}

// sum_h weights[r, h] * relu(q[r, h] . kv[r, j]) for q [R, H, D] and kv [R, J, D] -> [R, J].
inline at::Tensor weighted_relu_logits(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& weights) {
  const auto scores = at::bmm(q, kv.transpose(1, 2)).relu_();
  return at::bmm(weights.to(at::kFloat).unsqueeze(1), scores).squeeze(1);
}

// Elements of the largest heads x keys block the reference holds at once: DG_MQA_LOGITS_REF_CHUNK
// when set to a positive number, else 2^26.
inline int64_t ref_chunk_elems() {
  const char* env = std::getenv("DG_MQA_LOGITS_REF_CHUNK");
  const int64_t value = env != nullptr ? std::atoll(env) : 0;
  return value > 0 ? value : int64_t{1} << 26;
}

// [S, Skv] float32 logits sum_h w[i, h] * relu(q[i, h] . kv[j]) from q [S, H, D], kv [Skv, D] and
// w [S, H], computed over (query, key) chunks so that at most ref_chunk_elems() head scores exist
// at a time.  Chunk sizes depend on shapes only.
inline at::Tensor chunked_logits(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& w) {
  const int64_t seq = q.size(0), heads = q.size(1), dim = q.size(2), seq_kv = kv.size(0);
  auto full = at::empty({seq, seq_kv}, q.options());
  if (seq == 0 || seq_kv == 0) return full;
  const int64_t limit = ref_chunk_elems();
  const int64_t key_chunk = std::clamp<int64_t>(limit / heads, 1, seq_kv);
  const int64_t query_chunk = std::clamp<int64_t>(limit / (heads * key_chunk), 1, seq);
  for (int64_t q0 = 0; q0 < seq; q0 += query_chunk) {
    const int64_t qn = std::min(query_chunk, seq - q0);
    const auto q_rows = q.narrow(0, q0, qn).reshape({qn * heads, dim});
    const auto w_rows = w.narrow(0, q0, qn).unsqueeze(1);  // [qn, 1, H]
    for (int64_t k0 = 0; k0 < seq_kv; k0 += key_chunk) {
      const int64_t kn = std::min(key_chunk, seq_kv - k0);
      const auto scores = at::matmul(q_rows, kv.narrow(0, k0, kn).t()).view({qn, heads, kn}).relu_();
      full.narrow(0, q0, qn).narrow(1, k0, kn).copy_(at::bmm(w_rows, scores).squeeze(1));
    }
  }
  return full;
}

inline at::Tensor neg_inf_like(const at::Tensor& x) {
  return at::full({}, -std::numeric_limits<float>::infinity(), x.options());
}

}  // namespace detail

// ---------------------------------------------------------------------------
// fp8_fp4_mqa_logits / fp8_mqa_logits
// ---------------------------------------------------------------------------

inline at::Tensor fp8_fp4_mqa_logits(const QueryPair& q, const Pair& kv, const at::Tensor& weights,
                                     const at::Tensor& cu_seq_len_k_start, const at::Tensor& cu_seq_len_k_end,
                                     bool clean_logits, int max_seqlen_k, at::ScalarType logits_dtype) {
  return naming_errors([&]() -> at::Tensor {
    detail::check_logits_dtype(logits_dtype);
    const auto Q = detail::check_query(q, 3, "[S, H, D] (FP4: [S, H, D/2])");
    const auto& q_data = q.first;
    const int64_t seq = q_data.size(0);

    const auto& [kv_data, kv_sf] = kv;
    checks::dtype(kv_data, "kv", {at::kFloat8_e4m3fn, at::kChar});
    DG_CHECK_ARG(quant::is_fp4(kv_data) == Q.fp4, "kv", "must be ", Q.fp4 ? "FP4 (int8)" : "FP8 e4m3",
                 " like 'q', got ", c10::toString(kv_data.scalar_type()));
    checks::dim(kv_data, "kv", 2);
    DG_CHECK_ARG(kv_data.size(1) == q_data.size(-1), "kv", "must have ", q_data.size(-1),
                 " columns per token (head dim ", Q.head_dim, Q.fp4 ? ", two FP4 values per byte" : "", "), got ",
                 kv_data.size(1));
    DG_CHECK_ARG(kv_data.size(1) <= 1 || kv_data.stride(1) == 1, "kv",
                 "must be contiguous along D (stride(1) == 1), got strides ", kv_data.strides());
    const int64_t seq_kv = kv_data.size(0);
    checks::dtype(kv_sf, "kv_sf", {Q.fp4 ? at::kInt : at::kFloat});
    checks::shape(kv_sf, "kv_sf", {seq_kv});
    checks::same_device(kv_data, "kv", q_data, "q");
    checks::same_device(kv_sf, "kv_sf", q_data, "q");

    detail::check_weights(weights, seq, Q.heads, logits_dtype, q_data);
    for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{cu_seq_len_k_start, "cu_seq_len_k_start"},
                                  {cu_seq_len_k_end, "cu_seq_len_k_end"}}) {
      checks::dtype(t, name, {at::kInt});
      checks::shape(t, name, {seq});
      DG_CHECK_ARG(t.is_contiguous(), name, "must be contiguous, got strides ", t.strides());
      checks::same_device(t, name, q_data, "q");
    }
    DG_CHECK_ARG(max_seqlen_k >= 0, "max_seqlen_k", "must be non-negative (0 selects the full [S, Skv] form), got ",
                 max_seqlen_k);
    DG_CHECK_ARG(max_seqlen_k == 0 || !clean_logits, "clean_logits",
                 "must be False when max_seqlen_k > 0 (compressed logits are not cleaned), got True");

    const bool compressed = max_seqlen_k > 0;
    const int64_t cols = compressed ? max_seqlen_k : seq_kv;
    const int64_t elems = detail::row_align(logits_dtype);
    const int64_t row_stride =
        compressed ? align<int64_t>(align<int64_t>(max_seqlen_k, 256), elems) : align<int64_t>(seq_kv + 256, elems);
    auto out = detail::strided_logits(seq, align<int64_t>(seq, 128 / Q.heads), cols, row_stride, logits_dtype,
                                      q_data.device());
    if (out.numel() == 0) return out;
#ifdef DG_WITH_SM90_KERNELS
    if (!Q.fp4 && mqa_logits_cuda::ragged(q_data, kv_data, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end,
                                          compressed, out)) {
      return out;
    }
#endif

    // Full [S, Skv] logits, then keys outside [ks, ke) set to -inf.
    const auto kv_values =
        Q.fp4 ? detail::scale_gran32(quant::unpack_fp4(kv_data), kv_sf) : kv_data.to(at::kFloat) * kv_sf.unsqueeze(1);
    const auto full = detail::chunked_logits(detail::dequantize_query(q), kv_values, weights.to(at::kFloat));

    const auto long_opts = q_data.options().dtype(at::kLong);
    const auto ks = cu_seq_len_k_start.to(at::kLong).unsqueeze(1);
    const auto ke = cu_seq_len_k_end.to(at::kLong).unsqueeze(1);
    const auto keys = compressed ? ks + at::arange(max_seqlen_k, long_opts).unsqueeze(0)  // key of column t
                                 : at::arange(seq_kv, long_opts).unsqueeze(0);
    const auto in_range =
        at::logical_and(at::logical_and(keys >= ks, keys < ke), at::logical_and(keys >= 0, keys < seq_kv));
    at::Tensor values;
    if (!compressed) {
      values = full;
    } else if (seq_kv > 0) {
      values = full.gather(1, keys.clamp(0, seq_kv - 1));
    } else {
      values = at::zeros({seq, cols}, full.options());
    }
    out.copy_(at::where(in_range, values, detail::neg_inf_like(values)));
    return out;
  });
}

inline at::Tensor fp8_mqa_logits(const at::Tensor& q, const Pair& kv, const at::Tensor& weights,
                                 const at::Tensor& cu_seq_len_k_start, const at::Tensor& cu_seq_len_k_end,
                                 bool clean_logits, int max_seqlen_k) {
  checks::dtype(q, "q", {at::kFloat8_e4m3fn});
  return fp8_fp4_mqa_logits({q, std::nullopt}, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                            max_seqlen_k, at::kFloat);
}

// ---------------------------------------------------------------------------
// get_paged_mqa_logits_metadata
// ---------------------------------------------------------------------------

}  // namespace deep_gemm::attention

// CUDA builds: the native schedule and FP8 paged logits kernels (sm90a).
#ifdef DG_WITH_SM90_KERNELS
#include "apis/paged_mqa_logits_cuda.hpp"
#endif

namespace deep_gemm::attention {

namespace detail {

inline void check_context_lens(const at::Tensor& context_lens) {
  checks::dtype(context_lens, "context_lens", {at::kInt});
  DG_CHECK_ARG(context_lens.dim() == 2, "context_lens", "must be 2-D [B, next_n], got ", context_lens.dim(),
               "-D with shape ", context_lens.sizes());
  DG_CHECK_ARG(context_lens.size(1) >= 1, "context_lens", "must have next_n >= 1 columns, got shape ",
               context_lens.sizes());
}

// Note [Paged MQA reference chunks]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The reference paged logits walk the output in chunks of rows x KV blocks sized so that the
// largest float32 temporary ([rows, heads, keys] scores or [rows, keys, D] values) holds at most
// paged_reference_chunk() elements (at least one row and one block): 2^24 by default, or the
// positive integer in the environment variable DG_PAGED_MQA_REF_CHUNK (read on every call).
inline int64_t paged_reference_chunk() {
  if (const char* env = std::getenv("DG_PAGED_MQA_REF_CHUNK")) {
    const long long value = std::strtoll(env, nullptr, 10);
    if (value > 0) return static_cast<int64_t>(value);
  }
  return int64_t{1} << 24;
}

inline void check_indices(const std::optional<at::Tensor>& indices, const at::Tensor& context_lens) {
  if (!indices.has_value()) return;
  checks::dtype(*indices, "indices", {at::kInt});
  checks::shape(*indices, "indices", {context_lens.size(0)});
  checks::same_device(*indices, "indices", context_lens, "context_lens");
  DG_CHECK_ARG(context_lens.size(1) == 1, "indices",
               "needs next_n == 1 (one query per row), but context_lens has shape ", context_lens.sizes());
}

}  // namespace detail

// Note [Paged MQA schedule]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Group b (row b of context_lens: its next_n queries read one KV sequence)
// needs n_b = ceil(max(0, max_t context_lens[b, t]) / block_kv) blocks.  The
// T = sum n_b work items, ordered by group then block, are cut into num_sms
// contiguous runs whose lengths differ by at most one: unit s starts at item
// p_s = s * (T / num_sms) + min(s, T % num_sms).  Row s of the result names
// item p_s as (group b, block k within b): b counts the groups whose items all
// lie before p_s, which skips empty groups; row num_sms is (B, 0).  Unit s
// covers rows s .. s + 1 (exclusive).  Everything is tensor arithmetic
// (cumsum + searchsorted), so nothing is read on the host.
inline at::Tensor get_paged_mqa_logits_metadata(const at::Tensor& context_lens, int block_kv, int num_sms,
                                                const std::optional<at::Tensor>& indices) {
  return naming_errors([&]() -> at::Tensor {
    detail::check_context_lens(context_lens);
    DG_CHECK_ARG(block_kv == 32 || block_kv == 64, "block_kv", "must be 32 or 64, got ", block_kv);
    DG_CHECK_ARG(num_sms >= 1, "num_sms", "must be at least 1, got ", num_sms);
    detail::check_indices(indices, context_lens);
#ifdef DG_WITH_SM90_KERNELS
    if (at::Tensor native; paged_cuda::metadata(context_lens, block_kv, num_sms, native)) return native;
#endif

    const auto long_opts = context_lens.options().dtype(at::kLong);
    const int64_t groups = context_lens.size(0);
    at::Tensor blocks = at::zeros({groups}, long_opts);
    if (groups > 0) {
      const auto longest = context_lens.to(at::kLong).amax(1).clamp_min(0);
      blocks = at::floor_divide(longest + (block_kv - 1), block_kv);
    }
    const auto group_ends = blocks.cumsum(0);  // [B], non-decreasing
    const auto group_starts = at::cat({at::zeros({1}, long_opts), group_ends});  // [B + 1]
    const auto total = group_starts.narrow(0, groups, 1);  // T as a [1] tensor: stays on the device
    const auto base = at::floor_divide(total, num_sms);
    const auto extra = total - base * num_sms;
    const auto units = at::arange(static_cast<int64_t>(num_sms) + 1, long_opts);  // INT_MAX + 1 fits
    const auto starts = units * base + at::minimum(units, extra);  // p_s, [num_sms + 1]
    const auto group = at::searchsorted(group_ends, starts, /*out_int32=*/false, /*right=*/true);
    const auto block = starts - group_starts.index_select(0, group);
    return at::stack({group, block}, 1).to(at::kInt);
  });
}

// ---------------------------------------------------------------------------
// fp8_fp4_paged_mqa_logits / fp8_paged_mqa_logits
// ---------------------------------------------------------------------------

inline at::Tensor fp8_fp4_paged_mqa_logits(const QueryPair& q, const at::Tensor& kv_cache, const at::Tensor& weights,
                                           const at::Tensor& context_lens, const at::Tensor& block_table,
                                           const at::Tensor& schedule_meta, int max_context_len, bool clean_logits,
                                           at::ScalarType logits_dtype, const std::optional<at::Tensor>& indices) {
  return naming_errors([&]() -> at::Tensor {
    DG_CHECK_SUPPORTED(!clean_logits,
                       "clean_logits=True is not supported for paged logits (context_lens is 2-D [B, next_n]); pass "
                       "clean_logits=False, the default");
    detail::check_logits_dtype(logits_dtype);
    const auto Q = detail::check_query(q, 4, "[B, next_n, H, D] (FP4: [B, next_n, H, D/2])");
    const auto& q_data = q.first;
    const int64_t batch = q_data.size(0);
    const int64_t next_n = q_data.size(1);
    const int64_t rows = batch * next_n;
    const int64_t value_bytes = q_data.size(-1);  // D (FP8) or D / 2 (FP4) bytes per token
    const int64_t token_bytes = value_bytes + 4;

    checks::dtype(kv_cache, "kv_cache", {at::kByte});
    DG_CHECK_ARG(kv_cache.dim() == 4, "kv_cache", "must be 4-D [num_blocks, block_kv, 1, ", token_bytes, "], got ",
                 kv_cache.dim(), "-D with shape ", kv_cache.sizes());
    const int64_t num_blocks = kv_cache.size(0);
    const int64_t block_kv = kv_cache.size(1);
    DG_CHECK_ARG(kv_cache.size(2) == 1 && kv_cache.size(3) == token_bytes, "kv_cache",
                 "must have shape [num_blocks, block_kv, 1, ", token_bytes, "] (", value_bytes,
                 " value bytes + 4 scale bytes per token for head dim ", Q.head_dim, "), got ", kv_cache.sizes());
    DG_CHECK_ARG(block_kv == 32 || block_kv == 64, "kv_cache", "must have block_kv (dim 1) 32 or 64, got ", block_kv);
    DG_CHECK_ARG(kv_cache.stride(3) == 1 && kv_cache.stride(1) == token_bytes, "kv_cache",
                 "must have stride(1) == ", token_bytes, " and stride(3) == 1, got strides ", kv_cache.strides());
    DG_CHECK_ARG(kv_cache.stride(0) % 4 == 0 && (num_blocks <= 1 || kv_cache.stride(0) >= block_kv * token_bytes),
                 "kv_cache", "must have stride(0) a multiple of 4 and at least ", block_kv * token_bytes,
                 " (one whole block), got strides ", kv_cache.strides());
    checks::same_device(kv_cache, "kv_cache", q_data, "q");

    detail::check_weights(weights, rows, Q.heads, logits_dtype, q_data);
    detail::check_context_lens(context_lens);
    checks::shape(context_lens, "context_lens", {batch, next_n});
    checks::same_device(context_lens, "context_lens", q_data, "q");
    checks::dtype(block_table, "block_table", {at::kInt});
    checks::dim(block_table, "block_table", 2);
    DG_CHECK_ARG(block_table.size(1) <= 1 || block_table.stride(1) == 1, "block_table",
                 "must have stride(1) == 1, got strides ", block_table.strides());
    DG_CHECK_ARG(indices.has_value() || block_table.size(0) == batch, "block_table", "must have one row per sequence (",
                 batch, "), got shape ", block_table.sizes());
    checks::same_device(block_table, "block_table", q_data, "q");
    detail::check_indices(indices, context_lens);
    const int num_sms = runtime::get_num_sms();
    checks::dtype(schedule_meta, "schedule_meta", {at::kInt});
    DG_CHECK_ARG(schedule_meta.sizes() == at::IntArrayRef({num_sms + 1, 2}), "schedule_meta", "must have shape [",
                 num_sms + 1, ", 2] (get_num_sms() is ", num_sms,
                 "; build it with get_paged_mqa_logits_metadata(context_lens, block_kv, get_num_sms())), got ",
                 schedule_meta.sizes());
    checks::same_device(schedule_meta, "schedule_meta", q_data, "q");
    DG_CHECK_ARG(max_context_len >= 0, "max_context_len", "must be non-negative, got ", max_context_len);

    const int64_t cols = max_context_len;
    const int64_t row_stride = align<int64_t>(align<int64_t>(cols, 256), detail::row_align(logits_dtype));
    auto out = detail::strided_logits(rows, rows, cols, row_stride, logits_dtype, q_data.device());
    if (out.numel() == 0) return out;

#ifdef DG_WITH_SM90_KERNELS
    if (paged_cuda::logits(q_data, q.second, kv_cache, weights, context_lens, block_table, schedule_meta,
                           max_context_len, indices, num_sms, out)) {
      return out;
    }
#endif

    // Reference: chunks of rows x blocks, so at most one bounded [rows, heads, keys] (and
    // [rows, keys, D]) float32 temporary exists at a time (Note [Paged MQA reference chunks]).
    const auto long_opts = q_data.options().dtype(at::kLong);
    const int64_t nb = std::min<int64_t>(ceil_div<int64_t>(cols, block_kv), block_table.size(1));
    const auto sequence =
        indices.has_value() ? indices->to(at::kLong) : at::arange(batch, long_opts).repeat_interleave(next_n);
    const auto sequence_ok = at::logical_and(sequence >= 0, sequence < block_table.size(0));
    const auto safe_sequence = at::where(sequence_ok, sequence, 0);
    const auto q_values = detail::dequantize_query(q).reshape({rows, Q.heads, Q.head_dim});
    const auto lens = context_lens.reshape({rows, 1}).to(at::kLong);
    const auto per_block = num_blocks > 0 ? kv_cache.as_strided({num_blocks, block_kv * token_bytes},
                                                                {kv_cache.stride(0), 1}, kv_cache.storage_offset())
                                          : at::Tensor();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto nan_value = at::full({}, nan, q_values.options());
    const auto neg_inf = detail::neg_inf_like(q_values);

    const int64_t width = std::max<int64_t>(Q.heads, Q.head_dim) * block_kv;  // elements per (row, block)
    const int64_t budget = detail::paged_reference_chunk();
    const int64_t chunk_blocks = std::clamp<int64_t>(budget / width, 1, std::max<int64_t>(nb, 1));
    const int64_t chunk_rows = std::clamp<int64_t>(budget / (width * chunk_blocks), 1, rows);
    for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
      const int64_t rc = std::min(chunk_rows, rows - r0);
      const auto ok_c = sequence_ok.narrow(0, r0, rc).unsqueeze(1);
      const auto lens_c = lens.narrow(0, r0, rc);
      const auto q_c = q_values.narrow(0, r0, rc);
      const auto w_c = weights.narrow(0, r0, rc);
      auto out_c = out.narrow(0, r0, rc);
      for (int64_t k0 = 0; k0 < nb; k0 += chunk_blocks) {
        const int64_t kc = std::min(chunk_blocks, nb - k0);
        const int64_t c0 = k0 * block_kv;
        const int64_t cc = std::min(kc * block_kv, cols - c0);
        // Block ids [rc, kc] (-1 where the row has no valid entry).
        at::Tensor ids = at::full({rc, kc}, -1, long_opts);
        if (block_table.size(0) > 0) {
          const auto picked =
              block_table.narrow(1, k0, kc).to(at::kLong).index_select(0, safe_sequence.narrow(0, r0, rc));
          ids = at::where(ok_c, picked, ids);
        }
        const auto block_ok = at::logical_and(ids >= 0, ids < num_blocks);
        // The bytes of every block the chunk reads, then its values and scales.
        at::Tensor bytes = at::zeros({rc * kc, block_kv * token_bytes}, kv_cache.options());
        if (num_blocks > 0) bytes = per_block.index_select(0, at::where(block_ok, ids, 0).flatten());
        const auto raw_values = bytes.narrow(1, 0, block_kv * value_bytes).reshape({rc, kc * block_kv, value_bytes});
        const auto scales = bytes.narrow(1, block_kv * value_bytes, block_kv * 4)
                                .contiguous()
                                .view(Q.fp4 ? at::kInt : at::kFloat)  // 4 bytes -> one scale per token
                                .reshape({rc, kc * block_kv});
        const auto kv_values = Q.fp4 ? detail::scale_gran32(quant::unpack_fp4(raw_values.view(at::kChar)), scales)
                                     : raw_values.view(at::kFloat8_e4m3fn).to(at::kFloat) * scales.unsqueeze(-1);
        auto logits = detail::weighted_relu_logits(q_c, kv_values, w_c);  // [rc, kc * block_kv]
        logits = at::where(block_ok.repeat_interleave(block_kv, 1), logits, nan_value).narrow(1, 0, cc);
        const auto keys = at::arange(c0, c0 + cc, long_opts).unsqueeze(0);
        out_c.narrow(1, c0, cc).copy_(at::where(keys < lens_c, logits, neg_inf));
      }
      if (nb * block_kv < cols) {  // the block table ends before max_context_len
        const int64_t c0 = nb * block_kv;
        const auto keys = at::arange(c0, cols, long_opts).unsqueeze(0);
        out_c.narrow(1, c0, cols - c0).copy_(at::where(keys < lens_c, nan_value, neg_inf));
      }
    }
    return out;
  });
}

inline at::Tensor fp8_paged_mqa_logits(const at::Tensor& q, const at::Tensor& kv_cache, const at::Tensor& weights,
                                       const at::Tensor& context_lens, const at::Tensor& block_table,
                                       const at::Tensor& schedule_meta, int max_context_len, bool clean_logits,
                                       const std::optional<at::Tensor>& indices) {
  checks::dtype(q, "q", {at::kFloat8_e4m3fn});
  return fp8_fp4_paged_mqa_logits({q, std::nullopt}, kv_cache, weights, context_lens, block_table, schedule_meta,
                                  max_context_len, clean_logits, at::kFloat, indices);
}

}  // namespace deep_gemm::attention
