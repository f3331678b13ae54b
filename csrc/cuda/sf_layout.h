#pragma once
// Scale-factor layout kernels (sf_layout.cu).  sf_mn_major: float32 scales [batches, mn, sf_k] with any
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

// K-grouped packing: sf [sum_g rows_g, mn] float32 (group g's scale rows from sf_start[g]) ->
// out [out_rows, mn] int32 words, group g's ceil(rows_g / 4) words from out_start[g] (byte i of
// word t: row 4t + i, zero past the group's rows); words of no group are zero.
constexpr int kMaxSfGroups = 128;
struct KGroupedSfWords {
  int count;
  int64_t out_start[kMaxSfGroups];
  int64_t sf_start[kMaxSfGroups];
  int64_t rows[kMaxSfGroups];
};

cudaError_t k_grouped_sf_pack_ue8m0(const float* sf, int64_t mn, int64_t out_rows, const KGroupedSfWords& groups,
                                    uint32_t* out, cudaStream_t stream);

}  // namespace deep_gemm::cuda
