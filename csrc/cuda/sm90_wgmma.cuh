#pragma once
// One warpgroup MMA m64 x N x k32 (FP8 e4m3 x e4m3, both operands K-major in shared memory) or
// m64 x N x k16 (BF16 x BF16, each operand K-major or MN-major) -> float32, through CuTe's SM90 GMMA atoms
// (cute/arch/mma_sm90_gmma*.hpp).  The accumulator is a plain float[N / 2] per thread.

#include <cstdint>
#include <cute/arch/mma_sm90_gmma.hpp>
#include <cute/arch/mma_sm90_gmma_ext.hpp>
#include <utility>

namespace deep_gemm::cuda::sm90 {

template <int kN>
struct Fp8Wgmma;

template <int kN>
struct Bf16Wgmma;  // Atom<A major, B major>

#define DG_WGMMA(N)                                                        \
  template <>                                                              \
  struct Fp8Wgmma<N> {                                                     \
    using Atom = cute::SM90::GMMA::MMA_64x##N##x32_F32E4M3E4M3_SS_TN<>;    \
  };                                                                       \
  template <>                                                              \
  struct Bf16Wgmma<N> {                                                    \
    template <cute::SM90::GMMA::Major kA, cute::SM90::GMMA::Major kB>      \
    using Atom = cute::SM90::GMMA::MMA_64x##N##x16_F32BF16BF16_SS<kA, kB>; \
  };
DG_WGMMA(16)
DG_WGMMA(24)
DG_WGMMA(32)
DG_WGMMA(40)
DG_WGMMA(48)
DG_WGMMA(56)
DG_WGMMA(64)
DG_WGMMA(72)
DG_WGMMA(80)
DG_WGMMA(96)
DG_WGMMA(112)
DG_WGMMA(128)
DG_WGMMA(136)
DG_WGMMA(144)
DG_WGMMA(160)
DG_WGMMA(176)
DG_WGMMA(192)
DG_WGMMA(208)
DG_WGMMA(224)
DG_WGMMA(256)
#undef DG_WGMMA

template <class Atom, size_t... I>
__device__ __forceinline__ void wgmma_impl(uint64_t desc_a, uint64_t desc_b, float* d, bool accumulate,
                                           std::index_sequence<I...>) {
  Atom::fma(desc_a, desc_b, d[I]..., accumulate ? cute::SM90::GMMA::ScaleOut::One : cute::SM90::GMMA::ScaleOut::Zero);
}

// d (N / 2 floats) = A(64 x 32) . B(N x 32)^T (+ d when `accumulate`).
template <int kN>
__device__ __forceinline__ void fp8_wgmma(uint64_t desc_a, uint64_t desc_b, float* d, bool accumulate) {
  wgmma_impl<typename Fp8Wgmma<kN>::Atom>(desc_a, desc_b, d, accumulate, std::make_index_sequence<kN / 2>{});
}

// d (N / 2 floats) = A(64 x 16) . B(N x 16)^T (+ d when `accumulate`), BF16 operands, each
// K-major or (kMnA, kMnB) MN-major in shared memory.
template <int kN, bool kMnA = false, bool kMnB = false>
__device__ __forceinline__ void bf16_wgmma(uint64_t desc_a, uint64_t desc_b, float* d, bool accumulate) {
  using cute::SM90::GMMA::Major;
  using Atom = typename Bf16Wgmma<kN>::template Atom<kMnA ? Major::MN : Major::K, kMnB ? Major::MN : Major::K>;
  wgmma_impl<Atom>(desc_a, desc_b, d, accumulate, std::make_index_sequence<kN / 2>{});
}

}  // namespace deep_gemm::cuda::sm90
