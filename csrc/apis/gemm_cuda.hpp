#pragma once
// CUDA builds: the dense and M-grouped FP8 GEMMs on the native sm90a kernel (csrc/cuda/fp8_gemm.h).
// This header turns checked ATen arguments into the kernel's plain problem description;
// it returns false for what the kernel does not serve (see docs/gpu.md, "Native FP8 GEMM kernel"),
// and the caller then takes the next path.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <optional>
#include <string>

#include "apis/runtime.hpp"
#include "cuda/fp8_gemm.h"
#include "reference/scaled.hpp"
#include "utils/error.hpp"

namespace deep_gemm::gemm_cuda {

inline bool is_sm90() {
  static const bool value = runtime::device_arch_major() == 9;
  return value;
}

// Row stride of a K-major operand viewed as 2-D rows (3-D ones must be packed across groups).
inline bool row_stride(const at::Tensor& t, int64_t& ld) {
  if (t.stride(-1) != 1 && t.size(-1) > 1) return false;
  if (t.dim() == 3 && t.size(0) > 1 && t.stride(0) != t.size(1) * t.stride(1)) return false;
  ld = t.stride(-2);
  return true;
}

// The operands, scales and output of `p` from FP8 e4m3 data (2-D, or 3-D group-major) with
// float32 scales per 1x128 (A) and 128x128 or 1x128 (B) blocks.  False when the kernel does
// not serve them.
inline bool fill_operands(cuda::Fp8GemmProblem& p, const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b,
                          const at::Tensor& sfb, const scaled::Recipes& recipes, const at::Tensor& d,
                          const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kFloat8_e4m3fn || b.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (sfa.scalar_type() != at::kFloat || sfb.scalar_type() != at::kFloat) return false;
  if (recipes.a.mn != 1 || recipes.a.k != 128 || recipes.b.k != 128) return false;
  if (!row_stride(a, p.lda) || !row_stride(b, p.ldb) || !row_stride(d, p.ldd)) return false;
  if (c.has_value() && !row_stride(*c, p.ldc)) return false;
  if (a.size(-1) > INT32_MAX || a.size(-2) > INT32_MAX || b.size(-2) > INT32_MAX) return false;
  p.k = static_cast<int>(a.size(-1));
  p.n = static_cast<int>(b.size(-2));
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.sfa = sfa.data_ptr<float>();
  p.sfa_group = sfa.dim() == 3 ? sfa.stride(0) : 0;
  p.sfa_mn = sfa.stride(-2);
  p.sfa_k = sfa.stride(-1);
  p.sfb = sfb.data_ptr<float>();
  p.sfb_group = sfb.dim() == 3 ? sfb.stride(0) : 0;
  p.sfb_mn = sfb.stride(-2);
  p.sfb_k = sfb.stride(-1);
  p.sfb_gran_n = recipes.b.mn;
  p.d = d.data_ptr();
  p.d_dtype = d.scalar_type() == at::kFloat ? cuda::OutDtype::kFloat : cuda::OutDtype::kBf16;
  if (c.has_value()) p.c = c->data_ptr();
  return true;
}

inline bool launch(cuda::Fp8GemmProblem& p, const at::Tensor& d) {
  const c10::cuda::CUDAGuard guard(d.device());
  p.num_sms = runtime::get_num_sms();
  if (!cuda::fp8_gemm_unsupported(p).empty()) return false;
  const cudaError_t status = cuda::fp8_gemm(p, at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a FP8 GEMM kernel failed: ") + cudaGetErrorString(status));
  }
  return true;
}

// D = C + (A * SFA)(B * SFB)^T on the native kernel.
inline bool fp8_gemm(const scaled::Operand& A, const scaled::Operand& B, const scaled::Recipes& recipes,
                     const at::Tensor& d, const std::optional<at::Tensor>& c) {
  cuda::Fp8GemmProblem p;
  if (!fill_operands(p, A.data, A.sf, B.data, B.sf, recipes, d, c) || A.mn > INT32_MAX) return false;
  p.m = static_cast<int>(A.mn);
  return launch(p, d);
}

// M-grouped contiguous: A [M, K], B [G, N, K], D [M, N] bf16; `layout` holds per-row group
// ids or (psum) the groups' end rows, int32 on the device.
inline bool m_grouped_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                                 const scaled::Recipes& recipes, const at::Tensor& d, const at::Tensor& layout,
                                 bool use_psum_layout, bool ensure_zero_padding) {
  cuda::Fp8GemmProblem p;
  if (!layout.is_contiguous() || a.size(0) > INT32_MAX || b.size(0) > INT32_MAX) return false;
  if (!fill_operands(p, a, sfa, b, sfb, recipes, d, std::nullopt)) return false;
  p.m = static_cast<int>(a.size(0));
  p.groups = static_cast<int>(b.size(0));
  p.layout = use_psum_layout ? cuda::Fp8GemmLayout::kPsum : cuda::Fp8GemmLayout::kRowIds;
  p.group_layout = layout.data_ptr<int>();
  p.alignment = runtime::settings().mk_alignment;
  p.zero_padding = use_psum_layout && ensure_zero_padding;
  return launch(p, d);
}

// M-grouped masked: A [G, max_m, K], B [G, N, K], D [G, max_m, N] bf16; group g computes its
// first masked_m[g] rows (int32 on the device).
inline bool m_grouped_masked(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                             const scaled::Recipes& recipes, const at::Tensor& d, const at::Tensor& masked_m,
                             int expected_m) {
  cuda::Fp8GemmProblem p;
  if (!masked_m.is_contiguous() || a.size(0) > INT32_MAX || a.size(1) > INT32_MAX) return false;
  if (!fill_operands(p, a, sfa, b, sfb, recipes, d, std::nullopt)) return false;
  p.m = static_cast<int>(a.size(1));
  p.groups = static_cast<int>(a.size(0));
  p.layout = cuda::Fp8GemmLayout::kMasked;
  p.group_layout = masked_m.data_ptr<int>();
  p.expected_m = expected_m;
  return launch(p, d);
}

}  // namespace deep_gemm::gemm_cuda
