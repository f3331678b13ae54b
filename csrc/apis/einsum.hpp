#pragma once
// Family 'einsum'.

#include <ATen/ATen.h>

#include "utils/checks.hpp"

namespace deep_gemm::einsum {}  // namespace deep_gemm::einsum
