// @generated from ops.yaml by python -m codegen — do not edit
// Family 'attention': Attention-side GEMMs and the MQA "lightning indexer" logits.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/attention.hpp"

namespace {

// fp8_gemm_nt_skip_head_mid(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[3] head_splits, int[3]? recipe=None, str compiled_dims="nk", bool disable_ue8m0_cast=False) -> ()
void wrap_fp8_gemm_nt_skip_head_mid(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, at::IntArrayRef head_splits, at::OptionalIntArrayRef recipe, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("fp8_gemm_nt_skip_head_mid");
  ::deep_gemm::attention::fp8_gemm_nt_skip_head_mid(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, deep_gemm::torch_utils::to_tuple<3>(head_splits, "head_splits"), deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// fp8_fp4_mqa_logits(Tensor q, Tensor? q_sf, Tensor kv, Tensor kv_sf, Tensor weights, Tensor cu_seq_len_k_start, Tensor cu_seq_len_k_end, bool clean_logits=True, int max_seqlen_k=0, ScalarType logits_dtype=float) -> Tensor
at::Tensor wrap_fp8_fp4_mqa_logits(const at::Tensor& q, const std::optional<at::Tensor>& q_sf, const at::Tensor& kv, const at::Tensor& kv_sf, const at::Tensor& weights, const at::Tensor& cu_seq_len_k_start, const at::Tensor& cu_seq_len_k_end, bool clean_logits, int64_t max_seqlen_k, at::ScalarType logits_dtype) {
  const deep_gemm::OpScope scope("fp8_fp4_mqa_logits");
  return ::deep_gemm::attention::fp8_fp4_mqa_logits(std::pair<at::Tensor, std::optional<at::Tensor>>(q, q_sf), std::pair<at::Tensor, at::Tensor>(kv, kv_sf), weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, deep_gemm::torch_utils::to_int(max_seqlen_k, "max_seqlen_k"), logits_dtype);
}

// fp8_mqa_logits(Tensor q, Tensor kv, Tensor kv_sf, Tensor weights, Tensor cu_seq_len_k_start, Tensor cu_seq_len_k_end, bool clean_logits=True, int max_seqlen_k=0) -> Tensor
at::Tensor wrap_fp8_mqa_logits(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& kv_sf, const at::Tensor& weights, const at::Tensor& cu_seq_len_k_start, const at::Tensor& cu_seq_len_k_end, bool clean_logits, int64_t max_seqlen_k) {
  const deep_gemm::OpScope scope("fp8_mqa_logits");
  return ::deep_gemm::attention::fp8_mqa_logits(q, std::pair<at::Tensor, at::Tensor>(kv, kv_sf), weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, deep_gemm::torch_utils::to_int(max_seqlen_k, "max_seqlen_k"));
}

// get_paged_mqa_logits_metadata(Tensor context_lens, int block_kv, int num_sms, Tensor? indices=None) -> Tensor
at::Tensor wrap_get_paged_mqa_logits_metadata(const at::Tensor& context_lens, int64_t block_kv, int64_t num_sms, const std::optional<at::Tensor>& indices) {
  const deep_gemm::OpScope scope("get_paged_mqa_logits_metadata");
  return ::deep_gemm::attention::get_paged_mqa_logits_metadata(context_lens, deep_gemm::torch_utils::to_int(block_kv, "block_kv"), deep_gemm::torch_utils::to_int(num_sms, "num_sms"), indices);
}

// fp8_fp4_paged_mqa_logits(Tensor q, Tensor? q_sf, Tensor kv_cache, Tensor weights, Tensor context_lens, Tensor block_table, Tensor schedule_meta, int max_context_len, bool clean_logits=False, ScalarType logits_dtype=float, Tensor? indices=None) -> Tensor
at::Tensor wrap_fp8_fp4_paged_mqa_logits(const at::Tensor& q, const std::optional<at::Tensor>& q_sf, const at::Tensor& kv_cache, const at::Tensor& weights, const at::Tensor& context_lens, const at::Tensor& block_table, const at::Tensor& schedule_meta, int64_t max_context_len, bool clean_logits, at::ScalarType logits_dtype, const std::optional<at::Tensor>& indices) {
  const deep_gemm::OpScope scope("fp8_fp4_paged_mqa_logits");
  return ::deep_gemm::attention::fp8_fp4_paged_mqa_logits(std::pair<at::Tensor, std::optional<at::Tensor>>(q, q_sf), kv_cache, weights, context_lens, block_table, schedule_meta, deep_gemm::torch_utils::to_int(max_context_len, "max_context_len"), clean_logits, logits_dtype, indices);
}

// fp8_paged_mqa_logits(Tensor q, Tensor kv_cache, Tensor weights, Tensor context_lens, Tensor block_table, Tensor schedule_meta, int max_context_len, bool clean_logits=False, Tensor? indices=None) -> Tensor
at::Tensor wrap_fp8_paged_mqa_logits(const at::Tensor& q, const at::Tensor& kv_cache, const at::Tensor& weights, const at::Tensor& context_lens, const at::Tensor& block_table, const at::Tensor& schedule_meta, int64_t max_context_len, bool clean_logits, const std::optional<at::Tensor>& indices) {
  const deep_gemm::OpScope scope("fp8_paged_mqa_logits");
  return ::deep_gemm::attention::fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, deep_gemm::torch_utils::to_int(max_context_len, "max_context_len"), clean_logits, indices);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("fp8_gemm_nt_skip_head_mid(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[3] head_splits, int[3]? recipe=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False) -> ()");
  m.def("fp8_fp4_mqa_logits(Tensor q, Tensor? q_sf, Tensor kv, Tensor kv_sf, Tensor weights, Tensor cu_seq_len_k_start, Tensor cu_seq_len_k_end, bool clean_logits=True, int max_seqlen_k=0, ScalarType logits_dtype=float) -> Tensor");
  m.def("fp8_mqa_logits(Tensor q, Tensor kv, Tensor kv_sf, Tensor weights, Tensor cu_seq_len_k_start, Tensor cu_seq_len_k_end, bool clean_logits=True, int max_seqlen_k=0) -> Tensor");
  m.def("get_paged_mqa_logits_metadata(Tensor context_lens, int block_kv, int num_sms, Tensor? indices=None) -> Tensor");
  m.def("fp8_fp4_paged_mqa_logits(Tensor q, Tensor? q_sf, Tensor kv_cache, Tensor weights, Tensor context_lens, Tensor block_table, Tensor schedule_meta, int max_context_len, bool clean_logits=False, ScalarType logits_dtype=float, Tensor? indices=None) -> Tensor");
  m.def("fp8_paged_mqa_logits(Tensor q, Tensor kv_cache, Tensor weights, Tensor context_lens, Tensor block_table, Tensor schedule_meta, int max_context_len, bool clean_logits=False, Tensor? indices=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("fp8_gemm_nt_skip_head_mid", TORCH_FN(wrap_fp8_gemm_nt_skip_head_mid));
  m.impl("fp8_fp4_mqa_logits", TORCH_FN(wrap_fp8_fp4_mqa_logits));
  m.impl("fp8_mqa_logits", TORCH_FN(wrap_fp8_mqa_logits));
  m.impl("get_paged_mqa_logits_metadata", TORCH_FN(wrap_get_paged_mqa_logits_metadata));
  m.impl("fp8_fp4_paged_mqa_logits", TORCH_FN(wrap_fp8_fp4_paged_mqa_logits));
  m.impl("fp8_paged_mqa_logits", TORCH_FN(wrap_fp8_paged_mqa_logits));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("fp8_gemm_nt_skip_head_mid", TORCH_FN(wrap_fp8_gemm_nt_skip_head_mid));
  m.impl("fp8_fp4_mqa_logits", TORCH_FN(wrap_fp8_fp4_mqa_logits));
  m.impl("fp8_mqa_logits", TORCH_FN(wrap_fp8_mqa_logits));
  m.impl("get_paged_mqa_logits_metadata", TORCH_FN(wrap_get_paged_mqa_logits_metadata));
  m.impl("fp8_fp4_paged_mqa_logits", TORCH_FN(wrap_fp8_fp4_paged_mqa_logits));
  m.impl("fp8_paged_mqa_logits", TORCH_FN(wrap_fp8_paged_mqa_logits));
}
#endif  // guard 'cuda'
