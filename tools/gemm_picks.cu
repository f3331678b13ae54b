// The tile-configuration heuristic's picks, on the host, without a GPU: the benchmark shapes of
// benchmarks/gpu_gemm.py, gpu_grouped_gemm.py (contiguous) and gpu_bf16_gemm.py (the native path),
// as gemm_config() chooses them for an H200 (132 SMs).  The compiled shapes' launchers are
// replaced by stubs, so only csrc/cuda/gemm.cu (the heuristic) is built:
//
//     nvcc -std=c++17 -Icsrc tools/gemm_picks.cu csrc/cuda/gemm.cu -o /tmp/gemm_picks && /tmp/gemm_picks

#include <cstdio>

#include "cuda/gemm.h"
#include "cuda/gemm_launch.cuh"

namespace deep_gemm::cuda::gemm_detail {
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit>
int Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit>::stages() {
  return 0;  // (not part of the choice)
}
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit>::launch(const GemmProblem&, const GemmConfig&,
                                                                                cudaStream_t) {
  return cudaErrorNotSupported;
}
}  // namespace deep_gemm::cuda::gemm_detail

#define DG_PICKS_SHAPE(BM, BN, ROW, BF16, MAJ) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, ROW, BF16, MAJ>;
#define DG_PICKS_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, false, 0, SPLIT>;
#define DG_PICKS_BF16_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, true, 0, SPLIT>;
DG_GEMM_SHAPES(DG_PICKS_SHAPE)
DG_FP8_GEMM_SHAPES_SPLIT(DG_PICKS_SPLIT)
DG_BF16_GEMM_SHAPES_SPLIT(DG_PICKS_BF16_SPLIT)

using deep_gemm::cuda::GemmConfig;
using deep_gemm::cuda::GemmLayout;
using deep_gemm::cuda::GemmProblem;
using deep_gemm::cuda::InDtype;

static void print(const char* family, const GemmProblem& p) {
  const GemmConfig c = deep_gemm::cuda::gemm_config(p);
  std::printf("%-16s groups=%d %dx%dx%d -> %dx%d split=%d ctas=%d\n", family, p.groups, p.m, p.n, p.k, c.block_m,
              c.block_n, c.split, c.num_ctas);
}

int main() {
  const int weights[][2] = {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
  for (const int m : {64, 128, 4096}) {
    for (const auto& w : weights) {
      GemmProblem p;
      p.m = m;
      p.n = w[0];
      p.k = w[1];
      p.num_sms = 132;
      print("fp8 dense", p);
    }
  }
  const int contiguous[][4] = {{4, 33024, 6144, 7168}, {4, 34944, 7168, 3072}, {4, 29952, 4096, 4096},
                               {4, 32640, 4096, 2048}, {8, 33024, 6144, 7168}, {8, 28800, 7168, 3072},
                               {8, 31232, 4096, 4096}, {8, 35968, 4096, 2048}};
  for (const auto& s : contiguous) {
    GemmProblem p;
    p.groups = s[0];
    p.m = s[1];
    p.n = s[2];
    p.k = s[3];
    p.layout = GemmLayout::kRowIds;
    p.num_sms = 132;
    print("fp8 contiguous", p);
  }
  const int bf16[][3] = {{128, 2112, 7168},  {128, 4096, 7168},  {128, 7168, 2048},
                         {4096, 2112, 7168}, {4096, 4096, 7168}, {4096, 7168, 2048}};
  for (const auto& s : bf16) {
    GemmProblem p;
    p.m = s[0];
    p.n = s[1];
    p.k = s[2];
    p.ab_dtype = InDtype::kBf16;
    p.num_sms = 132;
    print("bf16 dense", p);
  }
  return 0;
}
