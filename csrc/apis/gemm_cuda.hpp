#pragma once
// CUDA builds: the dense FP8 GEMM on the native sm90a kernel (csrc/cuda/fp8_gemm.h).
// This header turns checked ATen arguments into the kernel's plain problem description;
// it returns false for what the kernel does not serve (see docs/gpu.md, "Native kernels"),
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

// D = C + (A * SFA)(B * SFB)^T on the native kernel, for FP8 e4m3 operands with K
// contiguous, float32 SFA per 1x128 and SFB per 128x128 or 1x128 blocks.
inline bool fp8_gemm(const scaled::Operand& A, const scaled::Operand& B, const scaled::Recipes& recipes,
                     const at::Tensor& d, const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (A.data.scalar_type() != at::kFloat8_e4m3fn || B.data.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (A.sf.scalar_type() != at::kFloat || B.sf.scalar_type() != at::kFloat) return false;
  if (recipes.a.mn != 1 || recipes.a.k != 128 || recipes.b.k != 128) return false;
  if (A.data.stride(1) != 1 || B.data.stride(1) != 1) return false;
  if (c.has_value() && c->stride(1) != 1 && c->size(1) > 1) return false;
  if (A.mn > INT32_MAX || B.mn > INT32_MAX || A.k > INT32_MAX) return false;

  cuda::Fp8GemmProblem p;
  p.m = static_cast<int>(A.mn);
  p.n = static_cast<int>(B.mn);
  p.k = static_cast<int>(A.k);
  p.a = A.data.data_ptr();
  p.lda = A.data.stride(0);
  p.b = B.data.data_ptr();
  p.ldb = B.data.stride(0);
  p.sfa = A.sf.data_ptr<float>();
  p.sfa_mn = A.sf.stride(0);
  p.sfa_k = A.sf.stride(1);
  p.sfb = B.sf.data_ptr<float>();
  p.sfb_mn = B.sf.stride(0);
  p.sfb_k = B.sf.stride(1);
  p.sfb_gran_n = recipes.b.mn;
  p.d = d.data_ptr();
  p.ldd = d.stride(0);
  p.d_dtype = d.scalar_type() == at::kFloat ? cuda::OutDtype::kFloat : cuda::OutDtype::kBf16;
  if (c.has_value()) {
    p.c = c->data_ptr();
    p.ldc = c->stride(0);
  }
  const c10::cuda::CUDAGuard guard(d.device());
  p.num_sms = runtime::get_num_sms();
  if (!cuda::fp8_gemm_unsupported(p).empty()) return false;
  const cudaError_t status = cuda::fp8_gemm(p, at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess)
    fail_unsupported(std::string("the sm90a FP8 GEMM kernel failed: ") + cudaGetErrorString(status));
  return true;
}

}  // namespace deep_gemm::gemm_cuda
