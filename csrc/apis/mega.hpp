#pragma once
// Family 'mega'.

#include <ATen/ATen.h>

#include "utils/checks.hpp"

namespace deep_gemm::mega {}  // namespace deep_gemm::mega
