#pragma once
// CUDA kernels for the scale-factor layouts (csrc/kernels/sf_layout.cu).
// Declared only in CUDA builds; the layout ops call them for CUDA tensors.

#include <ATen/ATen.h>

#include <optional>

namespace deep_gemm::sf_layout_cuda {

// One pass from float32 scales `sf` [B, mn, sf_k] (any strides) into `base`, a
// contiguous [B, cols, tma_mn] buffer whose transpose(1, 2) is the MN-major,
// TMA-aligned result.  Rows mn..tma_mn are zero-filled in the same pass.
//   pack = false: cols == sf_k, float32 values copied.
//   pack = true:  cols == ceil(sf_k / 4), int32 words of 4 UE8M0 exponent bytes
//                 (byte j = K-group 4w + j); rows with valid_rows[r] == false are zero.
void mn_major(const at::Tensor& sf, const at::Tensor& base, bool pack, const std::optional<at::Tensor>& valid_rows);

}  // namespace deep_gemm::sf_layout_cuda
