#pragma once
// CUDA builds: the ragged MQA logits (fp8_fp4_mqa_logits with FP8 q and kv) on the native
// sm90a kernels (csrc/cuda/mqa_logits.h).  The op's checks have already run; this header
// turns the checked tensors into the kernels' plain problem and returns false for what they
// do not serve (FP4, non-packed q, misaligned kv; see docs/gpu.md), so the caller takes the
// reference path.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "apis/runtime.hpp"
#include "cuda/mqa_logits.h"
#include "utils/error.hpp"

namespace deep_gemm::mqa_logits_cuda {

inline bool is_sm90() {
  static const bool value = runtime::device_arch_major() == 9;
  return value;
}

// Writes every entry of `out` ([S, cols] view, row stride a multiple of 1024 bytes).
inline bool ragged(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& kv_sf, const at::Tensor& weights,
                   const at::Tensor& ks, const at::Tensor& ke, bool compressed, const at::Tensor& out) {
  if (!out.is_cuda() || !is_sm90()) return false;
  if (q.scalar_type() != at::kFloat8_e4m3fn || kv.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (kv_sf.scalar_type() != at::kFloat || !kv_sf.is_contiguous() || !q.is_contiguous()) return false;
  if (q.size(0) > INT32_MAX || kv.size(0) > INT32_MAX || out.size(1) > INT32_MAX) return false;
  if (out.stride(1) != 1 && out.size(1) > 1) return false;

  cuda::MqaLogitsProblem p;
  p.seq = static_cast<int>(q.size(0));
  p.heads = static_cast<int>(q.size(1));
  p.head_dim = static_cast<int>(q.size(2));
  p.seq_kv = static_cast<int>(kv.size(0));
  p.q = q.data_ptr();
  p.kv = kv.data_ptr();
  p.ld_kv = kv.size(0) > 1 ? kv.stride(0) : p.head_dim;
  p.kv_sf = kv_sf.data_ptr<float>();
  p.weights = weights.data_ptr();
  p.ld_w = weights.stride(0);
  p.weights_bf16 = weights.scalar_type() == at::kBFloat16;
  p.ks = ks.data_ptr<int>();
  p.ke = ke.data_ptr<int>();
  p.logits = out.data_ptr();
  p.ld_out = out.stride(0);
  p.out_bf16 = out.scalar_type() == at::kBFloat16;
  p.cols = static_cast<int>(out.size(1));
  p.compressed = compressed;
  const c10::cuda::CUDAGuard guard(out.device());
  p.num_sms = runtime::get_num_sms();
  // DG_MQA_LOGITS_CONFIG: a tuning override naming a kernel variant (docs/gpu.md), read per call.
  // Unset or empty: n256s128r where that variant is compiled (D 128, H 32 or 64; the fastest of the
  // H200 sweep at H 32 and within 2% of it at H 64, docs/performance.md), the base tiling elsewhere.
  const char* env = std::getenv("DG_MQA_LOGITS_CONFIG");
  if ((env == nullptr || *env == '\0') && p.head_dim == 128 && (p.heads == 32 || p.heads == 64)) {
    env = "n256s128r";
  }
  if (env != nullptr) {
    p.config = cuda::mqa_logits_config(env);
    if (p.config < 0) {
      fail_unsupported(std::string("DG_MQA_LOGITS_CONFIG=") + env +
                       " is not one of: " + cuda::mqa_logits_config_names());
    }
  }
  if (!cuda::mqa_logits_unsupported(p).empty()) return false;
  const cudaError_t status = cuda::mqa_logits(p, at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a MQA logits kernel failed: ") + cudaGetErrorString(status));
  }
  return true;
}

}  // namespace deep_gemm::mqa_logits_cuda
