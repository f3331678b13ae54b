// @generated from ops.yaml by python -m codegen — do not edit
// Family 'blas': One level-1 BLAS routine.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/blas.hpp"

namespace {

// axpy(Tensor(y!) y, Tensor x, float alpha=1.0) -> ()
void wrap_axpy(const at::Tensor& y, const at::Tensor& x, double alpha) {
  const tiny_ops::OpScope scope("axpy");
  ::tiny_ops::blas::axpy(y, x, alpha);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(tiny_ops, m) {
  m.def("axpy(Tensor(y!) y, Tensor x, float alpha=1.0) -> ()");
}

TORCH_LIBRARY_IMPL(tiny_ops, CPU, m) {
  m.impl("axpy", TORCH_FN(wrap_axpy));
}
