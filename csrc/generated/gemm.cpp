// @generated from ops.yaml by python -m codegen — do not edit
// Family 'gemm': Dense and grouped GEMMs with block-scaled FP8/FP4 or BF16 operands.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/gemm.hpp"
#include "apis/grouped_gemm.hpp"
#include "apis/cublaslt.hpp"

namespace {

// fp8_fp4_gemm_nt(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="nk", bool disable_ue8m0_cast=False) -> ()
void wrap_fp8_fp4_gemm_nt(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const std::optional<at::Tensor>& c, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("fp8_fp4_gemm_nt");
  ::deep_gemm::gemm::fp8_fp4_gemm_nt(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, c, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// fp8_fp4_gemm_nn(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="nk", bool disable_ue8m0_cast=False) -> ()
void wrap_fp8_fp4_gemm_nn(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const std::optional<at::Tensor>& c, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("fp8_fp4_gemm_nn");
  ::deep_gemm::gemm::fp8_fp4_gemm_nn(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, c, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// fp8_fp4_gemm_tn(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="mn", bool disable_ue8m0_cast=False) -> ()
void wrap_fp8_fp4_gemm_tn(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const std::optional<at::Tensor>& c, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("fp8_fp4_gemm_tn");
  ::deep_gemm::gemm::fp8_fp4_gemm_tn(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, c, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// fp8_fp4_gemm_tt(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="mn", bool disable_ue8m0_cast=False) -> ()
void wrap_fp8_fp4_gemm_tt(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const std::optional<at::Tensor>& c, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("fp8_fp4_gemm_tt");
  ::deep_gemm::gemm::fp8_fp4_gemm_tt(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, c, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// bf16_gemm_nt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims="nk") -> ()
void wrap_bf16_gemm_nt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c, c10::string_view compiled_dims) {
  const deep_gemm::OpScope scope("bf16_gemm_nt");
  ::deep_gemm::gemm::bf16_gemm_nt(a, b, d, c, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"));
}

// bf16_gemm_nn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims="nk") -> ()
void wrap_bf16_gemm_nn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c, c10::string_view compiled_dims) {
  const deep_gemm::OpScope scope("bf16_gemm_nn");
  ::deep_gemm::gemm::bf16_gemm_nn(a, b, d, c, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"));
}

// bf16_gemm_tn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims="mn") -> ()
void wrap_bf16_gemm_tn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c, c10::string_view compiled_dims) {
  const deep_gemm::OpScope scope("bf16_gemm_tn");
  ::deep_gemm::gemm::bf16_gemm_tn(a, b, d, c, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"));
}

// bf16_gemm_tt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims="mn") -> ()
void wrap_bf16_gemm_tt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c, c10::string_view compiled_dims) {
  const deep_gemm::OpScope scope("bf16_gemm_tt");
  ::deep_gemm::gemm::bf16_gemm_tt(a, b, d, c, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"));
}

// m_grouped_fp8_fp4_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor grouped_layout, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="nk", bool disable_ue8m0_cast=False, bool use_psum_layout=False, bool ensure_zero_padding=True, int? expected_m_for_psum_layout=None) -> ()
void wrap_m_grouped_fp8_fp4_gemm_nt_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const at::Tensor& grouped_layout, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast, bool use_psum_layout, bool ensure_zero_padding, std::optional<int64_t> expected_m_for_psum_layout) {
  const deep_gemm::OpScope scope("m_grouped_fp8_fp4_gemm_nt_contiguous");
  ::deep_gemm::gemm::m_grouped_fp8_fp4_gemm_nt_contiguous(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, grouped_layout, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast, use_psum_layout, ensure_zero_padding, deep_gemm::torch_utils::to_optional_int(expected_m_for_psum_layout, "expected_m_for_psum_layout"));
}

// m_grouped_fp8_fp4_gemm_nn_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor grouped_layout, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="nk", bool disable_ue8m0_cast=False, bool use_psum_layout=False, bool ensure_zero_padding=True) -> ()
void wrap_m_grouped_fp8_fp4_gemm_nn_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const at::Tensor& grouped_layout, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast, bool use_psum_layout, bool ensure_zero_padding) {
  const deep_gemm::OpScope scope("m_grouped_fp8_fp4_gemm_nn_contiguous");
  ::deep_gemm::gemm::m_grouped_fp8_fp4_gemm_nn_contiguous(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, grouped_layout, deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast, use_psum_layout, ensure_zero_padding);
}

// m_grouped_fp8_fp4_gemm_nt_masked(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor masked_m, int expected_m, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims="nk", bool disable_ue8m0_cast=False) -> ()
void wrap_m_grouped_fp8_fp4_gemm_nt_masked(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const at::Tensor& masked_m, int64_t expected_m, at::OptionalIntArrayRef recipe, at::OptionalIntArrayRef recipe_a, at::OptionalIntArrayRef recipe_b, c10::string_view compiled_dims, bool disable_ue8m0_cast) {
  const deep_gemm::OpScope scope("m_grouped_fp8_fp4_gemm_nt_masked");
  ::deep_gemm::gemm::m_grouped_fp8_fp4_gemm_nt_masked(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, masked_m, deep_gemm::torch_utils::to_int(expected_m, "expected_m"), deep_gemm::torch_utils::to_optional_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_a, "recipe_a"), deep_gemm::torch_utils::to_optional_tuple<2>(recipe_b, "recipe_b"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), disable_ue8m0_cast);
}

// k_grouped_fp8_gemm_tn_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, int[3] recipe=[1, 1, 128], str compiled_dims="mn", bool use_psum_layout=False) -> ()
void wrap_k_grouped_fp8_gemm_tn_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, at::OptionalIntArrayRef ks_cpu, const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c, at::IntArrayRef recipe, c10::string_view compiled_dims, bool use_psum_layout) {
  const deep_gemm::OpScope scope("k_grouped_fp8_gemm_tn_contiguous");
  ::deep_gemm::gemm::k_grouped_fp8_gemm_tn_contiguous(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, deep_gemm::torch_utils::to_optional_int_vector(ks_cpu, "ks_cpu"), grouped_layout, c, deep_gemm::torch_utils::to_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), use_psum_layout);
}

// k_grouped_fp8_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, int[3] recipe=[1, 1, 128], str compiled_dims="mn", bool use_psum_layout=False) -> ()
void wrap_k_grouped_fp8_gemm_nt_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, at::OptionalIntArrayRef ks_cpu, const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c, at::IntArrayRef recipe, c10::string_view compiled_dims, bool use_psum_layout) {
  const deep_gemm::OpScope scope("k_grouped_fp8_gemm_nt_contiguous");
  ::deep_gemm::gemm::k_grouped_fp8_gemm_nt_contiguous(std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, deep_gemm::torch_utils::to_optional_int_vector(ks_cpu, "ks_cpu"), grouped_layout, c, deep_gemm::torch_utils::to_tuple<3>(recipe, "recipe"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), use_psum_layout);
}

// m_grouped_bf16_gemm_nt_contiguous(Tensor a, Tensor b, Tensor(d!) d, Tensor grouped_layout, str compiled_dims="nk", bool use_psum_layout=False, bool ensure_zero_padding=True, int? expected_m_for_psum_layout=None) -> ()
void wrap_m_grouped_bf16_gemm_nt_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& grouped_layout, c10::string_view compiled_dims, bool use_psum_layout, bool ensure_zero_padding, std::optional<int64_t> expected_m_for_psum_layout) {
  const deep_gemm::OpScope scope("m_grouped_bf16_gemm_nt_contiguous");
  ::deep_gemm::gemm::m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), use_psum_layout, ensure_zero_padding, deep_gemm::torch_utils::to_optional_int(expected_m_for_psum_layout, "expected_m_for_psum_layout"));
}

// m_grouped_bf16_gemm_nn_contiguous(Tensor a, Tensor b, Tensor(d!) d, Tensor grouped_layout, str compiled_dims="nk", bool use_psum_layout=False, bool ensure_zero_padding=True) -> ()
void wrap_m_grouped_bf16_gemm_nn_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& grouped_layout, c10::string_view compiled_dims, bool use_psum_layout, bool ensure_zero_padding) {
  const deep_gemm::OpScope scope("m_grouped_bf16_gemm_nn_contiguous");
  ::deep_gemm::gemm::m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), use_psum_layout, ensure_zero_padding);
}

// m_grouped_bf16_gemm_nt_masked(Tensor a, Tensor b, Tensor(d!) d, Tensor masked_m, int expected_m, str compiled_dims="nk") -> ()
void wrap_m_grouped_bf16_gemm_nt_masked(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& masked_m, int64_t expected_m, c10::string_view compiled_dims) {
  const deep_gemm::OpScope scope("m_grouped_bf16_gemm_nt_masked");
  ::deep_gemm::gemm::m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, deep_gemm::torch_utils::to_int(expected_m, "expected_m"), deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"));
}

// k_grouped_bf16_gemm_tn_contiguous(Tensor a, Tensor b, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, str compiled_dims="mn", bool use_psum_layout=False) -> ()
void wrap_k_grouped_bf16_gemm_tn_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, at::OptionalIntArrayRef ks_cpu, const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c, c10::string_view compiled_dims, bool use_psum_layout) {
  const deep_gemm::OpScope scope("k_grouped_bf16_gemm_tn_contiguous");
  ::deep_gemm::gemm::k_grouped_bf16_gemm_tn_contiguous(a, b, d, deep_gemm::torch_utils::to_optional_int_vector(ks_cpu, "ks_cpu"), grouped_layout, c, deep_gemm::torch_utils::to_string(compiled_dims, "compiled_dims"), use_psum_layout);
}

// cublaslt_gemm_nt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()
void wrap_cublaslt_gemm_nt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c) {
  const deep_gemm::OpScope scope("cublaslt_gemm_nt");
  ::deep_gemm::gemm::cublaslt_gemm_nt(a, b, d, c);
}

// cublaslt_gemm_nn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()
void wrap_cublaslt_gemm_nn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c) {
  const deep_gemm::OpScope scope("cublaslt_gemm_nn");
  ::deep_gemm::gemm::cublaslt_gemm_nn(a, b, d, c);
}

// cublaslt_gemm_tn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()
void wrap_cublaslt_gemm_tn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c) {
  const deep_gemm::OpScope scope("cublaslt_gemm_tn");
  ::deep_gemm::gemm::cublaslt_gemm_tn(a, b, d, c);
}

// cublaslt_gemm_tt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()
void wrap_cublaslt_gemm_tt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c) {
  const deep_gemm::OpScope scope("cublaslt_gemm_tt");
  ::deep_gemm::gemm::cublaslt_gemm_tt(a, b, d, c);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("fp8_fp4_gemm_nt(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False) -> ()");
  m.def("fp8_fp4_gemm_nn(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False) -> ()");
  m.def("fp8_fp4_gemm_tn(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"mn\", bool disable_ue8m0_cast=False) -> ()");
  m.def("fp8_fp4_gemm_tt(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"mn\", bool disable_ue8m0_cast=False) -> ()");
  m.def("bf16_gemm_nt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims=\"nk\") -> ()");
  m.def("bf16_gemm_nn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims=\"nk\") -> ()");
  m.def("bf16_gemm_tn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims=\"mn\") -> ()");
  m.def("bf16_gemm_tt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, str compiled_dims=\"mn\") -> ()");
  m.def("m_grouped_fp8_fp4_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor grouped_layout, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False, bool use_psum_layout=False, bool ensure_zero_padding=True, int? expected_m_for_psum_layout=None) -> ()");
  m.def("m_grouped_fp8_fp4_gemm_nn_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor grouped_layout, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False, bool use_psum_layout=False, bool ensure_zero_padding=True) -> ()");
  m.def("m_grouped_fp8_fp4_gemm_nt_masked(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor masked_m, int expected_m, int[3]? recipe=None, int[2]? recipe_a=None, int[2]? recipe_b=None, str compiled_dims=\"nk\", bool disable_ue8m0_cast=False) -> ()");
  m.def("k_grouped_fp8_gemm_tn_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, int[3] recipe=[1, 1, 128], str compiled_dims=\"mn\", bool use_psum_layout=False) -> ()");
  m.def("k_grouped_fp8_gemm_nt_contiguous(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, int[3] recipe=[1, 1, 128], str compiled_dims=\"mn\", bool use_psum_layout=False) -> ()");
  m.def("m_grouped_bf16_gemm_nt_contiguous(Tensor a, Tensor b, Tensor(d!) d, Tensor grouped_layout, str compiled_dims=\"nk\", bool use_psum_layout=False, bool ensure_zero_padding=True, int? expected_m_for_psum_layout=None) -> ()");
  m.def("m_grouped_bf16_gemm_nn_contiguous(Tensor a, Tensor b, Tensor(d!) d, Tensor grouped_layout, str compiled_dims=\"nk\", bool use_psum_layout=False, bool ensure_zero_padding=True) -> ()");
  m.def("m_grouped_bf16_gemm_nt_masked(Tensor a, Tensor b, Tensor(d!) d, Tensor masked_m, int expected_m, str compiled_dims=\"nk\") -> ()");
  m.def("k_grouped_bf16_gemm_tn_contiguous(Tensor a, Tensor b, Tensor(d!) d, int[]? ks_cpu, Tensor grouped_layout, Tensor? c=None, str compiled_dims=\"mn\", bool use_psum_layout=False) -> ()");
  m.def("cublaslt_gemm_nt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()");
  m.def("cublaslt_gemm_nn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()");
  m.def("cublaslt_gemm_tn(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()");
  m.def("cublaslt_gemm_tt(Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None) -> ()");
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("fp8_fp4_gemm_nt", TORCH_FN(wrap_fp8_fp4_gemm_nt));
  m.impl("fp8_fp4_gemm_nn", TORCH_FN(wrap_fp8_fp4_gemm_nn));
  m.impl("fp8_fp4_gemm_tn", TORCH_FN(wrap_fp8_fp4_gemm_tn));
  m.impl("fp8_fp4_gemm_tt", TORCH_FN(wrap_fp8_fp4_gemm_tt));
  m.impl("bf16_gemm_nt", TORCH_FN(wrap_bf16_gemm_nt));
  m.impl("bf16_gemm_nn", TORCH_FN(wrap_bf16_gemm_nn));
  m.impl("bf16_gemm_tn", TORCH_FN(wrap_bf16_gemm_tn));
  m.impl("bf16_gemm_tt", TORCH_FN(wrap_bf16_gemm_tt));
  m.impl("m_grouped_fp8_fp4_gemm_nt_contiguous", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nt_contiguous));
  m.impl("m_grouped_fp8_fp4_gemm_nn_contiguous", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nn_contiguous));
  m.impl("m_grouped_fp8_fp4_gemm_nt_masked", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nt_masked));
  m.impl("k_grouped_fp8_gemm_tn_contiguous", TORCH_FN(wrap_k_grouped_fp8_gemm_tn_contiguous));
  m.impl("k_grouped_fp8_gemm_nt_contiguous", TORCH_FN(wrap_k_grouped_fp8_gemm_nt_contiguous));
  m.impl("m_grouped_bf16_gemm_nt_contiguous", TORCH_FN(wrap_m_grouped_bf16_gemm_nt_contiguous));
  m.impl("m_grouped_bf16_gemm_nn_contiguous", TORCH_FN(wrap_m_grouped_bf16_gemm_nn_contiguous));
  m.impl("m_grouped_bf16_gemm_nt_masked", TORCH_FN(wrap_m_grouped_bf16_gemm_nt_masked));
  m.impl("k_grouped_bf16_gemm_tn_contiguous", TORCH_FN(wrap_k_grouped_bf16_gemm_tn_contiguous));
  m.impl("cublaslt_gemm_nt", TORCH_FN(wrap_cublaslt_gemm_nt));
  m.impl("cublaslt_gemm_nn", TORCH_FN(wrap_cublaslt_gemm_nn));
  m.impl("cublaslt_gemm_tn", TORCH_FN(wrap_cublaslt_gemm_tn));
  m.impl("cublaslt_gemm_tt", TORCH_FN(wrap_cublaslt_gemm_tt));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("fp8_fp4_gemm_nt", TORCH_FN(wrap_fp8_fp4_gemm_nt));
  m.impl("fp8_fp4_gemm_nn", TORCH_FN(wrap_fp8_fp4_gemm_nn));
  m.impl("fp8_fp4_gemm_tn", TORCH_FN(wrap_fp8_fp4_gemm_tn));
  m.impl("fp8_fp4_gemm_tt", TORCH_FN(wrap_fp8_fp4_gemm_tt));
  m.impl("bf16_gemm_nt", TORCH_FN(wrap_bf16_gemm_nt));
  m.impl("bf16_gemm_nn", TORCH_FN(wrap_bf16_gemm_nn));
  m.impl("bf16_gemm_tn", TORCH_FN(wrap_bf16_gemm_tn));
  m.impl("bf16_gemm_tt", TORCH_FN(wrap_bf16_gemm_tt));
  m.impl("m_grouped_fp8_fp4_gemm_nt_contiguous", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nt_contiguous));
  m.impl("m_grouped_fp8_fp4_gemm_nn_contiguous", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nn_contiguous));
  m.impl("m_grouped_fp8_fp4_gemm_nt_masked", TORCH_FN(wrap_m_grouped_fp8_fp4_gemm_nt_masked));
  m.impl("k_grouped_fp8_gemm_tn_contiguous", TORCH_FN(wrap_k_grouped_fp8_gemm_tn_contiguous));
  m.impl("k_grouped_fp8_gemm_nt_contiguous", TORCH_FN(wrap_k_grouped_fp8_gemm_nt_contiguous));
  m.impl("m_grouped_bf16_gemm_nt_contiguous", TORCH_FN(wrap_m_grouped_bf16_gemm_nt_contiguous));
  m.impl("m_grouped_bf16_gemm_nn_contiguous", TORCH_FN(wrap_m_grouped_bf16_gemm_nn_contiguous));
  m.impl("m_grouped_bf16_gemm_nt_masked", TORCH_FN(wrap_m_grouped_bf16_gemm_nt_masked));
  m.impl("k_grouped_bf16_gemm_tn_contiguous", TORCH_FN(wrap_k_grouped_bf16_gemm_tn_contiguous));
  m.impl("cublaslt_gemm_nt", TORCH_FN(wrap_cublaslt_gemm_nt));
  m.impl("cublaslt_gemm_nn", TORCH_FN(wrap_cublaslt_gemm_nn));
  m.impl("cublaslt_gemm_tn", TORCH_FN(wrap_cublaslt_gemm_tn));
  m.impl("cublaslt_gemm_tt", TORCH_FN(wrap_cublaslt_gemm_tt));
}
#endif  // guard 'cuda'
