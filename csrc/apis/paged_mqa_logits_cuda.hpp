#pragma once
// CUDA builds: get_paged_mqa_logits_metadata and the FP8 paged MQA logits on the native sm90a
// kernels (csrc/cuda/paged_mqa_logits.h).  The callers in apis/attention.hpp have checked every
// argument; these functions return false for what the kernels do not serve (see docs/gpu.md,
// "Paged MQA logits"), and the caller then takes the reference path.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "apis/runtime.hpp"
#include "cuda/paged_mqa_logits.h"
#include "utils/error.hpp"

namespace deep_gemm::paged_cuda {

inline bool on_sm90(const at::Tensor& t) {
  if (!t.is_cuda()) return false;
  static const bool sm90 = runtime::device_arch_major() == 9;
  return sm90;
}

// The schedule into a fresh int32 [num_sms + 1, 2] tensor; false off sm90.
inline bool metadata(const at::Tensor& context_lens, int block_kv, int num_sms, at::Tensor& out) {
  if (!on_sm90(context_lens) || context_lens.size(0) > INT32_MAX || context_lens.size(1) > INT32_MAX) return false;
  const c10::cuda::CUDAGuard guard(context_lens.device());
  out = at::empty({static_cast<int64_t>(num_sms) + 1, 2}, context_lens.options());
  const cudaError_t status = cuda::launch_paged_mqa_logits_metadata(
      context_lens.data_ptr<int>(), context_lens.stride(0), context_lens.stride(1),
      static_cast<int>(context_lens.size(0)), static_cast<int>(context_lens.size(1)), block_kv, num_sms,
      out.data_ptr<int>(), at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a paged MQA schedule kernel failed: ") + cudaGetErrorString(status));
  }
  return true;
}

// The logits kernel's pipeline variant from the environment variable DG_PAGED_MQA_CONFIG (read
// on every call; a tuning override, docs/gpu.md): unset, empty or "default" -> wg2; "wg2",
// "wg2_deep", "wg4", "wg4_deep", each optionally followed by "_split", name one; anything else
// is an error.
inline int config_variant() {
  const char* env = std::getenv("DG_PAGED_MQA_CONFIG");
  // The default, from the H200 sweep of benchmarks/gpu_paged_mqa_logits.py --sweep (docs/performance.md).
  constexpr int kDefault = cuda::kPagedWg4 | cuda::kPagedSplit;
  if (env == nullptr) return kDefault;
  const std::string v(env);
  if (v.empty() || v == "default") return kDefault;
  const std::string suffix = "_split";
  const bool split = v.size() > suffix.size() && v.compare(v.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string base = split ? v.substr(0, v.size() - suffix.size()) : v;
  const int extra = split ? cuda::kPagedSplit : 0;
  if (base == "wg2") return cuda::kPagedWg2 | extra;
  if (base == "wg2_deep") return cuda::kPagedWg2Deep | extra;
  if (base == "wg4") return cuda::kPagedWg4 | extra;
  if (base == "wg4_deep") return cuda::kPagedWg4Deep | extra;
  fail_unsupported(
      "DG_PAGED_MQA_CONFIG must be unset, empty, default, or one of wg2, wg2_deep, wg4, wg4_deep with an optional "
      "_split suffix; got '" +
      v + "'");
}

// Fills `out` ([B * next_n, max_context_len] view, checked by the caller) on the native kernel;
// false when the kernel does not serve the arguments (FP4, other shapes, unaligned strides).
inline bool logits(const at::Tensor& q, const std::optional<at::Tensor>& q_sf, const at::Tensor& kv_cache,
                   const at::Tensor& weights, const at::Tensor& context_lens, const at::Tensor& block_table,
                   const at::Tensor& schedule_meta, int max_context_len, const std::optional<at::Tensor>& indices,
                   int num_sms, const at::Tensor& out) {
  if (!on_sm90(q) || q_sf.has_value() || q.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (q.size(0) > INT32_MAX || q.size(1) > INT32_MAX || q.size(2) > INT32_MAX || q.size(3) > INT32_MAX) return false;
  if (q.size(3) > 1 && q.stride(3) != 1) return false;
  if (schedule_meta.stride(1) != 1) return false;
  if (out.stride(1) != 1) return false;

  cuda::PagedMqaProblem p;
  p.batch = static_cast<int>(q.size(0));
  p.next_n = static_cast<int>(q.size(1));
  p.heads = static_cast<int>(q.size(2));
  p.head_dim = static_cast<int>(q.size(3));
  p.block_kv = static_cast<int>(kv_cache.size(1));
  p.q = q.data_ptr();
  p.q_stride_b = q.stride(0);  // one byte per FP8 element
  p.q_stride_t = q.stride(1);
  p.q_stride_h = q.stride(2);
  p.kv = kv_cache.data_ptr();
  p.num_blocks = kv_cache.size(0);
  p.kv_block_bytes = kv_cache.stride(0);
  p.weights = weights.data_ptr();
  p.weights_bf16 = weights.scalar_type() == at::kBFloat16;
  p.weights_stride = weights.stride(0);
  p.context_lens = context_lens.data_ptr<int>();
  p.ctx_stride_b = context_lens.stride(0);
  p.ctx_stride_t = context_lens.stride(1);
  p.block_table = block_table.data_ptr<int>();
  p.table_rows = block_table.size(0);
  p.table_cols = block_table.size(1);
  p.table_stride = block_table.stride(0);
  if (indices.has_value()) {
    p.indices = indices->data_ptr<int>();
    p.indices_stride = indices->stride(0);
  }
  p.schedule = schedule_meta.data_ptr<int>();
  p.schedule_stride = schedule_meta.stride(0);
  p.num_sms = num_sms;
  p.out = out.data_ptr();
  p.out_bf16 = out.scalar_type() == at::kBFloat16;
  p.out_stride = out.stride(0);
  p.max_context_len = max_context_len;
  p.variant = config_variant();
  if (!cuda::paged_mqa_logits_supported(p)) return false;

  const c10::cuda::CUDAGuard guard(q.device());
  const cudaError_t status = cuda::launch_paged_mqa_logits(p, at::cuda::getCurrentCUDAStream());
  if (status == cudaErrorNotSupported) return false;  // a tensor map the driver refused
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a paged MQA logits kernel failed: ") + cudaGetErrorString(status));
  }
  return true;
}

}  // namespace deep_gemm::paged_cuda
