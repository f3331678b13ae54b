#pragma once
// Tensor checks shared by every family; each names the offending argument.

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <initializer_list>
#include <sstream>
#include <string>

#include "utils/error.hpp"

namespace deep_gemm::checks {

inline std::string dtype_list(std::initializer_list<at::ScalarType> dtypes) {
  std::ostringstream out;
  size_t i = 0;
  for (const auto dt : dtypes) {
    out << (i == 0 ? "" : (i + 1 == dtypes.size() ? " or " : ", ")) << c10::toString(dt);
    ++i;
  }
  return out.str();
}

// The dispatcher hands None through as an undefined tensor, even for a non-optional
// `Tensor` argument; every helper below that reads a tensor checks this first.
inline void defined(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(t.defined(), arg, "must be a Tensor, got None");
}

inline void dtype(const at::Tensor& t, const char* arg, std::initializer_list<at::ScalarType> allowed) {
  defined(t, arg);
  for (const auto dt : allowed) {
    if (t.scalar_type() == dt) return;
  }
  fail_argument(arg, c10::str("must be ", dtype_list(allowed), ", got ", c10::toString(t.scalar_type())));
}

inline void dim(const at::Tensor& t, const char* arg, int64_t expected) {
  defined(t, arg);
  DG_CHECK_ARG(t.dim() == expected, arg, "must be ", expected, "-D, got ", t.dim(), "-D with shape ", t.sizes());
}

inline void shape(const at::Tensor& t, const char* arg, at::IntArrayRef expected) {
  defined(t, arg);
  DG_CHECK_ARG(t.sizes() == expected, arg, "must have shape ", expected, ", got ", t.sizes());
}

// Every tensor of one call lives on the same device as `ref`.
inline void same_device(const at::Tensor& t, const char* arg, const at::Tensor& ref, const char* ref_arg) {
  defined(t, arg);
  defined(ref, ref_arg);
  DG_CHECK_ARG(t.device() == ref.device(), arg, "is on ", t.device(), " but '", ref_arg, "' is on ", ref.device(),
               "; expected one device for all tensors");
}

inline void not_meta_data_read(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(!t.is_meta(), arg, "is a meta tensor, but its values are needed");
}

inline bool is_k_major(const at::Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1; }
inline bool is_mn_major(const at::Tensor& t) { return t.size(-2) <= 1 || t.stride(-2) == 1; }

inline void major(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(t.numel() == 0 || is_k_major(t) || is_mn_major(t), arg,
               "must be K-major (stride(-1) == 1) or MN-major (stride(-2) == 1), got strides ", t.strides());
}

inline void row_major(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(t.numel() == 0 || t.size(-1) <= 1 || t.stride(-1) == 1, arg,
               "must be row-major (stride(-1) == 1), got strides ", t.strides());
}

// An output whose elements share memory (a stride of 0, overlapping strides) cannot be written
// element by element; ATen would reject the write only after the op's checks.
inline void no_internal_overlap(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(at::has_internal_overlap(t) != at::MemOverlap::Yes, arg, "has elements that share memory (strides ",
               t.strides(), " for shape ", t.sizes(), "); expected an output whose elements are distinct");
}

inline void non_negative(int64_t v, const char* arg) { DG_CHECK_ARG(v >= 0, arg, "must be non-negative, got ", v); }

}  // namespace deep_gemm::checks
