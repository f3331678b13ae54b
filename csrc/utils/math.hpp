#pragma once
#include <cstdint>

namespace deep_gemm {

template <typename T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

template <typename T>
constexpr T align(T a, T b) {
  return ceil_div(a, b) * b;
}

}  // namespace deep_gemm
