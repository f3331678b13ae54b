// The ragged MQA indexer logits on sm90a.
//
// Work: query blocks of kNB sub-blocks of 128 / H queries, i.e. 128 query-head rows each, the
// N side of an FP8 warpgroup MMA m64 n128 k32 whose M side is 64 keys (kNB = 1 by default; with
// 2, each KV tile feeds two MMAs, halving the KV traffic per query).  A persistent CTA takes one query
// block per round of gridDim.x blocks (rounds alternate direction); for each it covers the hull
// of its queries' key ranges in 64-key tiles.  Warp roles:
//   - producer warpgroup (one warp active): TMA-loads the block's Q tile (double-buffered) and
//     every 64-key KV tile (128B/64B/32B swizzle = D bytes per row) into a ring of stages, with
//     the tile's 64 kv_sf values through 4-byte asynchronous copies on the same barrier;
//   - math warpgroups (two by default): tile c of the CTA's global tile sequence belongs to
//     warpgroup c % (number of math warpgroups), so one warpgroup's epilogue runs while another's
//     MMA does.  Epilogue per thread: scale by
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

constexpr int kBlockKv = 64;  // keys of one MMA tile: the M side of a math warpgroup's MMA
constexpr int kBlockQH = 128;  // query-head rows of one sub-block: one MMA's N side
constexpr int kQStages = 2;
constexpr int kCleanThreads = 256;

// A compile-time tuning of the logits kernel.  kMathWG math warpgroups take the tiles of the
// CTA round-robin; kNB sub-blocks of kBlockQH query-head rows share each KV tile (two MMAs per
// tile, N = 128 each); kStages KV stages; kWSmem keeps the block's weights in shared memory
// (one copy per warpgroup) instead of 32 * kNB registers per thread.  kSlices = 1: a stage holds
// one 64-key tile and stages go to the warpgroups round-robin; kSlices = kMathWG: a stage holds
// kMathWG tiles (one TMA load of 64 * kSlices keys) and warpgroup w takes tile w of every stage.
template <int kMathWG_, int kNB_, int kStages_, bool kWSmem_, int kSlices_ = 1>
struct Tuning {
  static constexpr int kMathWG = kMathWG_;
  static constexpr int kNB = kNB_;
  static constexpr int kKvStages = kStages_;
  static constexpr bool kWSmem = kWSmem_;
  static constexpr int kSlices = kSlices_;
  static constexpr int kStageKeys = kBlockKv * kSlices;
  static constexpr int kThreads = (kMathWG + 1) * 128;
  static constexpr int kProducerRegs = kMathWG == 2 ? 40 : 32;
  static constexpr int kMathRegs = kMathWG == 2 ? 232 : (kMathWG == 3 ? 160 : 112);
  static_assert(kMathWG >= 2 && kMathWG <= 4 && (kNB == 1 || kNB == 2), "unsupported tuning");
  static_assert(kSlices == 1 || kSlices == kMathWG, "a stage is one tile or one tile per warpgroup");
  // setmaxnreg moves registers within what the CTA was launched with: kThreads times the
  // per-thread count of __launch_bounds__(kThreads, 1), 65536 / kThreads rounded down to 8.
  static constexpr int kLaunchRegs = (65536 / kThreads) / 8 * 8;
  static_assert(kProducerRegs + kMathWG * kMathRegs <= (kMathWG + 1) * kLaunchRegs, "registers beyond the launch");
};

using DefaultTuning = Tuning<2, 1, 8, false>;

struct Args {
  int seq, seq_kv, cols, compressed, num_qblocks, alt_order;
  int fuse_clean;  // the producer warpgroup's idle warps write the -inf entries of the CTA's rows
  const float* kv_sf;
  const void* weights;
  int64_t ld_w;
  int weights_bf16;
  const int* ks;
  const int* ke;
  void* logits;
  int64_t ld_out;
};

template <int kHeadDim, class T>
struct Smem {
  static constexpr int kQBytes = T::kNB * kBlockQH * kHeadDim;
  static constexpr int kKvBytes = T::kStageKeys * kHeadDim;
  static constexpr int kKvOff = kQStages * kQBytes;
  static constexpr int kSfOff = kKvOff + T::kKvStages * kKvBytes;
  static constexpr int kWOff = kSfOff + T::kKvStages * T::kStageKeys * 4;
  static constexpr int kWFloats = T::kNB * kBlockQH;  // one warpgroup's copy
  static constexpr int kBarOff = kWOff + (T::kWSmem ? T::kMathWG * kWFloats * 4 : 0);
  static constexpr int kBars = 2 * kQStages + 2 * T::kKvStages;
  static constexpr int kBytes = 1024 + kBarOff + kBars * 8;  // 1024: room to align the base
  static_assert(kQBytes % 1024 == 0 && kKvBytes % 1024 == 0, "tiles keep the swizzle alignment");
  static_assert(kBytes <= 227 * 1024, "shared memory");
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

// First key (a multiple of kBlockKv) and number of kStageKeys-key stages covering the union of
// the ranges of queries [q0, q0 + kBlockQ).  Producer and math threads call it alike.
template <int kBlockQ, int kStageKeys>
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
  tiles = (hi - first + kStageKeys - 1) / kStageKeys;
}

// The query block of this CTA in round `round`.  With alt_order, rounds alternate their
// direction over the grid, so CTAs given the later (with causal ranges, longer) blocks of one
// round get earlier ones next; without it, block = round * grid + CTA.
__device__ __forceinline__ int qblock_of(const Args& a, int round) {
  const bool flip = a.alt_order && (round & 1);
  const int c = flip ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  return round * static_cast<int>(gridDim.x) + c;
}

__device__ __forceinline__ float load_weight(const Args& a, int i, int h) {
  const int64_t off = static_cast<int64_t>(i) * a.ld_w + h;
  if (a.weights_bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(a.weights)[off]);
  return static_cast<const float*>(a.weights)[off];
}

template <bool kNeg>
__device__ __forceinline__ float clip(float x) {
  return kNeg ? fminf(x, 0.0f) : fmaxf(x, 0.0f);
}

// Per-row partial sums of one sub-block: v[q] (accumulator row lane / 4) and v[kSubQ + q]
// (row lane / 4 + 8) = sum over this thread's heads of query q of w * clip(acc), clip = relu
// for a row whose kv_sf is >= 0 and min(., 0) otherwise, so that s * v = sum w * relu(acc * s).
// The weights of columns 8 j + 2 quad + {0, 1} are w[2 j], w[2 j + 1] (registers) or, with
// kWSmem, the float pair at w + 8 j + 2 quad (shared memory).  Even and odd columns keep
// separate sums for two independent FMA chains per query and row.
template <int kHeads, bool kWSmem, bool kNeg0, bool kNeg1>
__device__ __forceinline__ void row_partials(const float* acc, const float* w, int quad, float* v) {
  constexpr int kSubQ = kBlockQH / kHeads;
  float e[2 * kSubQ], o[2 * kSubQ];
#pragma unroll
  for (int q = 0; q < 2 * kSubQ; ++q) e[q] = o[q] = 0.0f;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int q = 8 * j / kHeads;
    float wa, wb;
    if constexpr (kWSmem) {
      const float2 pair = *reinterpret_cast<const float2*>(w + 8 * j + 2 * quad);
      wa = pair.x;
      wb = pair.y;
    } else {
      wa = w[2 * j];
      wb = w[2 * j + 1];
    }
    e[q] = fmaf(wa, clip<kNeg0>(acc[4 * j + 0]), e[q]);
    o[q] = fmaf(wb, clip<kNeg0>(acc[4 * j + 1]), o[q]);
    e[kSubQ + q] = fmaf(wa, clip<kNeg1>(acc[4 * j + 2]), e[kSubQ + q]);
    o[kSubQ + q] = fmaf(wb, clip<kNeg1>(acc[4 * j + 3]), o[kSubQ + q]);
  }
#pragma unroll
  for (int q = 0; q < 2 * kSubQ; ++q) v[q] = e[q] + o[q];
}

// The epilogue of one sub-block's 64 x 128 accumulator: head sums, kv_sf, a quad
// reduce-scatter, then each lane stores its kSubQ / 2 (key, query) entries that are in range.
template <int kHeads, bool kOutBf16, bool kWSmem>
__device__ __forceinline__ void sub_block_epilogue(const Args& args, const float* acc, const float* w, int quad, int b0,
                                                   int b1, float s_lo, float s_hi, int key, int qbase, const int* st_lo,
                                                   const int* st_hi, const int* st_shift) {
  constexpr int kSubQ = kBlockQH / kHeads;
  constexpr int kHalfQ = kSubQ / 2;
  // v[r * kSubQ + q]: row r's partial sum for query q.
  float v[2 * kSubQ];
  if (s_lo >= 0.0f) {
    if (s_hi >= 0.0f) {
      row_partials<kHeads, kWSmem, false, false>(acc, w, quad, v);
    } else {
      row_partials<kHeads, kWSmem, false, true>(acc, w, quad, v);
    }
  } else {
    if (s_hi >= 0.0f) {
      row_partials<kHeads, kWSmem, true, false>(acc, w, quad, v);
    } else {
      row_partials<kHeads, kWSmem, true, true>(acc, w, quad, v);
    }
  }
  // Reduce-scatter over the quad: lane bit 1 picks the row, lane bit 0 half of the queries.
  float u[kSubQ];
#pragma unroll
  for (int i = 0; i < kSubQ; ++i) {
    const float keep = b1 ? v[kSubQ + i] : v[i];
    const float send = b1 ? v[i] : v[kSubQ + i];
    u[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 2);
  }
  const float s = b1 ? s_hi : s_lo;
#pragma unroll
  for (int m = 0; m < kHalfQ; ++m) {
    const float keep = b0 ? u[kHalfQ + m] : u[m];
    const float send = b0 ? u[m] : u[kHalfQ + m];
    const float out = (keep + __shfl_xor_sync(0xFFFFFFFFu, send, 1)) * s;
    if (key >= st_lo[m] && key < st_hi[m]) {
      const int64_t off = static_cast<int64_t>(qbase + m) * args.ld_out + static_cast<int64_t>(key - st_shift[m]);
      if constexpr (kOutBf16) {
        static_cast<__nv_bfloat16*>(args.logits)[off] = __float2bfloat16_rn(out);
      } else {
        static_cast<float*>(args.logits)[off] = out;
      }
    }
  }
}

// -inf at the entries of row i outside its range (all of the row when the range is empty), by
// `threads` threads; thread `tid` takes columns tid, tid + threads, ...
template <bool kOutBf16>
__device__ __forceinline__ void clean_row(const Args& args, int i, int tid, int threads) {
  using T = typename std::conditional<kOutBf16, __nv_bfloat16, float>::type;
  T neg_inf;
  if constexpr (kOutBf16) {
    neg_inf = __float2bfloat16(-INFINITY);
  } else {
    neg_inf = -INFINITY;
  }
  int lo, hi;
  key_range(args, i, lo, hi);
  const int shift = args.compressed ? args.ks[i] : 0;
  int c_lo = 0, c_hi = 0;
  if (lo < hi) {
    c_lo = lo - shift;
    c_hi = hi - shift;
  }
  T* row = static_cast<T*>(args.logits) + static_cast<int64_t>(i) * args.ld_out;
#pragma unroll 1
  for (int c = tid; c < c_lo; c += threads) row[c] = neg_inf;
#pragma unroll 1
  for (int c = c_hi + tid; c < args.cols; c += threads) row[c] = neg_inf;
}

// The fused cleaning: 96 threads (warps 1-3 of the producer warpgroup) take the rows of the
// CTA's query blocks in the CTA's schedule, while the math warpgroups compute.
template <int kBlockQ, bool kOutBf16>
__device__ __forceinline__ void clean_rows(const Args& args, int tid) {
#pragma unroll 1
  for (int round = 0; round * static_cast<int>(gridDim.x) < args.num_qblocks; ++round) {
    const int qb = qblock_of(args, round);
    if (qb >= args.num_qblocks) continue;
#pragma unroll 1
    for (int q = 0; q < kBlockQ; ++q) {
      const int i = qb * kBlockQ + q;
      if (i >= args.seq) break;
      clean_row<kOutBf16>(args, i, tid, 96);
    }
  }
}

template <int kHeads, int kHeadDim, bool kOutBf16, class T>
__global__ void __launch_bounds__(T::kThreads, 1)
    sm90_fp8_mqa_logits_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_kv,
                               const Args args) {
  namespace p = deep_gemm::cuda::sm90;
  using L = Smem<kHeadDim, T>;
  constexpr int kMathWG = T::kMathWG;
  constexpr int kNB = T::kNB;
  constexpr int kKvStages = T::kKvStages;
  constexpr int kSubQ = kBlockQH / kHeads;  // queries of one sub-block
  constexpr int kBlockQ = kNB * kSubQ;  // queries of one block
  constexpr int kHalfQ = kSubQ / 2;

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, so the compiler still sees shared-memory pointers (LDS and
  // STS; through an integer cast they would be generic loads and stores).
  uint8_t* smem = smem_raw + ((1024u - p::smem_addr(smem_raw) % 1024u) % 1024u);
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
      p::mbar_init(&q_empty[s], kMathWG * 4);  // lane 0 of every math warp
    }
    for (int s = 0; s < kKvStages; ++s) {
      p::mbar_init(&kv_full[s], 1 + 32);  // the expect_tx arrival and 32 lanes' scale copies
      p::mbar_init(&kv_empty[s], 4 * T::kSlices);  // lane 0 of the four warps of each consuming warpgroup
    }
    p::fence_mbar_init();
  }
  __syncthreads();

  if (warpgroup == kMathWG) {
    p::regs_decrease<T::kProducerRegs>();
    if (warp % 4 != 0) {
      if (args.fuse_clean) clean_rows<kBlockQ, kOutBf16>(args, threadIdx.x % 128 - 32);
      return;
    }
    if (lane == 0) {
      p::tma_prefetch_map(&tm_q);
      p::tma_prefetch_map(&tm_kv);
    }
    int q_iter = 0;
    uint32_t count = 0;  // KV tiles issued so far
#pragma unroll 1
    for (int round = 0; round * static_cast<int>(gridDim.x) < args.num_qblocks; ++round) {
      const int qb = qblock_of(args, round);
      if (qb >= args.num_qblocks) continue;
      const int qs = q_iter % kQStages;
      p::mbar_wait(&q_empty[qs], ((q_iter / kQStages) & 1) ^ 1);
      if (lane == 0) {
        p::mbar_arrive_expect_tx(&q_full[qs], L::kQBytes);
        p::tma_load_2d(&tm_q, &q_full[qs], smem_q + qs * L::kQBytes, 0, qb * kNB * kBlockQH);
      }
      int first, tiles;
      block_range<kBlockQ, T::kStageKeys>(args, qb * kBlockQ, first, tiles);
#pragma unroll 1
      for (int t = 0; t < tiles; ++t) {
        const uint32_t c = count + t;
        const int slot = c % kKvStages;
        p::mbar_wait(&kv_empty[slot], ((c / kKvStages) & 1) ^ 1);
        const int key0 = first + t * T::kStageKeys;
        if (lane == 0) {
          p::mbar_arrive_expect_tx(&kv_full[slot], L::kKvBytes);
          p::tma_load_2d(&tm_kv, &kv_full[slot], smem_kv + slot * L::kKvBytes, 0, key0);
        }
#pragma unroll
        for (int r = lane; r < T::kStageKeys; r += 32) {
          const bool ok = key0 + r < args.seq_kv;
          p::cp_async_4(smem_sf + slot * T::kStageKeys + r, args.kv_sf + (ok ? key0 + r : 0), ok);
        }
        p::cp_async_arrive_noinc(&kv_full[slot]);
      }
      count += tiles;
      ++q_iter;
    }
    return;
  }

  p::regs_increase<T::kMathRegs>();
  const int wg_warp = warp % 4;
  const int wg_tid = threadIdx.x % 128;
  const int quad = lane % 4;
  const int b0 = lane & 1, b1 = (lane >> 1) & 1;
  const int row_base = wg_warp * 16 + lane / 4;  // accumulator rows row_base, row_base + 8
  const int my_row = row_base + 8 * b1;  // the row whose entries this lane stores
  float* smem_w = reinterpret_cast<float*>(smem + L::kWOff) + warpgroup * L::kWFloats;
  int q_iter = 0;
  uint32_t count = 0;
  float acc[kNB][kBlockQH / 2];

#pragma unroll 1
  for (int round = 0; round * static_cast<int>(gridDim.x) < args.num_qblocks; ++round) {
    const int qb = qblock_of(args, round);
    if (qb >= args.num_qblocks) continue;
    const int q0 = qb * kBlockQ;
    int first, tiles;
    block_range<kBlockQ, T::kStageKeys>(args, q0, first, tiles);

    // Weights of accumulator column c of sub-block b: query q0 + (128 b + c) / H, head c % H.
    // Registers: w[32 b + k] holds column c = 8 * (k / 2) + 2 * quad + k % 2.
    float w[T::kWSmem ? 1 : 32 * kNB];
    if constexpr (T::kWSmem) {
      p::named_barrier_sync(1 + warpgroup, 128);  // the previous block's readers are done
#pragma unroll
      for (int r = 0; r < kNB; ++r) {
        const int c = wg_tid + 128 * r;
        const int i = q0 + c / kHeads;
        smem_w[c] = i < args.seq ? load_weight(args, i, c % kHeads) : 0.0f;
      }
      p::named_barrier_sync(1 + warpgroup, 128);
      w[0] = 0.0f;
    } else {
#pragma unroll
      for (int b = 0; b < kNB; ++b) {
#pragma unroll
        for (int k = 0; k < 32; ++k) {
          const int c = kBlockQH * b + 8 * (k >> 1) + 2 * quad + (k & 1);
          const int i = q0 + c / kHeads;
          w[32 * b + k] = i < args.seq ? load_weight(args, i, c % kHeads) : 0.0f;
        }
      }
    }
    // The queries whose entries this lane stores in sub-block b: q0 + b * kSubQ + b0 * kHalfQ + m.
    int st_lo[kNB][kHalfQ], st_hi[kNB][kHalfQ], st_shift[kNB][kHalfQ];
#pragma unroll
    for (int b = 0; b < kNB; ++b) {
#pragma unroll
      for (int m = 0; m < kHalfQ; ++m) {
        const int i = q0 + b * kSubQ + b0 * kHalfQ + m;
        st_lo[b][m] = st_hi[b][m] = 0;
        st_shift[b][m] = 0;
        if (i < args.seq) {
          key_range(args, i, st_lo[b][m], st_hi[b][m]);
          if (args.compressed) st_shift[b][m] = args.ks[i];
        }
      }
    }

    const int qs = q_iter % kQStages;
    p::mbar_wait(&q_full[qs], (q_iter / kQStages) & 1);
    const uint64_t desc_q = kmajor_desc<kHeadDim>(smem_q + qs * L::kQBytes);
    constexpr uint64_t kSubDesc = (kBlockQH * kHeadDim) >> 4;  // one sub-block's Q rows

    // Stage t of this block: with kSlices = 1 the warpgroup's own stages (global index
    // = warpgroup mod kMathWG), else every stage, its tile `warpgroup`.
    constexpr int kStep = T::kSlices == 1 ? kMathWG : 1;
    const int t0 = T::kSlices == 1
                       ? static_cast<int>((static_cast<uint32_t>(warpgroup) + kMathWG - count % kMathWG) % kMathWG)
                       : 0;
    const int slice = T::kSlices == 1 ? 0 : warpgroup;
#pragma unroll 1
    for (int t = t0; t < tiles; t += kStep) {
      const uint32_t c = count + t;
      const int slot = c % kKvStages;
      p::mbar_wait(&kv_full[slot], (c / kKvStages) & 1);
      const uint64_t desc_kv = kmajor_desc<kHeadDim>(smem_kv + slot * L::kKvBytes + slice * kBlockKv * kHeadDim);
      p::wgmma_fence();
#pragma unroll
      for (int b = 0; b < kNB; ++b) {
#pragma unroll
        for (int kk = 0; kk < kHeadDim / 32; ++kk) {
          p::fp8_wgmma<kBlockQH>(desc_kv + 2 * kk, desc_q + b * kSubDesc + 2 * kk, acc[b], kk > 0);
        }
        p::wgmma_commit();
      }
      const float* sf = smem_sf + slot * T::kStageKeys + slice * kBlockKv;
      const float s_lo = sf[row_base];
      const float s_hi = sf[row_base + 8];
      const int key = first + t * T::kStageKeys + slice * kBlockKv + my_row;
      const float* w0 = T::kWSmem ? smem_w : w;
      if constexpr (kNB == 2) {
        p::wgmma_wait<1>();
#pragma unroll
        for (int i = 0; i < kBlockQH / 2; ++i) p::fence_operand(acc[0][i]);
        sub_block_epilogue<kHeads, kOutBf16, T::kWSmem>(args, acc[0], w0, quad, b0, b1, s_lo, s_hi, key,
                                                        q0 + b0 * kHalfQ, st_lo[0], st_hi[0], st_shift[0]);
      }
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kBlockQH / 2; ++i) p::fence_operand(acc[kNB - 1][i]);
      __syncwarp();
      if (lane == 0) p::mbar_arrive(&kv_empty[slot]);
      const float* wl = T::kWSmem ? smem_w + kBlockQH * (kNB - 1) : w + 32 * (kNB - 1);
      sub_block_epilogue<kHeads, kOutBf16, T::kWSmem>(args, acc[kNB - 1], wl, quad, b0, b1, s_lo, s_hi, key,
                                                      q0 + (kNB - 1) * kSubQ + b0 * kHalfQ, st_lo[kNB - 1],
                                                      st_hi[kNB - 1], st_shift[kNB - 1]);
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
#pragma unroll 1
  for (int i = blockIdx.x; i < args.seq; i += gridDim.x) clean_row<kOutBf16>(args, i, threadIdx.x, kCleanThreads);
}

template <int kHeads, int kHeadDim, bool kOutBf16, class T>
cudaError_t launch(const MqaLogitsProblem& pr, Args args, cudaStream_t stream) {
  using L = Smem<kHeadDim, T>;
  constexpr int kBlockQ = T::kNB * kBlockQH / kHeads;
  auto* kernel = &sm90_fp8_mqa_logits_kernel<kHeads, kHeadDim, kOutBf16, T>;
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kBytes);
  if (attr != cudaSuccess) return attr;
  constexpr auto kSwizzle = kHeadDim == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                            : (kHeadDim == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B);
  CUtensorMap tm_q{}, tm_kv{};
  if (!make_tensor_map_2d(&tm_q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, pr.q, kHeadDim,
                          static_cast<uint64_t>(pr.seq) * kHeads, kHeadDim, kHeadDim, T::kNB * kBlockQH, kSwizzle) ||
      !make_tensor_map_2d(&tm_kv, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, pr.kv, kHeadDim, static_cast<uint64_t>(pr.seq_kv),
                          pr.ld_kv, kHeadDim, T::kStageKeys, kSwizzle)) {
    return cudaErrorInvalidValue;
  }
  args.num_qblocks = (pr.seq + kBlockQ - 1) / kBlockQ;
  const int grid = args.num_qblocks < pr.num_sms ? args.num_qblocks : pr.num_sms;
  kernel<<<grid, T::kThreads, L::kBytes, stream>>>(tm_q, tm_kv, args);
  return cudaGetLastError();
}

// The tuning variants of the logits kernel (DG_MQA_LOGITS_CONFIG, a tuning override): a base
// name, optionally followed by "+lin" (rounds all in grid order instead of alternating) and
// "+fuse" (no cleaning kernel: the producer warpgroup's idle warps write the -inf entries).
// Variants other than the default are instantiated for D = 128 and H = 32 / 64 (the shapes of
// the benchmark); every other (H, D) runs the default tuning under any base name.
constexpr const char* kBases[] = {
    "default",  // 2 math warpgroups, 1 sub-block, 8 stages of 64 keys, weights in registers
    "st16",  // 16 stages
    "wsmem",  // weights read from shared memory
    "wg3",  // 3 math warpgroups (160 registers), 12 stages, weights in shared memory
    "wg4",  // 4 math warpgroups (120 registers), 16 stages, weights in shared memory
    "n256",  // 2 sub-blocks per KV tile (256 query-head rows), 8 stages, weights in shared memory
    "n256s16",  // n256 with 16 stages
    "s128",  // 6 stages of 128 keys, each warpgroup one 64-key half of every stage
    "wg4s256",  // 4 math warpgroups, 4 stages of 256 keys, one 64-key quarter each
    "n256s128",  // n256 with 4 stages of 128 keys, one half each
    "wg4s256r",  // wg4s256 with the weights in registers
    "n256s128r",  // n256s128 with the weights in registers
};
constexpr int kNumBases = static_cast<int>(sizeof(kBases) / sizeof(kBases[0]));
constexpr int kConfigLinear = 1 << 8;
constexpr int kConfigFuse = 1 << 9;

template <int kHeads, int kHeadDim, bool kOutBf16>
cudaError_t launch_variant(const MqaLogitsProblem& pr, const Args& args, int variant, cudaStream_t stream) {
  if constexpr (kHeadDim == 128 && (kHeads == 32 || kHeads == 64)) {
    switch (variant) {
      case 1:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 1, 16, false>>(pr, args, stream);
      case 2:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 1, 8, true>>(pr, args, stream);
      case 3:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<3, 1, 12, true>>(pr, args, stream);
      case 4:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<4, 1, 16, true>>(pr, args, stream);
      case 5:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 2, 8, true>>(pr, args, stream);
      case 6:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 2, 16, true>>(pr, args, stream);
      case 7:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 1, 6, false, 2>>(pr, args, stream);
      case 8:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<4, 1, 4, true, 4>>(pr, args, stream);
      case 9:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 2, 4, true, 2>>(pr, args, stream);
      case 10:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<4, 1, 4, false, 4>>(pr, args, stream);
      case 11:
        return launch<kHeads, kHeadDim, kOutBf16, Tuning<2, 2, 4, false, 2>>(pr, args, stream);
      default:
        break;
    }
  }
  return launch<kHeads, kHeadDim, kOutBf16, DefaultTuning>(pr, args, stream);
}

template <int kHeads, bool kOutBf16>
cudaError_t launch_dim(const MqaLogitsProblem& pr, const Args& args, int variant, cudaStream_t stream) {
  switch (pr.head_dim) {
    case 32:
      return launch_variant<kHeads, 32, kOutBf16>(pr, args, variant, stream);
    case 64:
      return launch_variant<kHeads, 64, kOutBf16>(pr, args, variant, stream);
    default:
      return launch_variant<kHeads, 128, kOutBf16>(pr, args, variant, stream);
  }
}

template <bool kOutBf16>
cudaError_t launch_heads(const MqaLogitsProblem& pr, const Args& args, int variant, cudaStream_t stream) {
  switch (pr.heads) {
    case 8:
      return launch_dim<8, kOutBf16>(pr, args, variant, stream);
    case 16:
      return launch_dim<16, kOutBf16>(pr, args, variant, stream);
    case 32:
      return launch_dim<32, kOutBf16>(pr, args, variant, stream);
    default:
      return launch_dim<64, kOutBf16>(pr, args, variant, stream);
  }
}

}  // namespace mqa_detail

int mqa_logits_config(const std::string& name) {
  if (name.empty()) return 0;
  std::string base = name;
  int flags = 0;
  for (;;) {
    const size_t plus = base.rfind('+');
    if (plus == std::string::npos) break;
    const std::string mod = base.substr(plus + 1);
    if (mod == "lin") {
      flags |= mqa_detail::kConfigLinear;
    } else if (mod == "fuse") {
      flags |= mqa_detail::kConfigFuse;
    } else {
      return -1;
    }
    base.resize(plus);
  }
  for (int i = 0; i < mqa_detail::kNumBases; ++i) {
    if (base == mqa_detail::kBases[i]) return i | flags;
  }
  return -1;
}

std::string mqa_logits_config_names() {
  std::string names;
  for (int i = 0; i < mqa_detail::kNumBases; ++i) {
    if (i > 0) names += ", ";
    names += mqa_detail::kBases[i];
  }
  return names + " (each optionally followed by +lin and / or +fuse)";
}

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
  if (p.config < 0 || (p.config & 0xFF) >= mqa_detail::kNumBases) return "unknown tuning configuration";
  return {};
}

cudaError_t mqa_logits(const MqaLogitsProblem& p, cudaStream_t stream) {
  const int variant = p.config & 0xFF;
  const bool fuse = (p.config & mqa_detail::kConfigFuse) != 0 && p.seq_kv > 0;
  mqa_detail::Args args{};
  args.seq = p.seq;
  args.seq_kv = p.seq_kv;
  args.cols = p.cols;
  args.compressed = p.compressed ? 1 : 0;
  args.num_qblocks = 0;  // set by the launcher of the chosen tuning
  args.alt_order = (p.config & mqa_detail::kConfigLinear) ? 0 : 1;
  args.fuse_clean = fuse ? 1 : 0;
  args.kv_sf = p.kv_sf;
  args.weights = p.weights;
  args.ld_w = p.ld_w;
  args.weights_bf16 = p.weights_bf16 ? 1 : 0;
  args.ks = p.ks;
  args.ke = p.ke;
  args.logits = p.logits;
  args.ld_out = p.ld_out;
  if (p.seq == 0 || p.cols == 0) return cudaSuccess;

  if (!fuse) {  // (with Skv = 0 the logits kernel does not run: the cleaning kernel writes all)
    const int clean_grid = p.seq < 4 * p.num_sms * 8 ? p.seq : 4 * p.num_sms * 8;
    if (p.out_bf16) {
      mqa_detail::sm90_clean_logits_kernel<true><<<clean_grid, mqa_detail::kCleanThreads, 0, stream>>>(args);
    } else {
      mqa_detail::sm90_clean_logits_kernel<false><<<clean_grid, mqa_detail::kCleanThreads, 0, stream>>>(args);
    }
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess || p.seq_kv == 0) return status;
  }
  return p.out_bf16 ? mqa_detail::launch_heads<true>(p, args, variant, stream)
                    : mqa_detail::launch_heads<false>(p, args, variant, stream);
}

}  // namespace deep_gemm::cuda
