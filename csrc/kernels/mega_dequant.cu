// Expert weights for the Mega MoE expert step: FP4 with UE8M0 scales straight
// to float64, one thread per packed byte (two columns sharing one scale).

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>

#include "kernels/mega_cuda.hpp"

namespace deep_gemm::mega_cuda {

namespace {

// e2m1: bit 3 sign, bits 1-2 exponent e, bit 0 mantissa m: {0, .5, 1, 1.5, 2, 3, 4, 6}, that is
// m / 2 when e == 0 and (2 + m) * 2^(e - 2) otherwise.  Arithmetic, not a table (which would
// live in local memory).
__device__ __forceinline__ double e2m1(unsigned code) {
  const unsigned e = (code >> 1) & 3u, m = code & 1u;
  const double magnitude = e == 0 ? 0.5 * m : 0.5 * static_cast<double>((2u + m) << (e - 1));
  return (code & 8u) ? -magnitude : magnitude;
}

__global__ void dequant_fp4_f64_kernel(const uint8_t* __restrict__ data, const uint8_t* __restrict__ sf, int64_t half_k,
                                       int64_t sf_bytes_per_row, int64_t total, double* __restrict__ out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int64_t row = idx / half_k, col = 2 * (idx % half_k);  // out[idx] pairs are (row, col), (row, col + 1)
  const unsigned byte = data[idx];
  const unsigned exponent = sf[row * sf_bytes_per_row + col / 32];
  const double scale = static_cast<double>(__int_as_float(static_cast<int>(exponent << 23)));
  // Columns col and col + 1 are one aligned 16-byte store (col is even, rows hold 2 * half_k).
  reinterpret_cast<double2*>(out)[idx] = make_double2(e2m1(byte & 0xFu) * scale, e2m1(byte >> 4) * scale);
}

}  // namespace

at::Tensor dequant_fp4_f64(const at::Tensor& data, const at::Tensor& packed_sf) {
  TORCH_CHECK(data.is_cuda() && data.dim() == 2 && data.is_contiguous() && data.scalar_type() == at::kChar,
              "dequant_fp4_f64: data must be a contiguous 2-D int8 CUDA tensor");
  const int64_t rows = data.size(0), half_k = data.size(1);
  TORCH_CHECK(packed_sf.is_contiguous() && packed_sf.scalar_type() == at::kInt && packed_sf.dim() == 2 &&
                  packed_sf.size(0) == rows && packed_sf.size(1) * 128 >= 2 * half_k,
              "dequant_fp4_f64: packed_sf must be a contiguous int32 [rows, k / 128] tensor");
  const c10::cuda::CUDAGuard guard(data.device());
  auto out = at::empty({rows, 2 * half_k}, data.options().dtype(at::kDouble));
  const int64_t total = rows * half_k;
  if (total == 0) return out;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((total + kThreads - 1) / kThreads);
  dequant_fp4_f64_kernel<<<blocks, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const uint8_t*>(data.data_ptr()), reinterpret_cast<const uint8_t*>(packed_sf.data_ptr()), half_k,
      packed_sf.size(1) * 4, total, out.data_ptr<double>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace deep_gemm::mega_cuda
