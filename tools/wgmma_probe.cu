// Note [wgmma probe]: the FP8 consumers' K loop in isolation: how fast each way of
// issuing and folding the per-K-block MMAs runs on one SM, with and without the stage traffic
// that the producer's copies put on shared memory.
//
// Issue 13's gap at m = 4096 (0.85-0.93 of upstream in-run) outlived five kernel attempts. The
// profiles read our 256x128 kernel at 80% of the shared-memory pipe's wavefronts and 75% of the
// tensor pipe, upstream's at 68% and 85%; by count, a K block of ours reads A from shared memory
// once per 64-column chunk where upstream's whole waves read it once per 128.  Whether that
// traffic, the fold, or the pipeline around them is what holds the K loop back cannot be told
// from the whole kernel.  Here one CTA per SM runs only the K loop, on one tile's operands:
//   mma      each wave's wgmma chain accumulates straight into its registers, no scales (the
//            tensor cores' ceiling under this issue pattern);
//   whole    each wave's chain into one scratch buffer, waited for, then folded with its scales
//            (upstream's structure);
//   chunked  each wave's columns in two chunks through two scratch buffers, the next chunk issued
//            before the current one is folded (the structure of gemm_kernel.cuh's FP8 tiles of
//            128 columns or more);
//   paired   two K blocks' chains into two scratch buffers, the first folded while the second
//            runs (128 x BN <= 128 only: the registers of two whole scratch buffers);
//   mma-half as mma, each wave's columns in two chains of BN / 2 (the chunked modes' wgmma shape
//            and shared-memory reads, without their folds);
//   mma-wait as mma, each chain waited for before the next (whole waves' serialisation without
//            their folds);
//   mma-ffma as mma, with a K block's worth of fold FFMAs on registers of their own issued while
//            the chains run (the folds' instructions without their dependence on the chains);
//   mma-il   as mma-half, the two chains' steps interleaved in issue order (two independent
//            accumulations in one warp's queue);
//   whole-il whole waves, each wave as two interleaved chains of BN / 2 into two scratch buffers,
//            waited for, then both folded;
// and a 192x128 tile on three math warpgroups (one 64-row slab each, 152 registers a thread).
// each either on a stage filled once ("static": no copies during the loop) or through a ring of
// stages that a producer thread fills with one bulk copy per K block ("pipe": A, B, SFA and SFB,
// as many bytes as the kernel's TMA loads, the consumers waiting on full barriers and releasing
// empty ones as the kernel does), or with A and B by bulk copy and the scales as the kernel's
// producer copies them, 4 bytes per lane by cp.async ("pipe-cp"; upstream loads SFA by TMA), or through the
// ring's barriers alone, every stage filled once ("handshake": the pipe's waits and releases without its
// copies; with --static-only it runs when --handshake is given).  Reported per
// configuration: SM cycles per K block (median over CTAs and warpgroups) against the tensor cores' ideal BLOCK_M x
// BLOCK_N x 128 / 4096, and the grid's FP8 TFLOP/s from CUDA events.  `--check` first runs every configuration on 4 K
// blocks and compares the tile with a float64 product on the host (the scaled sum for the folding modes).
//
// Build and run (GPU machine, repo root; CUTLASS the nvidia-cutlass wheel's include folder):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -Icsrc -I$CUTLASS tools/wgmma_probe.cu -o build/wgmma_probe
//   build/wgmma_probe [--check] [--k-blocks 256] [--stages 4] [--ctas 132] [--only TILE,...] [--stagger CYCLES]
//                     [--static-only [--handshake]]
// benchmarks/h200_trace.sh builds and runs it.

#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/sm90_primitives.cuh"
#include "cuda/sm90_wgmma.cuh"
#include "cuda_check.h"

namespace {

namespace p = deep_gemm::cuda::sm90;

constexpr int kBlockK = 128;  // FP8 values (bytes) per K block and row
constexpr int kSmemLimit = 232448;
// How the stages are filled: once (static); by one bulk copy per K block; by a bulk copy of A and B
// and the scales by cp.async; or once, with the ring's barriers still passed (handshake).
enum Pipe : int { kStatic = 0, kBulk = 1, kBulkCp = 2, kHandshake = 3, kPipes = 4 };
// The pipes whose every K block reads K block 0 (filled once).
constexpr bool block0_only(int pipe) { return pipe == kStatic || pipe == kHandshake; }
enum Mode : int {
  kMma = 0,
  kWhole = 1,
  kChunked = 2,
  kPaired = 3,
  kMmaHalves = 4,
  kMmaWait = 5,
  kMmaFfma = 6,
  kMmaInterleaved = 7,
  kWholeInterleaved = 8
};
const char* const kModeNames[] = {"mma",      "whole",    "chunked", "paired",  "mma-half",
                                  "mma-wait", "mma-ffma", "mma-il",  "whole-il"};
// Modes that accumulate straight into the tile's registers, no scales (checked unscaled).
constexpr bool unscaled(int mode) {
  return mode == kMma || mode == kMmaHalves || mode == kMmaWait || mode == kMmaFfma || mode == kMmaInterleaved;
}

template <int kBM, int kBN>
struct Geometry {
  // Math warpgroups, 64 rows each per wave: one at 64 rows, three at 192 (one wave), else two.
  static constexpr int kWarpgroups = kBM == 64 ? 1 : kBM == 192 ? 3 : 2;
  // Registers per consumer thread: three math warpgroups and the producer's 40 share 64K.
  static constexpr int kConsumerRegs = kWarpgroups == 3 ? 152 : 232;
  static constexpr int kWaveRows = 64 * kWarpgroups;
  static constexpr int kWaves = kBM / kWaveRows;
  static constexpr int kAccs = kBN / 2;  // accumulator floats per thread and wave
  static constexpr int kABytes = kBM * kBlockK, kBBytes = kBN * kBlockK;
  // One K block's record, in global memory and in a stage: A and B (each laid out as a
  // 128-byte-swizzled TMA box leaves it), SFA (a float per row), SFB (two 128-column blocks' floats,
  // padded to 16 bytes).
  static constexpr int kOffSfa = kABytes + kBBytes;
  static constexpr int kOffSfb = kOffSfa + kBM * 4;
  static constexpr int kRecordBytes = kOffSfb + 16;
  static constexpr int kStageBytes = (kRecordBytes + 1023) / 1024 * 1024;
  static constexpr int kMaxStages = (kSmemLimit - 2048) / kStageBytes;
  static constexpr int kThreads = 128 * (kWarpgroups + 1);
  static_assert(kBN % 16 == 0 && kBN <= 256, "N a multiple of 16, two SFB blocks at most");
};

// The tile's SFB block of 8-column group j (columns 8j .. 8j + 7): the second from column 128 on.
__device__ __forceinline__ constexpr int sfb_block_of(int j) { return 8 * j >= 128 ? 1 : 0; }

// acc[4j ..] += part[4jj ..] x scale for the chunk's 8-column groups j = j0 + jj, rows row_lo
// (slots 0, 1) and row_lo + 8 (slots 2, 3), scales sa x sb of the group's SFB block.
template <int kGroups>
__device__ __forceinline__ void fold(float* acc, const float* part, int j0, float sa_lo, float sa_hi, const float* sb) {
#pragma unroll
  for (int jj = 0; jj < kGroups; ++jj) {
    const int j = j0 + jj;
    const float lo = sa_lo * sb[sfb_block_of(j)], hi = sa_hi * sb[sfb_block_of(j)];
    acc[4 * j + 0] += part[4 * jj + 0] * lo;
    acc[4 * j + 1] += part[4 * jj + 1] * lo;
    acc[4 * j + 2] += part[4 * jj + 2] * hi;
    acc[4 * j + 3] += part[4 * jj + 3] * hi;
  }
}

// One wgmma chain over the K block's four k32 steps: rows from the 64-row A slab at desc_a's
// address, kN columns of B from desc_b's.
template <int kN>
__device__ __forceinline__ void chain(uint32_t desc_a, uint32_t desc_b, float* d, bool accumulate) {
  p::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kBlockK / 32; ++kk) {
    p::fp8_wgmma<kN>(p::gmma_desc_k_sw128_at(desc_a + 2 * kk), p::gmma_desc_k_sw128_at(desc_b + 2 * kk), d,
                     accumulate || kk > 0);
  }
  p::wgmma_commit();
}

// Two such chains of kN columns each, their k32 steps interleaved in issue order (the first's
// k0, the second's k0, the first's k1, ...): columns from desc_b0's and desc_b1's addresses, into
// d0 and d1.
template <int kN>
__device__ __forceinline__ void chain_pair(uint32_t desc_a, uint32_t desc_b0, uint32_t desc_b1, float* d0, float* d1,
                                           bool accumulate) {
  p::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kBlockK / 32; ++kk) {
    p::fp8_wgmma<kN>(p::gmma_desc_k_sw128_at(desc_a + 2 * kk), p::gmma_desc_k_sw128_at(desc_b0 + 2 * kk), d0,
                     accumulate || kk > 0);
    p::fp8_wgmma<kN>(p::gmma_desc_k_sw128_at(desc_a + 2 * kk), p::gmma_desc_k_sw128_at(desc_b1 + 2 * kk), d1,
                     accumulate || kk > 0);
  }
  p::wgmma_commit();
}

template <int kBM, int kBN, int kMode>
__global__ void __launch_bounds__(Geometry<kBM, kBN>::kThreads, 1)
    probe_kernel(const uint8_t* records, int k_blocks, int stages, int pipe, int stagger, float* out,
                 long long* cycles) {
  // pipe (Pipe): handshake fills every stage once with K block 0, then passes the ring's barriers
  // alone (the producer waits for a free stage and arrives on its full barrier, copying nothing).
  using G = Geometry<kBM, kBN>;
  static_assert(kMode != kPaired || (kBM == 128 && kBN <= 128), "paired: two whole scratch buffers of a 128-row tile");
  extern __shared__ uint8_t raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) / 1024 * 1024);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + stages * G::kStageBytes);
  uint64_t* empty = full + stages;
  const int warpgroup = threadIdx.x / 128, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      p::mbar_init(&full[s], pipe == kBulkCp ? 1 + 32 : 1);  // (+ each lane's cp.async arrival)
      p::mbar_init(&empty[s], G::kWarpgroups * 4);  // every consumer warp
    }
    p::fence_mbar_init();
  }
  if (block0_only(pipe)) {  // static: stage 0 holds K block 0 for the whole loop (handshake: every stage)
    const uint4* src = reinterpret_cast<const uint4*>(records);
    for (int st = 0; st < (pipe == kHandshake ? stages : 1); ++st) {
      uint4* dst = reinterpret_cast<uint4*>(smem + st * G::kStageBytes);
      for (int i = threadIdx.x; i < G::kRecordBytes / 16; i += blockDim.x) dst[i] = src[i];
    }
    p::fence_async_shared();
  }
  __syncthreads();

  if (warpgroup == G::kWarpgroups) {  // the producer
    p::regs_decrease<40>();
    if (pipe == kHandshake && threadIdx.x % 128 < 32) {
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int s = kb % stages;
        p::mbar_wait(&empty[s], ((kb / stages) & 1) ^ 1);
        if (lane == 0) p::mbar_arrive(&full[s]);
      }
    } else if (pipe != kStatic && threadIdx.x % 128 < 32) {
      const int bulk_bytes = pipe == kBulkCp ? G::kABytes + G::kBBytes : G::kRecordBytes;
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int s = kb % stages;
        uint8_t* stage = smem + s * G::kStageBytes;
        // Each CTA starts at its own K block, so that the CTAs read different lines of L2 at a time
        // (all starting at block 0, the H200 ran every structure 25-45% below its static rate: the
        // first run's pipe figures).  CTA 0 starts at 0, so --check reads the blocks in order.
        const int rec = static_cast<int>((kb + static_cast<int64_t>(blockIdx.x) * 17) % k_blocks);
        const uint8_t* record = records + static_cast<int64_t>(rec) * G::kRecordBytes;
        p::mbar_wait(&empty[s], ((kb / stages) & 1) ^ 1);
        if (lane == 0) {
          p::mbar_arrive_expect_tx(&full[s], bulk_bytes);
          p::bulk_load(stage, record, bulk_bytes, &full[s]);
        }
        if (pipe == kBulkCp) {  // the kernel's scale copies: SFA a float per row, SFB two floats
#pragma unroll
          for (int j = 0; j < kBM / 32; ++j) {
            const int off = G::kOffSfa + 4 * (lane + 32 * j);
            p::cp_async_4(stage + off, record + off, true);
          }
          if (lane < 2) p::cp_async_4(stage + G::kOffSfb + 4 * lane, record + G::kOffSfb + 4 * lane, true);
          p::cp_async_arrive_noinc(&full[s]);
        }
      }
      if (pipe == kBulkCp) asm volatile("cp.async.wait_all;" ::: "memory");  // (no copy outlives its thread)
    }
    return;
  }
  p::regs_increase<G::kConsumerRegs>();
  const int wg_warp = (threadIdx.x / 32) % 4;
  const int row_lo = warpgroup * 64 + wg_warp * 16 + lane / 4;  // wave 0's rows row_lo, row_lo + 8
  const uint32_t desc_a0 = __shfl_sync(0xFFFFFFFFu, p::gmma_desc_lo(smem + warpgroup * 64 * kBlockK), 0);
  const uint32_t desc_b0 = __shfl_sync(0xFFFFFFFFu, p::gmma_desc_lo(smem + G::kABytes), 0);
  constexpr uint32_t kStageDesc = G::kStageBytes / 16, kWaveDesc = G::kWaveRows * kBlockK / 16;
  // The modes in halves (mma-half, mma-il, whole-il): chains of BN / 2 columns, the second half's
  // B rows kHalfDesc descriptor units on.
  constexpr bool kHalves = kMode == kMmaHalves || kMode == kMmaInterleaved || kMode == kWholeInterleaved;
  static_assert(!kHalves || kBN % 32 == 0, "halves of whole 16-column groups");
  constexpr int kHalfN = kBN / 2;
  constexpr uint32_t kHalfDesc = kHalfN * kBlockK / 16;

  float acc[G::kWaves * G::kAccs];
#pragma unroll
  for (int i = 0; i < G::kWaves * G::kAccs; ++i) acc[i] = 0.0f;
  auto wait_full = [&](int kb) {
    if (pipe != kStatic) p::mbar_wait(&full[kb % stages], (kb / stages) & 1);
  };
  auto release = [&](int kb) {
    if (pipe != kStatic) {
      __syncwarp();
      if (lane == 0) p::mbar_arrive(&empty[kb % stages]);
    }
  };
  auto stage_of = [&](int kb) { return pipe != kStatic ? kb % stages : 0; };
  struct Scales {
    float lo[G::kWaves], hi[G::kWaves], sb[2];
  };
  auto scales_of = [&](int s) {
    Scales sc;
    const float* sfa = reinterpret_cast<const float*>(smem + s * G::kStageBytes + G::kOffSfa);
    const float* sfb = reinterpret_cast<const float*>(smem + s * G::kStageBytes + G::kOffSfb);
#pragma unroll
    for (int w = 0; w < G::kWaves; ++w) {
      sc.lo[w] = sfa[row_lo + w * G::kWaveRows];
      sc.hi[w] = sfa[row_lo + w * G::kWaveRows + 8];
    }
    sc.sb[0] = sfb[0];
    sc.sb[1] = sfb[1];
    return sc;
  };

  // --stagger: the second math warpgroup starts this many SM cycles late (its K loop's clock starts
  // after the wait), so that the two warpgroups' chains may finish at different times.
  if (warpgroup == 1 && stagger > 0) {
    const long long start = clock64();
    while (clock64() - start < stagger) {
    }
  }
  const long long t0 = clock64();
  // The modes that accumulate straight into the tile's registers share one K loop: wait for the
  // stage, issue the block's chains (issue_block(kb, the stage's descriptor offset)), wait for
  // them all, release the stage.
  [[maybe_unused]] auto straight = [&](auto issue_block) {
#pragma unroll 1
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_full(kb);
      issue_block(kb, stage_of(kb) * kStageDesc);
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < G::kWaves * G::kAccs; ++i) p::fence_operand(acc[i]);
      release(kb);
    }
  };
  if constexpr (kMode == kMma) {
    straight([&](int, uint32_t s) {
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w)
        chain<kBN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, acc + w * G::kAccs, true);
    });
  } else if constexpr (kMode == kMmaHalves) {
    // mma with the chunked structure's instruction shape: each wave's columns as two chains of
    // BN / 2 (the A slab read once per chain), no waits between them, no folds.
    straight([&](int, uint32_t s) {
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float* d = acc + w * G::kAccs + h * (kHalfN / 2);
          chain<kHalfN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s + h * kHalfDesc, d, true);
        }
      }
    });
  } else if constexpr (kMode == kMmaFfma) {
    // mma, and while the chains run, as many FFMAs as a K block's folds issue (one per accumulator)
    // on registers of their own: whether the fold's instructions slow the tensor cores even when
    // nothing waits for them.
    float x[G::kAccs];
#pragma unroll
    for (int i = 0; i < G::kAccs; ++i) x[i] = static_cast<float>(i);
    straight([&](int kb, uint32_t s) {
      const Scales sc = scales_of(stage_of(kb));
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w)
        chain<kBN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, acc + w * G::kAccs, true);
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
#pragma unroll
        for (int i = 0; i < G::kAccs; ++i) x[i] = fmaf(x[i], sc.lo[w], sc.sb[i & 1]);
      }
    });
    if (stagger == -12345) {  // never (a run-time value): keeps the FFMAs' results alive
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i < G::kAccs; ++i) sum += x[i];
      out[0] = sum;
    }
  } else if constexpr (kMode == kMmaInterleaved) {
    // mma-half with the two chains' k32 steps interleaved in issue order (h0 k0, h1 k0, h0 k1, ...),
    // so that one warp's queue holds two independent accumulations.
    straight([&](int, uint32_t s) {
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
        chain_pair<kHalfN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, desc_b0 + s + kHalfDesc, acc + w * G::kAccs,
                           acc + w * G::kAccs + kHalfN / 2, true);
      }
    });
  } else if constexpr (kMode == kWholeInterleaved) {
    // whole waves, each wave's columns as two interleaved chains of BN / 2 into two scratch
    // buffers (the registers of one whole one), waited for, then both folded.
    constexpr int kHalfAccs = kHalfN / 2;
    float part[2][kHalfAccs];
#pragma unroll 1
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_full(kb);
      const Scales sc = scales_of(stage_of(kb));
      const uint32_t s = stage_of(kb) * kStageDesc;
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
        chain_pair<kHalfN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, desc_b0 + s + kHalfDesc, part[0], part[1], false);
        p::wgmma_wait<0>();
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
          for (int i = 0; i < kHalfAccs; ++i) p::fence_operand(part[h][i]);
        }
        if (w == G::kWaves - 1) release(kb);
        fold<kHalfN / 8>(acc + w * G::kAccs, part[0], 0, sc.lo[w], sc.hi[w], sc.sb);
        fold<kHalfN / 8>(acc + w * G::kAccs, part[1], kHalfN / 8, sc.lo[w], sc.hi[w], sc.sb);
      }
    }
  } else if constexpr (kMode == kMmaWait) {
    // mma with whole waves' waits: each wave's chain waited for before the next goes out, no folds
    // (the serialisation alone, without the fold's instructions).
    straight([&](int, uint32_t s) {
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
        chain<kBN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, acc + w * G::kAccs, true);
        p::wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < G::kAccs; ++i) p::fence_operand(acc[w * G::kAccs + i]);
      }
    });
  } else if constexpr (kMode == kWhole) {
    float part[G::kAccs];
#pragma unroll 1
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_full(kb);
      const Scales sc = scales_of(stage_of(kb));
      const uint32_t s = stage_of(kb) * kStageDesc;
#pragma unroll
      for (int w = 0; w < G::kWaves; ++w) {
        chain<kBN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s, part, false);
        p::wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < G::kAccs; ++i) p::fence_operand(part[i]);
        if (w == G::kWaves - 1) release(kb);
        fold<kBN / 8>(acc + w * G::kAccs, part, 0, sc.lo[w], sc.hi[w], sc.sb);
      }
    }
  } else if constexpr (kMode == kChunked) {
    static_assert(kBN % 32 == 0, "two chunks of whole 16-column groups");
    constexpr int kChunkN = kBN / 2, kChunkAccs = kChunkN / 2, kChunks = 2 * G::kWaves;
    float part[2][kChunkAccs];
#pragma unroll 1
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_full(kb);
      const Scales sc = scales_of(stage_of(kb));
      const uint32_t s = stage_of(kb) * kStageDesc;
      auto issue = [&](int c) {
        const int w = c / 2, h = c % 2;
        chain<kChunkN>(desc_a0 + s + w * kWaveDesc, desc_b0 + s + h * (kChunkN * kBlockK / 16), part[c % 2], false);
      };
      issue(0);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c + 1 < kChunks) {
          issue(c + 1);
          p::wgmma_wait<1>();
        } else {
          p::wgmma_wait<0>();
        }
#pragma unroll
        for (int i = 0; i < kChunkAccs; ++i) p::fence_operand(part[c % 2][i]);
        if (c == kChunks - 1) release(kb);
        const int w = c / 2;
        fold<kChunkN / 8>(acc + w * G::kAccs, part[c % 2], (c % 2) * (kChunkN / 8), sc.lo[w], sc.hi[w], sc.sb);
      }
    }
  } else {
    float part[2][G::kAccs];
#pragma unroll 1
    for (int kb = 0; kb + 1 < k_blocks; kb += 2) {
      wait_full(kb);
      wait_full(kb + 1);
      const Scales sc0 = scales_of(stage_of(kb)), sc1 = scales_of(stage_of(kb + 1));
      chain<kBN>(desc_a0 + stage_of(kb) * kStageDesc, desc_b0 + stage_of(kb) * kStageDesc, part[0], false);
      chain<kBN>(desc_a0 + stage_of(kb + 1) * kStageDesc, desc_b0 + stage_of(kb + 1) * kStageDesc, part[1], false);
      p::wgmma_wait<1>();
#pragma unroll
      for (int i = 0; i < G::kAccs; ++i) p::fence_operand(part[0][i]);
      release(kb);
      fold<kBN / 8>(acc, part[0], 0, sc0.lo[0], sc0.hi[0], sc0.sb);
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < G::kAccs; ++i) p::fence_operand(part[1][i]);
      release(kb + 1);
      fold<kBN / 8>(acc, part[1], 0, sc1.lo[0], sc1.hi[0], sc1.sb);
    }
  }
  const long long t1 = clock64();
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * G::kWarpgroups + warpgroup] = t1 - t0;
  if (blockIdx.x == 0) {  // the tile, row-major kBM x kBN
    const int col = 2 * (lane % 4);
#pragma unroll
    for (int w = 0; w < G::kWaves; ++w) {
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        const int r = row_lo + w * G::kWaveRows, c = 8 * j + col;
        out[r * kBN + c] = acc[w * G::kAccs + 4 * j + 0];
        out[r * kBN + c + 1] = acc[w * G::kAccs + 4 * j + 1];
        out[(r + 8) * kBN + c] = acc[w * G::kAccs + 4 * j + 2];
        out[(r + 8) * kBN + c + 1] = acc[w * G::kAccs + 4 * j + 3];
      }
    }
  }
}

// ---- host ---------------------------------------------------------------------------------------

// Byte (r, b) of a K-major tile of 128-byte rows, as a 128-byte-swizzled TMA box lays it out.
size_t swizzled(int r, int b) { return static_cast<size_t>(r) * 128 + (((b / 16) ^ (r % 8)) * 16) + b % 16; }

struct Records {
  std::vector<uint8_t> bytes;  // k_blocks records, as the kernel reads them
  std::vector<float> a, b, sfa, sfb;  // the values: a [kb][r][k], b [kb][c][k], sfa [kb][r], sfb [kb][2]
};

template <int kBM, int kBN>
Records make_records(int k_blocks, std::mt19937& rng) {
  using G = Geometry<kBM, kBN>;
  Records rec;
  rec.bytes.assign(static_cast<size_t>(k_blocks) * G::kRecordBytes, 0);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f), scale(0.5f, 1.5f);
  auto operand = [&](std::vector<float>& vals, int rows, uint8_t* dst) {
    for (int r = 0; r < rows; ++r) {
      for (int k = 0; k < kBlockK; ++k) {
        const __nv_fp8_e4m3 q(value(rng));
        vals.push_back(static_cast<float>(q));
        std::memcpy(dst + swizzled(r, k), &q, 1);
      }
    }
  };
  for (int kb = 0; kb < k_blocks; ++kb) {
    uint8_t* base = rec.bytes.data() + static_cast<size_t>(kb) * G::kRecordBytes;
    operand(rec.a, kBM, base);
    operand(rec.b, kBN, base + G::kABytes);
    for (int r = 0; r < kBM; ++r) {
      const float s = scale(rng);
      rec.sfa.push_back(s);
      std::memcpy(base + G::kOffSfa + 4 * r, &s, 4);
    }
    for (int i = 0; i < 2; ++i) {
      const float s = scale(rng);
      rec.sfb.push_back(s);
      std::memcpy(base + G::kOffSfb + 4 * i, &s, 4);
    }
  }
  return rec;
}

// 1 - 2 sum(x y) / sum(x^2 + y^2), in float64 (0 for equal tiles).
double diff_of(const std::vector<float>& got, const std::vector<double>& want) {
  double xy = 0.0, xx = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    xy += got[i] * want[i];
    xx += static_cast<double>(got[i]) * got[i] + want[i] * want[i];
  }
  return xx == 0.0 ? 1.0 : 1.0 - 2.0 * xy / xx;
}

std::vector<double> reference(const Records& rec, int bm, int bn, int k_blocks, bool scaled) {
  std::vector<double> out(static_cast<size_t>(bm) * bn, 0.0);
  for (int kb = 0; kb < k_blocks; ++kb) {
    for (int r = 0; r < bm; ++r) {
      for (int c = 0; c < bn; ++c) {
        double dot = 0.0;
        const float* a = &rec.a[(static_cast<size_t>(kb) * bm + r) * kBlockK];
        const float* b = &rec.b[(static_cast<size_t>(kb) * bn + c) * kBlockK];
        for (int k = 0; k < kBlockK; ++k) dot += static_cast<double>(a[k]) * b[k];
        const double s =
            scaled ? static_cast<double>(rec.sfa[kb * bm + r]) * rec.sfb[kb * 2 + (c >= 128 ? 1 : 0)] : 1.0;
        out[static_cast<size_t>(r) * bn + c] += s * dot;
      }
    }
  }
  return out;
}

struct Options {
  int k_blocks = 256, stages = 0, ctas = 0, repeats = 5, stagger = 0;
  bool check = false, static_only = false, handshake = false;
  std::string only;
};

template <int kBM, int kBN, int kMode>
void run_one(const Options& opt, int num_sms) {
  using G = Geometry<kBM, kBN>;
  const std::string tile = std::to_string(kBM) + "x" + std::to_string(kBN);
  if (!opt.only.empty() && ("," + opt.only + ",").find("," + tile + ",") == std::string::npos) return;
  const auto kernel = probe_kernel<kBM, kBN, kMode>;
  const int stages = opt.stages > 0 ? std::min(opt.stages, G::kMaxStages) : G::kMaxStages;
  const int smem = stages * G::kStageBytes + 2 * stages * 8 + 1024;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int ctas = opt.ctas > 0 ? opt.ctas : num_sms;
  std::mt19937 rng(kBM * 1000 + kBN * 10 + kMode);
  const int k_blocks = opt.check ? 4 : opt.k_blocks;
  const Records rec = make_records<kBM, kBN>(k_blocks, rng);
  uint8_t* d_records = nullptr;
  float* d_out = nullptr;
  long long* d_cycles = nullptr;
  CHECK(cudaMalloc(&d_records, rec.bytes.size()));
  CHECK(cudaMalloc(&d_out, sizeof(float) * kBM * kBN));
  CHECK(cudaMalloc(&d_cycles, sizeof(long long) * ctas * G::kWarpgroups));
  CHECK(cudaMemcpy(d_records, rec.bytes.data(), rec.bytes.size(), cudaMemcpyHostToDevice));
  const char* const pipe_names[kPipes] = {"static", "pipe", "pipe-cp", "handshake"};
  for (int pipe = 0; pipe < kPipes; ++pipe) {
    if (opt.static_only && pipe != kStatic && !(pipe == kHandshake && opt.handshake)) continue;
    if (opt.check) {
      // Static runs add K block 0 four times; the pipe reads the four K blocks.
      kernel<<<1, G::kThreads, smem>>>(d_records, k_blocks, stages, pipe, opt.stagger, d_out, d_cycles);
      CHECK(cudaDeviceSynchronize());
      std::vector<float> got(static_cast<size_t>(kBM) * kBN);
      CHECK(cudaMemcpy(got.data(), d_out, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
      std::vector<double> want = reference(rec, kBM, kBN, block0_only(pipe) ? 1 : k_blocks, !unscaled(kMode));
      if (block0_only(pipe)) {
        for (double& v : want) v *= k_blocks;
      }
      const double d = diff_of(got, want);
      std::printf("check %-8s %-7s %-7s diff %.2e %s\n", tile.c_str(), kModeNames[kMode], pipe_names[pipe], d,
                  d < 1e-5 ? "ok" : "FAILED");
      if (!(d < 1e-5)) std::exit(1);
      continue;
    }
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    std::vector<float> ms;
    std::vector<long long> all_cycles;
    for (int rep = 0; rep < opt.repeats + 1; ++rep) {
      CHECK(cudaEventRecord(start));
      kernel<<<ctas, G::kThreads, smem>>>(d_records, k_blocks, stages, pipe, opt.stagger, d_out, d_cycles);
      CHECK(cudaEventRecord(end));
      CHECK(cudaEventSynchronize(end));
      if (rep == 0) continue;  // warm-up
      float t = 0.0f;
      CHECK(cudaEventElapsedTime(&t, start, end));
      ms.push_back(t);
      std::vector<long long> c(static_cast<size_t>(ctas) * G::kWarpgroups);
      CHECK(cudaMemcpy(c.data(), d_cycles, sizeof(long long) * c.size(), cudaMemcpyDeviceToHost));
      all_cycles.insert(all_cycles.end(), c.begin(), c.end());
    }
    std::sort(ms.begin(), ms.end());
    std::sort(all_cycles.begin(), all_cycles.end());
    const double per_block = static_cast<double>(all_cycles[all_cycles.size() / 2]) / k_blocks;
    const double ideal = static_cast<double>(kBM) * kBN * kBlockK / 4096.0;
    const double flops = 2.0 * kBM * kBN * kBlockK * static_cast<double>(k_blocks) * ctas;
    std::printf(
        "%-8s %-7s %-7s stages %2d | %7.1f cycles per K block, ideal %6.1f: %5.1f%% | %6.0f TFLOP/s (%.3f ms)\n",
        tile.c_str(), kModeNames[kMode], pipe_names[pipe], stages, per_block, ideal, 100.0 * ideal / per_block,
        flops / (ms[ms.size() / 2] * 1e-3) / 1e12, ms[ms.size() / 2]);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
  }
  CHECK(cudaFree(d_records));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_cycles));
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "wgmma_probe: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--check") {
      opt.check = true;
    } else if (a == "--k-blocks") {
      opt.k_blocks = std::atoi(value());
    } else if (a == "--stages") {
      opt.stages = std::atoi(value());
    } else if (a == "--ctas") {
      opt.ctas = std::atoi(value());
    } else if (a == "--repeats") {
      opt.repeats = std::atoi(value());
    } else if (a == "--stagger") {
      opt.stagger = std::atoi(value());
    } else if (a == "--static-only") {
      opt.static_only = true;
    } else if (a == "--handshake") {
      opt.handshake = true;
    } else if (a == "--only") {
      opt.only = value();
    } else {
      std::fprintf(stderr, "wgmma_probe: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (opt.k_blocks < 2 || opt.k_blocks % 2 != 0 || opt.repeats < 1) {
    std::fprintf(stderr, "wgmma_probe: --k-blocks must be even and at least 2, --repeats at least 1\n");
    return 2;
  }
  int num_sms = 0;
  CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0));
  run_one<256, 128, kMma>(opt, num_sms);
  run_one<256, 128, kWhole>(opt, num_sms);
  run_one<256, 128, kChunked>(opt, num_sms);
  run_one<256, 128, kMmaHalves>(opt, num_sms);
  run_one<256, 128, kMmaWait>(opt, num_sms);
  run_one<256, 128, kMmaFfma>(opt, num_sms);
  run_one<256, 128, kMmaInterleaved>(opt, num_sms);
  run_one<256, 128, kWholeInterleaved>(opt, num_sms);
  run_one<128, 192, kMma>(opt, num_sms);
  run_one<128, 192, kWhole>(opt, num_sms);
  run_one<128, 192, kChunked>(opt, num_sms);
  run_one<128, 192, kMmaHalves>(opt, num_sms);
  run_one<128, 192, kMmaWait>(opt, num_sms);
  run_one<128, 192, kMmaFfma>(opt, num_sms);
  run_one<128, 192, kWholeInterleaved>(opt, num_sms);
  // Three math warpgroups, one 64-row slab each: while one folds, two others' chains run.
  run_one<192, 128, kMma>(opt, num_sms);
  run_one<192, 128, kWhole>(opt, num_sms);
  run_one<192, 128, kChunked>(opt, num_sms);
  run_one<192, 128, kWholeInterleaved>(opt, num_sms);
  run_one<128, 128, kMma>(opt, num_sms);
  run_one<128, 128, kWhole>(opt, num_sms);
  run_one<128, 128, kChunked>(opt, num_sms);
  run_one<128, 128, kPaired>(opt, num_sms);
  run_one<128, 256, kMma>(opt, num_sms);
  // One math warpgroup: whether a warpgroup alone keeps the tensor cores at their rate, and what
  // the fold costs when no other warpgroup's chains can cover it.
  run_one<64, 128, kMma>(opt, num_sms);
  run_one<64, 128, kMmaWait>(opt, num_sms);
  run_one<64, 128, kMmaFfma>(opt, num_sms);
  run_one<64, 128, kMmaHalves>(opt, num_sms);
  run_one<64, 128, kMmaInterleaved>(opt, num_sms);
  run_one<64, 128, kWholeInterleaved>(opt, num_sms);
  run_one<64, 128, kWhole>(opt, num_sms);
  run_one<64, 128, kChunked>(opt, num_sms);
  run_one<64, 192, kMma>(opt, num_sms);
  run_one<64, 192, kWhole>(opt, num_sms);
  run_one<64, 192, kChunked>(opt, num_sms);
  return 0;
}
