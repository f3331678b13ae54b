#pragma once
// Launching one compiled shape of the FP8 GEMM kernel.  Included by the instantiation units
// (fp8_gemm_bm*.cu) and, for its declarations, by the dispatcher (fp8_gemm.cu).

#include <cuda_runtime_api.h>

#include "cuda/fp8_gemm.h"

namespace deep_gemm::cuda::fp8_gemm_detail {

// The compiled shapes: X(BLOCK_M, BLOCK_N, SFB per row, multicast mode).
#define DG_FP8_GEMM_SHAPES_BM64(X)                                                                           \
  X(64, 16, false, 0)                                                                                        \
  X(64, 16, false, 1)                                                                                        \
  X(64, 32, false, 0) X(64, 32, false, 1) X(64, 48, false, 0) X(64, 48, false, 1) X(64, 64, false, 0)        \
      X(64, 64, false, 1) X(64, 96, false, 0) X(64, 128, false, 0) X(64, 128, false, 1) X(64, 160, false, 0) \
          X(64, 192, false, 0)
#define DG_FP8_GEMM_SHAPES_BM128(X)                                                                           \
  X(128, 16, false, 0)                                                                                        \
  X(128, 32, false, 0)                                                                                        \
  X(128, 64, false, 0) X(128, 96, false, 0) X(128, 128, false, 0) X(128, 128, false, 1) X(128, 128, false, 2) \
      X(128, 144, false, 0) X(128, 160, false, 0) X(128, 160, false, 1) X(128, 160, false, 2)
#define DG_FP8_GEMM_SHAPES_ROW(X) \
  X(64, 32, true, 0) X(64, 64, true, 0) X(64, 128, true, 0) X(128, 64, true, 0) X(128, 128, true, 0)

#define DG_FP8_GEMM_SHAPES(X) DG_FP8_GEMM_SHAPES_BM64(X) DG_FP8_GEMM_SHAPES_BM128(X) DG_FP8_GEMM_SHAPES_ROW(X)

template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
struct Shape {
  static int stages();
  static int max_ctas(int num_sms);
  static cudaError_t launch(const Fp8GemmProblem& p, const Fp8GemmConfig& cfg, cudaStream_t stream);
};

}  // namespace deep_gemm::cuda::fp8_gemm_detail
