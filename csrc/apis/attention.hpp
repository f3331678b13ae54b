#pragma once
// Family 'attention'.

#include <ATen/ATen.h>

#include "utils/checks.hpp"

namespace deep_gemm::attention {}  // namespace deep_gemm::attention
