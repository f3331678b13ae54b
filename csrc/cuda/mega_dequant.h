#pragma once
// The Mega MoE expert weights' one-pass dequantisation (mega_dequant.cu): FP4 e2m1 data
// [rows, k / 2] (low nibble = even column) with packed UE8M0 scales (one exponent byte per
// 32 columns, `sf_bytes_per_row` bytes a row), both contiguous -> float64 [rows, k],
// value * 2^(byte - 127); signed zeros included.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace deep_gemm::cuda {

cudaError_t dequant_fp4_f64(const uint8_t* data, const uint8_t* sf, int64_t rows, int64_t half_k,
                            int64_t sf_bytes_per_row, double* out, cudaStream_t stream);

}  // namespace deep_gemm::cuda
