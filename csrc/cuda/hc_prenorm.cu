// The hyper-connection pre-norm GEMM: D = float32(A) rna_tf32(B)^T and the row sums of squares
// of A, split along K, on TF32 tensor cores (mma.sync m16n8k8).
//
// TMA kernel.  One CTA owns BLOCK_M rows of A and one K range (a split, or a part of one).
// Thread 0 (or, in the variants with a producer warp, one extra warp) streams [BLOCK_M x 64]
// bf16 tiles of A and the matching [N x 64] float32 slice of B (L2-resident) into a ring of
// shared-memory stages (one or two such sub-blocks each) with 128-byte-swizzled TMA loads,
// refilling a stage once all consumer warps released it.  The consumer warps, WARPS_M along M
// and 4 along K (16 K values of each sub-block apiece), read their fragments straight from the
// swizzled tiles, square A into per-row sums, round B to TF32 and issue the MMAs.  At the end
// the four K warps' results meet in shared memory and are added in a fixed order.  Rows past M
// and columns past K arrive as TMA zeros; K values outside the CTA's range inside its first and
// last tiles are masked in registers.  The variants (rows per CTA, warps, stage width, CTAs per
// SM, producer warp) are compiled side by side and picked per call by the host plan.
//
// Fragment placement.  The product is a sum over k and rows/columns are independent, so the
// MMA's logical rows, columns and k positions can be bound to any physical ones as long as A
// and B agree.  Thread (g = lane / 4, t = lane % 4) reads 4 consecutive k values, k8 step j
// taking the pair (2j, 2j + 1) as its logical columns (t, t + 4); logical row g is tile row
// 2 (g % 4) + g / 4 and logical column g of an n8 tile is B row g / 2 + 4 (g % 2).  With the
// 128-byte swizzle these choices make every fragment load free of bank conflicts.
//
// Scalar kernel: one thread per output (or sum of squares) walking its split in order; used
// only when the operands do not meet TMA's alignment.

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/hc_prenorm.h"
#include "cuda/sm90_primitives.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda {

namespace {

constexpr int kBlockK = 64;  // K values per sub-block: one 128-byte bf16 row of A
constexpr int kWarpsK = 4;  // consumer warps along K, 16 K values of each sub-block apiece
constexpr int kSmPerSm = 233472;  // shared memory of an SM
constexpr int kMaxStages = 12;

// A kernel variant: rows per CTA, consumer warps along M, 64-wide K sub-blocks per pipeline
// stage, CTAs per SM the shared memory and registers are sized for, and whether a dedicated
// producer warp issues the loads (otherwise thread 0 refills a stage one iteration after
// every warp released it).
template <int kBlockM_, int kWarpsM_, int kKSub_, int kCtasPerSm_, bool kProducer_, int kMaxNTiles_>
struct Variant {
  static constexpr int kBlockM = kBlockM_, kWarpsM = kWarpsM_, kKSub = kKSub_, kCtasPerSm = kCtasPerSm_;
  static constexpr bool kProducer = kProducer_;
  // The widest slice of n8 tiles per launch, the most whose accumulators stay in registers.
  static constexpr int kMaxNTiles = kMaxNTiles_;
  static constexpr int kMTiles = kBlockM / (16 * kWarpsM);  // m16 tiles per warp
  static constexpr int kConsumers = kWarpsM * kWarpsK;
  static constexpr int kThreads = 32 * (kConsumers + (kProducer ? 1 : 0));
  static constexpr int kStageK = kBlockK * kKSub;
  static constexpr int kSmemPerCta = kSmPerSm / kCtasPerSm - 1024;  // less the per-CTA reserve
  static_assert(kMTiles >= 1 && kMTiles * 16 * kWarpsM == kBlockM, "rows must split into m16 tiles per warp");
  static_assert(kMaxNTiles >= 1 && kMaxNTiles <= 4, "one to four n8 tiles");
};

template <class V, int kNTiles>
struct Cfg {
  static constexpr int kRowsB = 8 * kNTiles;
  static constexpr int kABytes = V::kBlockM * kBlockK * 2;  // one A sub-block
  static constexpr int kBHalfBytes = kRowsB * 128;  // 32 K values of every B row
  static constexpr int kSubBytes = kABytes + 2 * kBHalfBytes;
  static constexpr int kStageBytes = V::kKSub * kSubBytes;
  static constexpr int kRedFloats = kWarpsK * V::kBlockM * kRowsB + kWarpsK * V::kBlockM;
  static constexpr int kStages = std::min(kMaxStages, (V::kSmemPerCta - 1024 - 256) / kStageBytes);
  static constexpr int kPipeBytes = kStages * kStageBytes;
  static constexpr int kDataBytes = std::max(kPipeBytes, kRedFloats * 4);
  static constexpr int kSmemBytes = 1024 + kDataBytes + 2 * kStages * 8;
  static_assert(kABytes % 1024 == 0 && kBHalfBytes % 1024 == 0, "swizzled tiles need 1024-byte alignment");
  static_assert(kStages >= 2, "too few pipeline stages");
  static_assert(kSmemBytes <= V::kSmemPerCta, "the CTAs must fit on an SM");
};

// The variants the host can pick (DG_HC_PRENORM_CONFIG names them, kVariantNames): rows per
// CTA (m), CTAs per SM (c), two K sub-blocks per stage (k2), a producer warp (w), more
// consumer warps along M (w4).  Widest slices chosen so that no instantiation spills.
using VM128C2 = Variant<128, 2, 1, 2, false, 3>;
using VM64C2 = Variant<64, 2, 1, 2, false, 4>;
using VM128W4C1 = Variant<128, 4, 1, 1, true, 4>;
using VM64C2W = Variant<64, 2, 1, 2, true, 4>;
using VM128K2C1W = Variant<128, 2, 2, 1, true, 3>;
using VM256C1 = Variant<256, 2, 1, 1, false, 3>;
using VM128C1W = Variant<128, 2, 1, 1, true, 4>;
using VM32C4W = Variant<32, 1, 1, 4, true, 4>;
using VM16C4W = Variant<16, 1, 1, 4, true, 4>;
using VM32C4 = Variant<32, 2, 1, 4, false, 4>;
using VM16C4 = Variant<16, 1, 1, 4, false, 4>;
using VM64C1W = Variant<64, 2, 1, 1, true, 4>;
using VM64W4C1 = Variant<64, 4, 1, 1, true, 4>;

constexpr const char* kVariantNames[] = {"m128c2", "m64c2",  "m128w4c1", "m64c2w", "m128k2c1w", "m256c1", "m128c1w",
                                         "m32c4w", "m16c4w", "m32c4",    "m16c4",  "m64c1w",    "m64w4c1"};
constexpr int kNumVariants = static_cast<int>(sizeof(kVariantNames) / sizeof(kVariantNames[0]));

constexpr bool same_name(const char* x, const char* y) { return *x == *y && (*x == '\0' || same_name(x + 1, y + 1)); }

// The index of a variant by name (-1: none), for the heuristic's picks.
constexpr int variant_index(const char* name, int i = 0) {
  return i == kNumVariants ? -1 : same_name(kVariantNames[i], name) ? i : variant_index(name, i + 1);
}
constexpr int kVariantM64C2W = variant_index("m64c2w"), kVariantM32C4W = variant_index("m32c4w");
static_assert(kVariantM64C2W >= 0 && kVariantM32C4W >= 0, "the heuristic's variants are compiled");

struct HcArgs {
  int m = 0, k = 0;
  int n_valid = 0;  // columns of this launch
  int m_tiles = 0;
  int parts = 1;
  int64_t split_len = 0, part_len = 0;
  float* out = nullptr;  // out[q * out_split_stride + row * ldo + col], q = split * parts + part
  int64_t out_split_stride = 0, ldo = 0;
  float* sqr_out = nullptr;  // sqr_out[q * sqr_split_stride + row]; null: not written
  int64_t sqr_split_stride = 0;
  int cache_hints = 0;  // A's loads evict_first (read once), B's evict_last (read by every CTA)
};

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <class V, int kNTiles>
__global__ void __launch_bounds__(V::kThreads, V::kCtasPerSm)
    tf32_hc_prenorm_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                const HcArgs args) {
  using C = Cfg<V, kNTiles>;
  constexpr int kBlockM = V::kBlockM, kMTiles = V::kMTiles, kStages = C::kStages;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, so the compiler still sees shared-memory pointers (LDS and
  // STS; through an integer cast they would be generic loads and stores).
  uint8_t* smem = smem_raw + ((1024u - sm90::smem_addr(smem_raw) % 1024u) % 1024u);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + C::kDataBytes);
  uint64_t* empty = full + kStages;

  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int m_tile = static_cast<int>(blockIdx.x % static_cast<unsigned>(args.m_tiles));
  const int q = static_cast<int>(blockIdx.x / static_cast<unsigned>(args.m_tiles));
  const int split = q / args.parts, part = q % args.parts;
  const int64_t split_begin = static_cast<int64_t>(split) * args.split_len;
  const int64_t split_end = std::min<int64_t>(split_begin + args.split_len, args.k);
  const int64_t k_begin = split_begin + static_cast<int64_t>(part) * args.part_len;
  const int64_t k_end = std::min<int64_t>(k_begin + args.part_len, split_end);
  // Tiles start at k_begin rounded down to 8 values (16-byte aligned boxes); the values before
  // k_begin and from k_end on are masked in registers.
  const int64_t k_base = k_begin & ~int64_t{7};
  const int num_blocks = k_begin < k_end ? static_cast<int>((k_end - k_base + V::kStageK - 1) / V::kStageK) : 0;
  const int m0 = m_tile * kBlockM;

  uint64_t policy_a = 0, policy_b = 0;
  if (args.cache_hints) {
    policy_a = sm90::l2_policy_evict_first();
    policy_b = sm90::l2_policy_evict_last();
  }
  auto issue = [&](int blk, int st) {
    uint8_t* s = smem + st * C::kStageBytes;
    const int kc = static_cast<int>(k_base) + blk * V::kStageK;
    sm90::mbar_arrive_expect_tx(full + st, C::kStageBytes);
#pragma unroll
    for (int sub = 0; sub < V::kKSub; ++sub) {
      uint8_t* sa = s + sub * C::kSubBytes;
      uint8_t* sb = sa + C::kABytes;
      if (args.cache_hints) {
        sm90::tma_load_2d_hint(&map_a, full + st, sa, kc + sub * kBlockK, m0, policy_a);
        sm90::tma_load_2d_hint(&map_b, full + st, sb, kc + sub * kBlockK, 0, policy_b);
        sm90::tma_load_2d_hint(&map_b, full + st, sb + C::kBHalfBytes, kc + sub * kBlockK + 32, 0, policy_b);
      } else {
        sm90::tma_load_2d(&map_a, full + st, sa, kc + sub * kBlockK, m0);
        sm90::tma_load_2d(&map_b, full + st, sb, kc + sub * kBlockK, 0);
        sm90::tma_load_2d(&map_b, full + st, sb + C::kBHalfBytes, kc + sub * kBlockK + 32, 0);
      }
    }
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      sm90::mbar_init(full + i, 1);
      sm90::mbar_init(empty + i, V::kConsumers);
    }
    sm90::fence_mbar_init();
    if (num_blocks > 0) {
      sm90::tma_prefetch_map(&map_a);
      sm90::tma_prefetch_map(&map_b);
    }
    for (int blk = 0; blk < num_blocks && blk < kStages; ++blk) issue(blk, blk);
  }
  __syncthreads();

  const int wk = warp / V::kWarpsM, wm = warp % V::kWarpsM;
  const int g = lane >> 2, t = lane & 3;
  const int rho = 2 * (g & 3) + (g >> 2);  // tile row (mod 8) of logical row g
  const int sig = (g >> 1) + 4 * (g & 1);  // B row (mod 8) of logical column g
  // Byte offsets inside a sub-block; the 128-byte swizzle puts 16-byte chunk c of row r at c ^ (r % 8).
  const uint32_t a_off = static_cast<uint32_t>((wm * (kBlockM / V::kWarpsM) + rho) * 128 +
                                               (((2 * wk + (t >> 1)) ^ rho) << 4) + 8 * (t & 1));
  const uint32_t b_off =
      static_cast<uint32_t>((wk >> 1) * C::kBHalfBytes + sig * 128 + (((4 * (wk & 1) + t) ^ sig) << 4));
  const int k_thread = 16 * wk + 4 * t;  // this thread's first K value inside a sub-block

  float acc[kMTiles][kNTiles][4];
  float sq[kMTiles][2];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
    sq[i][0] = sq[i][1] = 0.0f;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
    }
  }

  if (warp < V::kConsumers) {
    int stage = 0, refill_stage = 0;
    uint32_t phase = 0, refill_phase = 0;
    for (int blk = 0; blk < num_blocks; ++blk) {
      if constexpr (!V::kProducer) {
        // Thread 0 refills the stage every warp released one iteration ago (one block of slack).
        if (threadIdx.x == 0 && blk >= 1) {
          const int next = blk - 1 + kStages;
          if (next < num_blocks) {
            sm90::mbar_wait(empty + refill_stage, refill_phase);
            issue(next, refill_stage);
          }
          if (++refill_stage == kStages) {
            refill_stage = 0;
            refill_phase ^= 1;
          }
        }
      }
      sm90::mbar_wait(full + stage, phase);
      __syncwarp();  // the lanes leave the wait apart; mma.sync needs the whole warp
      const int64_t blk_start = k_base + static_cast<int64_t>(blk) * V::kStageK;
      auto compute = [&](auto masked) {
#pragma unroll
        for (int sub = 0; sub < V::kKSub; ++sub) {
          // This thread's K values 0..3 are in range for lo <= x < hi; the rest are zeroed (only
          // stages that reach outside [k_begin, k_end) are masked).
          const int64_t first = blk_start + static_cast<int64_t>(sub) * kBlockK + k_thread;
          bool v0 = true, v1 = true, v2 = true, v3 = true;
          uint32_t mask_x = 0xFFFFFFFFu, mask_y = 0xFFFFFFFFu;
          if constexpr (decltype(masked)::value) {
            const int lo = static_cast<int>(std::min<int64_t>(std::max<int64_t>(k_begin - first, 0), 4));
            const int hi = static_cast<int>(std::min<int64_t>(std::max<int64_t>(k_end - first, 0), 4));
            v0 = lo <= 0 && hi > 0;
            v1 = lo <= 1 && hi > 1;
            v2 = lo <= 2 && hi > 2;
            v3 = lo <= 3 && hi > 3;
            mask_x = (v0 ? 0x0000FFFFu : 0u) | (v1 ? 0xFFFF0000u : 0u);
            mask_y = (v2 ? 0x0000FFFFu : 0u) | (v3 ? 0xFFFF0000u : 0u);
          }
          const uint8_t* sa = smem + stage * C::kStageBytes + sub * C::kSubBytes;
          const uint8_t* sb = sa + C::kABytes;

          uint32_t bf[kNTiles][4];
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) {
            const float4 v = *reinterpret_cast<const float4*>(sb + b_off + j * 1024);
            bf[j][0] = v0 ? to_tf32(v.x) : 0u;
            bf[j][1] = v1 ? to_tf32(v.y) : 0u;
            bf[j][2] = v2 ? to_tf32(v.z) : 0u;
            bf[j][3] = v3 ? to_tf32(v.w) : 0u;
          }
#pragma unroll
          for (int i = 0; i < kMTiles; ++i) {
            uint2 lo2 = *reinterpret_cast<const uint2*>(sa + a_off + (16 * i) * 128);
            uint2 hi2 = *reinterpret_cast<const uint2*>(sa + a_off + (16 * i + 8) * 128);
            lo2.x &= mask_x;
            lo2.y &= mask_y;
            hi2.x &= mask_x;
            hi2.y &= mask_y;
            // bf16 -> float32 (and TF32, exactly): the 16 bits moved to the top.
            const uint32_t l0 = lo2.x << 16, l1 = lo2.x & 0xFFFF0000u, l2 = lo2.y << 16, l3 = lo2.y & 0xFFFF0000u;
            const uint32_t h0 = hi2.x << 16, h1 = hi2.x & 0xFFFF0000u, h2 = hi2.y << 16, h3 = hi2.y & 0xFFFF0000u;
            sq[i][0] = fmaf(__uint_as_float(l0), __uint_as_float(l0), sq[i][0]);
            sq[i][0] = fmaf(__uint_as_float(l1), __uint_as_float(l1), sq[i][0]);
            sq[i][0] = fmaf(__uint_as_float(l2), __uint_as_float(l2), sq[i][0]);
            sq[i][0] = fmaf(__uint_as_float(l3), __uint_as_float(l3), sq[i][0]);
            sq[i][1] = fmaf(__uint_as_float(h0), __uint_as_float(h0), sq[i][1]);
            sq[i][1] = fmaf(__uint_as_float(h1), __uint_as_float(h1), sq[i][1]);
            sq[i][1] = fmaf(__uint_as_float(h2), __uint_as_float(h2), sq[i][1]);
            sq[i][1] = fmaf(__uint_as_float(h3), __uint_as_float(h3), sq[i][1]);
#pragma unroll
            for (int j = 0; j < kNTiles; ++j) {
              mma_tf32(acc[i][j], l0, h0, l1, h1, bf[j][0], bf[j][1]);
              mma_tf32(acc[i][j], l2, h2, l3, h3, bf[j][2], bf[j][3]);
            }
          }
        }
      };
      if (blk_start >= k_begin && blk_start + V::kStageK <= k_end) {
        compute(std::false_type{});
      } else {
        compute(std::true_type{});
      }
      __syncwarp();
      if (lane == 0) sm90::mbar_arrive(empty + stage);
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }

    // Each row's sum of squares over the quad's K values (same value in all four lanes).
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float v = sq[i][h];
        v += __shfl_xor_sync(0xFFFFFFFFu, v, 1);
        v += __shfl_xor_sync(0xFFFFFFFFu, v, 2);
        sq[i][h] = v;
      }
    }
  } else {
    // The producer warp: block blk goes to stage blk % kStages once its previous use is released.
    if (lane == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int blk = kStages; blk < num_blocks; ++blk) {
        sm90::mbar_wait(empty + stage, phase);
        issue(blk, stage);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    __syncwarp();
  }

  // A reduce kernel launched as a programmatic dependent may start now; it still waits for
  // this grid to finish (griddepcontrol.wait) before it reads the partials.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  // The four K warps' partial tiles meet in the stage memory, idle once every warp is here
  // (every load issued was waited for by the consumers).
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);  // [kWarpsK][kBlockM][kRowsB]
  float* red_sq = red + kWarpsK * kBlockM * C::kRowsB;  // [kWarpsK][kBlockM]
  if (warp < V::kConsumers) {
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
      const int r0 = wm * (kBlockM / V::kWarpsM) + 16 * i + rho;
      float* row_lo = red + (wk * kBlockM + r0) * C::kRowsB;
      float* row_hi = row_lo + 8 * C::kRowsB;
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) {
        // Logical columns 2t and 2t + 1 are B rows t and t + 4 of the n8 tile.
        row_lo[8 * j + t] = acc[i][j][0];
        row_lo[8 * j + t + 4] = acc[i][j][1];
        row_hi[8 * j + t] = acc[i][j][2];
        row_hi[8 * j + t + 4] = acc[i][j][3];
      }
      if (t == 0) {
        red_sq[wk * kBlockM + r0] = sq[i][0];
        red_sq[wk * kBlockM + r0 + 8] = sq[i][1];
      }
    }
  }
  __syncthreads();

  const int rows = std::min(kBlockM, args.m - m0);
  const int cols = args.n_valid;
  float* out = args.out + static_cast<int64_t>(q) * args.out_split_stride + static_cast<int64_t>(m0) * args.ldo;
  for (int e = static_cast<int>(threadIdx.x); e < rows * cols; e += V::kThreads) {
    const int r = e / cols, c = e - r * cols;
    float v = red[r * C::kRowsB + c];
#pragma unroll
    for (int w = 1; w < kWarpsK; ++w) v += red[(w * kBlockM + r) * C::kRowsB + c];
    out[static_cast<int64_t>(r) * args.ldo + c] = v;
  }
  if (args.sqr_out != nullptr) {
    float* sqr_out = args.sqr_out + static_cast<int64_t>(q) * args.sqr_split_stride + m0;
    for (int r = static_cast<int>(threadIdx.x); r < rows; r += V::kThreads) {
      float v = red_sq[r];
#pragma unroll
      for (int w = 1; w < kWarpsK; ++w) v += red_sq[w * kBlockM + r];
      sqr_out[r] = v;
    }
  }
}

// d[s] = sum over p in order of part[s * parts + p]; likewise sqr_sum.
__global__ void hc_prenorm_split_k_reduce_kernel(const float* __restrict__ part_d, const float* __restrict__ part_sq,
                                                 int64_t parts, int64_t m, int64_t n, int64_t splits,
                                                 float* __restrict__ d, float* __restrict__ sqr_sum) {
  asm volatile("griddepcontrol.wait;" ::: "memory");  // a no-op unless launched as a dependent
  const int64_t per_split_d = m * n, total_d = splits * per_split_d, total = total_d + splits * m;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (idx < total_d) {
      const int64_t s = idx / per_split_d, rem = idx - s * per_split_d;
      const float* src = part_d + s * parts * per_split_d + rem;
      float v = src[0];
      for (int64_t p = 1; p < parts; ++p) v += src[p * per_split_d];
      d[idx] = v;
    } else {
      const int64_t j = idx - total_d, s = j / m, rem = j - s * m;
      const float* src = part_sq + s * parts * m + rem;
      float v = src[0];
      for (int64_t p = 1; p < parts; ++p) v += src[p * m];
      sqr_sum[j] = v;
    }
  }
}

__device__ __forceinline__ float bf16_bits_to_float(uint16_t x) {
  return __uint_as_float(static_cast<uint32_t>(x) << 16);
}

// Any strides: one thread per d element (col < n) or per sum of squares (col == n).
__global__ void tf32_hc_prenorm_gemm_scalar_kernel(const uint16_t* __restrict__ a, int64_t lda,
                                                   const float* __restrict__ b, int64_t ldb, int64_t m, int64_t n,
                                                   int64_t k, int64_t splits, int64_t split_len, float* __restrict__ d,
                                                   float* __restrict__ sqr_sum) {
  const int64_t total = splits * m * (n + 1);
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t s = idx / (m * (n + 1)), rem = idx - s * m * (n + 1);
    const int64_t row = rem / (n + 1), col = rem - row * (n + 1);
    const int64_t k0 = s * split_len, k1 = std::min(k0 + split_len, k);
    const uint16_t* a_row = a + row * lda;
    float acc = 0.0f;
    if (col < n) {
      const float* b_row = b + col * ldb;
      for (int64_t kk = k0; kk < k1; ++kk) {
        acc = fmaf(bf16_bits_to_float(a_row[kk]), __uint_as_float(to_tf32(b_row[kk])), acc);
      }
      d[(s * m + row) * n + col] = acc;
    } else {
      for (int64_t kk = k0; kk < k1; ++kk) {
        const float x = bf16_bits_to_float(a_row[kk]);
        acc = fmaf(x, x, acc);
      }
      sqr_sum[s * m + row] = acc;
    }
  }
}

template <class V, int kNTiles>
cudaError_t launch_tma(const CUtensorMap& map_a, const CUtensorMap& map_b, const HcArgs& args, unsigned grid,
                       cudaStream_t stream) {
  using C = Cfg<V, kNTiles>;
  auto* kernel = &tf32_hc_prenorm_gemm_kernel<V, kNTiles>;
  // The shared-memory opt-in, once per device.
  constexpr int kMaxDevices = 64;
  static std::atomic<bool> opted_in[kMaxDevices];
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  if (device >= kMaxDevices || !opted_in[device].load(std::memory_order_acquire)) {
    status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
    if (status != cudaSuccess) return status;
    if (device < kMaxDevices) opted_in[device].store(true, std::memory_order_release);
  }
  kernel<<<grid, V::kThreads, C::kSmemBytes, stream>>>(map_a, map_b, args);
  return cudaGetLastError();
}

template <class V>
cudaError_t launch_tma_n(int n_tiles, const CUtensorMap& map_a, const CUtensorMap& map_b, const HcArgs& args,
                         unsigned grid, cudaStream_t stream) {
  switch (n_tiles) {
    case 1:
      return launch_tma<V, 1>(map_a, map_b, args, grid, stream);
    case 2:
      if constexpr (V::kMaxNTiles >= 2) return launch_tma<V, 2>(map_a, map_b, args, grid, stream);
      break;
    case 3:
      if constexpr (V::kMaxNTiles >= 3) return launch_tma<V, 3>(map_a, map_b, args, grid, stream);
      break;
    case 4:
      if constexpr (V::kMaxNTiles >= 4) return launch_tma<V, 4>(map_a, map_b, args, grid, stream);
      break;
    default:
      break;
  }
  return cudaErrorInvalidValue;
}

struct VariantInfo {
  int block_m, stage_k, ctas_per_sm, max_n_tiles;
  cudaError_t (*launch)(int, const CUtensorMap&, const CUtensorMap&, const HcArgs&, unsigned, cudaStream_t);
};

template <class V>
constexpr VariantInfo info() {
  return {V::kBlockM, V::kStageK, V::kCtasPerSm, V::kMaxNTiles, &launch_tma_n<V>};
}

// In the order of kVariantNames.
constexpr VariantInfo kVariants[] = {info<VM128C2>(),    info<VM64C2>(),  info<VM128W4C1>(), info<VM64C2W>(),
                                     info<VM128K2C1W>(), info<VM256C1>(), info<VM128C1W>(),  info<VM32C4W>(),
                                     info<VM16C4W>(),    info<VM32C4>(),  info<VM16C4>(),    info<VM64C1W>(),
                                     info<VM64W4C1>()};
static_assert(sizeof(kVariants) / sizeof(kVariants[0]) == kNumVariants, "one entry per variant name");

int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const char* hc_prenorm_variant_names() {
  return "default, m128c2, m64c2, m128w4c1, m64c2w, m128k2c1w, m256c1, m128c1w, m32c4w, m16c4w, m32c4, m16c4, m64c1w, "
         "m64w4c1";
}

HcPrenormConfig hc_prenorm_parse_config(const char* text) {
  HcPrenormConfig config;
  if (text == nullptr || *text == '\0') return config;
  const std::string str(text);
  const size_t colon = str.find(':');
  const std::string name = str.substr(0, colon);
  if (name != "default") {
    config.variant = -2;
    for (int i = 0; i < kNumVariants; ++i) {
      if (name == kVariantNames[i]) config.variant = i;
    }
    if (config.variant < 0) config.valid = false;
  } else {
    config.variant = -1;
  }
  // Options ":p<fill>" and ":b<blocks>" (non-negative decimal numbers) and ":l".
  size_t pos = colon;
  while (config.valid && pos != std::string::npos) {
    const size_t next = str.find(':', pos + 1);
    const std::string opt = str.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (opt == "l" || opt == "h" || opt == "u") {
      if (opt == "l") config.early_reduce = true;
      if (opt == "h") config.cache_hints = true;
      if (opt == "u") config.cache_hints = false;
      pos = next;
      continue;
    }
    if (opt.size() < 2 || opt.size() > 6 || (opt[0] != 'p' && opt[0] != 'b')) {
      config.valid = false;
      break;
    }
    int value = 0;
    for (size_t i = 1; i < opt.size(); ++i) {
      if (opt[i] < '0' || opt[i] > '9') {
        config.valid = false;
        break;
      }
      value = 10 * value + (opt[i] - '0');
    }
    if (opt[0] == 'p') {
      config.fill = value;
    } else if (value >= 1) {
      config.min_part_blocks = value;
    } else {
      config.valid = false;
    }
    pos = next;
  }
  return config;
}

HcPrenormPlan hc_prenorm_plan(const HcPrenormProblem& p, const HcPrenormConfig& config) {
  HcPrenormPlan plan;
  const bool aligned = reinterpret_cast<uintptr_t>(p.a) % 16 == 0 && reinterpret_cast<uintptr_t>(p.b) % 16 == 0 &&
                       p.lda % 8 == 0 && p.ldb % 4 == 0 && p.lda >= p.k && p.ldb >= p.k && p.lda < (int64_t{1} << 38) &&
                       p.ldb < (int64_t{1} << 37);
  const bool small = p.m < INT32_MAX && p.k < INT32_MAX - 4 * kBlockK && p.splits < INT32_MAX;
  if (!aligned || !small) return plan;  // the scalar kernel

  const int num_sms = std::max(1, p.num_sms);
  // The heuristic (H200 sweep, benchmarks/gpu_hc_prenorm.py --sweep): where 64-row tiles make one
  // wave that fills at least 90% of the SMs (8192 rows without splits: 128 CTAs on 132 SMs), m64c2w
  // with whole splits per CTA (41.1 us against m32c4w's 46.3 with K parts); otherwise 32-row tiles
  // with a producer warp, 4 CTAs per SM (m32c4w), the best or within 4% of the best elsewhere.
  const int64_t ctas64 = ceil_div64(p.m, 64) * p.splits;
  const bool one_wave64 = ctas64 <= num_sms && 10 * ctas64 >= 9 * int64_t{num_sms};
  const bool heuristic = config.variant < 0 || config.variant >= kNumVariants;
  const int variant = heuristic ? (one_wave64 ? kVariantM64C2W : kVariantM32C4W) : config.variant;
  const VariantInfo& v = kVariants[variant];
  plan.tma = true;
  plan.variant = variant;
  plan.block_m = v.block_m;
  const int64_t m_tiles = ceil_div64(p.m, plan.block_m);
  const int64_t split_len = ceil_div64(p.k, p.splits);
  const int64_t blocks = ceil_div64(split_len, kBlockK);
  const int64_t ctas = m_tiles * p.splits;
  const int64_t fill = config.fill >= 0 ? config.fill : (heuristic && one_wave64 ? 0 : v.ctas_per_sm);
  const int64_t min_blocks = std::max(1, config.min_part_blocks);
  // Too few CTAs to fill the SMs and long K ranges: cut each split into parts of >= min_blocks
  // 64-wide blocks (whole pipeline stages).
  if (fill > 0 && 2 * ctas < fill * num_sms && blocks > 2 * min_blocks) {
    const int64_t want = std::max<int64_t>(1, fill * num_sms / ctas);
    const int64_t parts = std::min(want, ceil_div64(blocks, min_blocks));
    const int64_t stage_blocks = v.stage_k / kBlockK;
    const int64_t part_len = ceil_div64(ceil_div64(blocks, parts), stage_blocks) * stage_blocks * kBlockK;
    plan.parts = ceil_div64(split_len, part_len);
    plan.part_len = part_len;
  }
  plan.early_reduce = config.early_reduce;
  plan.cache_hints = config.cache_hints && p.n <= 8 * v.max_n_tiles;
  if (plan.parts > 1) {
    plan.workspace_floats = p.splits * plan.parts * p.m * (p.n + 1);
  } else {
    plan.parts = 1;
    plan.part_len = split_len;
  }
  if (m_tiles * p.splits * plan.parts > INT32_MAX) plan = HcPrenormPlan{};
  return plan;
}

cudaError_t tf32_hc_prenorm_gemm(const HcPrenormProblem& p, const HcPrenormPlan& plan, float* workspace,
                                 cudaStream_t stream) {
  if (p.m == 0) return cudaSuccess;
  if (p.n <= 0 || p.k <= 0 || p.splits <= 0) return cudaErrorInvalidValue;
  const int64_t split_len = ceil_div64(p.k, p.splits);

  if (!plan.tma) {
    const int64_t total = p.splits * p.m * (p.n + 1);
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div64(total, 256), 65536));
    tf32_hc_prenorm_gemm_scalar_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint16_t*>(p.a), p.lda, p.b, p.ldb,
                                                                   p.m, p.n, p.k, p.splits, split_len, p.d, p.sqr_sum);
    return cudaGetLastError();
  }

  if (plan.variant < 0 || plan.variant >= kNumVariants) return cudaErrorInvalidValue;
  const VariantInfo& v = kVariants[plan.variant];
  const bool staged = plan.parts > 1;
  if (staged && workspace == nullptr) return cudaErrorInvalidValue;
  float* part_d = workspace;
  float* part_sq = staged ? workspace + p.splits * plan.parts * p.m * p.n : nullptr;

  CUtensorMap map_a{};
  if (!make_tensor_map_2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p.a, static_cast<uint64_t>(p.k),
                          static_cast<uint64_t>(p.m), p.lda, kBlockK, static_cast<uint32_t>(plan.block_m),
                          CU_TENSOR_MAP_SWIZZLE_128B)) {
    return cudaErrorInvalidValue;
  }

  HcArgs args;
  args.m = static_cast<int>(p.m);
  args.k = static_cast<int>(p.k);
  args.m_tiles = static_cast<int>(ceil_div64(p.m, plan.block_m));
  args.parts = static_cast<int>(plan.parts);
  args.split_len = split_len;
  args.part_len = plan.part_len;
  args.out_split_stride = p.m * p.n;
  args.ldo = p.n;
  args.sqr_split_stride = p.m;
  args.cache_hints = plan.cache_hints ? 1 : 0;
  const auto grid = static_cast<unsigned>(args.m_tiles * p.splits * plan.parts);

  // N beyond the variant's widest slice: one launch per slice of B, the first also writing sqr_sum.
  const int64_t slice = 8 * v.max_n_tiles;
  for (int64_t n0 = 0; n0 < p.n; n0 += slice) {
    const int64_t nn = std::min<int64_t>(slice, p.n - n0);
    const int n_tiles = static_cast<int>(ceil_div64(nn, 8));
    CUtensorMap map_b{};
    if (!make_tensor_map_2d(&map_b, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.b + n0 * p.ldb, static_cast<uint64_t>(p.k),
                            static_cast<uint64_t>(nn), p.ldb, 32, static_cast<uint32_t>(8 * n_tiles),
                            CU_TENSOR_MAP_SWIZZLE_128B)) {
      return cudaErrorInvalidValue;
    }
    args.n_valid = static_cast<int>(nn);
    args.out = (staged ? part_d : p.d) + n0;
    args.sqr_out = n0 == 0 ? (staged ? part_sq : p.sqr_sum) : nullptr;
    const cudaError_t status = v.launch(n_tiles, map_a, map_b, args, grid, stream);
    if (status != cudaSuccess) return status;
  }

  if (staged) {
    const int64_t total = p.splits * p.m * (p.n + 1);
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div64(total, 256), 65536));
    if (!plan.early_reduce) {
      hc_prenorm_split_k_reduce_kernel<<<blocks, 256, 0, stream>>>(part_d, part_sq, plan.parts, p.m, p.n, p.splits, p.d,
                                                                   p.sqr_sum);
      return cudaGetLastError();
    }
    // Launched as a programmatic dependent: it is scheduled while the last launch finishes.
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(256);
    config.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, hc_prenorm_split_k_reduce_kernel, static_cast<const float*>(part_d),
                              static_cast<const float*>(part_sq), plan.parts, p.m, p.n, p.splits, p.d, p.sqr_sum);
  }
  return cudaSuccess;
}

}  // namespace deep_gemm::cuda
