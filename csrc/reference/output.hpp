#pragma once
// The output side shared by every GEMM: D = C + product, written in one step
// after every check has passed, so a rejected call never touches `d`.

#include <ATen/ATen.h>

#include <optional>

#include "utils/checks.hpp"

namespace deep_gemm::output {

// `d` must have `shape`, be row-major and have one of `dtypes`; `c` (when given)
// must match it, and, if it is `d` itself, have identical sizes and strides.
inline void check(const at::Tensor& d, const std::optional<at::Tensor>& c, at::IntArrayRef shape,
                  std::initializer_list<at::ScalarType> dtypes) {
  checks::dtype(d, "d", dtypes);
  checks::shape(d, "d", shape);
  checks::row_major(d, "d");
  checks::no_internal_overlap(d, "d");
  if (!c.has_value()) return;
  checks::same_device(*c, "c", d, "d");
  checks::dtype(*c, "c", {d.scalar_type()});
  checks::shape(*c, "c", shape);
  if (c->is_alias_of(d)) {
    DG_CHECK_ARG(c->storage_offset() == d.storage_offset() && c->strides() == d.strides(), "c",
                 "shares memory with 'd'; expected 'd' itself (same offset and strides) or a separate tensor");
  }
}

// d <- c + product (product in float32; the sum is formed in float32, then cast once).
inline void write(const at::Tensor& d, const std::optional<at::Tensor>& c, const at::Tensor& product) {
  if (d.numel() == 0) return;
  if (c.has_value()) {
    d.copy_(product + c->to(at::kFloat));
  } else {
    d.copy_(product);
  }
}

}  // namespace deep_gemm::output
