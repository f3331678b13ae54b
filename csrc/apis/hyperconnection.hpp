#pragma once
// Family 'hyperconnection': the pre-norm GEMM of hyper-connections.
//
// D = float32(A) . B^T together with the row sums of squares of A, which the
// caller turns into an RMS norm.  GPUs run it on TF32 tensor cores, optionally
// split along K into partial results; this reference computes in float32 with
// ATen and splits K into ceil(K / S)-sized chunks.  CUDA tensors on sm90 GPUs of a
// build with the native kernels take csrc/cuda/hc_prenorm.h instead (B rounded to
// TF32 to nearest, float32 accumulation; see docs/gpu.md).

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <optional>

#include "reference/batched.hpp"
#include "utils/checks.hpp"
#include "utils/math.hpp"

#ifdef DG_WITH_SM90_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdlib>
#include <string>

#include "apis/runtime.hpp"
#include "cuda/hc_prenorm.h"
#include "utils/error.hpp"
#endif

namespace deep_gemm::hyperconnection {

#ifdef DG_WITH_SM90_KERNELS
namespace hc_cuda {

inline bool is_sm90() {
  static const bool value = runtime::device_arch_major() == 9;
  return value;
}

// The checked operands on the native kernel; d [S, M, N] / [M, N] and sqr_sum contiguous.
inline void run(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& sqr_sum,
                int64_t splits) {
  const c10::cuda::CUDAGuard guard(d.device());
  cuda::HcPrenormProblem p;
  p.m = a.size(0);
  p.k = a.size(1);
  p.n = b.size(0);
  p.splits = splits;
  p.a = a.data_ptr();
  p.lda = p.m == 1 ? align<int64_t>(p.k, 8) : a.stride(0);  // a lone row's stride is arbitrary
  p.b = b.data_ptr<float>();
  p.ldb = p.n == 1 ? align<int64_t>(p.k, 4) : b.stride(0);
  p.d = d.data_ptr<float>();
  p.sqr_sum = sqr_sum.data_ptr<float>();
  p.num_sms = runtime::get_num_sms();
  // The tuning override, read on every call (docs/gpu.md): "<variant>[:p<fill>][:b<blocks>][:l][:h|:u]".
  const char* config_text = std::getenv("DG_HC_PRENORM_CONFIG");
  const cuda::HcPrenormConfig config = cuda::hc_prenorm_parse_config(config_text);
  if (!config.valid) {
    fail_unsupported(std::string("DG_HC_PRENORM_CONFIG='") + config_text +
                     "' is not '<variant>[:p<fill>][:b<blocks>][:l][:h|:u]' with a variant among: " +
                     cuda::hc_prenorm_variant_names());
  }
  const cuda::HcPrenormPlan plan = cuda::hc_prenorm_plan(p, config);
  at::Tensor workspace;
  if (plan.workspace_floats > 0) workspace = at::empty({plan.workspace_floats}, d.options());
  const cudaError_t status = cuda::tf32_hc_prenorm_gemm(
      p, plan, workspace.defined() ? workspace.data_ptr<float>() : nullptr, at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a tf32_hc_prenorm_gemm kernel failed: ") + cudaGetErrorString(status));
  }
}

}  // namespace hc_cuda
#endif

inline void tf32_hc_prenorm_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                 const at::Tensor& sqr_sum, const std::optional<int>& num_splits) {
  checks::dtype(a, "a", {at::kBFloat16});
  checks::dim(a, "a", 2);
  batched::last_dim_contiguous(a, "a");
  checks::dtype(b, "b", {at::kFloat});
  checks::dim(b, "b", 2);
  batched::last_dim_contiguous(b, "b");
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a, "a"}, {b, "b"}, {sqr_sum, "sqr_sum"}}) {
    checks::same_device(t, name, d, "d");
  }
  const int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  DG_CHECK_ARG(b.size(1) == k, "b", "has K=", b.size(1), " but 'a' has K=", k);
  DG_CHECK_ARG(n > 0, "b", "must have N > 0 rows, got shape ", b.sizes());
  DG_CHECK_ARG(k > 0, "a", "must have K > 0 columns, got shape ", a.sizes());
  if (num_splits.has_value()) {
    DG_CHECK_ARG(*num_splits >= 1, "num_splits", "must be None or at least 1, got ", *num_splits);
  }
  const int64_t splits = num_splits.value_or(1);
  checks::dtype(d, "d", {at::kFloat});
  checks::dtype(sqr_sum, "sqr_sum", {at::kFloat});
  if (num_splits.has_value()) {
    checks::shape(d, "d", {splits, m, n});
    checks::shape(sqr_sum, "sqr_sum", {splits, m});
  } else {
    checks::shape(d, "d", {m, n});
    checks::shape(sqr_sum, "sqr_sum", {m});
  }
  batched::contiguous(d, "d");
  batched::contiguous(sqr_sum, "sqr_sum");
  const auto overlap = at::get_overlap_status(d, sqr_sum);
  DG_CHECK_ARG(overlap != at::MemOverlapStatus::Full && overlap != at::MemOverlapStatus::Partial, "sqr_sum",
               "overlaps 'd' in memory; the two outputs need separate memory");
  if (m == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (d.is_cuda() && hc_cuda::is_sm90()) {
    hc_cuda::run(a, b, d, sqr_sum, splits);
    return;
  }
#endif

  // K padded with zeros to S chunks of c = ceil(K / S): split s holds k in [s * c, min((s + 1) * c, K)).
  const int64_t chunk = ceil_div<int64_t>(k, splits);
  const int64_t pad = chunk * splits - k;
  const auto af = at::constant_pad_nd(a.to(at::kFloat), {0, pad}).reshape({m, splits, chunk}).transpose(0, 1);
  const auto bf = at::constant_pad_nd(b, {0, pad}).reshape({n, splits, chunk}).transpose(0, 1);
  const auto partial_d = at::bmm(af, bf.transpose(1, 2));  // [S, M, N]
  const auto partial_sqr = af.square().sum(-1);  // [S, M]
  d.copy_(num_splits.has_value() ? partial_d : partial_d.squeeze(0));
  sqr_sum.copy_(num_splits.has_value() ? partial_sqr : partial_sqr.squeeze(0));
}

}  // namespace deep_gemm::hyperconnection
