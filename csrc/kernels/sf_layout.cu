// Scale-factor layout kernels: one pass over the scales instead of a memset,
// an elementwise exponent extraction and a strided copy.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>

#include "kernels/sf_layout_cuda.hpp"

namespace deep_gemm::sf_layout_cuda {

namespace {

struct Strides {
  int64_t batch, row, col;
};

// One thread per element of the padded [B, cols, tma_mn] buffer, so writes are
// coalesced along the MN dimension the consumers read.
template <bool kPack>
__global__ void mn_major_kernel(const float* __restrict__ sf, Strides s, int64_t mn, int64_t sf_k, int64_t tma_mn,
                                int64_t cols, int64_t total, const bool* __restrict__ valid, void* __restrict__ out) {
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
        if (g < sf_k) word |= ((__float_as_uint(row[g * s.col]) >> 23) & 0xFFu) << (8 * j);
      }
    }
    static_cast<uint32_t*>(out)[idx] = word;
  } else {
    static_cast<float*>(out)[idx] = live ? row[c * s.col] : 0.0f;
  }
}

}  // namespace

void mn_major(const at::Tensor& sf, const at::Tensor& base, bool pack, const std::optional<at::Tensor>& valid_rows) {
  const int64_t total = base.numel();
  if (total == 0) return;
  const c10::cuda::CUDAGuard guard(sf.device());
  const Strides s{sf.stride(0), sf.stride(1), sf.stride(2)};
  const int64_t mn = sf.size(1), sf_k = sf.size(2), cols = base.size(1), tma_mn = base.size(2);
  const at::Tensor valid_c = valid_rows.has_value() ? valid_rows->contiguous() : at::Tensor();
  const bool* valid = valid_c.defined() ? valid_c.data_ptr<bool>() : nullptr;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned int>((total + kThreads - 1) / kThreads);
  auto stream = at::cuda::getCurrentCUDAStream();
  if (pack) {
    mn_major_kernel<true><<<blocks, kThreads, 0, stream>>>(sf.data_ptr<float>(), s, mn, sf_k, tma_mn, cols, total,
                                                           valid, base.data_ptr());
  } else {
    mn_major_kernel<false><<<blocks, kThreads, 0, stream>>>(sf.data_ptr<float>(), s, mn, sf_k, tma_mn, cols, total,
                                                            valid, base.data_ptr());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace deep_gemm::sf_layout_cuda
