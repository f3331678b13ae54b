// @generated from ops.yaml by python -m codegen — do not edit
// Family 'einsum': Batched contractions written as einsum expressions (BF16 and block-scaled FP8).
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/einsum.hpp"

namespace {

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
}
