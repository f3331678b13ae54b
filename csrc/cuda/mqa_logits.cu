// The ragged MQA indexer logits on sm90a.
//
// Work: query blocks of kBlockQ = 128 / H queries, i.e. 128 query-head rows, the N side of an
// FP8 warpgroup MMA m64 n128 k32 whose M side is 64 keys.  A persistent CTA takes one query
// block per round of gridDim.x blocks (rounds alternate direction); for each it covers the hull
// of its queries' key ranges in 64-key tiles.  Warp roles:
//   - producer warpgroup (one warp active): TMA-loads the block's Q tile (double-buffered) and
//     every 64-key KV tile (128B/64B/32B swizzle = D bytes per row) into a ring of stages, with
//     the tile's 64 kv_sf values through 4-byte asynchronous copies on the same barrier;
//   - two math warpgroups: tile c of the CTA's global tile sequence belongs to warpgroup c % 2,
//     so one warpgroup's epilogue runs while the other's MMA does.  Epilogue per thread: scale by
//     kv_sf, relu, times weights, sum over its heads, then a quad reduce-scatter over the other
//     heads; each lane then stores distinct (key, query) entries that lie in the query's range.
// No heads x keys tensor exists anywhere; the reduction order is fixed, so results are
// bitwise reproducible.  A second kernel writes -inf to every entry outside the row's range,
// so the two kernels write disjoint sets of entries and together cover the output.

#include <cuda.h>
#include <cuda_bf16.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cuda/mqa_logits.h"
#include "cuda/sm90_primitives.cuh"
#include "cuda/sm90_wgmma.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda {
namespace mqa_detail {

constexpr int kBlockKv = 64;  // keys per stage: one math warpgroup's M side
constexpr int kBlockQH = 128;  // query-head rows per query block: the MMA's N side
constexpr int kKvStages = 8;
constexpr int kQStages = 2;
constexpr int kMathWarpgroups = 2;
constexpr int kThreads = (kMathWarpgroups + 1) * 128;
constexpr int kProducerRegs = 40;
constexpr int kMathRegs = 232;
constexpr int kCleanThreads = 256;

struct Args {
  int seq, seq_kv, cols, compressed, num_qblocks;
  const float* kv_sf;
  const void* weights;
  int64_t ld_w;
  int weights_bf16;
  const int* ks;
  const int* ke;
  void* logits;
  int64_t ld_out;
};

template <int kHeadDim>
struct Smem {
  static constexpr int kQBytes = kBlockQH * kHeadDim;
  static constexpr int kKvBytes = kBlockKv * kHeadDim;
  static constexpr int kKvOff = kQStages * kQBytes;
  static constexpr int kSfOff = kKvOff + kKvStages * kKvBytes;
  static constexpr int kBarOff = kSfOff + kKvStages * kBlockKv * 4;
  static constexpr int kBars = 2 * kQStages + 2 * kKvStages;
  static constexpr int kBytes = 1024 + kBarOff + kBars * 8;  // 1024: room to align the base
  static_assert(kQBytes % 1024 == 0 && kKvBytes % 1024 == 0, "tiles keep the swizzle alignment");
};

// Descriptor of a K-major FP8 tile whose rows are kRowBytes (= the swizzle span) long, as a
// TMA load with that swizzle lays it out: 8-row groups 8 * kRowBytes apart.
template <int kRowBytes>
__device__ __forceinline__ uint64_t kmajor_desc(const void* tile) {
  constexpr uint64_t kLayout = kRowBytes == 128 ? 1 : (kRowBytes == 64 ? 2 : 3);
  const uint64_t addr = sm90::smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{(8 * kRowBytes) >> 4} << 32) | (kLayout << 62);
}

// Keys [lo, hi) of row i that appear in the output (hi == lo when none).
__device__ __forceinline__ void key_range(const Args& a, int i, int& lo, int& hi) {
  const int s = a.ks[i], e = a.ke[i];
  lo = max(s, 0);
  long long h = min(e, a.seq_kv);
  if (a.compressed) h = min(h, static_cast<long long>(s) + a.cols);
  hi = static_cast<int>(max(h, static_cast<long long>(lo)));
}

// First key (a multiple of kBlockKv) and number of kBlockKv tiles covering the union of the
// ranges of queries [q0, q0 + kBlockQ).  Producer and math threads call it alike.
template <int kBlockQ>
__device__ __forceinline__ void block_range(const Args& a, int q0, int& first, int& tiles) {
  int lo = INT_MAX, hi = 0;
#pragma unroll
  for (int q = 0; q < kBlockQ; ++q) {
    if (q0 + q >= a.seq) break;
    int x, y;
    key_range(a, q0 + q, x, y);
    if (x < y) {
      lo = min(lo, x);
      hi = max(hi, y);
    }
  }
  if (lo >= hi) {
    first = 0;
    tiles = 0;
    return;
  }
  first = lo & ~(kBlockKv - 1);
  tiles = (hi - first + kBlockKv - 1) / kBlockKv;
}

// The query block of this CTA in round `round`: rounds alternate their direction over the grid, so
// CTAs given the later (with causal ranges, longer) blocks of one round get earlier ones next.
__device__ __forceinline__ int qblock_of(int round) {
  const int c = (round & 1) ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  return round * static_cast<int>(gridDim.x) + c;
}

__device__ __forceinline__ float load_weight(const Args& a, int i, int h) {
  const int64_t off = static_cast<int64_t>(i) * a.ld_w + h;
  if (a.weights_bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(a.weights)[off]);
  return static_cast<const float*>(a.weights)[off];
}

// Per-row partial sums p[q] = s * sum over this thread's heads of w * relu(acc)
// (= sum w * relu(acc * s) for either sign of s).  kRow selects the accumulator row (lane / 4
// or lane / 4 + 8).
template <int kHeads, int kRow, bool kNeg>
__device__ __forceinline__ void row_partial(const float* acc, const float* w, float* p) {
  constexpr int kBlockQ = kBlockQH / kHeads;
#pragma unroll
  for (int q = 0; q < kBlockQ; ++q) p[q] = 0.0f;
#pragma unroll
  for (int k = 0; k < 32; ++k) {
    const int j = k >> 1;  // 8-column group of the accumulator
    const int q = 8 * j / kHeads;
    const float x = acc[4 * j + 2 * kRow + (k & 1)];
    p[q] = fmaf(w[k], kNeg ? fminf(x, 0.0f) : fmaxf(x, 0.0f), p[q]);
  }
}

template <int kHeads, int kHeadDim, bool kOutBf16>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_fp8_mqa_logits_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_kv,
                               const Args args) {
  namespace p = deep_gemm::cuda::sm90;
  using L = Smem<kHeadDim>;
  constexpr int kBlockQ = kBlockQH / kHeads;
  constexpr int kHalfQ = kBlockQ / 2;

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* smem_q = smem;
  uint8_t* smem_kv = smem + L::kKvOff;
  float* smem_sf = reinterpret_cast<float*>(smem + L::kSfOff);
  uint64_t* q_full = reinterpret_cast<uint64_t*>(smem + L::kBarOff);
  uint64_t* q_empty = q_full + kQStages;
  uint64_t* kv_full = q_empty + kQStages;
  uint64_t* kv_empty = kv_full + kKvStages;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kQStages; ++s) {
      p::mbar_init(&q_full[s], 1);
      p::mbar_init(&q_empty[s], kMathWarpgroups * 4);  // lane 0 of every math warp
    }
    for (int s = 0; s < kKvStages; ++s) {
      p::mbar_init(&kv_full[s], 1 + 32);  // the expect_tx arrival and 32 lanes' scale copies
      p::mbar_init(&kv_empty[s], 4);  // lane 0 of the four warps of the consuming warpgroup
    }
    p::fence_mbar_init();
  }
  __syncthreads();

  if (warpgroup == kMathWarpgroups) {
    p::regs_decrease<kProducerRegs>();
    if (warp % 4 != 0) return;
    if (lane == 0) {
      p::tma_prefetch_map(&tm_q);
      p::tma_prefetch_map(&tm_kv);
    }
    int q_iter = 0;
    uint32_t count = 0;  // KV tiles issued so far
#pragma unroll 1
    for (int round = 0; round * static_cast<int>(gridDim.x) < args.num_qblocks; ++round) {
      const int qb = qblock_of(round);
      if (qb >= args.num_qblocks) continue;
      const int qs = q_iter % kQStages;
      p::mbar_wait(&q_empty[qs], ((q_iter / kQStages) & 1) ^ 1);
      if (lane == 0) {
        p::mbar_arrive_expect_tx(&q_full[qs], L::kQBytes);
        p::tma_load_2d(&tm_q, &q_full[qs], smem_q + qs * L::kQBytes, 0, qb * kBlockQH);
      }
      int first, tiles;
      block_range<kBlockQ>(args, qb * kBlockQ, first, tiles);
#pragma unroll 1
      for (int t = 0; t < tiles; ++t) {
        const uint32_t c = count + t;
        const int slot = c % kKvStages;
        p::mbar_wait(&kv_empty[slot], ((c / kKvStages) & 1) ^ 1);
        const int key0 = first + t * kBlockKv;
        if (lane == 0) {
          p::mbar_arrive_expect_tx(&kv_full[slot], L::kKvBytes);
          p::tma_load_2d(&tm_kv, &kv_full[slot], smem_kv + slot * L::kKvBytes, 0, key0);
        }
#pragma unroll
        for (int r = lane; r < kBlockKv; r += 32) {
          const bool ok = key0 + r < args.seq_kv;
          p::cp_async_4(smem_sf + slot * kBlockKv + r, args.kv_sf + (ok ? key0 + r : 0), ok);
        }
        p::cp_async_arrive_noinc(&kv_full[slot]);
      }
      count += tiles;
      ++q_iter;
    }
    return;
  }

  p::regs_increase<kMathRegs>();
  const int wg_warp = warp % 4;
  const int quad = lane % 4;
  const int b0 = lane & 1, b1 = (lane >> 1) & 1;
  const int row_base = wg_warp * 16 + lane / 4;  // accumulator rows row_base, row_base + 8
  const int my_row = row_base + 8 * b1;  // the row whose entries this lane stores
  int q_iter = 0;
  uint32_t count = 0;
  float acc[kBlockQH / 2];

#pragma unroll 1
  for (int round = 0; round * static_cast<int>(gridDim.x) < args.num_qblocks; ++round) {
    const int qb = qblock_of(round);
    if (qb >= args.num_qblocks) continue;
    const int q0 = qb * kBlockQ;
    int first, tiles;
    block_range<kBlockQ>(args, q0, first, tiles);

    // Weights of this thread's accumulator columns c = 8 * (k / 2) + 2 * quad + k % 2.
    float w[32];
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      const int c = 8 * (k >> 1) + 2 * quad + (k & 1);
      const int i = q0 + c / kHeads;
      w[k] = i < args.seq ? load_weight(args, i, c % kHeads) : 0.0f;
    }
    // The queries whose entries this lane stores: b0 * kHalfQ + m.
    int st_lo[kHalfQ], st_hi[kHalfQ], st_shift[kHalfQ];
#pragma unroll
    for (int m = 0; m < kHalfQ; ++m) {
      const int i = q0 + b0 * kHalfQ + m;
      st_lo[m] = st_hi[m] = 0;
      st_shift[m] = 0;
      if (i < args.seq) {
        key_range(args, i, st_lo[m], st_hi[m]);
        if (args.compressed) st_shift[m] = args.ks[i];
      }
    }

    const int qs = q_iter % kQStages;
    p::mbar_wait(&q_full[qs], (q_iter / kQStages) & 1);
    const uint64_t desc_q = kmajor_desc<kHeadDim>(smem_q + qs * L::kQBytes);

#pragma unroll 1
    for (int t = (warpgroup ^ count) & 1; t < tiles; t += 2) {
      const uint32_t c = count + t;
      const int slot = c % kKvStages;
      p::mbar_wait(&kv_full[slot], (c / kKvStages) & 1);
      const uint64_t desc_kv = kmajor_desc<kHeadDim>(smem_kv + slot * L::kKvBytes);
      p::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kHeadDim / 32; ++kk) {
        p::fp8_wgmma<kBlockQH>(desc_kv + 2 * kk, desc_q + 2 * kk, acc, kk > 0);
      }
      p::wgmma_commit();
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kBlockQH / 2; ++i) p::fence_operand(acc[i]);
      const float s_lo = smem_sf[slot * kBlockKv + row_base];
      const float s_hi = smem_sf[slot * kBlockKv + row_base + 8];
      __syncwarp();
      if (lane == 0) p::mbar_arrive(&kv_empty[slot]);

      // v[r * kBlockQ + q]: row r's partial sum for query q.
      float v[2 * kBlockQ];
      if (s_lo >= 0.0f) {
        row_partial<kHeads, 0, false>(acc, w, v);
      } else {
        row_partial<kHeads, 0, true>(acc, w, v);
      }
      if (s_hi >= 0.0f) {
        row_partial<kHeads, 1, false>(acc, w, v + kBlockQ);
      } else {
        row_partial<kHeads, 1, true>(acc, w, v + kBlockQ);
      }
#pragma unroll
      for (int q = 0; q < kBlockQ; ++q) {
        v[q] *= s_lo;
        v[kBlockQ + q] *= s_hi;
      }
      // Reduce-scatter over the quad: lane bit 1 picks the row, lane bit 0 half of the queries.
      float u[kBlockQ];
#pragma unroll
      for (int i = 0; i < kBlockQ; ++i) {
        const float keep = b1 ? v[kBlockQ + i] : v[i];
        const float send = b1 ? v[i] : v[kBlockQ + i];
        u[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 2);
      }
      float out[kHalfQ];
#pragma unroll
      for (int i = 0; i < kHalfQ; ++i) {
        const float keep = b0 ? u[kHalfQ + i] : u[i];
        const float send = b0 ? u[i] : u[kHalfQ + i];
        out[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 1);
      }

      const int key = first + t * kBlockKv + my_row;
#pragma unroll
      for (int m = 0; m < kHalfQ; ++m) {
        if (key >= st_lo[m] && key < st_hi[m]) {
          const int64_t off =
              static_cast<int64_t>(q0 + b0 * kHalfQ + m) * args.ld_out + static_cast<int64_t>(key - st_shift[m]);
          if constexpr (kOutBf16) {
            static_cast<__nv_bfloat16*>(args.logits)[off] = __float2bfloat16_rn(out[m]);
          } else {
            static_cast<float*>(args.logits)[off] = out[m];
          }
        }
      }
    }
    count += tiles;
    __syncwarp();
    if (lane == 0) p::mbar_arrive(&q_empty[qs]);
    ++q_iter;
  }
}

// -inf at every entry of rows [0, seq) outside the row's range (all of a row with an empty range).
template <bool kOutBf16>
__global__ void __launch_bounds__(kCleanThreads) sm90_clean_logits_kernel(const Args args) {
  using T = typename std::conditional<kOutBf16, __nv_bfloat16, float>::type;
  T neg_inf;
  if constexpr (kOutBf16) {
    neg_inf = __float2bfloat16(-INFINITY);
  } else {
    neg_inf = -INFINITY;
  }
#pragma unroll 1
  for (int i = blockIdx.x; i < args.seq; i += gridDim.x) {
    int lo, hi;
    key_range(args, i, lo, hi);
    const int shift = args.compressed ? args.ks[i] : 0;
    int c_lo = 0, c_hi = 0;
    if (lo < hi) {
      c_lo = lo - shift;
      c_hi = hi - shift;
    }
    T* row = static_cast<T*>(args.logits) + static_cast<int64_t>(i) * args.ld_out;
    for (int c = threadIdx.x; c < c_lo; c += kCleanThreads) row[c] = neg_inf;
    for (int c = c_hi + threadIdx.x; c < args.cols; c += kCleanThreads) row[c] = neg_inf;
  }
}

template <int kHeads, int kHeadDim, bool kOutBf16>
cudaError_t launch(const MqaLogitsProblem& pr, const Args& args, cudaStream_t stream) {
  using L = Smem<kHeadDim>;
  auto* kernel = &sm90_fp8_mqa_logits_kernel<kHeads, kHeadDim, kOutBf16>;
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kBytes);
  if (attr != cudaSuccess) return attr;
  constexpr auto kSwizzle = kHeadDim == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                            : (kHeadDim == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B);
  CUtensorMap tm_q{}, tm_kv{};
  if (!make_tensor_map_2d(&tm_q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, pr.q, kHeadDim,
                          static_cast<uint64_t>(pr.seq) * kHeads, kHeadDim, kHeadDim, kBlockQH, kSwizzle) ||
      !make_tensor_map_2d(&tm_kv, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, pr.kv, kHeadDim, static_cast<uint64_t>(pr.seq_kv),
                          pr.ld_kv, kHeadDim, kBlockKv, kSwizzle)) {
    return cudaErrorInvalidValue;
  }
  const int grid = args.num_qblocks < pr.num_sms ? args.num_qblocks : pr.num_sms;
  kernel<<<grid, kThreads, L::kBytes, stream>>>(tm_q, tm_kv, args);
  return cudaGetLastError();
}

template <int kHeads, bool kOutBf16>
cudaError_t launch_dim(const MqaLogitsProblem& pr, const Args& args, cudaStream_t stream) {
  switch (pr.head_dim) {
    case 32:
      return launch<kHeads, 32, kOutBf16>(pr, args, stream);
    case 64:
      return launch<kHeads, 64, kOutBf16>(pr, args, stream);
    default:
      return launch<kHeads, 128, kOutBf16>(pr, args, stream);
  }
}

template <bool kOutBf16>
cudaError_t launch_heads(const MqaLogitsProblem& pr, const Args& args, cudaStream_t stream) {
  switch (pr.heads) {
    case 8:
      return launch_dim<8, kOutBf16>(pr, args, stream);
    case 16:
      return launch_dim<16, kOutBf16>(pr, args, stream);
    case 32:
      return launch_dim<32, kOutBf16>(pr, args, stream);
    default:
      return launch_dim<64, kOutBf16>(pr, args, stream);
  }
}

}  // namespace mqa_detail

std::string mqa_logits_unsupported(const MqaLogitsProblem& p) {
  if (p.heads != 8 && p.heads != 16 && p.heads != 32 && p.heads != 64) return "H must be 8, 16, 32 or 64";
  if (p.head_dim != 32 && p.head_dim != 64 && p.head_dim != 128) return "D must be 32, 64 or 128";
  if (p.seq < 0 || p.seq_kv < 0 || p.cols < 0 || p.num_sms <= 0) return "bad sizes";
  if (static_cast<int64_t>(p.seq) * p.heads > INT32_MAX) return "S * H must fit in int32";
  if (reinterpret_cast<uintptr_t>(p.q) % 16 != 0 || reinterpret_cast<uintptr_t>(p.kv) % 16 != 0) {
    return "q and kv must be 16-byte aligned";
  }
  if (p.ld_kv % 16 != 0 || p.ld_kv < p.head_dim) return "kv's row stride must be a multiple of 16 bytes";
  if (p.kv_sf == nullptr || p.ks == nullptr || p.ke == nullptr || p.logits == nullptr) return "missing pointer";
  return {};
}

cudaError_t mqa_logits(const MqaLogitsProblem& p, cudaStream_t stream) {
  mqa_detail::Args args{};
  args.seq = p.seq;
  args.seq_kv = p.seq_kv;
  args.cols = p.cols;
  args.compressed = p.compressed ? 1 : 0;
  args.num_qblocks = (p.seq + mqa_detail::kBlockQH / p.heads - 1) / (mqa_detail::kBlockQH / p.heads);
  args.kv_sf = p.kv_sf;
  args.weights = p.weights;
  args.ld_w = p.ld_w;
  args.weights_bf16 = p.weights_bf16 ? 1 : 0;
  args.ks = p.ks;
  args.ke = p.ke;
  args.logits = p.logits;
  args.ld_out = p.ld_out;
  if (p.seq == 0 || p.cols == 0) return cudaSuccess;

  const int clean_grid = p.seq < 4 * p.num_sms * 8 ? p.seq : 4 * p.num_sms * 8;
  if (p.out_bf16) {
    mqa_detail::sm90_clean_logits_kernel<true><<<clean_grid, mqa_detail::kCleanThreads, 0, stream>>>(args);
  } else {
    mqa_detail::sm90_clean_logits_kernel<false><<<clean_grid, mqa_detail::kCleanThreads, 0, stream>>>(args);
  }
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess || p.seq_kv == 0) return status;
  return p.out_bf16 ? mqa_detail::launch_heads<true>(p, args, stream)
                    : mqa_detail::launch_heads<false>(p, args, stream);
}

}  // namespace deep_gemm::cuda
