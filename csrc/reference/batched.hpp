#pragma once
// Batched (N-D) operands: layout checks and block-scale expansion.
//
// The 2-D helpers of scaled.hpp / quant.hpp see one [mn, k] matrix.  The einsum
// and hyper-connection families contract 3-D tensors whose scales are blocked
// along any dimension (per token, per 128 x 128 block, per channel over the
// batch), so here every dimension carries its own granularity.

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <string>
#include <vector>

#include "utils/checks.hpp"
#include "utils/math.hpp"

namespace deep_gemm::batched {

// stride(-1) == 1: each row is contiguous; the other strides are free (strided slices are fine).
inline void last_dim_contiguous(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(t.numel() == 0 || t.size(-1) <= 1 || t.stride(-1) == 1, arg,
               "must have stride(-1) == 1 (its last dim contiguous), got strides ", t.strides());
}

inline void contiguous(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(t.is_contiguous(), arg, "must be contiguous, got shape ", t.sizes(), " and strides ", t.strides());
}

// An output must not write one memory location twice (an expand()ed tensor, say).
inline void writable(const at::Tensor& t, const char* arg) {
  DG_CHECK_ARG(at::has_internal_overlap(t) != at::MemOverlap::Yes, arg,
               "has elements that share memory (e.g. an expanded tensor); an output needs one location per element");
}

// The scale shape for data of `sizes` with per-dim granularity `grans`: ceil(size_i / gran_i).
inline std::vector<int64_t> scale_shape(at::IntArrayRef sizes, at::IntArrayRef grans) {
  std::vector<int64_t> out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) out[i] = ceil_div<int64_t>(sizes[i], grans[i]);
  return out;
}

// float32 scales of shape scale_shape(sizes, grans); `layout` spells the shape symbolically
// (e.g. "[b, h, ceil(r/128)]") so the message says what was meant, not only the numbers.
inline void check_scales(const at::Tensor& sf, const char* arg, at::IntArrayRef sizes, at::IntArrayRef grans,
                         const std::string& layout) {
  checks::dtype(sf, arg, {at::kFloat});
  checks::dim(sf, arg, static_cast<int64_t>(sizes.size()));
  const auto expected = scale_shape(sizes, grans);
  DG_CHECK_ARG(sf.sizes() == at::IntArrayRef(expected), arg, "must have shape ", layout, " = ",
               at::IntArrayRef(expected), ", got ", sf.sizes());
}

// Scales [ceil(s_0/g_0), ...] -> float32 of `sizes`: every element gets the scale of its block.
// Each blocked dim is repeated by a broadcast (unsqueeze + expand + reshape), which never
// reads a value on the host, then cut back to its size.
inline at::Tensor expand_scales(const at::Tensor& sf, at::IntArrayRef sizes, at::IntArrayRef grans) {
  at::Tensor out = sf.to(at::kFloat);
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (grans[i] != 1) {
      std::vector<int64_t> repeated = out.sizes().vec();
      repeated.insert(repeated.begin() + i + 1, grans[i]);
      std::vector<int64_t> merged = out.sizes().vec();
      merged[i] *= grans[i];
      out = out.unsqueeze(i + 1).expand(repeated).reshape(merged);
    }
    out = out.narrow(i, 0, sizes[i]);
  }
  return out;
}

// FP8 data times its block scales, in float32.
inline at::Tensor dequantize(const at::Tensor& data, const at::Tensor& sf, at::IntArrayRef grans) {
  return data.to(at::kFloat) * expand_scales(sf, data.sizes(), grans);
}

}  // namespace deep_gemm::batched
