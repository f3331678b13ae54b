// The hyper-connection pre-norm GEMM: D = float32(A) rna_tf32(B)^T and the row sums of squares
// of A, split along K, on TF32 tensor cores (mma.sync m16n8k8).
//
// TMA kernel.  One CTA owns BLOCK_M rows of A and one K range (a split, or a part of one).
// Thread 0 streams [BLOCK_M x 64] bf16 tiles of A and the matching [N x 64] float32 slice of
// B (L2-resident) into a ring of shared-memory stages with 128-byte-swizzled TMA loads,
// refilling each stage one iteration after all warps released it.  The eight warps, 2 along
// M and 4 along K (16 K values each per stage), read their fragments straight from the
// swizzled tiles, square A into per-row sums, round B to TF32 and issue the MMAs.  At the
// end the four K warps' results meet in shared memory and are added in a fixed order.  Rows
// past M and columns past K arrive as TMA zeros; K values outside the CTA's range inside its
// first and last tiles are masked in registers.
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

#include "cuda/hc_prenorm.h"
#include "cuda/sm90_primitives.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda {

namespace {

constexpr int kBlockK = 64;  // K values per stage: one 128-byte bf16 row of A
constexpr int kWarpsM = 2, kWarpsK = 4;
constexpr int kThreads = kWarpsM * kWarpsK * 32;
constexpr int kMaxNTile = 32;  // columns per launch; wider N loops over 32-column slices
constexpr int kSmemPerCta = 233472 / 2 - 1024;  // two CTAs per SM, less the per-CTA reserve

template <int kBlockM, int kNTiles>
struct Cfg {
  static constexpr int kMTiles = kBlockM / (16 * kWarpsM);  // m16 tiles per warp
  static constexpr int kRowsB = 8 * kNTiles;
  static constexpr int kABytes = kBlockM * kBlockK * 2;
  static constexpr int kBHalfBytes = kRowsB * 128;  // 32 K values of every B row
  static constexpr int kStageBytes = kABytes + 2 * kBHalfBytes;
  static constexpr int kRedFloats = kWarpsK * kBlockM * kRowsB + kWarpsK * kBlockM;
  static constexpr int kStages = std::min(8, (kSmemPerCta - 1024 - 256) / kStageBytes);
  static constexpr int kPipeBytes = kStages * kStageBytes;
  static constexpr int kDataBytes = std::max(kPipeBytes, kRedFloats * 4);
  static constexpr int kSmemBytes = 1024 + kDataBytes + 2 * kStages * 8;
  static_assert(kABytes % 1024 == 0 && kBHalfBytes % 1024 == 0, "swizzled tiles need 1024-byte alignment");
  static_assert(kStages >= 3, "too few pipeline stages");
  static_assert(kSmemBytes <= kSmemPerCta, "two CTAs must fit on an SM");
};

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

template <int kBlockM, int kNTiles>
__global__ void __launch_bounds__(kThreads, 2)
    tf32_hc_prenorm_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                const HcArgs args) {
  using C = Cfg<kBlockM, kNTiles>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + C::kDataBytes);
  uint64_t* empty = full + C::kStages;

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
  const int num_blocks = k_begin < k_end ? static_cast<int>((k_end - k_base + kBlockK - 1) / kBlockK) : 0;
  const int m0 = m_tile * kBlockM;

  auto issue = [&](int blk, int st) {
    uint8_t* sa = smem + st * C::kStageBytes;
    uint8_t* sb = sa + C::kABytes;
    const int kc = static_cast<int>(k_base) + blk * kBlockK;
    sm90::mbar_arrive_expect_tx(full + st, C::kStageBytes);
    sm90::tma_load_2d(&map_a, full + st, sa, kc, m0);
    sm90::tma_load_2d(&map_b, full + st, sb, kc, 0);
    sm90::tma_load_2d(&map_b, full + st, sb + C::kBHalfBytes, kc + 32, 0);
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < C::kStages; ++i) {
      sm90::mbar_init(full + i, 1);
      sm90::mbar_init(empty + i, kWarpsM * kWarpsK);
    }
    sm90::fence_mbar_init();
    if (num_blocks > 0) {
      sm90::tma_prefetch_map(&map_a);
      sm90::tma_prefetch_map(&map_b);
    }
    for (int blk = 0; blk < num_blocks && blk < C::kStages; ++blk) issue(blk, blk);
  }
  __syncthreads();

  const int wk = warp >> 1, wm = warp & 1;
  const int g = lane >> 2, t = lane & 3;
  const int rho = 2 * (g & 3) + (g >> 2);  // tile row (mod 8) of logical row g
  const int sig = (g >> 1) + 4 * (g & 1);  // B row (mod 8) of logical column g
  // Byte offsets inside a stage; the 128-byte swizzle puts 16-byte chunk c of row r at c ^ (r % 8).
  const uint32_t a_off =
      static_cast<uint32_t>((wm * (kBlockM / 2) + rho) * 128 + (((2 * wk + (t >> 1)) ^ rho) << 4) + 8 * (t & 1));
  const uint32_t b_off =
      static_cast<uint32_t>((wk >> 1) * C::kBHalfBytes + sig * 128 + (((4 * (wk & 1) + t) ^ sig) << 4));
  const int k_thread = 16 * wk + 4 * t;  // this thread's first K value inside a stage

  float acc[C::kMTiles][kNTiles][4];
  float sq[C::kMTiles][2];
#pragma unroll
  for (int i = 0; i < C::kMTiles; ++i) {
    sq[i][0] = sq[i][1] = 0.0f;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
    }
  }

  int stage = 0, refill_stage = 0;
  uint32_t phase = 0, refill_phase = 0;
  for (int blk = 0; blk < num_blocks; ++blk) {
    // Thread 0 refills the stage every warp released one iteration ago (one block of slack).
    if (threadIdx.x == 0 && blk >= 1) {
      const int next = blk - 1 + C::kStages;
      if (next < num_blocks) {
        sm90::mbar_wait(empty + refill_stage, refill_phase);
        issue(next, refill_stage);
      }
      if (++refill_stage == C::kStages) {
        refill_stage = 0;
        refill_phase ^= 1;
      }
    }
    // This thread's K values q = 0..3 are in range for lo <= q < hi; the rest are zeroed.
    const int64_t first = k_base + static_cast<int64_t>(blk) * kBlockK + k_thread;
    const int lo = static_cast<int>(std::min<int64_t>(std::max<int64_t>(k_begin - first, 0), 4));
    const int hi = static_cast<int>(std::min<int64_t>(std::max<int64_t>(k_end - first, 0), 4));
    const bool v0 = lo <= 0 && hi > 0, v1 = lo <= 1 && hi > 1, v2 = lo <= 2 && hi > 2, v3 = lo <= 3 && hi > 3;
    const uint32_t mask_x = (v0 ? 0x0000FFFFu : 0u) | (v1 ? 0xFFFF0000u : 0u);
    const uint32_t mask_y = (v2 ? 0x0000FFFFu : 0u) | (v3 ? 0xFFFF0000u : 0u);

    sm90::mbar_wait(full + stage, phase);
    __syncwarp();  // the lanes leave the wait apart; mma.sync needs the whole warp
    const uint8_t* sa = smem + stage * C::kStageBytes;
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
    for (int i = 0; i < C::kMTiles; ++i) {
      uint2 lo = *reinterpret_cast<const uint2*>(sa + a_off + (16 * i) * 128);
      uint2 hi = *reinterpret_cast<const uint2*>(sa + a_off + (16 * i + 8) * 128);
      lo.x &= mask_x;
      lo.y &= mask_y;
      hi.x &= mask_x;
      hi.y &= mask_y;
      // bf16 -> float32 (and TF32, exactly): the 16 bits moved to the top.
      const uint32_t l0 = lo.x << 16, l1 = lo.x & 0xFFFF0000u, l2 = lo.y << 16, l3 = lo.y & 0xFFFF0000u;
      const uint32_t h0 = hi.x << 16, h1 = hi.x & 0xFFFF0000u, h2 = hi.y << 16, h3 = hi.y & 0xFFFF0000u;
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
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(empty + stage);
    if (++stage == C::kStages) {
      stage = 0;
      phase ^= 1;
    }
  }

  // Each row's sum of squares over the quad's K values (same value in all four lanes).
#pragma unroll
  for (int i = 0; i < C::kMTiles; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float v = sq[i][h];
      v += __shfl_xor_sync(0xFFFFFFFFu, v, 1);
      v += __shfl_xor_sync(0xFFFFFFFFu, v, 2);
      sq[i][h] = v;
    }
  }

  // The four K warps' partial tiles meet in the stage memory, idle once every warp is here.
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);  // [kWarpsK][kBlockM][kRowsB]
  float* red_sq = red + kWarpsK * kBlockM * C::kRowsB;  // [kWarpsK][kBlockM]
#pragma unroll
  for (int i = 0; i < C::kMTiles; ++i) {
    const int r0 = wm * (kBlockM / 2) + 16 * i + rho;
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
  __syncthreads();

  const int rows = std::min(kBlockM, args.m - m0);
  const int cols = args.n_valid;
  float* out = args.out + static_cast<int64_t>(q) * args.out_split_stride + static_cast<int64_t>(m0) * args.ldo;
  for (int e = static_cast<int>(threadIdx.x); e < rows * cols; e += kThreads) {
    const int r = e / cols, c = e - r * cols;
    float v = red[r * C::kRowsB + c];
#pragma unroll
    for (int w = 1; w < kWarpsK; ++w) v += red[(w * kBlockM + r) * C::kRowsB + c];
    out[static_cast<int64_t>(r) * args.ldo + c] = v;
  }
  if (args.sqr_out != nullptr) {
    float* sqr_out = args.sqr_out + static_cast<int64_t>(q) * args.sqr_split_stride + m0;
    for (int r = static_cast<int>(threadIdx.x); r < rows; r += kThreads) {
      float v = red_sq[r];
#pragma unroll
      for (int w = 1; w < kWarpsK; ++w) v += red_sq[w * kBlockM + r];
      sqr_out[r] = v;
    }
  }
}

// d[s] = sum over p in order of part[s * parts + p]; likewise sqr_sum.
__global__ void tf32_hc_prenorm_gemm_reduce_kernel(const float* __restrict__ part_d, const float* __restrict__ part_sq,
                                                   int64_t parts, int64_t m, int64_t n, int64_t splits,
                                                   float* __restrict__ d, float* __restrict__ sqr_sum) {
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

template <int kBlockM, int kNTiles>
cudaError_t launch_tma(const CUtensorMap& map_a, const CUtensorMap& map_b, const HcArgs& args, unsigned grid,
                       cudaStream_t stream) {
  using C = Cfg<kBlockM, kNTiles>;
  auto* kernel = &tf32_hc_prenorm_gemm_kernel<kBlockM, kNTiles>;
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
  kernel<<<grid, kThreads, C::kSmemBytes, stream>>>(map_a, map_b, args);
  return cudaGetLastError();
}

template <int kBlockM>
cudaError_t launch_tma_n(int n_tiles, const CUtensorMap& map_a, const CUtensorMap& map_b, const HcArgs& args,
                         unsigned grid, cudaStream_t stream) {
  switch (n_tiles) {
    case 1:
      return launch_tma<kBlockM, 1>(map_a, map_b, args, grid, stream);
    case 2:
      return launch_tma<kBlockM, 2>(map_a, map_b, args, grid, stream);
    case 3:
      return launch_tma<kBlockM, 3>(map_a, map_b, args, grid, stream);
    default:  // four n8 tiles only with 64-row tiles (the 128-row ones would spill)
      if constexpr (kBlockM == 64) {
        return launch_tma<kBlockM, 4>(map_a, map_b, args, grid, stream);
      } else {
        return cudaErrorInvalidValue;
      }
  }
}

int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

HcPrenormPlan hc_prenorm_plan(const HcPrenormProblem& p) {
  HcPrenormPlan plan;
  const bool aligned = reinterpret_cast<uintptr_t>(p.a) % 16 == 0 && reinterpret_cast<uintptr_t>(p.b) % 16 == 0 &&
                       p.lda % 8 == 0 && p.ldb % 4 == 0 && p.lda >= p.k && p.ldb >= p.k && p.lda < (int64_t{1} << 38) &&
                       p.ldb < (int64_t{1} << 37);
  const bool small = p.m < INT32_MAX && p.k < INT32_MAX - 2 * kBlockK && p.splits < INT32_MAX;
  if (!aligned || !small) return plan;  // the scalar kernel

  const int num_sms = std::max(1, p.num_sms);
  plan.tma = true;
  plan.block_m = p.m > 512 && p.n <= 24 ? 128 : 64;
  const int64_t m_tiles = ceil_div64(p.m, plan.block_m);
  const int64_t split_len = ceil_div64(p.k, p.splits);
  const int64_t blocks = ceil_div64(split_len, kBlockK);
  const int64_t ctas = m_tiles * p.splits;
  // Too few CTAs for two per SM and long K ranges: cut each split into parts of >= 4 blocks.
  if (ctas < num_sms && blocks > 8) {
    const int64_t want = std::max<int64_t>(1, 2 * num_sms / ctas);
    const int64_t parts = std::min(want, ceil_div64(blocks, 4));
    const int64_t part_len = ceil_div64(blocks, parts) * kBlockK;
    plan.parts = ceil_div64(split_len, part_len);
    plan.part_len = part_len;
  }
  if (plan.parts > 1) {
    plan.workspace_floats = p.splits * plan.parts * p.m * (p.n + 1);
  } else {
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
  const auto grid = static_cast<unsigned>(args.m_tiles * p.splits * plan.parts);

  // N beyond 32 columns: one launch per 32-column slice of B, the first also writing sqr_sum.
  for (int64_t n0 = 0; n0 < p.n; n0 += kMaxNTile) {
    const int64_t nn = std::min<int64_t>(kMaxNTile, p.n - n0);
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
    const cudaError_t status = plan.block_m == 128 ? launch_tma_n<128>(n_tiles, map_a, map_b, args, grid, stream)
                                                   : launch_tma_n<64>(n_tiles, map_a, map_b, args, grid, stream);
    if (status != cudaSuccess) return status;
  }

  if (staged) {
    const int64_t total = p.splits * p.m * (p.n + 1);
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div64(total, 256), 65536));
    tf32_hc_prenorm_gemm_reduce_kernel<<<blocks, 256, 0, stream>>>(part_d, part_sq, plan.parts, p.m, p.n, p.splits, p.d,
                                                                   p.sqr_sum);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

}  // namespace deep_gemm::cuda
