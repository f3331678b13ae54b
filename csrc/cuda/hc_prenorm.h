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
// The host picks a plan (hc_prenorm_plan): the TMA kernel (one of several compiled variants)
// when A and B are 16-byte aligned with 16-byte row strides, a plain scalar kernel otherwise.
// The TMA kernel may split each split further into `parts` K ranges to fill the GPU; their
// partial sums then go to a caller-provided float32 workspace and a second kernel adds them in
// part order.

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

// A tuning override (DG_HC_PRENORM_CONFIG, "<variant>[:p<fill>][:b<blocks>][:l][:h|:u]"): the TMA
// kernel variant (hc_prenorm_variant_names; "default": the built-in heuristic), the CTAs per SM
// the K parts aim for (p0: never split a split further; default: the variant's CTAs per SM, or 0
// where the heuristic picks one full wave of 64-row tiles), the fewest 64-wide K blocks per part
// (default 4), whether the reduce kernel of the K parts is launched as a programmatic dependent
// (l; default off), and L2 cache hints on the TMA loads (h: on, the default; u: off).
struct HcPrenormConfig {
  int variant = -1;  // -1: the heuristic
  int fill = -1;  // -1: the variant's CTAs per SM
  int min_part_blocks = 4;
  bool early_reduce = false;
  bool cache_hints = true;
  bool valid = true;  // false: the text did not parse
};

HcPrenormConfig hc_prenorm_parse_config(const char* text);  // null or "": the defaults
const char* hc_prenorm_variant_names();  // comma-separated, for messages

struct HcPrenormPlan {
  bool tma = false;  // false: the scalar kernel
  int variant = -1;  // the TMA kernel variant
  int block_m = 0;  // rows per CTA of the TMA kernel
  int64_t parts = 1;  // K ranges per split (> 1: partial sums through the workspace)
  int64_t part_len = 0;  // K elements per part (a multiple of 64 when parts > 1)
  int64_t workspace_floats = 0;  // float32 elements the caller provides (0: none)
  bool early_reduce = false;  // the reduce kernel as a programmatic dependent launch
  // A's loads evict_first and B's evict_last in L2: set where one launch covers every column, so
  // that each A element is read once (A then displaces itself in L2, not other data).
  bool cache_hints = false;
};

HcPrenormPlan hc_prenorm_plan(const HcPrenormProblem& p, const HcPrenormConfig& config = {});

// Runs `plan` on `stream`; `workspace` holds plan.workspace_floats floats (may be null when 0).
cudaError_t tf32_hc_prenorm_gemm(const HcPrenormProblem& p, const HcPrenormPlan& plan, float* workspace,
                                 cudaStream_t stream);

}  // namespace deep_gemm::cuda
