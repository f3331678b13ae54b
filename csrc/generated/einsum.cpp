// @generated from ops.yaml by python -m codegen — do not edit
// Family 'einsum': Batched contractions written as einsum expressions (BF16 and block-scaled FP8).
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/einsum.hpp"

namespace {

// einsum(str expr, Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, bool use_cublaslt=False) -> ()
void wrap_einsum(c10::string_view expr, const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c, bool use_cublaslt) {
  const deep_gemm::OpScope scope("einsum");
  ::deep_gemm::einsum::einsum(deep_gemm::torch_utils::to_string(expr, "expr"), a, b, d, c, use_cublaslt);
}

// fp8_einsum(str expr, Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3] recipe=[1, 128, 128]) -> ()
void wrap_fp8_einsum(c10::string_view expr, const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb, const at::Tensor& d, const std::optional<at::Tensor>& c, at::IntArrayRef recipe) {
  const deep_gemm::OpScope scope("fp8_einsum");
  ::deep_gemm::einsum::fp8_einsum(deep_gemm::torch_utils::to_string(expr, "expr"), std::pair<at::Tensor, at::Tensor>(a, sfa), std::pair<at::Tensor, at::Tensor>(b, sfb), d, c, deep_gemm::torch_utils::to_tuple<3>(recipe, "recipe"));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("einsum(str expr, Tensor a, Tensor b, Tensor(d!) d, Tensor? c=None, bool use_cublaslt=False) -> ()");
  m.def("fp8_einsum(str expr, Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3] recipe=[1, 128, 128]) -> ()");
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("einsum", TORCH_FN(wrap_einsum));
  m.impl("fp8_einsum", TORCH_FN(wrap_fp8_einsum));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("einsum", TORCH_FN(wrap_einsum));
  m.impl("fp8_einsum", TORCH_FN(wrap_fp8_einsum));
}
#endif  // guard 'cuda'
