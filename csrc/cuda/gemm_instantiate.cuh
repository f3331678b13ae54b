#pragma once
// Definitions of Shape<...>::stages/launch; each gemm_*.cu unit instantiates a part of
// the shape list so the kernels compile in parallel.

#include <cuda.h>

#include <cstdint>

#include "cuda/gemm_kernel.cuh"
#include "cuda/gemm_launch.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda::gemm_detail {

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16>
int Shape<kBlockM, kBlockN, kSfbPerRow, kBf16>::stages() {
  return Traits<kBlockM, kBlockN, kSfbPerRow, kBf16>::kStages;
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16>
auto* kernel_of() {
  if constexpr (kBf16) {
    return &sm90_bf16_gemm_kernel<kBlockM, kBlockN>;
  } else {
    return &sm90_fp8_gemm_kernel<kBlockM, kBlockN, kSfbPerRow>;
  }
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow, kBf16>::launch(const GemmProblem& p, const GemmConfig& cfg,
                                                               cudaStream_t stream) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kBf16>;
  auto* kernel = kernel_of<kBlockM, kBlockN, kSfbPerRow, kBf16>();
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
  if (attr_status != cudaSuccess) return attr_status;

  const bool masked = p.layout == GemmLayout::kMasked;
  const uint64_t rows = static_cast<uint64_t>(p.m) * (masked ? p.groups : 1);  // A's and D's 2-D views
  CUtensorMap tm_a{}, tm_b{}, tm_d{};
  const auto ab = kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const int ab_bytes = kBf16 ? 2 : 1;
  if (!make_tensor_map_2d(&tm_a, ab, ab_bytes, p.a, p.k, rows, p.lda, T::kBlockKValues, kBlockM,
                          CU_TENSOR_MAP_SWIZZLE_128B) ||
      !make_tensor_map_2d(&tm_b, ab, ab_bytes, p.b, p.k, static_cast<uint64_t>(p.n) * p.groups, p.ldb, T::kBlockKValues,
                          kBlockN, CU_TENSOR_MAP_SWIZZLE_128B)) {
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
  args.groups = p.groups;
  args.num_k_blocks = (p.k + T::kBlockKValues - 1) / T::kBlockKValues;
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

}  // namespace deep_gemm::cuda::gemm_detail

#define DG_GEMM_INSTANTIATE(BM, BN, ROW, BF16) template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, ROW, BF16>;
