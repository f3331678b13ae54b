#pragma once
// Launching one compiled shape of the GEMM kernel.  Included by the instantiation units
// (gemm_*.cu) and, for its declarations, by the dispatcher (gemm.cu).

#include <cuda_runtime_api.h>

#include "cuda/gemm.h"

namespace deep_gemm::cuda::gemm_detail {

// The compiled shapes: X(BLOCK_M, BLOCK_N, SFB per row, BF16 operands).
// clang-format off
#define DG_FP8_GEMM_SHAPES_BM64(X) \
  X(64, 16, false, false) X(64, 32, false, false) X(64, 48, false, false) X(64, 64, false, false) \
  X(64, 96, false, false) X(64, 128, false, false) X(64, 160, false, false) X(64, 192, false, false)
#define DG_FP8_GEMM_SHAPES_BM128(X) \
  X(128, 16, false, false) X(128, 32, false, false) X(128, 64, false, false) X(128, 96, false, false) \
  X(128, 128, false, false) X(128, 144, false, false) X(128, 160, false, false) X(128, 192, false, false)
#define DG_FP8_GEMM_SHAPES_BM256(X) X(256, 128, false, false)
#define DG_FP8_GEMM_SHAPES_ROW(X) \
  X(64, 32, true, false) X(64, 64, true, false) X(64, 128, true, false) X(128, 64, true, false) \
  X(128, 128, true, false)
#define DG_BF16_GEMM_SHAPES(X) \
  X(64, 64, false, true) X(64, 128, false, true) X(64, 192, false, true) X(64, 256, false, true) \
  X(128, 64, false, true) X(128, 128, false, true) X(128, 192, false, true) X(128, 256, false, true)
#define DG_GEMM_SHAPES(X) \
  DG_FP8_GEMM_SHAPES_BM64(X) DG_FP8_GEMM_SHAPES_BM128(X) DG_FP8_GEMM_SHAPES_BM256(X) DG_FP8_GEMM_SHAPES_ROW(X) \
  DG_BF16_GEMM_SHAPES(X)
// clang-format on

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16>
struct Shape {
  static int stages();
  static cudaError_t launch(const GemmProblem& p, const GemmConfig& cfg, cudaStream_t stream);
};

}  // namespace deep_gemm::cuda::gemm_detail
