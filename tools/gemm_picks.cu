// The tile-configuration heuristic's picks, on the host, without a GPU: the benchmark shapes of
// benchmarks/gpu_gemm.py, gpu_grouped_gemm.py (FP8 and BF16 contiguous, masked, K-grouped FP8, the
// bf16 einsum) and gpu_bf16_gemm.py (the native path), as gemm_config() chooses them for an H200
// (132 SMs).  The compiled shapes' launchers are replaced by stubs, so only csrc/cuda/gemm.cu (the
// heuristic) is built:
//
//     nvcc -std=c++17 -Icsrc tools/gemm_picks.cu csrc/cuda/gemm.cu -o /tmp/gemm_picks && /tmp/gemm_picks

#include <cstdio>

#include "cuda/gemm.h"
#include "cuda/gemm_launch.cuh"

namespace deep_gemm::cuda::gemm_detail {
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit, int kCast>
int Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast>::stages() {
  return 0;  // (not part of the choice)
}
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit, int kCast>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast>::launch(const GemmProblem&,
                                                                                       const GemmConfig&,
                                                                                       cudaStream_t) {
  return cudaErrorNotSupported;
}
}  // namespace deep_gemm::cuda::gemm_detail

DG_GEMM_SHAPES(DG_GEMM_INSTANTIATE)
DG_FP8_GEMM_SHAPES_SPLIT(DG_GEMM_INSTANTIATE_SPLIT)
DG_BF16_GEMM_SHAPES_SPLIT(DG_GEMM_INSTANTIATE_BF16_SPLIT)
DG_BF16_GEMM_SHAPES_CAST(DG_GEMM_INSTANTIATE_BF16_CAST)

using deep_gemm::cuda::GemmConfig;
using deep_gemm::cuda::GemmLayout;
using deep_gemm::cuda::GemmProblem;
using deep_gemm::cuda::InDtype;

static GemmProblem problem(int groups, int m, int n, int k, GemmLayout layout, InDtype dtype) {
  GemmProblem p;
  p.groups = groups;
  p.m = m;
  p.n = n;
  p.k = k;
  p.layout = layout;
  p.ab_dtype = dtype;
  p.lda = k;  // packed operands and output, as the benchmarks allocate them
  p.ldb = k;
  p.ldd = n;
  p.ldc = n;
  p.num_sms = 132;
  return p;
}

static void print(const char* family, const GemmProblem& p) {
  const GemmConfig c = deep_gemm::cuda::gemm_config(p);
  std::printf("%-16s groups=%d %dx%dx%d -> %dx%d%s split=%d ctas=%d l2=%d\n", family, p.groups, p.m, p.n, p.k, c.block_m,
              c.block_n,
              c.cast == 1   ? "ma"
              : c.cast == 2 ? "mb"
                            : "",
              c.split, c.num_ctas, c.l2_hints);
}

int main() {
  const int weights[][2] = {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
  for (const int m : {64, 128, 4096}) {
    for (const auto& w : weights) print("fp8 dense", problem(1, m, w[0], w[1], GemmLayout::kDense, InDtype::kFp8E4m3));
  }
  // The backward shapes of gpu_gemm.py (weights and 576 x 7168, 4096 tokens): Dgrad (4096 x k x n,
  // 128x128 SFB blocks) and Wgrad (n x 4096 x k, B scaled per row), the latter into a float32 D
  // that accumulates C (C is D: only the pointer's presence counts here) and into bf16.
  static float d_as_c = 0.0f;
  for (int i = 0; i <= 6; ++i) {
    const int n = i < 6 ? weights[i][0] : 576, k = i < 6 ? weights[i][1] : 7168;
    print("fp8 dgrad", problem(1, 4096, k, n, GemmLayout::kDense, InDtype::kFp8E4m3));
    GemmProblem w = problem(1, n, 4096, k, GemmLayout::kDense, InDtype::kFp8E4m3);
    w.sfb_gran_n = 1;
    w.d_dtype = deep_gemm::cuda::OutDtype::kFloat;
    w.c = &d_as_c;
    print("fp8 wgrad f32+c", w);
    w.d_dtype = deep_gemm::cuda::OutDtype::kBf16;
    w.c = nullptr;
    print("fp8 wgrad bf16", w);
  }
  const int contiguous[][4] = {{4, 33024, 6144, 7168}, {4, 34944, 7168, 3072}, {4, 29952, 4096, 4096},
                               {4, 32640, 4096, 2048}, {8, 33024, 6144, 7168}, {8, 28800, 7168, 3072},
                               {8, 31232, 4096, 4096}, {8, 35968, 4096, 2048}};
  // FP8 contiguous, SFA K-major (the benchmark's default) and M-major (--sfa-mn-major), row ids;
  // psum ends take the same picks.
  for (const auto& s : contiguous) {
    GemmProblem p = problem(s[0], s[1], s[2], s[3], GemmLayout::kRowIds, InDtype::kFp8E4m3);
    p.sfa_mn = (s[3] + 127) / 128;
    p.sfa_k = 1;
    print("fp8 contiguous", p);
    p.sfa_mn = 1;
    p.sfa_k = s[1];
    print("fp8 contiguous sfa-m", p);
  }
  const int bf16_contiguous[][4] = {
      {4, 35456, 6144, 7168}, {4, 32512, 4096, 2048}, {8, 38656, 6144, 7168}, {8, 35328, 4096, 2048}};
  for (const auto& s : bf16_contiguous) {
    print("bf16 contiguous", problem(s[0], s[1], s[2], s[3], GemmLayout::kRowIds, InDtype::kBf16));
  }
  // Masked: groups x expected m x n x k, with max_m 4096 and expected_m passed as 1.2 x expected m,
  // as the benchmark calls them; FP8 and BF16.
  const int masked[][4] = {{32, 192, 6144, 7168}, {32, 192, 4096, 2048}, {6, 1024, 6144, 7168}, {6, 1024, 4096, 2048},
                           {32, 20, 6144, 7168},  {32, 20, 4096, 2048},  {6, 20, 6144, 7168},   {6, 20, 4096, 2048}};
  for (const auto& s : masked) {
    for (const InDtype dtype : {InDtype::kFp8E4m3, InDtype::kBf16}) {
      GemmProblem p = problem(s[0], 4096, s[2], s[3], GemmLayout::kMasked, dtype);
      p.expected_m = s[1] * 6 / 5;
      print(dtype == InDtype::kBf16 ? "bf16 masked" : "fp8 masked", p);
    }
  }
  // The bf16 einsum "bhr,hdr->bhd" (b x h x r x d): a batched problem over the heads, m = b,
  // n = d, k = r.
  const int einsum[][4] = {{128, 128, 512, 128}, {4096, 128, 512, 128}, {128, 8, 4096, 1024}, {4096, 8, 4096, 1024}};
  for (const auto& s : einsum) {
    print("bf16 einsum", problem(s[1], s[0], s[3], s[2], GemmLayout::kBatched, InDtype::kBf16));
  }
  // K-grouped FP8 (groups x m x n x total K, equal groups), per-row scales on both sides.
  const int k_grouped[][4] = {{4, 4096, 7168, 34304}, {4, 7168, 2048, 33024}};
  for (const auto& s : k_grouped) {
    int ks[8] = {};
    GemmProblem p = problem(s[0], s[1], s[2], s[3], GemmLayout::kKGrouped, InDtype::kFp8E4m3);
    for (int g = 0; g < s[0]; ++g) ks[g] = s[3] / s[0];
    p.group_k = ks;
    p.sfb_gran_n = 1;
    print("fp8 k-grouped", p);
  }
  const int bf16[][3] = {{128, 2112, 7168},  {128, 4096, 7168},  {128, 7168, 2048},
                         {4096, 2112, 7168}, {4096, 4096, 7168}, {4096, 7168, 2048}};
  for (const auto& s : bf16) print("bf16 dense", problem(1, s[0], s[1], s[2], GemmLayout::kDense, InDtype::kBf16));
  return 0;
}
