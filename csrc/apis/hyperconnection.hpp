#pragma once
// Family 'hyperconnection'.

#include <ATen/ATen.h>

#include "utils/checks.hpp"

namespace deep_gemm::hyperconnection {}  // namespace deep_gemm::hyperconnection
