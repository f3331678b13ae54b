// @generated from ops.yaml by python -m codegen — do not edit
// Family 'gemm': Dense and grouped GEMMs with block-scaled FP8/FP4 or BF16 operands.
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/gemm.hpp"

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
}
#endif  // guard 'cuda'
