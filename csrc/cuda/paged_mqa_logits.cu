// Native sm90a paged MQA indexer: the schedule kernel and the FP8 logits kernel.
//
// Schedule (paged_mqa_logits_metadata_kernel): one CTA of 1024 threads.  Thread i owns a
// contiguous chunk of query groups and sums their KV block counts n_b; a block-wide scan
// gives every chunk's end; unit s's first item p_s is located by a binary search over the
// chunk ends and a walk inside the chunk.  Everything stays on the device.
//
// Logits (paged_mqa_logits_kernel): num_sms persistent CTAs of kWG (2 or 4) math warpgroups and
// one producer warp (kSplit: one per math warpgroup); kDeep picks a deeper KV pipeline
// (PagedMqaVariant, DG_PAGED_MQA_CONFIG).  CTA s walks its schedule
// run [row s, row s + 1) of (group, block) items.
// - The producer warp reads the block ids of up to 32 items at once (one coalesced load),
//   then for each item waits for a free stage and loads the block's block_kv x D FP8 values
//   by TMA (swizzled to match the MMA) and its block_kv float32 scales by a bulk copy, both
//   completing on the stage's mbarrier.  An id outside [0, num_blocks), a block past the
//   table's columns or a group whose table row does not exist loads nothing and marks the
//   stage invalid (its columns become NaN).
// - Items rotate over the math warpgroups (item i -> warpgroup i % kWG, stage i % kStages with
//   kStages a multiple of kWG, so a stage always serves the same warpgroup).  Each
//   warpgroup has two q slots: when its next item belongs to another group the producer
//   loads that group's q [next_n * H, D] and weights [next_n, H] into the next slot by TMA
//   and the context lengths by plain stores.
// - Per item: one wgmma chain m64 x (next_n * H) x D with the block's tokens as M and the
//   group's query heads as N.  A thread then holds 2 tokens x (next_n * H / 4) heads: it
//   scales by the token's scale, applies relu and the head weight, sums its heads and the
//   quad's partial sums (two xor shuffles), and a quad lane stores each token's logit.
//   With block_kv 32 the stage's upper 32 rows are left unused.
// - Columns at or past a row's context length inside the processed blocks are -inf; the
//   columns past group b's n_b * block_kv (up to max_context_len) are written -inf by the
//   math warps of CTA r % gridDim before they start on items.  So every element of the
//   [rows, max_context_len] view is written exactly once, in a fixed order.

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "cuda/paged_mqa_logits.h"
#include "cuda/sm90_primitives.cuh"
#include "cuda/sm90_wgmma.cuh"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda {
namespace {

namespace p = sm90;

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

__device__ __forceinline__ int blocks_of(int longest, int block_kv) {
  return longest <= 0 ? 0 : longest / block_kv + (longest % block_kv != 0 ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// Schedule
// ---------------------------------------------------------------------------------------------

constexpr int kMetaThreads = 1024;

__device__ __forceinline__ int group_blocks(const int* ctx, int64_t sb, int64_t st, int64_t b, int next_n,
                                            int block_kv) {
  int longest = 0;
  for (int t = 0; t < next_n; ++t) longest = max(longest, ctx[b * sb + t * st]);
  return blocks_of(longest, block_kv);
}

__global__ void __launch_bounds__(kMetaThreads, 1)
    paged_mqa_logits_metadata_kernel(const int* ctx, int64_t sb, int64_t st, int batch, int next_n, int block_kv,
                                     int num_sms, int* schedule) {
  __shared__ int64_t chunk_end[kMetaThreads];  // inclusive prefix sums of the chunks' block counts
  __shared__ int64_t warp_total[kMetaThreads / 32];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int64_t per = (static_cast<int64_t>(batch) + kMetaThreads - 1) / kMetaThreads;
  const int64_t g0 = min64(batch, tid * per);
  const int64_t g1 = min64(batch, g0 + per);

  int64_t x = 0;
  for (int64_t g = g0; g < g1; ++g) x += group_blocks(ctx, sb, st, g, next_n, block_kv);
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int64_t y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  if (lane == 31) warp_total[warp] = x;
  __syncthreads();
  if (warp == 0) {
    int64_t v = warp_total[lane];
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int64_t y = __shfl_up_sync(0xffffffffu, v, off);
      if (lane >= off) v += y;
    }
    warp_total[lane] = v;
  }
  __syncthreads();
  if (warp > 0) x += warp_total[warp - 1];
  chunk_end[tid] = x;
  __syncthreads();

  const int64_t total = chunk_end[kMetaThreads - 1];
  const int64_t base = total / num_sms;
  const int64_t extra = total - base * num_sms;
  for (int64_t s = tid; s <= num_sms; s += kMetaThreads) {
    const int64_t pos = s * base + min64(s, extra);
    int b = batch, k = 0;
    if (pos < total) {
      int lo = 0, hi = kMetaThreads - 1;  // the first chunk ending after pos
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (chunk_end[mid] > pos) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      int64_t start = lo > 0 ? chunk_end[lo - 1] : 0;
      const int64_t c0 = lo * per;
      const int64_t c1 = min64(batch, c0 + per);
      for (int64_t g = c0; g < c1; ++g) {
        const int n = group_blocks(ctx, sb, st, g, next_n, block_kv);
        if (start + n > pos) {
          b = static_cast<int>(g);
          k = static_cast<int>(pos - start);
          break;
        }
        start += n;
      }
    }
    schedule[2 * s] = b;
    schedule[2 * s + 1] = k;
  }
}

// ---------------------------------------------------------------------------------------------
// Logits
// ---------------------------------------------------------------------------------------------

constexpr int kRows = 64;  // MMA M: token rows of a stage
constexpr int kSmemCap = 232448;  // the most dynamic shared memory a CTA may use on sm90

__device__ __forceinline__ void tma_load_3d(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0, int32_t c1,
                                            int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(p::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(p::smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0, int32_t c1,
                                            int32_t c2, int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];" ::"r"(p::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(p::smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// Plain contiguous copy of `bytes` (a multiple of 16, both addresses 16-byte aligned).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   p::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(p::smem_addr(bar))
               : "memory");
}

// Swizzle of a K-major tile whose rows are kD bytes: the span equals the row.
template <int kD>
struct Swizzle;
template <>
struct Swizzle<128> {
  static constexpr uint64_t kLayout = 1;
  static constexpr CUtensorMapSwizzle kMap = CU_TENSOR_MAP_SWIZZLE_128B;
};
template <>
struct Swizzle<64> {
  static constexpr uint64_t kLayout = 2;
  static constexpr CUtensorMapSwizzle kMap = CU_TENSOR_MAP_SWIZZLE_64B;
};
template <>
struct Swizzle<32> {
  static constexpr uint64_t kLayout = 3;
  static constexpr CUtensorMapSwizzle kMap = CU_TENSOR_MAP_SWIZZLE_32B;
};

// MMA descriptor of a K-major tile of kD-byte swizzled rows, 8-row groups 8 * kD bytes apart.
// Moving 32 FP8 values along K adds 32 bytes (2 in the address field).
template <int kD>
__device__ __forceinline__ uint64_t kmajor_desc(const void* tile) {
  const uint64_t addr = p::smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{(8 * kD) >> 4} << 32) | (Swizzle<kD>::kLayout << 62);
}

constexpr int cmin(int a, int b) { return a < b ? a : b; }

// kWG math warpgroups (2 or 4); kDeep fills the shared memory with stages instead of the
// default 96 KiB of values; kSplit gives every math warpgroup its own producer warp.
template <int kH, int kNextN, int kD, int kWG, bool kDeep, bool kSplit>
struct Config {
  static constexpr int kN = kH * kNextN;
  static constexpr int kMathThreads = kWG * 128;
  static constexpr int kProducerWarps = kSplit ? kWG : 1;
  static constexpr int kThreads = kMathThreads + 32 * kProducerWarps;
  static constexpr int kStageBytes = kRows * kD;
  static constexpr int kQBytes = kN * kD;
  static constexpr int kQSlotBytes = (kQBytes + 1023) / 1024 * 1024;
  static constexpr int kQSlots = 2 * kWG;  // two per warpgroup
  // Shared memory of everything but the stages, and of one stage (values, scales, info, bars).
  static constexpr int kFixedBytes = kQSlots * (kQSlotBytes + kN * 4 + 16 + 16) + 1024;
  static constexpr int kPerStage = kStageBytes + kRows * 4 + 16 + 16;
  static constexpr int kFit = (kSmemCap - kFixedBytes) / kPerStage;
  static constexpr int kWant = kDeep ? 64 : cmin(98304 / kStageBytes, 32);
  static constexpr int kStages = cmin(kWant, kFit) / kWG * kWG;
  static_assert(kStages >= 2 * kWG, "too little shared memory for the pipeline");
  static_assert(kStages % kWG == 0, "a stage must always serve the same warpgroup");
  // Byte offsets inside the 1024-aligned dynamic shared memory.
  static constexpr int kValues = 0;
  static constexpr int kQ = kValues + kStages * kStageBytes;
  static constexpr int kScales = kQ + kQSlots * kQSlotBytes;  // float [kStages][kRows]
  static constexpr int kWeights = kScales + kStages * kRows * 4;  // [kQSlots][kN] float32 or bf16
  static constexpr int kCtx = kWeights + kQSlots * kN * 4;  // int [kQSlots][4]
  static constexpr int kInfo = kCtx + kQSlots * 16;  // int4 [kStages]
  static constexpr int kBars = kInfo + kStages * 16;  // uint64: full, empty, q_full, q_empty
  static constexpr int kBytes = kBars + (2 * kStages + 2 * kQSlots) * 8;
  static constexpr int kSmem = kBytes + 1024;  // room to align the base
  static_assert(kSmem <= kSmemCap, "shared memory");
};

constexpr int kInfoValid = 1;
constexpr int kInfoDone = 2;

template <int kH, int kNextN, int kD, int kWG, bool kDeep, bool kSplit>
__global__ void __launch_bounds__(Config<kH, kNextN, kD, kWG, kDeep, kSplit>::kThreads, 1)
    paged_mqa_logits_kernel(const __grid_constant__ CUtensorMap kv_map, const __grid_constant__ CUtensorMap q_map,
                            const __grid_constant__ CUtensorMap w_map, const PagedMqaProblem prob) {
  using C = Config<kH, kNextN, kD, kWG, kDeep, kSplit>;
  constexpr int kN = C::kN;
  constexpr int kStages = C::kStages;
  constexpr int kMathThreads = C::kMathThreads;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, so the compiler still sees shared-memory pointers (LDS and
  // STS; through an integer cast they would be generic loads and stores).
  uint8_t* smem = smem_raw + ((1024u - sm90::smem_addr(smem_raw) % 1024u) % 1024u);
  uint8_t* values = smem + C::kValues;
  uint8_t* q_tiles = smem + C::kQ;
  float* scales = reinterpret_cast<float*>(smem + C::kScales);
  uint8_t* weights = smem + C::kWeights;
  int* q_ctx = reinterpret_cast<int*>(smem + C::kCtx);
  int4* info = reinterpret_cast<int4*>(smem + C::kInfo);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + C::kBars);
  uint64_t* empty = full + kStages;
  uint64_t* q_full = empty + kStages;
  uint64_t* q_empty = q_full + C::kQSlots;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int block_kv = prob.block_kv;
  const int max_ctx = prob.max_context_len;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      p::mbar_init(&full[s], 1);
      p::mbar_init(&empty[s], 128);
    }
    for (int s = 0; s < C::kQSlots; ++s) {
      p::mbar_init(&q_full[s], 1);
      p::mbar_init(&q_empty[s], 128);
    }
    p::fence_mbar_init();
  }
  __syncthreads();

  if (warp >= kMathThreads / 32) {
    // ---------------- producer warp(s) ----------------
    // With kSplit, producer warp pw walks the same items but issues only warpgroup pw's, so a
    // late block of one warpgroup does not hold back the loads of the others.
    const int pw = warp - kMathThreads / 32;
    if (lane == 0) {
      p::tma_prefetch_map(&kv_map);
      p::tma_prefetch_map(&q_map);
      p::tma_prefetch_map(&w_map);
    }
    const int* row_s = prob.schedule + static_cast<int64_t>(blockIdx.x) * prob.schedule_stride;
    const int* row_e = row_s + prob.schedule_stride;
    int b = min(max(row_s[0], 0), prob.batch);
    int k = max(row_s[1], 0);
    const int b_end = min(max(row_e[0], 0), prob.batch);
    const int k_end = row_e[1];
    const int col_blocks = blocks_of(max_ctx, block_kv);
    const uint32_t kv_tx = static_cast<uint32_t>(block_kv * (kD + 4));
    const uint32_t q_tx = static_cast<uint32_t>(kN * kD + kN * (prob.weights_bf16 ? 2 : 4));
    uint32_t item = 0;
    int cur_group[kWG];  // the group whose q each warpgroup holds
    uint32_t q_uses[kWG];
#pragma unroll
    for (int w = 0; w < kWG; ++w) {
      cur_group[w] = -1;
      q_uses[w] = 0;
    }
    for (; b < b_end || (b == b_end && b < prob.batch && k < k_end); ++b, k = 0) {
      const int own = lane < kNextN ? prob.context_lens[b * prob.ctx_stride_b + lane * prob.ctx_stride_t] : 0;
      int longest = max(own, 0);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) longest = max(longest, __shfl_xor_sync(0xffffffffu, longest, off));
      int ctx_t[kNextN];
#pragma unroll
      for (int t = 0; t < kNextN; ++t) ctx_t[t] = __shfl_sync(0xffffffffu, own, t);
      int end = min(blocks_of(longest, block_kv), col_blocks);
      if (b == b_end) end = min(end, k_end);
      if (k >= end) continue;
      const int64_t seq = prob.indices != nullptr ? prob.indices[b * prob.indices_stride] : b;
      const bool seq_ok = seq >= 0 && seq < prob.table_rows;
      const int* table_row = prob.block_table + (seq_ok ? seq : 0) * prob.table_stride;
      for (int k0 = k; k0 < end; k0 += 32) {
        const int kk = k0 + lane;
        int id = -1;
        if (kk < end && seq_ok && kk < prob.table_cols) id = table_row[kk];
        const int count = min(32, end - k0);
        for (int j = 0; j < count; ++j, ++item) {
          const int blk = __shfl_sync(0xffffffffu, id, j);
          const int wg = static_cast<int>(item % kWG);
          if (kSplit && wg != pw) continue;  // another producer's item
          const int stage = static_cast<int>(item % kStages);
          p::mbar_wait(&empty[stage], ((item / kStages) & 1) ^ 1);
          int slot = -1;
          int group_of_wg = -1;
          uint32_t use = 0;
#pragma unroll
          for (int w = 0; w < kWG; ++w) {  // register arrays: constant indices only
            if (w == wg) {
              group_of_wg = cur_group[w];
              use = q_uses[w];
            }
          }
          if (group_of_wg != b) {
#pragma unroll
            for (int w = 0; w < kWG; ++w) {
              if (w == wg) {
                cur_group[w] = b;
                ++q_uses[w];
              }
            }
            slot = wg * 2 + static_cast<int>(use & 1);
            p::mbar_wait(&q_empty[slot], ((use >> 1) & 1) ^ 1);
            if (lane == 0) {
#pragma unroll
              for (int t = 0; t < kNextN; ++t) q_ctx[slot * 4 + t] = ctx_t[t];
              p::mbar_arrive_expect_tx(&q_full[slot], q_tx);
              tma_load_4d(&q_map, &q_full[slot], q_tiles + slot * C::kQSlotBytes, 0, 0, 0, b);
              p::tma_load_2d(&w_map, &q_full[slot], weights + slot * kN * 4, 0, b * kNextN);
            }
          }
          if (lane == 0) {
            const bool valid = blk >= 0 && blk < prob.num_blocks;
            info[stage] = make_int4(b, k0 + j, valid ? kInfoValid : 0, slot);
            if (valid) {
              p::mbar_arrive_expect_tx(&full[stage], kv_tx);
              tma_load_3d(&kv_map, &full[stage], values + stage * C::kStageBytes, 0, 0, blk);
              bulk_load(scales + stage * kRows,
                        static_cast<const uint8_t*>(prob.kv) + static_cast<int64_t>(blk) * prob.kv_block_bytes +
                            static_cast<int64_t>(block_kv) * kD,
                        static_cast<uint32_t>(block_kv * 4), &full[stage]);
            } else {
              p::mbar_arrive(&full[stage]);
            }
          }
          __syncwarp();
        }
      }
    }
    // One end marker per warpgroup (kWG consecutive items reach them all).
    for (int w = 0; w < kWG; ++w, ++item) {
      if (kSplit && static_cast<int>(item % kWG) != pw) continue;
      const int stage = static_cast<int>(item % kStages);
      p::mbar_wait(&empty[stage], ((item / kStages) & 1) ^ 1);
      if (lane == 0) {
        info[stage] = make_int4(0, 0, kInfoDone, -1);
        p::mbar_arrive(&full[stage]);
      }
      __syncwarp();
    }
    return;
  }

  // ---------------- math warpgroups ----------------
  const int wg = tid / 128;
  const int wg_warp = (tid % 128) / 32;
  const float neg_inf = __int_as_float(0xff800000u);
  const float nan = __int_as_float(0x7fc00000u);
  const int64_t out_rows = static_cast<int64_t>(prob.batch) * kNextN;

  // The -inf tail of rows r = blockIdx.x (mod gridDim.x): columns past the group's blocks.
  for (int64_t r = blockIdx.x; r < out_rows; r += gridDim.x) {
    const int64_t g = r / kNextN;
    int longest = 0;
#pragma unroll
    for (int t = 0; t < kNextN; ++t)
      longest = max(longest, prob.context_lens[g * prob.ctx_stride_b + t * prob.ctx_stride_t]);
    const int64_t start = min64(static_cast<int64_t>(blocks_of(longest, block_kv)) * block_kv, max_ctx);
    if (prob.out_bf16) {
      __nv_bfloat16* row = static_cast<__nv_bfloat16*>(prob.out) + r * prob.out_stride;
      for (int64_t j = start + tid; j < max_ctx; j += kMathThreads) row[j] = __float2bfloat16_rn(neg_inf);
    } else {
      float* row = static_cast<float*>(prob.out) + r * prob.out_stride;
      for (int64_t j = start + tid; j < max_ctx; j += kMathThreads) row[j] = neg_inf;
    }
  }

  float w_reg[kN / 4];
  int ctx_reg[kNextN];
#pragma unroll
  for (int i = 0; i < kN / 4; ++i) w_reg[i] = 0.f;
#pragma unroll
  for (int t = 0; t < kNextN; ++t) ctx_reg[t] = 0;
  int slot = -1;
  uint32_t q_uses = 0;
  const int row0 = wg_warp * 16 + lane / 4;  // this thread's tokens: row0 and row0 + 8
  const int quad = lane & 3;

  for (uint32_t item = static_cast<uint32_t>(wg);; item += kWG) {
    const int stage = static_cast<int>(item % kStages);
    p::mbar_wait(&full[stage], (item / kStages) & 1);
    const int4 desc = info[stage];
    if (desc.z & kInfoDone) break;
    if (desc.w >= 0) {  // a new group: switch q slots
      if (slot >= 0) p::mbar_arrive(&q_empty[slot]);
      slot = desc.w;
      p::mbar_wait(&q_full[slot], (q_uses >> 1) & 1);
      ++q_uses;
#pragma unroll
      for (int c = 0; c < kN / 8; ++c) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = c * 8 + quad * 2 + e;
          w_reg[c * 2 + e] =
              prob.weights_bf16 ? __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(weights + slot * kN * 4)[col])
                                : reinterpret_cast<const float*>(weights + slot * kN * 4)[col];
        }
      }
#pragma unroll
      for (int t = 0; t < kNextN; ++t) ctx_reg[t] = q_ctx[slot * 4 + t];
    }
    const bool valid = (desc.z & kInfoValid) != 0;
    float acc[kN / 2];
    float sc0 = 0.f, sc1 = 0.f;
    if (valid) {
      const uint64_t desc_a = kmajor_desc<kD>(values + stage * C::kStageBytes);
      const uint64_t desc_b = kmajor_desc<kD>(q_tiles + slot * C::kQSlotBytes);
      p::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kD / 32; ++kk) p::fp8_wgmma<kN>(desc_a + 2 * kk, desc_b + 2 * kk, acc, kk > 0);
      p::wgmma_commit();
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) p::fence_operand(acc[i]);
      sc0 = scales[stage * kRows + row0];
      sc1 = scales[stage * kRows + row0 + 8];
    }
    p::mbar_arrive(&empty[stage]);

    float sum[kNextN][2];
#pragma unroll
    for (int t = 0; t < kNextN; ++t) sum[t][0] = sum[t][1] = 0.f;
    if (valid) {
#pragma unroll
      for (int c = 0; c < kN / 8; ++c) {
        const int t = c * 8 / kH;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float v = fmaxf(acc[c * 4 + e] * (e < 2 ? sc0 : sc1), 0.f);
          sum[t][e >> 1] = fmaf(v, w_reg[c * 2 + (e & 1)], sum[t][e >> 1]);
        }
      }
#pragma unroll
      for (int t = 0; t < kNextN; ++t) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          sum[t][h] += __shfl_xor_sync(0xffffffffu, sum[t][h], 1);
          sum[t][h] += __shfl_xor_sync(0xffffffffu, sum[t][h], 2);
        }
      }
    }
#pragma unroll
    for (int t = 0; t < kNextN; ++t) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (quad != t * 2 + h) continue;
        const int token = row0 + 8 * h;
        const int64_t j = static_cast<int64_t>(desc.y) * block_kv + token;
        if (token >= block_kv || j >= max_ctx) continue;
        const float v = j < ctx_reg[t] ? (valid ? sum[t][h] : nan) : neg_inf;
        const int64_t offset = (static_cast<int64_t>(desc.x) * kNextN + t) * prob.out_stride + j;
        if (prob.out_bf16) {
          static_cast<__nv_bfloat16*>(prob.out)[offset] = __float2bfloat16_rn(v);
        } else {
          static_cast<float*>(prob.out)[offset] = v;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

bool encode_map(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, const void* base, const cuuint64_t* dims,
                const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapSwizzle swizzle) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  return encode(map, dtype, rank, const_cast<void*>(base), dims, strides, box, elem_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; }

template <int kH, int kNextN, int kD, int kWG, bool kDeep, bool kSplit>
cudaError_t launch_typed(const PagedMqaProblem& prob, cudaStream_t stream) {
  using C = Config<kH, kNextN, kD, kWG, kDeep, kSplit>;
  const int64_t rows = static_cast<int64_t>(prob.batch) * kNextN;
  // Strides of size-1 dims are never used; give the maps valid ones.
  const int64_t qs_h = prob.q_stride_h;
  const int64_t qs_t = kNextN == 1 ? kH * qs_h : prob.q_stride_t;
  const int64_t qs_b = prob.batch == 1 ? kNextN * qs_t : prob.q_stride_b;
  const int w_elem = prob.weights_bf16 ? 2 : 4;
  const int64_t ws = rows == 1 ? kH : prob.weights_stride;
  const int64_t kv_bytes = prob.num_blocks == 1 ? static_cast<int64_t>(prob.block_kv) * (kD + 4) : prob.kv_block_bytes;

  CUtensorMap kv_map{}, q_map{}, w_map{};
  {
    const cuuint64_t dims[3] = {kD, static_cast<cuuint64_t>(prob.block_kv), static_cast<cuuint64_t>(prob.num_blocks)};
    const cuuint64_t strides[2] = {kD, static_cast<cuuint64_t>(kv_bytes)};
    const cuuint32_t box[3] = {kD, static_cast<cuuint32_t>(prob.block_kv), 1};
    if (!encode_map(&kv_map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, prob.kv, dims, strides, box, Swizzle<kD>::kMap))
      return cudaErrorNotSupported;
  }
  {
    const cuuint64_t dims[4] = {kD, kH, kNextN, static_cast<cuuint64_t>(prob.batch)};
    const cuuint64_t strides[3] = {static_cast<cuuint64_t>(qs_h), static_cast<cuuint64_t>(qs_t),
                                   static_cast<cuuint64_t>(qs_b)};
    const cuuint32_t box[4] = {kD, kH, kNextN, 1};
    if (!encode_map(&q_map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, prob.q, dims, strides, box, Swizzle<kD>::kMap))
      return cudaErrorNotSupported;
  }
  {
    const cuuint64_t dims[2] = {kH, static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ws * w_elem)};
    const cuuint32_t box[2] = {kH, kNextN};
    const auto dtype = prob.weights_bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    if (!encode_map(&w_map, dtype, 2, prob.weights, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE))
      return cudaErrorNotSupported;
  }
  auto kernel = paged_mqa_logits_kernel<kH, kNextN, kD, kWG, kDeep, kSplit>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem);
  if (err != cudaSuccess) return err;
  kernel<<<prob.num_sms, C::kThreads, C::kSmem, stream>>>(kv_map, q_map, w_map, prob);
  return cudaGetLastError();
}

template <int kH, int kNextN, int kD>
cudaError_t launch_by_variant(const PagedMqaProblem& prob, cudaStream_t stream) {
  // next_n * H = 128 keeps 64 accumulators a thread: four warpgroups (96 registers each)
  // would spill, so those shapes run two warpgroups under every variant.
  if constexpr (kH * kNextN > 64) {
    const bool deep = (prob.variant & kPagedDeep) != 0;
    if ((prob.variant & kPagedSplit) != 0) {
      return deep ? launch_typed<kH, kNextN, kD, 2, true, true>(prob, stream)
                  : launch_typed<kH, kNextN, kD, 2, false, true>(prob, stream);
    }
    return deep ? launch_typed<kH, kNextN, kD, 2, true, false>(prob, stream)
                : launch_typed<kH, kNextN, kD, 2, false, false>(prob, stream);
  } else {
    switch (prob.variant) {
      case kPagedWg2:
        return launch_typed<kH, kNextN, kD, 2, false, false>(prob, stream);
      case kPagedWg2Deep:
        return launch_typed<kH, kNextN, kD, 2, true, false>(prob, stream);
      case kPagedWg4:
        return launch_typed<kH, kNextN, kD, 4, false, false>(prob, stream);
      case kPagedWg4Deep:
        return launch_typed<kH, kNextN, kD, 4, true, false>(prob, stream);
      case kPagedWg2 | kPagedSplit:
        return launch_typed<kH, kNextN, kD, 2, false, true>(prob, stream);
      case kPagedWg2Deep | kPagedSplit:
        return launch_typed<kH, kNextN, kD, 2, true, true>(prob, stream);
      case kPagedWg4 | kPagedSplit:
        return launch_typed<kH, kNextN, kD, 4, false, true>(prob, stream);
      case kPagedWg4Deep | kPagedSplit:
        return launch_typed<kH, kNextN, kD, 4, true, true>(prob, stream);
      default:
        return cudaErrorInvalidValue;
    }
  }
}

template <int kH, int kNextN>
cudaError_t launch_by_dim(const PagedMqaProblem& prob, cudaStream_t stream) {
  switch (prob.head_dim) {
    case 32:
      return launch_by_variant<kH, kNextN, 32>(prob, stream);
    case 64:
      return launch_by_variant<kH, kNextN, 64>(prob, stream);
    case 128:
      return launch_by_variant<kH, kNextN, 128>(prob, stream);
    default:
      return cudaErrorNotSupported;
  }
}

template <int kH>
cudaError_t launch_by_next_n(const PagedMqaProblem& prob, cudaStream_t stream) {
  return prob.next_n == 1 ? launch_by_dim<kH, 1>(prob, stream) : launch_by_dim<kH, 2>(prob, stream);
}

}  // namespace

cudaError_t launch_paged_mqa_logits_metadata(const int* context_lens, int64_t ctx_stride_b, int64_t ctx_stride_t,
                                             int batch, int next_n, int block_kv, int num_sms, int* schedule,
                                             cudaStream_t stream) {
  if (batch < 0 || next_n < 1 || block_kv < 1 || num_sms < 1) return cudaErrorInvalidValue;
  paged_mqa_logits_metadata_kernel<<<1, kMetaThreads, 0, stream>>>(context_lens, ctx_stride_b, ctx_stride_t, batch,
                                                                   next_n, block_kv, num_sms, schedule);
  return cudaGetLastError();
}

bool paged_mqa_logits_supported(const PagedMqaProblem& p) {
  if (p.heads != 16 && p.heads != 32 && p.heads != 64) return false;
  if (p.head_dim != 32 && p.head_dim != 64 && p.head_dim != 128) return false;
  if (p.next_n != 1 && p.next_n != 2) return false;
  if (p.block_kv != 32 && p.block_kv != 64) return false;
  if (p.batch < 1 || p.num_sms < 1 || p.max_context_len < 1) return false;
  if (p.num_blocks < 1 || p.num_blocks > INT32_MAX) return false;
  if (static_cast<int64_t>(p.batch) * p.next_n > INT32_MAX) return false;
  if (!aligned16(p.q) || !aligned16(p.kv) || !aligned16(p.weights)) return false;
  if (p.q_stride_h % 16 != 0 || p.q_stride_h < p.head_dim) return false;
  if (p.next_n > 1 && p.q_stride_t % 16 != 0) return false;
  if (p.batch > 1 && p.q_stride_b % 16 != 0) return false;
  if (p.num_blocks > 1 && p.kv_block_bytes % 16 != 0) return false;
  if (p.kv_block_bytes < static_cast<int64_t>(p.block_kv) * (p.head_dim + 4)) return false;
  const int w_elem = p.weights_bf16 ? 2 : 4;
  if (static_cast<int64_t>(p.batch) * p.next_n > 1 && (p.weights_stride * w_elem) % 16 != 0) return false;
  return tensor_map_encoder() != nullptr;
}

cudaError_t launch_paged_mqa_logits(const PagedMqaProblem& prob, cudaStream_t stream) {
  if (!paged_mqa_logits_supported(prob)) return cudaErrorNotSupported;
  switch (prob.heads) {
    case 16:
      return launch_by_next_n<16>(prob, stream);
    case 32:
      return launch_by_next_n<32>(prob, stream);
    case 64:
      return launch_by_next_n<64>(prob, stream);
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace deep_gemm::cuda
