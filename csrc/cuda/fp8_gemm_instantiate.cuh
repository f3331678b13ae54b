#pragma once
// Definitions of Shape<...>::stages/launch; each fp8_gemm_bm*.cu unit instantiates a part of
// the shape list so the kernels compile in parallel.

#include <cuda.h>

#include <algorithm>

#include "cuda/fp8_gemm_kernel.cuh"
#include "cuda/fp8_gemm_launch.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda::fp8_gemm_detail {

template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
int Shape<kBlockM, kBlockN, kSfbPerRow, kMulticast>::stages() {
  return Traits<kBlockM, kBlockN, kSfbPerRow, kMulticast>::kStages;
}

// CTAs of this kernel that can be resident at once on `num_sms` SMs.  With clusters this can
// be fewer than the SMs: a cluster's CTAs must share a GPC, and a GPC with an odd number of
// free SMs leaves one idle.  A persistent grid larger than this would run a second wave.
template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
int Shape<kBlockM, kBlockN, kSfbPerRow, kMulticast>::max_ctas(int num_sms) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kMulticast>;
  if constexpr (T::kCluster == 1) {
    return num_sms;
  } else {
    static const int resident = [] {
      auto* kernel = &sm90_fp8_gemm_kernel<kBlockM, kBlockN, kSfbPerRow, kMulticast>;
      if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes) != cudaSuccess) {
        return 0;
      }
      cudaLaunchConfig_t launch{};
      launch.gridDim = dim3(T::kCluster * 512);
      launch.blockDim = dim3(T::kThreads);
      launch.dynamicSmemBytes = T::kSmemBytes;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = T::kCluster;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      launch.attrs = attr;
      launch.numAttrs = 1;
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
      }
      return clusters * T::kCluster;
    }();
    return std::min(resident, num_sms / T::kCluster * T::kCluster);
  }
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow, kMulticast>::launch(const Fp8GemmProblem& p, const Fp8GemmConfig& cfg,
                                                                    cudaStream_t stream) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kMulticast>;
  auto* kernel = &sm90_fp8_gemm_kernel<kBlockM, kBlockN, kSfbPerRow, kMulticast>;
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
  if (attr_status != cudaSuccess) return attr_status;

  CUtensorMap tm_a{}, tm_b{}, tm_d{};
  const uint32_t box_a = kMulticast == 1 ? kBlockM / 2 : kBlockM;
  const uint32_t box_b = kMulticast == 2 ? kBlockN / 2 : kBlockN;
  if (!make_tensor_map_2d(&tm_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.a, p.k, p.m, p.lda, kBlockK, box_a,
                          CU_TENSOR_MAP_SWIZZLE_128B) ||
      !make_tensor_map_2d(&tm_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.b, p.k, p.n, p.ldb, kBlockK, box_b,
                          CU_TENSOR_MAP_SWIZZLE_128B)) {
    return cudaErrorInvalidValue;
  }
  const bool tma_out = T::kOutViaSmem && p.d_dtype == OutDtype::kBf16 && p.c == nullptr && p.ldd % 8 == 0 &&
                       reinterpret_cast<uintptr_t>(p.d) % 16 == 0;
  if (tma_out) {
    if (!make_tensor_map_2d(&tm_d, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p.d, p.n, p.m, p.ldd, 32, 64,
                            CU_TENSOR_MAP_SWIZZLE_64B)) {
      return cudaErrorInvalidValue;
    }
  } else {
    tm_d = tm_a;  // unused
  }

  KernelArgs args{};
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.num_k_blocks = (p.k + kBlockK - 1) / kBlockK;
  const int m_blocks = (p.m + kBlockM - 1) / kBlockM;
  const int n_blocks = (p.n + kBlockN - 1) / kBlockN;
  args.units_m = kMulticast == 2 ? m_blocks / 2 : m_blocks;
  args.units_n = kMulticast == 1 ? n_blocks / 2 : n_blocks;
  args.num_units = args.units_m * args.units_n;
  args.swizzle = cfg.swizzle;
  args.sfa = p.sfa;
  args.sfa_mn = p.sfa_mn;
  args.sfa_k = p.sfa_k;
  args.sfb = p.sfb;
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
  cudaLaunchAttribute attrs[1];
  if constexpr (T::kCluster > 1) {
    attrs[0].id = cudaLaunchAttributeClusterDimension;
    attrs[0].val.clusterDim.x = T::kCluster;
    attrs[0].val.clusterDim.y = 1;
    attrs[0].val.clusterDim.z = 1;
    launch.attrs = attrs;
    launch.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&launch, kernel, tm_a, tm_b, tm_d, args);
}

}  // namespace deep_gemm::cuda::fp8_gemm_detail

#define DG_FP8_GEMM_INSTANTIATE(BM, BN, ROW, MC) \
  template struct deep_gemm::cuda::fp8_gemm_detail::Shape<BM, BN, ROW, MC>;
