#pragma once
// Launching one compiled shape of the GEMM kernel.  Included by the instantiation units
// (gemm_*.cu) and, for its declarations, by the dispatcher (gemm.cu).

#include <cuda_runtime_api.h>

#include "cuda/gemm.h"

namespace deep_gemm::cuda::gemm_detail {

// The compiled shapes: X(BLOCK_M, BLOCK_N, SFB per row, BF16 operands, MN-major operands: bit 0
// A, bit 1 B).
// clang-format off
#define DG_FP8_GEMM_SHAPES_BM64(X) \
  X(64, 16, false, false, 0) X(64, 32, false, false, 0) X(64, 48, false, false, 0) X(64, 64, false, false, 0) \
  X(64, 96, false, false, 0) X(64, 128, false, false, 0) X(64, 160, false, false, 0) X(64, 192, false, false, 0)
#define DG_FP8_GEMM_SHAPES_BM128(X) \
  X(128, 16, false, false, 0) X(128, 32, false, false, 0) X(128, 64, false, false, 0) X(128, 96, false, false, 0) \
  X(128, 128, false, false, 0) X(128, 144, false, false, 0) X(128, 160, false, false, 0) X(128, 192, false, false, 0)
#define DG_FP8_GEMM_SHAPES_BM256(X) X(256, 128, false, false, 0)
#define DG_FP8_GEMM_SHAPES_ROW(X) \
  X(64, 32, true, false, 0) X(64, 64, true, false, 0) X(64, 128, true, false, 0) X(128, 64, true, false, 0) \
  X(128, 128, true, false, 0)
#define DG_BF16_GEMM_SHAPES(X) \
  X(64, 64, false, true, 0) X(64, 128, false, true, 0) X(64, 192, false, true, 0) X(64, 256, false, true, 0) \
  X(128, 64, false, true, 0) X(128, 128, false, true, 0) X(128, 192, false, true, 0) X(128, 256, false, true, 0)
// BF16 with MN-major operands (the last field: 2, B MN-major; 3, both).
#define DG_BF16_MN_GEMM_SHAPES(X) \
  X(64, 128, false, true, 2) X(128, 128, false, true, 2) X(128, 256, false, true, 2) \
  X(64, 128, false, true, 3) X(128, 128, false, true, 3) X(128, 256, false, true, 3)
// Dense FP8 split K across a cluster: Y(BLOCK_M, BLOCK_N, CTAs per tile).
#define DG_FP8_GEMM_SHAPES_SPLIT(Y) \
  Y(64, 32, 2) Y(64, 64, 2) Y(64, 128, 2) Y(128, 64, 2)
// Dense BF16 split K across a cluster: Z(BLOCK_M, BLOCK_N, CTAs per tile).
#define DG_BF16_GEMM_SHAPES_SPLIT(Z) \
  Z(64, 64, 2) Z(64, 128, 2) Z(128, 64, 2)
#define DG_GEMM_SHAPES(X) \
  DG_FP8_GEMM_SHAPES_BM64(X) DG_FP8_GEMM_SHAPES_BM128(X) DG_FP8_GEMM_SHAPES_BM256(X) DG_FP8_GEMM_SHAPES_ROW(X) \
  DG_BF16_GEMM_SHAPES(X) DG_BF16_MN_GEMM_SHAPES(X)
// clang-format on

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit = 1>
struct Shape {
  static int stages();
  static cudaError_t launch(const GemmProblem& p, const GemmConfig& cfg, cudaStream_t stream);
};

}  // namespace deep_gemm::cuda::gemm_detail

// Explicit instantiations of Shape, one per X, Y or Z entry (the gemm_*.cu units, over the
// definitions of gemm_instantiate.cuh; tools/gemm_picks.cu, over stubs).
#define DG_GEMM_INSTANTIATE(BM, BN, ROW, BF16, MAJ) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, ROW, BF16, MAJ>;
#define DG_GEMM_INSTANTIATE_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, false, 0, SPLIT>;
#define DG_GEMM_INSTANTIATE_BF16_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, true, 0, SPLIT>;
