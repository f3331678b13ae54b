#pragma once
// Scale-factor layout kernel (sf_layout.cu): float32 scales [batches, mn, sf_k] with any
// strides -> a contiguous [batches, cols, tma_mn] buffer, whose transpose(1, 2) is the
// MN-major, TMA-aligned layout.  Rows mn..tma_mn are zero-filled in the same pass.
//   pack = false: cols == sf_k, the float32 values copied;
//   pack = true:  cols == ceil(sf_k / 4), int32 words of 4 UE8M0 exponent bytes (byte j =
//                 K group 4w + j); rows with valid[r] == false (when `valid` is given) are zero.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace deep_gemm::cuda {

struct SfStrides {
  int64_t batch, row, col;
};

cudaError_t sf_mn_major(const float* sf, SfStrides strides, int64_t batches, int64_t mn, int64_t sf_k, int64_t tma_mn,
                        int64_t cols, bool pack, const bool* valid, void* out, cudaStream_t stream);

}  // namespace deep_gemm::cuda
