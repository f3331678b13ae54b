#pragma once
// Fast paths through the vendor BLAS (cuBLAS / cuBLASLt via ATen) for the
// common GEMM configurations on CUDA.  Each returns false when the call does
// not qualify, and the caller then runs the reference path; the result is the
// same function either way (float32 accumulation, one rounding into `d`).

#include <ATen/ATen.h>

#include <optional>

#include "reference/scaled.hpp"

namespace deep_gemm::cublas_paths {

// D[M, N] (bf16, row-major) = (A * SFA)(B * SFB)^T through cuBLASLt block scaling:
// FP8 e4m3 A [M, K] and B [N, K], both K-major; float32 SFA per 1x128 and SFB per
// 128x128 (or 1x128) blocks.  SFA must be M-major for cuBLASLt: the layout
// get_mn_major_tma_aligned_tensor produces (with M a multiple of 4) is used as is,
// any other layout costs one small transpose of the scales.
inline bool scaled_mm(const scaled::Operand& A, const scaled::Operand& B, const scaled::Recipes& recipes,
                      const at::Tensor& d, const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || c.has_value()) return false;
  if (A.data.scalar_type() != at::kFloat8_e4m3fn || B.data.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (A.sf.scalar_type() != at::kFloat || B.sf.scalar_type() != at::kFloat) return false;
  if (recipes.a.mn != 1 || recipes.a.k != 128 || recipes.b.k != 128) return false;
  if (d.scalar_type() != at::kBFloat16 || !d.is_contiguous()) return false;
  if (A.data.stride(1) != 1 || B.data.stride(1) != 1) return false;
  // cuBLASLt needs 16-byte aligned leading dimensions.
  if (A.k % 16 != 0 || A.data.stride(0) % 16 != 0 || B.data.stride(0) % 16 != 0 || B.mn % 8 != 0) return false;
  // The block scales of A are read M-major with leading dimension M, which must be a multiple of 4.
  if (A.mn % 4 != 0) return false;
  const at::Tensor scale_a =
      (A.mn == 1 || A.sf.stride(0) == 1) && A.sf.stride(1) == A.mn ? A.sf : A.sf.t().contiguous().t();
  at::Tensor out = d;
  at::_scaled_mm_out(out, A.data, B.data.t(), scale_a, B.sf.t(), std::nullopt, std::nullopt, at::kBFloat16, false);
  return true;
}

// D = A B^T (+ D) for bf16 operands through cuBLAS.
inline bool bf16_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || d.scalar_type() != at::kBFloat16 || !d.is_contiguous()) return false;
  at::Tensor out = d;
  if (!c.has_value()) {
    at::mm_out(out, a, b.t());
    return true;
  }
  if (c->is_same(d)) {
    out.addmm_(a, b.t());
    return true;
  }
  return false;
}

}  // namespace deep_gemm::cublas_paths
