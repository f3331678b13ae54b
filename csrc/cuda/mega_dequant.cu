// Expert weights for the Mega MoE expert step: FP4 with UE8M0 scales straight to float64,
// one thread per packed byte (two columns sharing one scale).

#include <cstdint>

#include "cuda/mega_dequant.h"

namespace deep_gemm::cuda {

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

cudaError_t dequant_fp4_f64(const uint8_t* data, const uint8_t* sf, int64_t rows, int64_t half_k,
                            int64_t sf_bytes_per_row, double* out, cudaStream_t stream) {
  const int64_t total = rows * half_k;
  if (total == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((total + kThreads - 1) / kThreads);
  dequant_fp4_f64_kernel<<<blocks, kThreads, 0, stream>>>(data, sf, half_k, sf_bytes_per_row, total, out);
  return cudaGetLastError();
}

}  // namespace deep_gemm::cuda
