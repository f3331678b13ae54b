#pragma once
// The hyper-connection pre-norm GEMM on sm90a (hc_prenorm.cu):
//   d[s, m, n]     = sum over k of split s of float32(A[m, k]) * rna_tf32(B[n, k])
//   sqr_sum[s, m]  = sum over k of split s of float32(A[m, k])^2
// A bf16 [M, K] and B float32 [N, K] with K contiguous (row strides lda, ldb in elements);
// d [S, M, N] and sqr_sum [S, M] contiguous float32; split s covers k in
// [s * c, min((s + 1) * c, K)) with c = ceil(K / S), an empty split giving zeros.
// B is rounded to TF32 (nearest, ties away from zero) before the tensor-core product; A is
// exact in TF32; sums of squares are float32 FMAs.  Results are bitwise deterministic.
//
// The host picks a plan (hc_prenorm_plan): the TMA kernel when A and B are 16-byte aligned
// with 16-byte row strides, a plain scalar kernel otherwise.  The TMA kernel may split each
// split further into `parts` K ranges to fill the GPU; their partial sums then go to a
// caller-provided float32 workspace and a second kernel adds them in part order.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace deep_gemm::cuda {

struct HcPrenormProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t splits = 1;  // S (1 without num_splits)
  const void* a = nullptr;  // bf16 [m, k], row stride lda
  int64_t lda = 0;
  const float* b = nullptr;  // [n, k], row stride ldb
  int64_t ldb = 0;
  float* d = nullptr;  // [splits, m, n], contiguous
  float* sqr_sum = nullptr;  // [splits, m], contiguous
  int num_sms = 0;
};

struct HcPrenormPlan {
  bool tma = false;  // false: the scalar kernel
  int block_m = 0;  // rows per CTA of the TMA kernel: 64 or 128
  int64_t parts = 1;  // K ranges per split (> 1: partial sums through the workspace)
  int64_t part_len = 0;  // K elements per part (a multiple of 64 when parts > 1)
  int64_t workspace_floats = 0;  // float32 elements the caller provides (0: none)
};

HcPrenormPlan hc_prenorm_plan(const HcPrenormProblem& p);

// Runs `plan` on `stream`; `workspace` holds plan.workspace_floats floats (may be null when 0).
cudaError_t tf32_hc_prenorm_gemm(const HcPrenormProblem& p, const HcPrenormPlan& plan, float* workspace,
                                 cudaStream_t stream);

}  // namespace deep_gemm::cuda
