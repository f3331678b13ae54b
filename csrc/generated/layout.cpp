// @generated from ops.yaml by python -m codegen — do not edit
// Family 'layout': Scale-factor layouts the GEMM kernels consume, and the alignment of contiguous grouped layouts.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/layout.hpp"

namespace {

// transform_sf_into_required_layout(Tensor sf, int mn, int k, int[] recipe, int? num_groups=None, bool? is_sfa=None, bool disable_ue8m0_cast=False, Tensor? psum_layout=None) -> Tensor
at::Tensor wrap_transform_sf_into_required_layout(const at::Tensor& sf, int64_t mn, int64_t k, at::IntArrayRef recipe, std::optional<int64_t> num_groups, std::optional<bool> is_sfa, bool disable_ue8m0_cast, const std::optional<at::Tensor>& psum_layout) {
  const deep_gemm::OpScope scope("transform_sf_into_required_layout");
  return ::deep_gemm::layout::transform_sf_into_required_layout(sf, deep_gemm::torch_utils::to_int(mn, "mn"), deep_gemm::torch_utils::to_int(k, "k"), deep_gemm::torch_utils::to_int_list(recipe, "recipe"), deep_gemm::torch_utils::to_optional_int(num_groups, "num_groups"), is_sfa, disable_ue8m0_cast, psum_layout);
}

// get_tma_aligned_size(int x, int element_size) -> int
int64_t wrap_get_tma_aligned_size(int64_t x, int64_t element_size) {
  const deep_gemm::OpScope scope("get_tma_aligned_size");
  return ::deep_gemm::layout::get_tma_aligned_size(deep_gemm::torch_utils::to_int(x, "x"), deep_gemm::torch_utils::to_int(element_size, "element_size"));
}

// get_mn_major_tma_aligned_tensor(Tensor sf) -> Tensor
at::Tensor wrap_get_mn_major_tma_aligned_tensor(const at::Tensor& sf) {
  const deep_gemm::OpScope scope("get_mn_major_tma_aligned_tensor");
  return ::deep_gemm::layout::get_mn_major_tma_aligned_tensor(sf);
}

// get_mn_major_tma_aligned_packed_ue8m0_tensor(Tensor sf, Tensor? psum_layout=None) -> Tensor
at::Tensor wrap_get_mn_major_tma_aligned_packed_ue8m0_tensor(const at::Tensor& sf, const std::optional<at::Tensor>& psum_layout) {
  const deep_gemm::OpScope scope("get_mn_major_tma_aligned_packed_ue8m0_tensor");
  return ::deep_gemm::layout::get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout);
}

// get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(Tensor sf, Tensor grouped_layout, int[]? ks_cpu, int gran_k, int k_alignment, bool use_psum_layout=False) -> Tensor
at::Tensor wrap_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const at::Tensor& sf, const at::Tensor& grouped_layout, at::OptionalIntArrayRef ks_cpu, int64_t gran_k, int64_t k_alignment, bool use_psum_layout) {
  const deep_gemm::OpScope scope("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor");
  return ::deep_gemm::layout::get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, deep_gemm::torch_utils::to_optional_int_vector(ks_cpu, "ks_cpu"), deep_gemm::torch_utils::to_int(gran_k, "gran_k"), deep_gemm::torch_utils::to_int(k_alignment, "k_alignment"), use_psum_layout);
}

// set_mk_alignment_for_contiguous_layout(int new_value) -> ()
void wrap_set_mk_alignment_for_contiguous_layout(int64_t new_value) {
  const deep_gemm::OpScope scope("set_mk_alignment_for_contiguous_layout");
  ::deep_gemm::layout::set_mk_alignment_for_contiguous_layout(deep_gemm::torch_utils::to_int(new_value, "new_value"));
}

// get_mk_alignment_for_contiguous_layout() -> int
int64_t wrap_get_mk_alignment_for_contiguous_layout() {
  const deep_gemm::OpScope scope("get_mk_alignment_for_contiguous_layout");
  return ::deep_gemm::layout::get_mk_alignment_for_contiguous_layout();
}

// get_theoretical_mk_alignment_for_contiguous_layout(int? expected_m=None) -> int
int64_t wrap_get_theoretical_mk_alignment_for_contiguous_layout(std::optional<int64_t> expected_m) {
  const deep_gemm::OpScope scope("get_theoretical_mk_alignment_for_contiguous_layout");
  return ::deep_gemm::layout::get_theoretical_mk_alignment_for_contiguous_layout(deep_gemm::torch_utils::to_optional_int(expected_m, "expected_m"));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("transform_sf_into_required_layout(Tensor sf, int mn, int k, int[] recipe, int? num_groups=None, bool? is_sfa=None, bool disable_ue8m0_cast=False, Tensor? psum_layout=None) -> Tensor");
  m.def("get_tma_aligned_size(int x, int element_size) -> int");
  m.def("get_mn_major_tma_aligned_tensor(Tensor sf) -> Tensor");
  m.def("get_mn_major_tma_aligned_packed_ue8m0_tensor(Tensor sf, Tensor? psum_layout=None) -> Tensor");
  m.def("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(Tensor sf, Tensor grouped_layout, int[]? ks_cpu, int gran_k, int k_alignment, bool use_psum_layout=False) -> Tensor");
  m.def("set_mk_alignment_for_contiguous_layout(int new_value) -> ()");
  m.def("get_mk_alignment_for_contiguous_layout() -> int");
  m.def("get_theoretical_mk_alignment_for_contiguous_layout(int? expected_m=None) -> int");
}

TORCH_LIBRARY_IMPL(deep_gemm, CompositeExplicitAutograd, m) {
  m.impl("get_tma_aligned_size", TORCH_FN(wrap_get_tma_aligned_size));
  m.impl("set_mk_alignment_for_contiguous_layout", TORCH_FN(wrap_set_mk_alignment_for_contiguous_layout));
  m.impl("get_mk_alignment_for_contiguous_layout", TORCH_FN(wrap_get_mk_alignment_for_contiguous_layout));
  m.impl("get_theoretical_mk_alignment_for_contiguous_layout", TORCH_FN(wrap_get_theoretical_mk_alignment_for_contiguous_layout));
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("transform_sf_into_required_layout", TORCH_FN(wrap_transform_sf_into_required_layout));
  m.impl("get_mn_major_tma_aligned_tensor", TORCH_FN(wrap_get_mn_major_tma_aligned_tensor));
  m.impl("get_mn_major_tma_aligned_packed_ue8m0_tensor", TORCH_FN(wrap_get_mn_major_tma_aligned_packed_ue8m0_tensor));
  m.impl("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", TORCH_FN(wrap_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("transform_sf_into_required_layout", TORCH_FN(wrap_transform_sf_into_required_layout));
  m.impl("get_mn_major_tma_aligned_tensor", TORCH_FN(wrap_get_mn_major_tma_aligned_tensor));
  m.impl("get_mn_major_tma_aligned_packed_ue8m0_tensor", TORCH_FN(wrap_get_mn_major_tma_aligned_packed_ue8m0_tensor));
  m.impl("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor", TORCH_FN(wrap_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor));
}
#endif  // guard 'cuda'
