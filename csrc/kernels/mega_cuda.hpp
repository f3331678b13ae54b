#pragma once
// CUDA kernels of the Mega MoE expert step (csrc/kernels/mega_dequant.cu).
// Declared only in CUDA builds.

#include <ATen/ATen.h>

namespace deep_gemm::mega_cuda {

// FP4 e2m1 data [rows, k / 2] (int8, low nibble = even column) with packed
// UE8M0 scales [rows, k / 128] (int32, one exponent byte per 32 columns), both
// contiguous -> float64 [rows, k], value * 2^(byte - 127), in one pass.  The
// same values as quant::unpack_fp4 times quant::unpack_ue8m0 (signed zeros
// included).
at::Tensor dequant_fp4_f64(const at::Tensor& data, const at::Tensor& packed_sf);

}  // namespace deep_gemm::mega_cuda
