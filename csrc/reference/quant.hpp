#pragma once
// Reference (ATen) building blocks for block-scaled operands:
// FP4 e2m1 unpacking, UE8M0 exponent packing, and scale-factor expansion.
// They run on any device ATen supports and never synchronise with the host.

#include <ATen/ATen.h>

#include "utils/checks.hpp"
#include "utils/math.hpp"

namespace deep_gemm::quant {

// e2m1 codes (int32 tensor of 0..15) -> float32 values.  Bit 3 is the sign;
// bits 0-2 encode {0, .5, 1, 1.5, 2, 3, 4, 6}.  Pure arithmetic, so no table
// has to be copied to the device (and CUDA graphs can capture it).
inline at::Tensor e2m1_to_float(const at::Tensor& codes) {
  const auto mag = at::bitwise_and(codes, 7).to(at::kFloat);
  const auto exp = at::floor(mag / 2);
  const auto mant = mag - exp * 2;
  const auto normal = at::exp2(exp - 1) * (1 + 0.5 * mant);
  const auto value = at::where(mag < 2, mag * 0.5, normal);
  return at::where(at::bitwise_and(codes, 8) != 0, -value, value);
}

inline bool is_fp4(const at::Tensor& t) { return t.scalar_type() == at::kChar; }

// FP4 data (int8, two codes per byte, low nibble = even index) is packed along
// its contiguous dimension.  Logical [mn, k] of a 2-D operand view.
inline std::pair<int64_t, int64_t> logical_mn_k(const at::Tensor& x) {
  if (!is_fp4(x)) return {x.size(0), x.size(1)};
  if (checks::is_k_major(x)) return {x.size(0), x.size(1) * 2};
  return {x.size(0) * 2, x.size(1)};
}

// int8 packed FP4 [.., n/2] (packed along the contiguous dim) -> float32, logical shape.
inline at::Tensor unpack_fp4(const at::Tensor& x) {
  const auto bytes = x.view(at::kByte).to(at::kInt);
  const auto lo = e2m1_to_float(at::bitwise_and(bytes, 0xF));
  const auto hi = e2m1_to_float(at::bitwise_right_shift(bytes, 4));
  if (checks::is_k_major(x)) {
    auto sizes = x.sizes().vec();
    sizes.back() *= 2;
    return at::stack({lo, hi}, -1).reshape(sizes);
  }
  auto sizes = x.sizes().vec();
  sizes[sizes.size() - 2] *= 2;
  return at::stack({lo, hi}, -2).reshape(sizes);
}

// Operand data (FP8 e4m3 or packed FP4) as float32 in its logical shape.
inline at::Tensor data_to_float(const at::Tensor& x) { return is_fp4(x) ? unpack_fp4(x) : x.to(at::kFloat); }

// A contiguous tensor with the canonical strides, which a view as a dtype of another size needs:
// contiguous() keeps any stride on a size-1 dim ([8, 1] with strides (1, 8) counts as contiguous),
// and view(dtype) then rejects stride(-1) != 1.
inline at::Tensor dense(const at::Tensor& t) { return t.contiguous().reshape({-1}).view(t.sizes()); }

// float32 powers of two -> their exponent bytes (bits 23..30).
inline at::Tensor exponent_bytes(const at::Tensor& sf) {
  return at::bitwise_and(at::bitwise_right_shift(sf.contiguous().view(at::kInt), 23), 0xFF);
}

// Packed UE8M0 int32 [.., w] -> float32 [.., 4w]: byte j of word i is 2^(e - 127) of group 4i + j.
inline at::Tensor unpack_ue8m0(const at::Tensor& packed) {
  auto sizes = packed.sizes().vec();
  sizes.back() *= 4;
  const auto bytes = dense(packed).view(at::kByte).to(at::kInt).reshape(sizes);
  return at::bitwise_left_shift(bytes, 23).view(at::kFloat);
}

// float32 scale factors [.., r] -> exponent bytes packed 4 per int32 along the
// last dim, zero-padded: int32 [.., ceil(r / 4)].
inline at::Tensor pack_ue8m0_last_dim(const at::Tensor& sf) {
  const int64_t r = sf.size(-1);
  const int64_t words = ceil_div<int64_t>(r, 4);
  if (words == 0) {
    // No K groups: nothing to pack (and a [.., 0] byte tensor cannot be viewed as int32).
    return at::zeros(sf.sizes(), sf.options().dtype(at::kInt));
  }
  auto bytes = exponent_bytes(sf).to(at::kByte);
  if (words * 4 != r) {
    std::vector<int64_t> pad_sizes = bytes.sizes().vec();
    pad_sizes.back() = words * 4 - r;
    bytes = at::cat({bytes, at::zeros(pad_sizes, bytes.options())}, -1);
  }
  return dense(bytes).view(at::kInt);
}

// Scale factors [ceil(mn/g_mn), ceil(k/g_k)] (float32) or packed UE8M0 int32
// [mn, ceil(ceil(k/g_k)/4)] -> float32 [mn, k], one scale per element.
inline at::Tensor expand_scales(const at::Tensor& sf, int64_t mn, int64_t k, int gran_mn, int gran_k) {
  at::Tensor per_group =
      sf.scalar_type() == at::kInt ? unpack_ue8m0(sf).narrow(-1, 0, ceil_div<int64_t>(k, gran_k)) : sf.to(at::kFloat);
  return per_group.repeat_interleave(gran_mn, 0).narrow(0, 0, mn).repeat_interleave(gran_k, 1).narrow(1, 0, k);
}

}  // namespace deep_gemm::quant
