#pragma once
// Definitions of Shape<...>::stages/launch; each fp8_gemm_bm*.cu unit instantiates a part of
// the shape list so the kernels compile in parallel.

#include <cuda.h>

#include <cstdint>

#include "cuda/fp8_gemm_kernel.cuh"
#include "cuda/fp8_gemm_launch.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda::fp8_gemm_detail {

template <int kBlockM, int kBlockN, bool kSfbPerRow>
int Shape<kBlockM, kBlockN, kSfbPerRow>::stages() {
  return Traits<kBlockM, kBlockN, kSfbPerRow>::kStages;
}

template <int kBlockM, int kBlockN, bool kSfbPerRow>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow>::launch(const Fp8GemmProblem& p, const Fp8GemmConfig& cfg,
                                                        cudaStream_t stream) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow>;
  auto* kernel = &sm90_fp8_gemm_kernel<kBlockM, kBlockN, kSfbPerRow>;
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
  if (attr_status != cudaSuccess) return attr_status;

  const bool masked = p.layout == Fp8GemmLayout::kMasked;
  const uint64_t rows = static_cast<uint64_t>(p.m) * (masked ? p.groups : 1);  // A's and D's 2-D views
  CUtensorMap tm_a{}, tm_b{}, tm_d{};
  if (!make_tensor_map_2d(&tm_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.a, p.k, rows, p.lda, kBlockK, kBlockM,
                          CU_TENSOR_MAP_SWIZZLE_128B) ||
      !make_tensor_map_2d(&tm_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.b, p.k, static_cast<uint64_t>(p.n) * p.groups,
                          p.ldb, kBlockK, kBlockN, CU_TENSOR_MAP_SWIZZLE_128B)) {
    return cudaErrorInvalidValue;
  }
  const bool tma_out = T::kOutViaSmem && p.d_dtype == OutDtype::kBf16 && p.c == nullptr && p.ldd % 8 == 0 &&
                       reinterpret_cast<uintptr_t>(p.d) % 16 == 0;
  if (tma_out) {
    if (!make_tensor_map_2d(&tm_d, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p.d, p.n, rows, p.ldd, 32, 64,
                            CU_TENSOR_MAP_SWIZZLE_64B)) {
      return cudaErrorInvalidValue;
    }
  } else {
    tm_d = tm_a;  // unused
  }

  KernelArgs args{};
  args.kind = static_cast<int>(p.layout);
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.groups = p.groups;
  args.num_k_blocks = (p.k + kBlockK - 1) / kBlockK;
  args.m_blocks = (p.m + kBlockM - 1) / kBlockM;
  args.n_blocks = (p.n + kBlockN - 1) / kBlockN;
  args.swizzle = cfg.swizzle;
  args.layout = p.group_layout;
  args.alignment = p.alignment;
  args.zero_padding = p.zero_padding ? 1 : 0;
  args.sfa = p.sfa;
  args.sfa_group = p.sfa_group;
  args.sfa_mn = p.sfa_mn;
  args.sfa_k = p.sfa_k;
  args.sfb = p.sfb;
  args.sfb_group = p.sfb_group;
  args.sfb_mn = p.sfb_mn;
  args.sfb_k = p.sfb_k;
  args.sfb_rows = kSfbPerRow ? p.n : (p.n + 127) / 128;
  args.d = p.d;
  args.ldd = p.ldd;
  args.c = p.c;
  args.ldc = p.ldc;
  args.d_f32 = p.d_dtype == OutDtype::kFloat ? 1 : 0;
  args.tma_out = tma_out ? 1 : 0;
  const uintptr_t pair_bytes = p.d_dtype == OutDtype::kFloat ? 8 : 4;
  args.paired_access = p.ldd % 2 == 0 && (p.c == nullptr || p.ldc % 2 == 0) &&
                       reinterpret_cast<uintptr_t>(p.d) % pair_bytes == 0 &&
                       reinterpret_cast<uintptr_t>(p.c) % pair_bytes == 0;

  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(static_cast<unsigned>(cfg.num_ctas));
  launch.blockDim = dim3(T::kThreads);
  launch.dynamicSmemBytes = T::kSmemBytes;
  launch.stream = stream;
  return cudaLaunchKernelEx(&launch, kernel, tm_a, tm_b, tm_d, args);
}

}  // namespace deep_gemm::cuda::fp8_gemm_detail

#define DG_FP8_GEMM_INSTANTIATE(BM, BN, ROW) template struct deep_gemm::cuda::fp8_gemm_detail::Shape<BM, BN, ROW>;
