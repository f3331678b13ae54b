// @generated from ops.yaml by python -m codegen — do not edit
// Family 'hyperconnection': The TF32 pre-norm GEMM of hyper-connections.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/hyperconnection.hpp"

namespace {

// tf32_hc_prenorm_gemm(Tensor a, Tensor b, Tensor(d!) d, Tensor(sqr_sum!) sqr_sum, int? num_splits=None) -> ()
void wrap_tf32_hc_prenorm_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& sqr_sum, std::optional<int64_t> num_splits) {
  const deep_gemm::OpScope scope("tf32_hc_prenorm_gemm");
  ::deep_gemm::hyperconnection::tf32_hc_prenorm_gemm(a, b, d, sqr_sum, deep_gemm::torch_utils::to_optional_int(num_splits, "num_splits"));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("tf32_hc_prenorm_gemm(Tensor a, Tensor b, Tensor(d!) d, Tensor(sqr_sum!) sqr_sum, int? num_splits=None) -> ()");
}

TORCH_LIBRARY_IMPL(deep_gemm, CPU, m) {
  m.impl("tf32_hc_prenorm_gemm", TORCH_FN(wrap_tf32_hc_prenorm_gemm));
}

#if defined(DG_WITH_CUDA)  // guard 'cuda'
TORCH_LIBRARY_IMPL(deep_gemm, CUDA, m) {
  m.impl("tf32_hc_prenorm_gemm", TORCH_FN(wrap_tf32_hc_prenorm_gemm));
}
#endif  // guard 'cuda'
