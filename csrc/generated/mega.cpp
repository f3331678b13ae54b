// @generated from ops.yaml by python -m codegen — do not edit
// Family 'mega': Mega MoE (fused expert-parallel dispatch, two GEMMs, activation and combine) and its symmetric buffer.
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/mega.hpp"

namespace {

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
}
