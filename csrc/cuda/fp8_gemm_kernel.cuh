#pragma once
// The sm90a block-scaled FP8 GEMM kernel (see fp8_gemm.h for the interface).
//
// Note [FP8 GEMM kernel design]
// - Persistent: a grid of at most num_sms CTAs walks the output tiles (BLOCK_M x BLOCK_N)
//   in bands of `swizzle` N-tiles, so concurrent CTAs share operand rows in L2.
// - Warp-specialised: the last warpgroup produces (its first warp), the others
//   (BLOCK_M / 64 of them, 64 rows each) consume.  Registers move from the producer to
//   the consumers with setmaxnreg.
// - Producer, per 128-wide K block: waits for a free stage, issues the TMA loads of the A
//   and B tiles (128-byte swizzle) and 4-byte cp.async copies of the block's scale factors
//   (SFA for BLOCK_M rows, SFB for the tile's one or two 128-row blocks, or per row), all
//   completing on the stage's `full` barrier.  Rows or columns past the matrix read as zero.
// - Consumer, per K block: 4 wgmma m64 x BLOCK_N x k32 into a scratch accumulator, wait,
//   release the stage, then fold the scratch into the float32 accumulator scaled by
//   SFA[row] * SFB[col block]: the scales are applied once per K block, in float32.
// - Clusters of 2 (optional): the pair works on neighbouring tiles that share A (or B);
//   each CTA loads half of the shared tile and multicasts it to both, and a stage is free
//   only when the consumers of both CTAs have released it.
// - Epilogue: bf16 without C goes through shared memory (64-byte swizzle, conflict free)
//   and a TMA store that clips at the matrix edge; float32 output, or any C, is written
//   from registers with bounds checks (C is read before D is written, so C may be D).
// Every choice above is fixed by the template arguments and the problem shape, and each
// output element is summed in one fixed order: results are bitwise reproducible.

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "cuda/sm90_primitives.cuh"
#include "cuda/sm90_wgmma.cuh"

namespace deep_gemm::cuda::fp8_gemm_detail {

constexpr int kBlockK = 128;
constexpr int kSmemLimit = 232448;  // dynamic shared memory per block on sm90

struct KernelArgs {
  int m, n, k;
  int num_k_blocks;
  int units_m, units_n;  // the scheduled grid (tiles, or tile pairs along the cluster's axis)
  int num_units;
  int swizzle;
  const float* sfa;
  int64_t sfa_mn, sfa_k;
  const float* sfb;
  int64_t sfb_mn, sfb_k;
  int sfb_rows;
  void* d;
  int64_t ldd;
  const void* c;
  int64_t ldc;
  int d_f32;
  int tma_out;
  int paired_access;  // D and C rows hold column pairs at aligned addresses (even strides and bases)
};

template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
struct Traits {
  static_assert(kBlockM == 64 || kBlockM == 128, "BLOCK_M is 64 or 128");
  static_assert(kBlockN % 8 == 0 && kBlockN >= 16 && kBlockN <= 256, "BLOCK_N is a multiple of 8 in [16, 256]");
  static_assert(kMulticast != 2 || kBlockN % 16 == 0, "sharing B needs BLOCK_N / 2 rows in 8-row groups");
  static constexpr int kMathWarpgroups = kBlockM / 64;
  static constexpr int kThreads = (kMathWarpgroups + 1) * 128;
  static constexpr int kCluster = kMulticast == 0 ? 1 : 2;
  static constexpr bool kOutViaSmem = kBlockN % 32 == 0;
  static constexpr int kABytes = kBlockM * kBlockK;
  static constexpr int kBBytes = kBlockN * kBlockK;
  static constexpr int kSfaBytes = kBlockM * 4;
  static constexpr int kSfbFloats = kSfbPerRow ? kBlockN : 4;
  static constexpr int kSfbBytes = kSfbFloats * 4;
  static constexpr int kOutBytes = kOutViaSmem ? kBlockM * kBlockN * 2 : 0;
  static constexpr int kStageBytes = kABytes + kBBytes + kSfaBytes + kSfbBytes + 16;
  static constexpr int kFitStages = (kSmemLimit - 1024 - kOutBytes) / kStageBytes;
  static constexpr int kStages = kFitStages < 16 ? kFitStages : 16;
  static_assert(kStages >= 2, "tile too large for shared memory");
  static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kOutBytes;
  // The CTA's register pool is fixed at launch (168 per thread for 384 threads, the
  // compiler's count for 256): 40 x 128 + 232 x 256 fits 168 x 384 exactly.  Asking for
  // more than the pool holds would block setmaxnreg.inc forever.
  static constexpr int kConsumerRegs = kMathWarpgroups == 2 ? 232 : 240;
  static constexpr int kProducerRegs = 40;
  // A stage is released by every consumer warp of every CTA that wrote into it.
  static constexpr int kEmptyArrivals = kMathWarpgroups * 4 * kCluster;
};

// Unit index -> tile (m block, n block) for the CTA of rank `rank` in its cluster.
template <int kMulticast>
__device__ __forceinline__ void unit_tile(const KernelArgs& a, int unit, uint32_t rank, int& m_blk, int& n_blk) {
  const int band = a.swizzle * a.units_m;
  const int g = unit / band;
  const int r = unit - g * band;
  const int first = g * a.swizzle;
  const int width = min(a.swizzle, a.units_n - first);
  const int um = r / width;
  const int un = first + (r - um * width);
  m_blk = kMulticast == 2 ? um * 2 + static_cast<int>(rank) : um;
  n_blk = kMulticast == 1 ? un * 2 + static_cast<int>(rank) : un;
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, int kMulticast>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, kSfbPerRow, kMulticast>::kThreads, 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                         const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kMulticast>;
  namespace p = deep_gemm::cuda::sm90;
  constexpr int kStages = T::kStages;

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem_a + kStages * T::kABytes;
  uint8_t* smem_out = smem_b + kStages * T::kBBytes;
  float* smem_sfa = reinterpret_cast<float*>(smem_out + T::kOutBytes);
  float* smem_sfb = smem_sfa + kStages * kBlockM;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_sfb + kStages * T::kSfbFloats);
  uint64_t* empty = full + kStages;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warpgroup = threadIdx.x / 128;
  const uint32_t rank = T::kCluster == 1 ? 0 : p::cluster_cta_rank();
  const int cluster_id = blockIdx.x / T::kCluster;
  const int num_clusters = gridDim.x / T::kCluster;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      p::mbar_init(&full[s], 1 + 32);  // the producer's expect_tx, and 32 lanes' scale copies
      p::mbar_init(&empty[s], T::kEmptyArrivals);
    }
    p::fence_mbar_init();
  }
  if constexpr (T::kCluster > 1) {
    p::cluster_sync();
  } else {
    __syncthreads();
  }

  if (warpgroup == T::kMathWarpgroups) {
    // ---------------------------------------------------------------- producer
    p::regs_decrease<T::kProducerRegs>();
    if (warp % 4 == 0) {
      if (lane == 0) {
        p::tma_prefetch_map(&tm_a);
        p::tma_prefetch_map(&tm_b);
      }
      int stage = 0;
      uint32_t phase = 0;
      for (int unit = cluster_id; unit < args.num_units; unit += num_clusters) {
        int m_blk, n_blk;
        unit_tile<kMulticast>(args, unit, rank, m_blk, n_blk);
        const int m0 = m_blk * kBlockM;
        const int n0 = n_blk * kBlockN;
        const int sfb_row0 = kSfbPerRow ? 0 : n0 / 128;
        for (int kb = 0; kb < args.num_k_blocks; ++kb) {
          p::mbar_wait(&empty[stage], phase ^ 1);
          uint8_t* sa = smem_a + stage * T::kABytes;
          uint8_t* sb = smem_b + stage * T::kBBytes;
          if (lane == 0) {
            p::mbar_arrive_expect_tx(&full[stage], T::kABytes + T::kBBytes);
            const int k0 = kb * kBlockK;
            if constexpr (kMulticast == 1) {
              constexpr int kHalf = kBlockM / 2;
              p::tma_load_2d_multicast(&tm_a, &full[stage], sa + rank * kHalf * kBlockK, k0,
                                       m0 + static_cast<int>(rank) * kHalf, 0x3);
            } else {
              p::tma_load_2d(&tm_a, &full[stage], sa, k0, m0);
            }
            if constexpr (kMulticast == 2) {
              constexpr int kHalf = kBlockN / 2;
              p::tma_load_2d_multicast(&tm_b, &full[stage], sb + rank * kHalf * kBlockK, k0,
                                       n0 + static_cast<int>(rank) * kHalf, 0x3);
            } else {
              p::tma_load_2d(&tm_b, &full[stage], sb, k0, n0);
            }
          }
          float* sfa_dst = smem_sfa + stage * kBlockM;
#pragma unroll
          for (int i = lane; i < kBlockM; i += 32) {
            const int row = m0 + i;
            const bool ok = row < args.m;
            p::cp_async_4(sfa_dst + i, args.sfa + static_cast<int64_t>(ok ? row : 0) * args.sfa_mn + kb * args.sfa_k,
                          ok);
          }
          float* sfb_dst = smem_sfb + stage * T::kSfbFloats;
          if constexpr (kSfbPerRow) {
#pragma unroll
            for (int i = lane; i < kBlockN; i += 32) {
              const int col = n0 + i;
              const bool ok = col < args.n;
              p::cp_async_4(sfb_dst + i, args.sfb + static_cast<int64_t>(ok ? col : 0) * args.sfb_mn + kb * args.sfb_k,
                            ok);
            }
          } else if (lane < 2) {
            const int row = min(sfb_row0 + lane, args.sfb_rows - 1);
            p::cp_async_4(sfb_dst + lane, args.sfb + static_cast<int64_t>(row) * args.sfb_mn + kb * args.sfb_k, true);
          }
          p::cp_async_arrive_noinc(&full[stage]);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
    __syncwarp();
  } else {
    // ---------------------------------------------------------------- consumers
    p::regs_increase<T::kConsumerRegs>();
    const int wg_warp = warp % 4;
    const int row_lo = warpgroup * 64 + wg_warp * 16 + lane / 4;  // tile-local rows row_lo, row_lo + 8
    const int col_in_group = 2 * (lane % 4);
    int stage = 0;
    uint32_t phase = 0;
    bool stores_pending = false;
    for (int unit = cluster_id; unit < args.num_units; unit += num_clusters) {
      int m_blk, n_blk;
      unit_tile<kMulticast>(args, unit, rank, m_blk, n_blk);
      const int m0 = m_blk * kBlockM;
      const int n0 = n_blk * kBlockN;
      // Columns of this tile before the next 128-wide SFB block (1D2D scales).
      const int sfb_split = 128 - n0 % 128;

      float acc[kBlockN / 2];
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.0f;

      for (int kb = 0; kb < args.num_k_blocks; ++kb) {
        p::mbar_wait(&full[stage], phase);
        const float* sfa_s = smem_sfa + stage * kBlockM;
        const float* sfb_s = smem_sfb + stage * T::kSfbFloats;
        const float sa_lo = sfa_s[row_lo];
        const float sa_hi = sfa_s[row_lo + 8];
        float sb_first = 0.0f, sb_second = 0.0f;
        float sb_cols[kSfbPerRow ? kBlockN / 4 : 1];
        if constexpr (kSfbPerRow) {
#pragma unroll
          for (int j = 0; j < kBlockN / 8; ++j) {
            const float2 v = *reinterpret_cast<const float2*>(sfb_s + 8 * j + col_in_group);
            sb_cols[2 * j] = v.x;
            sb_cols[2 * j + 1] = v.y;
          }
        } else {
          sb_first = sfb_s[0];
          sb_second = sfb_s[1];
          sb_cols[0] = 0.0f;
        }

        float part[kBlockN / 2];
        const uint64_t desc_a = p::gmma_desc_k_sw128(smem_a + stage * T::kABytes + warpgroup * 64 * kBlockK);
        const uint64_t desc_b = p::gmma_desc_k_sw128(smem_b + stage * T::kBBytes);
        p::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / 32; ++kk) {
          p::fp8_wgmma<kBlockN>(desc_a + 2 * kk, desc_b + 2 * kk, part, kk > 0);
        }
        p::wgmma_commit();
        p::wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < kBlockN / 2; ++i) p::fence_operand(part[i]);

        // Release the stage (every lane's shared-memory reads are done) to this CTA's
        // producer and, in a cluster, to the peer's, whose multicast also writes here.
        __syncwarp();
        if (lane == 0) {
          p::mbar_arrive(&empty[stage]);
          if constexpr (T::kCluster > 1) p::mbar_arrive_cluster(&empty[stage], rank ^ 1);
        }

        if constexpr (kSfbPerRow) {
#pragma unroll
          for (int j = 0; j < kBlockN / 8; ++j) {
            acc[4 * j + 0] += part[4 * j + 0] * (sa_lo * sb_cols[2 * j]);
            acc[4 * j + 1] += part[4 * j + 1] * (sa_lo * sb_cols[2 * j + 1]);
            acc[4 * j + 2] += part[4 * j + 2] * (sa_hi * sb_cols[2 * j]);
            acc[4 * j + 3] += part[4 * j + 3] * (sa_hi * sb_cols[2 * j + 1]);
          }
        } else {
          const float lo_first = sa_lo * sb_first, lo_second = sa_lo * sb_second;
          const float hi_first = sa_hi * sb_first, hi_second = sa_hi * sb_second;
#pragma unroll
          for (int j = 0; j < kBlockN / 8; ++j) {
            const bool first = 8 * j < sfb_split;
            const float lo = first ? lo_first : lo_second;
            const float hi = first ? hi_first : hi_second;
            acc[4 * j + 0] += part[4 * j + 0] * lo;
            acc[4 * j + 1] += part[4 * j + 1] * lo;
            acc[4 * j + 2] += part[4 * j + 2] * hi;
            acc[4 * j + 3] += part[4 * j + 3] * hi;
          }
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }

      // ---------------------------------------------------------------- epilogue
      const int wg_thread = threadIdx.x % 128;
      if (T::kOutViaSmem && args.tma_out) {
        if (wg_thread == 0 && stores_pending) p::tma_store_wait_read();
        p::named_barrier_sync(1 + warpgroup, 128);
        uint8_t* out = smem_out + warpgroup * 64 * kBlockN * 2;
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
          const int chunk = j / 4, unit16 = j % 4;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = wg_warp * 16 + lane / 4 + 8 * h;
            const uint32_t v = pack_bf16x2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            const int offset = chunk * 4096 + r * 64 + ((unit16 ^ ((r >> 1) & 3)) * 16) + (lane % 4) * 4;
            *reinterpret_cast<uint32_t*>(out + offset) = v;
          }
        }
        p::fence_async_shared();
        p::named_barrier_sync(1 + warpgroup, 128);
        if (wg_thread == 0 && m0 + warpgroup * 64 < args.m) {
#pragma unroll
          for (int q = 0; q < kBlockN / 32; ++q) {
            if (n0 + q * 32 < args.n) p::tma_store_2d(&tm_d, out + q * 4096, n0 + q * 32, m0 + warpgroup * 64);
          }
          p::tma_store_commit();
          stores_pending = true;
        }
      } else {
        // C first, every element of this thread, then D: the loads issue back to back, and
        // C may be D since each thread reads only what it writes.
        if (args.c != nullptr) {
#pragma unroll
          for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int row = m0 + row_lo + 8 * h;
              const int col = n0 + 8 * j + col_in_group;
              if (row >= args.m || col >= args.n) continue;
              const bool pair = col + 1 < args.n;
              const int64_t ci = static_cast<int64_t>(row) * args.ldc + col;
              float c0 = 0.0f, c1 = 0.0f;
              if (args.d_f32) {
                const float* c = static_cast<const float*>(args.c);
                if (pair && args.paired_access) {
                  const float2 cv = *reinterpret_cast<const float2*>(c + ci);
                  c0 = cv.x;
                  c1 = cv.y;
                } else {
                  c0 = c[ci];
                  c1 = pair ? c[ci + 1] : 0.0f;
                }
              } else {
                const __nv_bfloat16* c = static_cast<const __nv_bfloat16*>(args.c);
                if (pair && args.paired_access) {
                  const float2 cv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(c + ci));
                  c0 = cv.x;
                  c1 = cv.y;
                } else {
                  c0 = __bfloat162float(c[ci]);
                  c1 = pair ? __bfloat162float(c[ci + 1]) : 0.0f;
                }
              }
              acc[4 * j + 2 * h] += c0;
              acc[4 * j + 2 * h + 1] += c1;
            }
          }
        }
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = m0 + row_lo + 8 * h;
            const int col = n0 + 8 * j + col_in_group;
            if (row >= args.m || col >= args.n) continue;
            const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
            const bool pair = col + 1 < args.n;
            const int64_t di = static_cast<int64_t>(row) * args.ldd + col;
            if (args.d_f32) {
              float* d = static_cast<float*>(args.d);
              if (pair && args.paired_access) {  // 8-byte stores: a warp covers whole 32-byte sectors
                *reinterpret_cast<float2*>(d + di) = make_float2(v0, v1);
              } else {
                d[di] = v0;
                if (pair) d[di + 1] = v1;
              }
            } else {
              __nv_bfloat16* d = static_cast<__nv_bfloat16*>(args.d);
              if (pair && args.paired_access) {
                *reinterpret_cast<__nv_bfloat162*>(d + di) = __floats2bfloat162_rn(v0, v1);
              } else {
                d[di] = __float2bfloat16_rn(v0);
                if (pair) d[di + 1] = __float2bfloat16_rn(v1);
              }
            }
          }
        }
      }
    }
    if (stores_pending) p::tma_store_wait_all();
  }

  if constexpr (T::kCluster > 1) {
    // Neither CTA leaves while its peer may still multicast into it or arrive on its barriers.
    p::cluster_sync();
  }
}

}  // namespace deep_gemm::cuda::fp8_gemm_detail
