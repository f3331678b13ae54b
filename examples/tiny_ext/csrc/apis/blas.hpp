#pragma once
// The implementation of tiny_ops' one op, in natural C++ types; it knows nothing of registration.

#include <ATen/ATen.h>

#include <stdexcept>

namespace tiny_ops::blas {

inline void axpy(const at::Tensor& y, const at::Tensor& x, double alpha) {
  if (!x.sizes().equals(y.sizes()) || x.scalar_type() != y.scalar_type()) {
    throw std::invalid_argument("axpy: x and y must have the same shape and dtype");
  }
  y.add_(x, alpha);
}

}  // namespace tiny_ops::blas
