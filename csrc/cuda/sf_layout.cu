// Scale-factor layout kernel: one pass over the scales instead of a memset, an elementwise
// exponent extraction and a strided copy.

#include <cstdint>

#include "cuda/sf_layout.h"

namespace deep_gemm::cuda {

namespace {

// The UE8M0 exponent byte of a float32 scale.
__device__ __forceinline__ uint32_t ue8m0_of(float x) { return (__float_as_uint(x) >> 23) & 0xFFu; }

// One thread per element of the padded [B, cols, tma_mn] buffer, so writes are coalesced
// along the MN dimension the consumers read.
template <bool kPack>
__device__ __forceinline__ void sf_mn_major_element(const float* __restrict__ sf, SfStrides s, int64_t mn, int64_t sf_k,
                                                    int64_t tma_mn, int64_t cols, int64_t total,
                                                    const bool* __restrict__ valid, void* __restrict__ out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int64_t r = idx % tma_mn;
  const int64_t c = (idx / tma_mn) % cols;
  const int64_t b = idx / (tma_mn * cols);
  const bool live = r < mn && (valid == nullptr || valid[r]);
  const float* row = sf + b * s.batch + r * s.row;
  if constexpr (kPack) {
    uint32_t word = 0;
    if (live) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t g = 4 * c + j;
        if (g < sf_k) word |= ue8m0_of(row[g * s.col]) << (8 * j);
      }
    }
    static_cast<uint32_t*>(out)[idx] = word;
  } else {
    static_cast<float*>(out)[idx] = live ? row[c * s.col] : 0.0f;
  }
}

// Two kernels, named for what profiles look for (`transpose`, `pack_fp32_into_ue8m0`).
__global__ void sf_transpose_fp32_kernel(const float* __restrict__ sf, SfStrides s, int64_t mn, int64_t sf_k,
                                         int64_t tma_mn, int64_t cols, int64_t total, const bool* __restrict__ valid,
                                         void* __restrict__ out) {
  sf_mn_major_element<false>(sf, s, mn, sf_k, tma_mn, cols, total, valid, out);
}
__global__ void sf_pack_fp32_into_ue8m0_kernel(const float* __restrict__ sf, SfStrides s, int64_t mn, int64_t sf_k,
                                               int64_t tma_mn, int64_t cols, int64_t total,
                                               const bool* __restrict__ valid, void* __restrict__ out) {
  sf_mn_major_element<true>(sf, s, mn, sf_k, tma_mn, cols, total, valid, out);
}

// Word w of column j: its group g (binary search of the groups' first words), and the 4 scale
// rows 4 (w - out_start[g]) + i of that group, the rows past the group's end as zero bytes.
__global__ void pack_fp32_into_ue8m0_k_grouped_kernel(const float* __restrict__ sf, int64_t mn, int64_t out_rows,
                                                      const KGroupedSfWords groups, uint32_t* __restrict__ out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= out_rows * mn) return;
  const int64_t w = idx / mn, j = idx % mn;
  int lo = 0, hi = groups.count;  // the last group whose first word is <= w
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (groups.out_start[mid] <= w) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  uint32_t word = 0;
  const int64_t t = w - groups.out_start[lo];
  if (groups.count > 0 && t >= 0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t blk = 4 * t + i;
      if (blk < groups.rows[lo]) word |= ue8m0_of(sf[(groups.sf_start[lo] + blk) * mn + j]) << (8 * i);
    }
  }
  out[idx] = word;
}

}  // namespace

cudaError_t sf_mn_major(const float* sf, SfStrides strides, int64_t batches, int64_t mn, int64_t sf_k, int64_t tma_mn,
                        int64_t cols, bool pack, const bool* valid, void* out, cudaStream_t stream) {
  const int64_t total = batches * cols * tma_mn;
  if (total == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned int>((total + kThreads - 1) / kThreads);
  if (pack) {
    sf_pack_fp32_into_ue8m0_kernel<<<blocks, kThreads, 0, stream>>>(sf, strides, mn, sf_k, tma_mn, cols, total, valid,
                                                                    out);
  } else {
    sf_transpose_fp32_kernel<<<blocks, kThreads, 0, stream>>>(sf, strides, mn, sf_k, tma_mn, cols, total, valid, out);
  }
  return cudaGetLastError();
}

cudaError_t k_grouped_sf_pack_ue8m0(const float* sf, int64_t mn, int64_t out_rows, const KGroupedSfWords& groups,
                                    uint32_t* out, cudaStream_t stream) {
  const int64_t total = out_rows * mn;
  if (total == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned int>((total + kThreads - 1) / kThreads);
  pack_fp32_into_ue8m0_k_grouped_kernel<<<blocks, kThreads, 0, stream>>>(sf, mn, out_rows, groups, out);
  return cudaGetLastError();
}

}  // namespace deep_gemm::cuda
