#pragma once
// Launching one compiled shape of the FP8 GEMM kernel.  Included by the instantiation units
// (fp8_gemm_bm*.cu) and, for its declarations, by the dispatcher (fp8_gemm.cu).

#include <cuda_runtime_api.h>

#include "cuda/fp8_gemm.h"

namespace deep_gemm::cuda::fp8_gemm_detail {

// The compiled shapes: X(BLOCK_M, BLOCK_N, SFB per row).
#define DG_FP8_GEMM_SHAPES_BM64(X) \
  X(64, 16, false)                 \
  X(64, 32, false)                 \
  X(64, 48, false) X(64, 64, false) X(64, 96, false) X(64, 128, false) X(64, 160, false) X(64, 192, false)
#define DG_FP8_GEMM_SHAPES_BM128(X) \
  X(128, 16, false)                 \
  X(128, 32, false) X(128, 64, false) X(128, 96, false) X(128, 128, false) X(128, 144, false) X(128, 160, false)
#define DG_FP8_GEMM_SHAPES_ROW(X) X(64, 32, true) X(64, 64, true) X(64, 128, true) X(128, 64, true) X(128, 128, true)

#define DG_FP8_GEMM_SHAPES(X) DG_FP8_GEMM_SHAPES_BM64(X) DG_FP8_GEMM_SHAPES_BM128(X) DG_FP8_GEMM_SHAPES_ROW(X)

template <int kBlockM, int kBlockN, bool kSfbPerRow>
struct Shape {
  static int stages();
  static cudaError_t launch(const Fp8GemmProblem& p, const Fp8GemmConfig& cfg, cudaStream_t stream);
};

}  // namespace deep_gemm::cuda::fp8_gemm_detail
