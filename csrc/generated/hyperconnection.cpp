// @generated from ops.yaml by python -m codegen — do not edit
// Family 'hyperconnection': The TF32 pre-norm GEMM of hyper-connections.
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/hyperconnection.hpp"

namespace {

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
}
