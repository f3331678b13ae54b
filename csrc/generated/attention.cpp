// @generated from ops.yaml by python -m codegen — do not edit
// Family 'attention': Attention-side GEMMs and the MQA "lightning indexer" logits.
#include <torch/library.h>

#include "torch_library_utils.hpp"
#include "apis/attention.hpp"

namespace {

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
}
