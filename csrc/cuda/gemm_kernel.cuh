#pragma once
// The sm90a GEMM kernel, block-scaled FP8 or BF16: dense, M-grouped, batched, K-grouped and
// batch-summed problems (see gemm.h).
// Over 400 lines: the producer, the consumers and the epilogue share one pipeline protocol
// (stage layout, barriers, stage descriptions) and read best together.
//
// Note [FP8 GEMM kernel design]
// - Persistent: a grid of at most num_sms CTAs walks the output tiles (BLOCK_M x BLOCK_N);
//   dense and contiguous problems in bands of `swizzle` N-tiles, so concurrent CTAs share
//   operand rows in L2; masked, batched and K-grouped problems group after group, each
//   group's tiles in bands.
// - Warp-specialised: the last warpgroup produces (its first warp), the others (one for
//   BLOCK_M 64, two otherwise) consume, 64 rows each per wave: BLOCK_M 256 takes two waves of
//   128 rows, which share one scratch accumulator in turn.  Registers move from the producer
//   to the consumers with setmaxnreg.
// - The producer owns the schedule.  It turns each tile into work items: a group and a
//   range of the tile's rows (one item for a dense or masked tile; one per run of equal
//   group ids in a contiguous layout; rows of no group are skipped, and padding rows that
//   must come out zero get an item of their own).  Group sizes are read on the device from
//   masked_m, the per-row ids or the psum ends, so nothing waits for the host.  K-grouped
//   problems take a table of per-group operand maps (A_g, B_g each with its own row stride
//   k_g), K block counts and scale offsets as a kernel parameter, built on the host from
//   the host-side sizes; empty groups are left out of it.  Batched problems use 3-D maps
//   (the group is the outer coordinate); a batch-summed item walks K through every group.
// - Per 128-wide K block of an item the producer waits for a free stage, writes the item's
//   description into the stage, issues the TMA loads of the A and B tiles (128-byte
//   swizzle; rows or columns past the matrix read as zero) and 4-byte cp.async copies of
//   the block's scale factors (SFA for the tile's rows, SFB for its one to three 128-row
//   blocks or per row), all completing on the stage's `full` barrier.
// - The consumers follow the stages: per K block 4 wgmma m64 x BLOCK_N x k32 into a
//   scratch accumulator, wait, release the stage, then fold the scratch into the float32
//   accumulator scaled by SFA[row] * SFB[col block]: the scales are applied once per K
//   block, in float32.  On an item's last K block they write its rows.
// - Epilogue: 64-row slabs go through shared memory (swizzled, conflict free) and a TMA store
//   when the item owns them (whole slabs, or any slab of a problem whose tiles end at the
//   matrix or group boundary, which the 3-D output map clips).  bf16 is stored in boxes of 32
//   columns (64-byte swizzle), or of 16 for a BF16 tile of an odd multiple of 16 columns
//   (32-byte swizzle); a bf16 C is added in registers first.  float32 is staged in two halves
//   of the tile's columns, 16-column boxes (BLOCK_N % 32 == 0), and either stored (no C) or
//   reduce-added by the TMA unit onto D when C is D (the launcher first copies a separate C
//   into D): D's old value plus the float32 tile, rounded once, which is C + A B^T exactly as
//   the register path adds it, and each element is touched by one reduction, so the result is
//   deterministic.  Anything else (partial slabs of contiguous layouts, widths the buffer does
//   not take) is written from registers with bounds checks (C is read before D is written).
// - Dense FP8 problems run a kernel of their own (sm90_fp8_gemm_dense_kernel) whose consumers
//   walk the same tile order themselves, from kernel parameters and blockIdx, rather than from
//   the stage descriptions: their loop state then stays in uniform registers.
// - Split K (sm90_fp8_gemm_split_k_kernel, dense FP8; sm90_bf16_gemm_split_k_kernel, dense
//   BF16): two CTAs of a cluster share each tile, one half of its K blocks each; the second's
//   partial tile reaches the first through shared memory (Note [split K in a cluster]).
// - Multicast pairs (sm90_bf16_gemm_multicast_kernel, dense and masked BF16): two CTAs of a
//   cluster take neighbouring tiles in step and load the operand they share once, half each,
//   into both (Note [multicast pairs]; a masked problem's pairs: MaskedPairs).
// Every choice above is fixed by the template arguments and the problem (shape and group
// layout), and each output element is summed in one fixed order: results are bitwise
// reproducible.

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/gemm_launch.cuh"
#include "cuda/gemm_trace.cuh"
#include "cuda/sm90_primitives.cuh"
#include "cuda/sm90_wgmma.cuh"

namespace deep_gemm::cuda::gemm_detail {

constexpr int kBlockK = 128;  // bytes of K per stage row: 128 FP8 or 64 BF16 values
constexpr int kSmemLimit = 232448;  // dynamic shared memory per block on sm90

enum Kind : int { kDense = 0, kRowIds = 1, kPsum = 2, kMasked = 3, kBatched = 4, kKGrouped = 5, kBatchSum = 6 };

struct KernelArgs {
  int kind;
  int m, n;  // m: rows of A (dense/contiguous) or max rows per group (masked)
  int groups;
  int num_k_blocks;
  int m_blocks, n_blocks;  // tiles along M (dense/contiguous; masked: per group at most) and N
  int swizzle;
  const int* layout;  // per-row ids, psum ends or masked_m (device)
  int alignment;  // psum: group starts are the previous end rounded up to this
  int zero_padding;  // psum: rows [end[g], align(end[g])) come out zero
  const float* sfa;
  int64_t sfa_group, sfa_mn, sfa_k;
  const float* sfb;
  int64_t sfb_group, sfb_mn, sfb_k;
  int sfb_rows;
  void* d;
  int64_t ldd;
  const void* c;
  int64_t ldc;
  int64_t d_group, c_group;  // batched / K-grouped: D's and C's group strides (elements)
  int d_f32;
  int tma_out;
  int out_add;  // the TMA path reduce-adds the float32 tile onto D (C is D)
  int clip_rows;  // items end at the output map's row boundary: partial slabs may use the TMA path
  int paired_access;  // D and C rows hold column pairs at aligned addresses (even strides and bases)
  int skip_idle;  // a warpgroup's waves without rows of the item skip their MMAs (Note [idle waves])
  int slab_wait;  // a two-wave tile's slab waits only for its own region's store (Note [slab waits])
  int stagger_cycles;  // the second math warpgroup starts this many SM cycles late (Note [staggered warpgroups])
  int scale_warp;  // a second producer warp copies the scales (Note [a warp for the scales])
  int l2_hints;  // the TMA copies' L2 policy codes, l2_hints_of(A, B, D) (Note [L2 policies])
  int stsm;  // FP8 dense kernels: the bf16 slabs go to shared memory by stmatrix (Note [stmatrix epilogue])
  int compact_epilogue;  // the common tile's epilogue takes its own path (Note [compact epilogue])
};

// Note [L2 policies]: the producer may tag each operand's K-major TMA loads, and the consumers D's
// TMA stores, with an L2 eviction priority (KernelArgs::l2_hints, two bits each: kL2Normal,
// kL2First, kL2Last).  It matters where L2 is full of dirty lines when a GEMM starts, as after the
// benchmarks' 256 MB flush (a write) or after whatever kernel wrote last in a model: each line an
// operand's miss brings in then evicts a dirty line, whose write-back competes with the operands'
// reads for DRAM.  In a one-wave problem of one or two tile rows (every tile on its own CTA at once,
// the decode shapes) each B line is read by the one or two CTAs of its tile's column within a few
// hundred cycles and never again, so its loads are tagged evict_first: later B lines then displace
// earlier B lines, which are clean.  Measured on the H100 in one process (thirty-first session):
// 64x4096x7168 19.7 -> 17.6 us after a write flush, level after a read flush; with the tags off as
// a variant, 9 to 10 of the 18 dense shapes ran 5-13% slower (all m <= 128), none faster.  Where
// tiles come in waves, a B line is read again by a later wave and evict_first costs DRAM reads
// (m = 4096: 5% slower at n = 24576 and 32768), so those keep the default policy; D's stores under
// evict_first measured 0-3% slower everywhere and are tagged only when DG_GEMM_L2_HINTS (a
// measuring switch, every launch) says so.  The bits never change: only where lines live in L2.
// (The codes and their bits: gemm_launch.cuh.)

// The work item a stage belongs to, written by the producer before it arrives; the consumers
// read it on an item's first stage (a K item then spans num_k_blocks stages).
struct StageInfo {
  int d_row0;  // D row of the tile's first row
  int n0;
  int rows;  // item rows within the tile: [rows & 0xFFFF, rows >> 16)
  int flags;
  int k_blocks;  // stages of the item
  int z;  // D's group (the 3-D output map's outer coordinate)
  int pad[2];
};
constexpr int kZero = 1, kEnd = 2;  // StageInfo::flags: a zero item (no K blocks), the end of work

// The runs of a contiguous tile that the producer emits: all of them (the general kernel), or one
// of run_contiguous's passes, the primary run (the tile's first run of rows in a group) or the rest.
constexpr int kAllRuns = 0, kPrimaryRun = 1, kOtherRuns = 2;

// The consumers' schedule, a kernel's template argument: the stage descriptions (general), the
// dense tile order, the contiguous kernel's uniform pass followed by described items, a masked
// problem's tiles (MaskedPairs, one tile at a time), walked from masked_m on the device, or a
// K-grouped problem's tiles, walked from its table of groups (a kernel parameter).
constexpr int kScheduleGeneral = 0, kScheduleDense = 1, kScheduleContiguous = 2, kScheduleMasked = 3,
              kScheduleKGrouped = 4;

// Note [lean contiguous 256x128]: the M-grouped contiguous FP8 tile of 256 rows by 128 columns
// (128x128 SFB blocks, bf16 D) whose lean twin (Note [lean kernels]) runs the dense 256x128
// kernel's K loop and epilogue: whole waves (Note [whole waves]), unrolled by four (by eight its
// consumers spill inside the loop), the stmatrix epilogue (Note [stmatrix epilogue]) and a warp for
// the scales (Note [a warp for the scales]).  On the same rows the dense 256x128 kernel ran 10%
// faster than the contiguous 128x192 pick (H100, fifty-fifth session, trace harness), and the
// 256x128 twin without the stmatrix epilogue and with its waves in chunks still lost to the pick.
// The launcher turns on idle waves, slab waits, the scale warp and stmatrix for it by default.
// ptxas (nvcc 13.0): 168 registers, 132/216 bytes of spill (160/244 before Note [epilogue state
// in registers]), none in the first pass's K loop or its epilogue.  The spill comes from the
// producer's second pass skipping the tiles without other runs (Producer::run_contiguous): walking
// every tile there compiles with none, even unrolled by eight, but reading each tile's ids again
// cost 3.5-4% at K = 2048 and 3072 for at most 1% at K = 7168 (H200, fifty-ninth session).
// Measured on the H100 (fifty-sixth session, four processes per SFA layout, against 128x192
// forced in the same rounds): with SFA M-major 1-9% faster at K = 3072 to 7168 (geomeans over
// those six problems 0.953-0.979 of 128x192's time), up to 4.6% slower at K = 2048; with SFA
// K-major level to 5% slower.  So the heuristic (contiguous_pick in gemm.cu) takes it for large
// problems with SFA M-major and K > 2048 only.
//
// Note [epilogue state in registers]: the other kernels carry two values from item to item for
// the output waits, whether any store is pending and the slab committed last (Note [slab waits]).
// In this kernel ptxas kept both in local memory, and every epilogue loaded them (LDL) just before
// the wait.  With nearly all of L1 given to shared memory those loads go to L2, and the warpgroup's
// named barrier waits for them: Nsight Compute on the H100 (fifty-seventh session,
// 4x33024x6144x7168, SFA M-major) put 1,398 long-scoreboard samples on the test of the first load
// and 1,622 on the barrier after it; the dense 256x128 kernel, whose values stay in registers,
// has 6,480 samples outside its K loop and producer against this kernel's 15,147.  The trace
// harness had this kernel's epilogue at 3,070 cycles per item against the dense kernel's 2,050.
// So this kernel keeps neither value: a wait with no store outstanding returns at once, the last
// item's stores went out a whole K loop ago, and so wave 0's slab waits for all stores and wave
// 1's for all but wave 0's store of the same item where there was one (slab0_committed, set in the
// epilogue, dead across the K loop).  Wave 0's full wait is right whatever came before, and wave
// 1's partial one is right since the one store it leaves is in the other region; the bits do not
// change.  Trace harness on one H100, main before the change (4bfdf2c) and after it alternated,
// three rounds (µs): contiguous 4x33024x6144x7168 2128.4-2130.2 -> 2100.5-2104.9 (-1.2%), psum
// 4x33024x6144x7168 2126.2-2135.5 -> 2114.1-2120.2 (-0.7%), contiguous 8x35968x4096x2048
// 520.4-521.6 -> 516.2-516.8 (-0.9%).  The same rule would serve every kernel's slab waits, but in
// the FP8 kernels that run by default the SASS shows these two values in registers (the dense and
// masked 256x128 and the contiguous 128x192 kernels), and changing their code moves their register
// allocation, unmeasured on a GPU; so they keep the state.
// The FP8 256x128 tile with 128x128 SFB blocks: the lean contiguous kernel's (above) and the lean
// masked kernel's whole-wave tile (Note [whole waves]).
constexpr bool is_fp8_256x128_tile(int block_m, int block_n, bool bf16, bool sfb_per_row) {
  return block_m == 256 && block_n == 128 && !bf16 && !sfb_per_row;
}

// Where a consumed item's rows go: a dense tile's (in registers) or a held description's (in
// the warp's shared slot, read at use).
struct DenseItem {
  int row0;
  int group = 0;  // D's group: a K-grouped problem's outer coordinate, 0 otherwise
  __device__ __forceinline__ int d_row0() const { return row0; }
  __device__ __forceinline__ int z() const { return group; }
};
struct HeldItem {
  const StageInfo* held;
  __device__ __forceinline__ int d_row0() const { return held->d_row0; }
  __device__ __forceinline__ int z() const { return held->z; }
};

// kSplit > 1: a cluster of kSplit CTAs shares each tile, one part of its K blocks each (see
// Note [split K in a cluster]); the first CTA receives the other's partial sums.
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kSplit = 1>
struct Traits {
  static_assert(!(kBf16 && kSfbPerRow), "BF16 has no scales");
  // K values per TMA box (one 128-byte atom) and per stage (Note [merged K atoms]).
  static constexpr int kAtoms = k_atoms_per_stage(kBf16, kBlockM, kBlockN);
  static constexpr int kBoxKValues = k_atom_values(kBf16);
  static constexpr int kBlockKValues = k_block_values(kBf16, kBlockM, kBlockN);
  static_assert(kBlockKValues == kBoxKValues * kAtoms, "a stage is whole atoms");
  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 256, "BLOCK_M is 64, 128 or 256");
  static_assert(kBlockN % 8 == 0 && kBlockN >= 16 && kBlockN <= 256, "BLOCK_N is a multiple of 8 in [16, 256]");
  // Each math warpgroup owns 64 rows per wave: one wave of 64 or 128 rows, or two of 128
  // (BLOCK_M 256: a warpgroup's two slabs share one scratch accumulator in turn).
  static constexpr int kMathWarpgroups = kBlockM == 64 ? 1 : 2;
  static constexpr int kWaveRows = 64 * kMathWarpgroups;
  static constexpr int kWaves = kBlockM / kWaveRows;
  static_assert(!(kBf16 && kWaves > 1), "BF16 tiles have one wave");
  static constexpr int kThreads = (kMathWarpgroups + 1) * 128;
  // The output goes through a shared-memory buffer and the TMA unit: float32 D in boxes of 16
  // columns over half the tile's columns at a time (BLOCK_N a multiple of 32), bf16 D in boxes of
  // 32 columns, or of 16 where BLOCK_N is an odd multiple of 16 (BF16 operands, and the FP8 tile
  // of three SFB blocks, 176; FP8 144 and 48 write bf16 from registers and keep the stages the
  // buffer would take).
  static constexpr bool kOutViaSmemF32 = kBlockN % 32 == 0;
  static constexpr bool kOutViaSmem = kOutViaSmemF32 || ((kBf16 || kBlockN == 176) && kBlockN % 16 == 0);
  static constexpr int kOutBoxCols = kBlockN % 32 == 0 ? 32 : 16;  // bf16 D's box width
  // Note [float32 in 8-column boxes]: a per-row FP8 tile whose width is no multiple of 32
  // (128x136) writes float32 D through the buffer too, in unswizzled boxes of 64 rows x 8
  // columns (32-byte rows: a warp's paired stores of one 8-column group fill 256 contiguous
  // bytes), eight boxes per round; its bf16 D still leaves from registers.
  static constexpr bool kOutF32Box8 = kSfbPerRow && kBlockN % 32 != 0;
  static constexpr bool kOutF32ViaTma = f32_out_via_tma(kSfbPerRow, kBlockN);
  static_assert(kOutF32ViaTma == (kOutViaSmemF32 || kOutF32Box8), "float32 D leaves by one of the two box forms");
  static constexpr int kOutBytes = kOutViaSmem || kOutF32Box8 ? kBlockM * kBlockN * 2 : 0;
  static constexpr int kAtomABytes = kBlockM * kBlockK;  // one atom of the A tile: its rows x 128 bytes
  static constexpr int kAtomBBytes = kBlockN * kBlockK;
  static constexpr int kABytes = kAtomABytes * kAtoms;
  static constexpr int kBBytes = kAtomBBytes * kAtoms;
  static constexpr int kSfbFloats = kSfbPerRow ? kBlockN : 4;
  static constexpr int kStageBytes =
      kABytes + kBBytes + kBlockM * 4 + kSfbFloats * 4 + static_cast<int>(sizeof(StageInfo)) + 16;
  static constexpr int kHeldBytes = 256;  // each consumer warp's copy of its item's StageInfo
  static_assert(kSplit == 1 || (kSplit == 2 && !kSfbPerRow && kWaves == 1),
                "split K: dense FP8 (128x128 SFB blocks) or BF16 over 2 CTAs, one wave");
  // Split K: the partial tile a CTA receives or stages to send (float32, BLOCK_M x BLOCK_N),
  // its two barriers and 16 bytes of alignment.
  static constexpr int kRedBytes = kSplit > 1 ? kBlockM* kBlockN * 4 : 0;
  static constexpr int kRedRegion = kSplit > 1 ? kRedBytes + 32 : 0;
  static constexpr int kFitStages = (kSmemLimit - 1024 - kHeldBytes - kOutBytes - kRedRegion) / kStageBytes;
  static constexpr int kStages = kFitStages < 16 ? kFitStages : 16;
  static_assert(kStages >= 2, "tile too large for shared memory");
  static constexpr int kSmemBytes = 1024 + kHeldBytes + kStages * kStageBytes + kOutBytes + kRedRegion;
  // Region offsets from the 1024-aligned base: A and B tiles, the output buffer, SFA, SFB,
  // stage descriptions, full and empty barriers, the consumer warps' held descriptions.
  static constexpr int kOffB = kStages * kABytes;
  static constexpr int kOffOut = kOffB + kStages * kBBytes;
  static constexpr int kOffSfa = kOffOut + kOutBytes;
  static constexpr int kOffSfb = kOffSfa + kStages * kBlockM * 4;
  static constexpr int kOffInfo = kOffSfb + kStages * kSfbFloats * 4;
  static constexpr int kOffFull = kOffInfo + kStages * static_cast<int>(sizeof(StageInfo));
  static constexpr int kOffEmpty = kOffFull + kStages * 8;
  static constexpr int kOffHeld = kOffEmpty + kStages * 8;
  static constexpr int kOffRed = (kOffHeld + kHeldBytes + 15) / 16 * 16;
  static constexpr int kOffRedBar = kOffRed + kRedBytes;  // full (used by the first CTA), empty (the second)
  // The CTA's register pool is fixed at launch (168 per thread, the compiler's count):
  // 56 x 128 + 224 x 256 fits 168 x 384 and 96 x 128 + 240 x 128 fits 168 x 256 exactly.
  // Asking for more than the pool holds would block setmaxnreg.inc forever.  With one math
  // warpgroup the producer keeps 96: at 40 its schedule state spilled to local memory, and
  // the H200 measured the BLOCK_M 64 shapes 3-7% faster without the spills.  With two, a
  // producer of 40 (and consumers of 232) spilled in the contiguous kernel's 128x192 (88 bytes)
  // and the dense kernel's 256x128 (24 bytes); at 56 neither spills, nor does any consumer at 224.
  static constexpr int kConsumerRegs = kMathWarpgroups == 2 ? 224 : 240;
  static constexpr int kProducerRegs = kMathWarpgroups == 2 ? 56 : 96;
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kMathWarpgroups <= 168 * kThreads, "register pool");
};

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ int align_up(int x, int a) { return (x + a - 1) / a * a; }

// The distinct values of min(128 - n0 % 128, block_n) over tiles at n0 = t * block_n
// (Note [SFB splits]): the smallest, the largest and how many.
struct SfbSplits {
  int min, max, count;
};
constexpr int sfb_split_of(int block_n, int t) {
  const int split = 128 - (t * block_n) % 128;
  return split < block_n ? split : block_n;
}
constexpr SfbSplits sfb_splits(int block_n) {
  SfbSplits out{129, 0, 0};
  for (int t = 0; t < 128; ++t) {
    const int split = sfb_split_of(block_n, t);
    bool seen = false;
    for (int u = 0; u < t; ++u) seen = seen || sfb_split_of(block_n, u) == split;
    if (seen) continue;
    ++out.count;
    out.min = split < out.min ? split : out.min;
    out.max = split > out.max ? split : out.max;
  }
  return out;
}
// The smallest of those values above x (129 when none is).
constexpr int sfb_split_above(int block_n, int x) {
  int best = 129;
  for (int t = 0; t < 128; ++t) {
    const int split = sfb_split_of(block_n, t);
    best = split > x && split < best ? split : best;
  }
  return best;
}
// The most 128-wide SFB blocks that a tile at n0 = t * block_n spans: two for 192, 160 and 144,
// three for 176 (a tile at n0 % 128 = 112 reaches a third block).  A stage holds up to four
// SFB values.
constexpr int sfb_max_blocks(int block_n) {
  int most = 0;
  for (int t = 0; t < 128; ++t) {
    const int blocks = ((t * block_n) % 128 + block_n + 127) / 128;
    most = blocks > most ? blocks : most;
  }
  return most;
}
constexpr bool sfb_two_blocks(int block_n) { return sfb_max_blocks(block_n) <= 2; }
static_assert(sfb_two_blocks(192) && sfb_two_blocks(160) && sfb_two_blocks(144) && sfb_max_blocks(176) == 3);
// The i-th smallest of the distinct splits of sfb_splits.
constexpr int sfb_split_nth(int block_n, int i) {
  int value = 0;
  for (int r = 0; r <= i; ++r) value = sfb_split_above(block_n, value);
  return value;
}
static_assert(sfb_split_nth(176, 0) == 16 && sfb_split_nth(176, 7) == 128 && sfb_splits(176).count == 8);
static_assert(sfb_split_nth(192, 0) == 64 && sfb_split_nth(192, 1) == 128);

// f(std::integral_constant<int, S>{}) for the split S == split, one of block_n's distinct splits
// (Note [SFB splits]): a chain of uniform branches that makes each split a compile-time value.
template <int kBlockN, int kI = 0, typename F>
__device__ __forceinline__ void with_sfb_split(const int split, const F& f) {
  constexpr int kS = sfb_split_nth(kBlockN, kI);
  if constexpr (kI + 1 == sfb_splits(kBlockN).count) {
    f(std::integral_constant<int, kS>{});
  } else if (split == kS) {
    f(std::integral_constant<int, kS>{});
  } else {
    with_sfb_split<kBlockN, kI + 1>(split, f);
  }
}
static_assert(sfb_splits(192).min == 64 && sfb_splits(192).max == 128 && sfb_splits(192).count == 2);
static_assert(sfb_split_above(192, 64) == 128 && sfb_split_above(160, 40) == 64 && sfb_split_above(160, 128) == 129);
static_assert(sfb_splits(128).count == 1 && sfb_splits(64).min == 64 && sfb_splits(160).count == 4);

// 3-D TMA transfers: coordinates innermost first.
__device__ __forceinline__ void tma_load_3d(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0, int32_t c1,
                                            int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::
          "r"(sm90::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(sm90::smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// tma_load_3d with an L2 cache policy (sm90::l2_policy).
__device__ __forceinline__ void tma_load_3d_hint(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0,
                                                 int32_t c1, int32_t c2, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, "
      "%4, %5}], [%2], %6;" ::"r"(sm90::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(sm90::smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "l"(policy)
      : "memory");
}

// tma_load_3d into the same offset of every CTA of the cluster in `cta_mask`, each completing
// the bytes on its own barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_3d_multicast(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0,
                                                      int32_t c1, int32_t c2, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(sm90::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(sm90::smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                             int32_t c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(sm90::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// tma_store_3d with an L2 cache policy (sm90::l2_policy).
__device__ __forceinline__ void tma_store_3d_hint(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                                  int32_t c2, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%2, %3, %4}], [%1], %5;" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(sm90::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "l"(policy)
      : "memory");
}

// tma_store_3d under an L2 policy code (D's, from KernelArgs::l2_hints; Note [L2 policies]).
__device__ __forceinline__ void tma_store_3d_as(int hint, const CUtensorMap* map, const void* src, int32_t c0,
                                                int32_t c1, int32_t c2) {
  if (hint != kL2Normal) {
    tma_store_3d_hint(map, src, c0, c1, c2, sm90::l2_policy(hint));
  } else {
    tma_store_3d(map, src, c0, c1, c2);
  }
}

// Element-wise D += box (float32 add, round to nearest), performed by the TMA unit.
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                                  int32_t c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(sm90::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Unit r of a grid of m_blocks x n_blocks units, in bands of `swizzle` N units.
__host__ __device__ __forceinline__ void band_unit(int swizzle, int m_blocks, int n_blocks, int r, int& m_blk,
                                                   int& n_blk) {
  const int band = swizzle * m_blocks;
  const int group = r / band;
  const int rest = r - group * band;
  const int first = group * swizzle;
  const int width = min(swizzle, n_blocks - first);
  m_blk = rest / width;
  n_blk = first + (rest - m_blk * width);
}

// Unit r of a (group's) grid of m_blocks x n_blocks tiles, in bands of `swizzle` N tiles.
__host__ __device__ __forceinline__ void band_tile(const KernelArgs& args, int m_blocks, int r, int& m_blk,
                                                   int& n_blk) {
  band_unit(args.swizzle, m_blocks, args.n_blocks, r, m_blk, n_blk);
}

// Note [multicast pairs]: a dense (or masked) BF16 kernel may run in clusters of two CTAs that
// take neighbouring tiles in step and share one operand's K blocks: kCastA, tiles side by side
// along N (the same A rows), kCastB, one above the other along M (the same B rows).  Each CTA
// loads its own operand whole and half of the shared one, which the TMA unit writes into both
// CTAs' shared memory (multicast); a stage is free again once the consumers of both CTAs have
// released it.  The units walked are pairs of tiles, in the dense order's bands; a pair's
// second tile may lie past the matrix (an odd tile count), and then it loads zeros, feeds its
// partner's half, and writes nothing.  (FP8 pairs, built and measured on the H200, ran 5-20%
// slower than single CTAs at m = 4096, their consumers waiting longer for data:
// docs/performance.md, fifteenth session.  Per-row FP8 (Wgrad) pairs sharing B at 128x128, built
// and timed on the H100 against the same tile single, both on the general kernel (forty-ninth
// session): float32 D 2112x4096x7168 0.958 (an odd M-tile count), 7168x4096x16384 1.004, bf16 D
// 1.001 and 1.003; the default Wgrad route, one K group, stayed faster than either.)
constexpr int kCastNone = 0, kCastA = 1, kCastB = 2;

// (dense_units and dense_tile also run on the host: tools/tma_probe.cu walks the same order.)
template <int kCast>
__host__ __device__ __forceinline__ int dense_units(const KernelArgs& args) {
  if constexpr (kCast == kCastA) return args.m_blocks * ((args.n_blocks + 1) / 2);
  if constexpr (kCast == kCastB) return (args.m_blocks + 1) / 2 * args.n_blocks;
  return args.m_blocks * args.n_blocks;
}

// The tile of CTA `rank` of a cluster in unit r (rank 0 without clusters).
template <int kCast>
__host__ __device__ __forceinline__ void dense_tile(const KernelArgs& args, int r, int rank, int& m_blk, int& n_blk) {
  if constexpr (kCast == kCastA) {
    int pair = 0;
    band_unit(max(1, args.swizzle / 2), args.m_blocks, (args.n_blocks + 1) / 2, r, m_blk, pair);
    n_blk = 2 * pair + rank;
  } else if constexpr (kCast == kCastB) {
    int pair = 0;
    band_unit(args.swizzle, (args.m_blocks + 1) / 2, args.n_blocks, r, pair, n_blk);
    m_blk = 2 * pair + rank;
  } else {
    band_tile(args, args.m_blocks, r, m_blk, n_blk);
  }
}

__host__ __device__ __forceinline__ void band_tile(const KernelArgs& args, int r, int& m_blk, int& n_blk) {
  band_tile(args, args.m_blocks, r, m_blk, n_blk);
}

// Multicast pairs on a masked problem: group g's tiles, ceil(min(masked_m[g], m) / BLOCK_M) x
// n_blocks, taken in pairs (kCastB: two M tiles of one N tile, sharing B; kCastA: two N tiles of
// one M tile, sharing A), groups in order and, within a group, in bands of `swizzle` N units as
// the dense order walks them (Note [masked bands]).  With kCastNone the units are single tiles
// (the masked kernel, and the general kernel's producer on a masked problem).  A group's odd tile
// count leaves the last pair's second tile empty: it loads rows past the group's count (or past
// the matrix: zeros), feeds its partner's half, and writes no row.  The producer and the
// consumers of both CTAs walk it alike, from the group sizes on the device; each call's unit
// comes after the previous call's.
//
// Note [masked bands]: a group of many M tiles walked a row of tiles at a time has the concurrent
// CTAs of a wave on a few M rows and every N tile, so each wave streams the group's whole B
// from HBM again (a 6144 x 7168 BF16 B is 88 MB, past L2).  In bands of `swizzle` N units, all
// of the group's M units of a band run side by side and share each B block in L2.  The order
// changes no sum (each tile is computed alone, over K in order): the bits stay.
template <int kBlockM, int kCast>
struct MaskedPairs {
  int g = -1, first = 0, count = 0, m_units = 0, n_units = 0, valid = 0;  // the current group's

  // Unit t's tile for the pair's CTA `rank`: its group, first row in the group, N tile and rows
  // (0 for an empty partner); false past the last group.
  __device__ __forceinline__ bool find(const KernelArgs& args, int t, int rank, int& m0, int& n_blk, int& rows) {
    while (t >= first + count) {
      first += count;
      if (++g >= args.groups) return false;
      valid = max(0, min(args.layout[g], args.m));
      const int m_tiles = (valid + kBlockM - 1) / kBlockM;
      n_units = kCast == kCastA ? (args.n_blocks + 1) / 2 : args.n_blocks;
      m_units = kCast == kCastB ? (m_tiles + 1) / 2 : m_tiles;
      count = m_units * n_units;
    }
    int mu = 0, nu = 0;
    band_unit(args.swizzle, m_units, n_units, t - first, mu, nu);
    const int m_blk = kCast == kCastB ? 2 * mu + rank : mu;
    n_blk = kCast == kCastA ? 2 * nu + rank : nu;
    m0 = m_blk * kBlockM;
    rows = max(0, min(kBlockM, valid - m0));
    return true;
  }
};

// The M tiles a contiguous problem's schedule walks.  A psum layout's rows past the last group's
// end (and its padding) belong to no group, so its tiles stop there: an A sized for the worst
// case (say groups x max_m rows) with few rows in use costs what the used rows cost.  The same
// value in the producer and the consumers (one load of the last end).
template <int kBlockM>
__device__ __forceinline__ int contiguous_m_blocks(const KernelArgs& args) {
  if (args.kind != kPsum) return args.m_blocks;
  if (args.groups <= 0) return 0;
  const int end = args.layout[args.groups - 1];
  const int align = max(1, args.alignment);
  const int64_t padded = (static_cast<int64_t>(max(end, 0)) + align - 1) / align * align;
  const int rows = static_cast<int>(padded < args.m ? padded : static_cast<int64_t>(args.m));
  return (rows + kBlockM - 1) / kBlockM;
}

// Operand majors of a BF16 kernel (FP8 operands are K-major): bit kMnMajorA, A is MN-major
// ([K, M] in memory, M contiguous); bit kMnMajorB, B is ([K, N], N contiguous).
constexpr int kMnMajorA = 1, kMnMajorB = 2;
constexpr int kMnChunkBytes = 64 * kBlockK;  // an MN-major tile's 64-wide slice: 64 K rows of 64 values

// Split K: CTA `rank` of a cluster of `split` takes K blocks [begin, begin + count), an even
// share in rank order (the host asks for k_blocks >= split).
__device__ __forceinline__ void split_k_range(int k_blocks, int rank, int split, int& begin, int& count) {
  begin = rank * k_blocks / split;
  count = (rank + 1) * k_blocks / split - begin;
}

// Note [a warp for the scales]: one producer warp issues a stage in about 90 dependent
// instructions when it copies the scales too (TMA for A and B by lane 0, then each lane's 4-byte
// cp.async of SFA rows and SFB blocks), and one warp's dependent chain pays each instruction's
// latency: the trace harness measured 293 SM cycles of its own per stage at 64x32 (128x2112x7168),
// where the tensor cores need 64, so at small tiles the producer sets the pace.  With
// args.scale_warp the FP8 dense kernels (dense schedule, split K included) split that work over
// two warps of the producer warpgroup, which otherwise idle: warp 0 claims each stage, arms its
// transaction count and issues A's and B's copies (kPartOperands); warp 1 walks the same tiles
// and stages, waits for the same free stages and copies the scales (kPartScales), its 32 lanes'
// cp.async arrivals being the 32 the full barrier counts besides warp 0's.  A stage completes
// once both have landed, as before; neither warp's chain waits for the other's.  The bits do not
// change (the same values land in the same slots).  The dense consumers walk their tiles
// themselves and never read the end-of-work stage, so neither part posts it.
// The M-grouped contiguous and masked FP8 kernels (128x128 SFB blocks) split their stages the
// same way.  The contiguous consumers read descriptions (a tile's rows, the second pass's items)
// and the end of work, so there the operand warp writes them and the scale warp arrives on every
// stage, those with nothing to copy (zero and idle items, the end) included; both warps walk the
// row ids or group ends themselves.
constexpr int kPartAll = 0, kPartOperands = 1, kPartScales = 2;

// The producer warp: all 32 lanes run the same control flow (lane 0 alone issues the TMA).
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors = 0, int kSplit = 1, int kCast = kCastNone>
struct Producer {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kBf16, kSplit>;
  static_assert(kCast == kCastNone || (kBf16 && kMajors == 0 && kSplit == 1), "multicast pairs: dense BF16, K-major");
  static_assert(T::kAtoms == 1 || (kMajors == 0 && kCast == kCastNone), "merged K atoms: K-major, no multicast");
  const CUtensorMap* tm_a;
  const CUtensorMap* tm_b;
  const KGroupTable* table;  // K-grouped problems only
  const KernelArgs& args;
  uint8_t* smem;  // the aligned base: every region lies at a fixed offset (Traits)
  int lane;
  int stage = 0;
  uint32_t phase = 0;
  int cast_rank = 0;  // this CTA's rank in its multicast pair
  DG_TRACE(trace::Tracer tracer{trace::kProducerRole};)  // Note [tile trace]

  __device__ __forceinline__ uint8_t* smem_a() const { return smem; }
  __device__ __forceinline__ uint8_t* smem_b() const { return smem + T::kOffB; }
  __device__ __forceinline__ float* smem_sfa() const { return reinterpret_cast<float*>(smem + T::kOffSfa); }
  __device__ __forceinline__ float* smem_sfb() const { return reinterpret_cast<float*>(smem + T::kOffSfb); }
  __device__ __forceinline__ StageInfo* info() const { return reinterpret_cast<StageInfo*>(smem + T::kOffInfo); }
  __device__ __forceinline__ uint64_t* full() const { return reinterpret_cast<uint64_t*>(smem + T::kOffFull); }
  __device__ __forceinline__ uint64_t* empty() const { return reinterpret_cast<uint64_t*>(smem + T::kOffEmpty); }

  __device__ __forceinline__ void next_stage() {
    if (++stage == T::kStages) {
      stage = 0;
      phase ^= 1;
    }
  }

  // Claims the next stage; on an item's first stage it also publishes the item's description (a
  // release by lane 0's arrive).  The scale warp (kPartScales) only waits for the stage to be free.
  template <int kPart = kPartAll>
  __device__ __forceinline__ void open_stage(const StageInfo& s, uint32_t tx_bytes, bool describe = true) {
    // (The scale warp keeps no trace: the producer's records are the operand warp's.)
    DG_TRACE(if constexpr (kPart != kPartScales) tracer.wait_begin();)
    sm90::mbar_wait(&empty()[stage], phase ^ 1);
    DG_TRACE(if constexpr (kPart != kPartScales) tracer.wait_end();)
    if (kPart != kPartScales && lane == 0) {
      if (describe) info()[stage] = s;
      sm90::mbar_arrive_expect_tx(&full()[stage], tx_bytes);
    }
  }

  // The 32 lanes' arrivals (after their scale copies land) belong to whichever warp copies scales.
  template <int kPart = kPartAll>
  __device__ __forceinline__ void close_stage() {
    if constexpr (kPart != kPartOperands) sm90::cp_async_arrive_noinc(&full()[stage]);
    next_stage();
  }

  // One item of a dense, contiguous or masked problem: rows [r_lo, r_hi) of the tile whose
  // first row is `a_row0` in A's 2-D view (and `d_row0` in D's), columns from n0, against
  // group g's B.
  // kPart: what this warp copies (Note [a warp for the scales]); kDescribe: whether the operand
  // warp publishes the item's description (the dense consumers walk their tiles themselves).
  template <int kPart = kPartAll, bool kDescribe = kPart == kPartAll>
  __device__ void item(int a_row0, int d_row0, int n0, int g, int r_lo, int r_hi) {
    const float* sfa = args.sfa + static_cast<int64_t>(args.kind == kMasked ? g : 0) * args.sfa_group;
    const int sfa_row0 = args.kind == kMasked ? a_row0 - g * args.m : a_row0;
    const float* sfb = args.sfb + static_cast<int64_t>(g) * args.sfb_group;
    // A K-major B is one 2-D view across groups; an MN-major one is 3-D, the group outermost.
    constexpr bool kMnB = (kMajors & kMnMajorB) != 0;
    load<kPart, kDescribe>(tm_a, tm_b, a_row0, kMnB ? n0 : g * args.n + n0, 0, d_row0, 0, n0, r_lo, r_hi,
                           args.num_k_blocks, sfa, sfa_row0, sfb, 0, kMnB ? g : 0);
  }

  // The stages of one item: K blocks [0, k_blocks) of the A rows from a_row0 and B rows from
  // b_row0 at outer coordinate z_ab (a batch-summed item moves to the next group every
  // num_k_blocks blocks; B's coordinate adds z_b_extra, an M-grouped item's group when B is
  // MN-major), scales from column sf_kb0 on, K coordinates from block k_begin; D's rows from
  // d_row0 of group d_z.
  // The producer's instruction count per stage bounds the pipeline at small tiles, so the
  // lanes' scale sources are worked out once per item (element offsets from a base that moves
  // one scale column per stage), and the item's description is written on its first stage only
  // (the consumers read it there).  kPart: all of a stage, or one warp's part of it (Note [a warp
  // for the scales]).
  template <int kPart = kPartAll, bool kDescribe = kPart == kPartAll>
  __device__ void load(const CUtensorMap* ma, const CUtensorMap* mb, int a_row0, int b_row0, int z_ab, int d_row0,
                       int d_z, int n0, int r_lo, int r_hi, int k_blocks, const float* sfa, int sfa_row0,
                       const float* sfb, int sf_kb0, int z_b_extra = 0, int k_begin = 0) {
    const int rows = r_lo | (r_hi << 16);
    constexpr int kSfaPerLane = kBlockM / 32;
    constexpr int kSfbPerLane = kSfbPerRow ? (kBlockN + 31) / 32 : 1;
    // Offsets (elements) of this lane's SFA rows and SFB rows or blocks from the moving bases;
    // a lane with nothing to copy at a slot writes zeros (SFA rows outside the item) or skips it.
    int64_t sfa_off[kSfaPerLane], sfb_off[kSfbPerLane];
    bool sfa_ok[kSfaPerLane], sfb_ok[kSfbPerLane];
    static_assert(kPart == kPartAll || (!kBf16 && kCast == kCastNone), "a warp for the scales: FP8, no multicast");
    constexpr bool kOperands = kPart != kPartScales, kScales = !kBf16 && kPart != kPartOperands;
    if constexpr (kScales) {
#pragma unroll
      for (int j = 0; j < kSfaPerLane; ++j) {
        const int i = lane + 32 * j;
        sfa_ok[j] = i >= r_lo && i < r_hi;
        sfa_off[j] = static_cast<int64_t>(sfa_ok[j] ? sfa_row0 + i : 0) * args.sfa_mn;
      }
#pragma unroll
      for (int j = 0; j < kSfbPerLane; ++j) {
        if constexpr (kSfbPerRow) {
          const int i = lane + 32 * j;
          const bool valid = i < kBlockN && n0 + i < args.n;
          sfb_ok[j] = i < kBlockN;
          sfb_off[j] = static_cast<int64_t>(valid ? n0 + i : 0) * args.sfb_mn;
          if (!valid) sfb_off[j] = -1;  // zero-filled
        } else {
          // Two lanes copy the tile's first two blocks (the second unused by a tile within one
          // block), three for a tile that may span three.
          constexpr int kSfbBlocks = sfb_max_blocks(kBlockN) > 2 ? 3 : 2;
          sfb_ok[j] = lane < kSfbBlocks;
          sfb_off[j] = static_cast<int64_t>(min(n0 / 128 + lane, args.sfb_rows - 1)) * args.sfb_mn;
        }
      }
    }
    const float* sfa_k = sfa + static_cast<int64_t>(sf_kb0) * args.sfa_k;
    const float* sfb_k = sfb + static_cast<int64_t>(sf_kb0) * args.sfb_k;
    int kk = k_begin;  // K block within the current group
    // (No policy: 0; a created policy is never 0, but the loads test the codes, not the values.)
    const int hint_a = l2_hint_at(args.l2_hints, kL2ShiftA),
              hint_b = l2_hint_at(args.l2_hints, kL2ShiftB);  // Note [L2 policies]
    uint64_t policy_a = 0, policy_b = 0;
    if (kOperands && lane == 0) {
      policy_a = sm90::l2_policy(hint_a);
      policy_b = sm90::l2_policy(hint_b);
    }
    DG_TRACE(tracer.begin(k_blocks);)
#pragma unroll 1
    for (int kb = 0; kb < k_blocks; ++kb) {
      // (The scale warp: the same free stage, no description, no transaction count.)
      open_stage<kPart>(StageInfo{d_row0, n0, rows, 0, k_blocks, d_z, {0, 0}}, T::kABytes + T::kBBytes,
                        kDescribe && kb == 0);
      if (kOperands && lane == 0) {
        if constexpr (kCast == kCastA) {
          // This CTA's half of the pair's A rows, into both CTAs (the map's box is half a tile).
          tma_load_3d_multicast(ma, &full()[stage], smem_a() + stage * T::kABytes + cast_rank * (T::kABytes / 2),
                                kk * T::kBlockKValues, a_row0 + cast_rank * (kBlockM / 2), z_ab, 0x3);
        } else {
          load_operand<(kMajors & kMnMajorA) != 0, kBlockM>(ma, smem_a() + stage * T::kABytes, kk, a_row0, z_ab, hint_a,
                                                            policy_a);
        }
        if constexpr (kCast == kCastB) {
          tma_load_3d_multicast(mb, &full()[stage], smem_b() + stage * T::kBBytes + cast_rank * (T::kBBytes / 2),
                                kk * T::kBlockKValues, b_row0 + cast_rank * (kBlockN / 2), z_ab, 0x3);
        } else {
          load_operand<(kMajors & kMnMajorB) != 0, kBlockN>(mb, smem_b() + stage * T::kBBytes, kk, b_row0,
                                                            z_ab + z_b_extra, hint_b, policy_b);
        }
      }
      // (A batch-summed item runs on the general kernel: never split over two warps.)
      if (++kk == args.num_k_blocks && kPart == kPartAll && args.kind == kBatchSum) {
        kk = 0;
        ++z_ab;
      }
      if constexpr (kBf16) {
        close_stage();
        continue;
      }
      if constexpr (!kScales) {
        close_stage<kPart>();  // warp 1's copies arrive for this stage (Note [a warp for the scales])
        continue;
      }
      float* sfa_dst = smem_sfa() + stage * kBlockM;
#pragma unroll
      for (int j = 0; j < kSfaPerLane; ++j) sm90::cp_async_4(sfa_dst + lane + 32 * j, sfa_k + sfa_off[j], sfa_ok[j]);
      float* sfb_dst = smem_sfb() + stage * T::kSfbFloats;
#pragma unroll
      for (int j = 0; j < kSfbPerLane; ++j) {
        if (sfb_ok[j]) {
          const bool valid = sfb_off[j] >= 0;
          sm90::cp_async_4(sfb_dst + lane + 32 * j, sfb_k + (valid ? sfb_off[j] : 0), valid);
        }
      }
      sfa_k += args.sfa_k;
      sfb_k += args.sfb_k;
      close_stage();
    }
    // (The scale warp writes no trace record: the producer's records are the operand warp's.)
    DG_TRACE(tracer.end(lane == 0 && kPart != kPartScales);)
  }

  // One operand's K block kk of kRows rows from row0: K-major, a box of kRows x 128 bytes per
  // atom (Note [merged K atoms]), or, MN-major, kRows / 64 boxes of 64 K rows x 64 values (the
  // map's inner dimension is M or N).
  template <bool kMnMajor, int kRows>
  __device__ __forceinline__ void load_operand(const CUtensorMap* map, uint8_t* dst, int kk, int row0, int z, int hint,
                                               uint64_t policy) {
    if constexpr (kMnMajor) {
      static_assert(kBf16 && kRows % 64 == 0, "MN-major operands are BF16 tiles of whole 64-wide slices");
#pragma unroll
      for (int c = 0; c < kRows / 64; ++c) {
        tma_load_3d(map, &full()[stage], dst + c * kMnChunkBytes, row0 + 64 * c, kk * T::kBlockKValues, z);
      }
    } else {
#pragma unroll
      for (int atom = 0; atom < T::kAtoms; ++atom) {
        if (hint != kL2Normal) {
          tma_load_3d_hint(map, &full()[stage], dst + atom * (kRows * kBlockK),
                           kk * T::kBlockKValues + atom * T::kBoxKValues, row0, z, policy);
        } else {
          tma_load_3d(map, &full()[stage], dst + atom * (kRows * kBlockK),
                      kk * T::kBlockKValues + atom * T::kBoxKValues, row0, z);
        }
      }
    }
  }

  // Rows [r_lo, r_hi) of the tile at D row d_row0 come out zero (padding rows).
  template <int kPart = kPartAll>
  __device__ void zero_item(int d_row0, int n0, int r_lo, int r_hi) {
    open_stage<kPart>(StageInfo{d_row0, n0, r_lo | (r_hi << 16), kZero, 0, 0, {0, 0}}, 0);
    close_stage<kPart>();
  }

  // A tile with no rows in any group, in run_contiguous's first pass: its K blocks' stages
  // with nothing loaded (the consumers' uniform pass computes on them and writes no row).
  template <int kPart = kPartAll>
  __device__ void idle_item(int d_row0, int n0) {
#pragma unroll 1
    for (int kb = 0; kb < args.num_k_blocks; ++kb) {
      open_stage<kPart>(StageInfo{d_row0, n0, 0, 0, args.num_k_blocks, 0, {0, 0}}, 0, kb == 0);
      close_stage<kPart>();
    }
  }

  template <int kPart = kPartAll>
  __device__ void finish() {
    open_stage<kPart>(StageInfo{0, 0, 0, kEnd, 0, 0, {0, 0}}, 0);
    close_stage<kPart>();
  }

  // Tile (m_blk, n_blk) of a dense or contiguous problem.
  __device__ void flat_tile(int m_blk, int n_blk) {
    const int m0 = m_blk * kBlockM, n0 = n_blk * kBlockN;
    const int valid = min(kBlockM, args.m - m0);
    if (args.kind == kDense) {
      item(m0, m0, n0, 0, 0, valid);
    } else if (args.kind == kBatchSum) {
      load(tm_a, tm_b, m0, n0, 0, m0, 0, n0, 0, valid, args.groups * args.num_k_blocks, args.sfa, m0, args.sfb, 0);
    } else if (args.kind == kRowIds) {
      row_id_runs(m0, n0, valid);
    } else {
      psum_runs(m0, n0, valid);
    }
  }

  // What a tile's run walk found (row_id_runs, psum_runs): a run in a group (the tile's primary
  // run is its first), and any other run or zero item.
  static constexpr int kHasPrimary = 1, kHasOthers = 2;

  // Runs of equal ids among the tile's rows; rows whose id lies outside [0, groups) belong
  // to no group and come out zero (every such id counts as -1, so neighbours share a run).
  // kPass picks the runs emitted (kAllRuns, or the two passes of run_contiguous).  The ids come
  // 128 rows at a time, four consecutive ones per lane, one 16-byte load where the lane's four
  // rows exist and the layout is 16-byte aligned: one load's latency per 128 rows, which the
  // producer pays before a tile's first stage.
  template <int kPass = kAllRuns, int kPart = kPartAll>
  __device__ int row_id_runs(int m0, int n0, int valid) {
    const bool vector_loads = (reinterpret_cast<uintptr_t>(args.layout) & 15u) == 0;
    int open_id = -1, open_start = 0;
    int found = 0;
#pragma unroll 1
    for (int base = 0; base < kBlockM; base += 128) {
      const int r = base + 4 * lane;  // this lane's rows r .. r + 3
      int v[4];
      if (vector_loads && r + 4 <= valid) {
        const int4 x = *reinterpret_cast<const int4*>(args.layout + m0 + r);
        v[0] = x.x;
        v[1] = x.y;
        v[2] = x.z;
        v[3] = x.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = r + q < valid ? args.layout[m0 + r + q] : -1;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (v[q] < 0 || v[q] >= args.groups) v[q] = -1;
      }
      int prev = __shfl_up_sync(0xFFFFFFFFu, v[3], 1);
      if (lane == 0) prev = base == 0 ? -2 : open_id;
      // Bit q: row r + q starts a run.
      const uint32_t starts_here =
          (v[0] != prev ? 1u : 0u) | (v[1] != v[0] ? 2u : 0u) | (v[2] != v[1] ? 4u : 0u) | (v[3] != v[2] ? 8u : 0u);
      uint32_t lanes = __ballot_sync(0xFFFFFFFFu, starts_here != 0);
      while (lanes != 0) {
        const int l = __ffs(lanes) - 1;
        lanes &= lanes - 1;
        uint32_t starts = __shfl_sync(0xFFFFFFFFu, starts_here, l);
        while (starts != 0) {
          const int q = __ffs(starts) - 1;
          starts &= starts - 1;
          const int mine = q == 0 ? v[0] : q == 1 ? v[1] : q == 2 ? v[2] : v[3];
          const int id_b = __shfl_sync(0xFFFFFFFFu, mine, l);
          const int row = base + 4 * l + q;
          if (row > 0) row_id_run<kPass, kPart>(m0, n0, open_id, open_start, min(row, valid), found);
          open_id = id_b;
          open_start = row;
        }
      }
    }
    row_id_run<kPass, kPart>(m0, n0, open_id, open_start, valid, found);
    return found;
  }

  // Rows [r_lo, r_hi) of the tile (ids already folded to -1 outside [0, groups)); the tile's
  // first run in a group is its primary run (`found` records what has been seen).
  template <int kPass, int kPart = kPartAll>
  __device__ void row_id_run(int m0, int n0, int id, int r_lo, int r_hi, int& found) {
    if (r_lo >= r_hi) return;  // a run past the problem's last row
    const bool primary = id >= 0 && !(found & kHasPrimary);
    found |= primary ? kHasPrimary : kHasOthers;
    if (!emits<kPass>(primary)) return;
    if (id >= 0) {
      item<kPart, kPart != kPartScales>(m0, m0, n0, id, r_lo, r_hi);
    } else {
      zero_item<kPart>(m0, n0, r_lo, r_hi);
    }
  }

  template <int kPass>
  __device__ __forceinline__ static bool emits(bool primary) {
    return kPass == kAllRuns || (kPass == kPrimaryRun) == primary;
  }

  // Group g of a psum layout owns rows [align(end[g-1]), end[g]); the rows after end[g] up
  // to the next start are padding.  Every lane walks the same groups (broadcast loads).  kPass
  // and the result as in row_id_runs (the tile's first group run is its primary run).
  template <int kPass = kAllRuns, int kPart = kPartAll>
  __device__ int psum_runs(int m0, int n0, int valid) {
    const int lo = m0, hi = m0 + valid;
    // First group whose end lies past the tile's first row (binary search, ends ascending).
    int g_lo = 0, g_hi = args.groups;
    while (g_lo < g_hi) {
      const int mid = (g_lo + g_hi) / 2;
      if (args.layout[mid] <= lo) {
        g_lo = mid + 1;
      } else {
        g_hi = mid;
      }
    }
    int row = lo;
    int g = g_lo;
    int found = 0;
    // Padding of the group before g, if the tile starts inside it.
    int prev_end = g == 0 ? 0 : args.layout[g - 1];
#pragma unroll 1
    while (row < hi) {
      const int start = align_up(prev_end, args.alignment);
      if (row < start) {  // padding rows of group g - 1
        const int stop = min(start, hi);
        if (args.zero_padding && g > 0) {
          found |= kHasOthers;
          if (emits<kPass>(false)) zero_item<kPart>(m0, n0, row - m0, stop - m0);
        }
        row = stop;
        continue;
      }
      if (g >= args.groups) break;  // past the last group: rows of no group
      const int end = args.layout[g];
      if (row < end) {
        const int stop = min(end, hi);
        const bool primary = !(found & kHasPrimary);
        found |= primary ? kHasPrimary : kHasOthers;
        if (emits<kPass>(primary)) item<kPart, kPart != kPartScales>(m0, m0, n0, g, row - m0, stop - m0);
        row = stop;
      }
      prev_end = max(end, prev_end);
      ++g;
    }
    return found;
  }

  __device__ __forceinline__ void tile_of(int r, int& m_blk, int& n_blk) const { band_tile(args, r, m_blk, n_blk); }

  // A dense problem's tiles (the dense kernel: no other kind's schedule is compiled in).  Split
  // K: cluster `cta` of num_ctas walks the tiles, this CTA loading its part of their K blocks.
  // Multicast pairs: cluster `cta` walks the pairs, this CTA (cluster_rank) one tile of each.
  // kPart: one warp's part of each stage (Note [a warp for the scales]), or all of it.
  template <int kPart = kPartAll>
  __device__ void run_dense(int cta, int num_ctas, int cluster_rank = 0) {
    const int units = dense_units<kCast>(args);
    int k_begin = 0, k_count = args.num_k_blocks;
    if constexpr (kSplit > 1) split_k_range(args.num_k_blocks, cluster_rank, kSplit, k_begin, k_count);
    if constexpr (kCast != kCastNone) {
      cast_rank = cluster_rank;
      if (args.kind == kMasked) {
        run_masked(cta, num_ctas, cluster_rank);
        return;
      }
    }
#pragma unroll 1
    for (int t = cta; t < units; t += num_ctas) {
      int m_blk = 0, n_blk = 0;
      dense_tile<kCast>(args, t, cluster_rank, m_blk, n_blk);
      const int m0 = m_blk * kBlockM, n0 = n_blk * kBlockN;
      if constexpr (kSplit > 1) {
        load<kPart>(tm_a, tm_b, m0, n0, 0, m0, 0, n0, 0, min(kBlockM, args.m - m0), k_count, args.sfa, m0, args.sfb,
                    k_begin, 0, k_begin);
      } else {
        item<kPart>(m0, m0, n0, 0, 0, min(kBlockM, args.m - m0));
      }
    }
    if constexpr (kPart == kPartAll) finish();
  }

  // A masked problem's units (MaskedPairs: multicast pairs, or single tiles), as the consumers of
  // the dense-schedule and masked kernels walk them: cluster `cta` of num_ctas, this CTA `rank`.
  // Those consumers read no description and no end of work, so a split stage (kPart) posts neither;
  // whole stages post both, for the general kernel's consumers (run).
  template <int kPart = kPartAll>
  __device__ void run_masked(int cta, int num_ctas, int rank) {
    MaskedPairs<kBlockM, kCast> walk;
    int m0 = 0, n_blk = 0, rows = 0;
#pragma unroll 1
    for (int t = cta; walk.find(args, t, rank, m0, n_blk, rows); t += num_ctas) {
      const int row0 = walk.g * args.m + m0;
      item<kPart>(row0, row0, n_blk * kBlockN, walk.g, 0, rows);
    }
    if constexpr (kPart == kPartAll) finish();
  }

  // M-grouped contiguous problems (row ids or psum) in two passes, for consumers that keep a
  // uniform schedule (Note [uniform contiguous schedule]).  First every tile once, in the dense
  // order: its primary run over all K blocks (an idle item when it has none); then every other
  // run and zero item, as described stages, of the tiles that have any.  The first pass
  // remembers which those are, one bit per tile of this CTA, in a word per lane (32 x 32 tiles;
  // tiles past those are walked again), so that the second pass walks no pure tile's rows.
  // kPart: one warp's part of every stage, described ones, idle and zero items and the end of work
  // included (Note [a warp for the scales]); both warps make the same walk.
  template <int kPart = kPartAll>
  __device__ void run_contiguous(int cta, int num_ctas) {
    constexpr int kRemembered = 32 * 32;
    const int m_blocks = contiguous_m_blocks<kBlockM>(args);
    const int units = m_blocks * args.n_blocks;
    uint32_t others = 0;  // lane j, bit b: this CTA's tile 32 j + b has other runs
    int local = 0;
#pragma unroll 1
    for (int t = cta; t < units; t += num_ctas, ++local) {
      int m_blk = 0, n_blk = 0;
      band_tile(args, m_blocks, t, m_blk, n_blk);
      const int m0 = m_blk * kBlockM, n0 = n_blk * kBlockN;
      const int valid = min(kBlockM, args.m - m0);
      const int found = args.kind == kRowIds ? row_id_runs<kPrimaryRun, kPart>(m0, n0, valid)
                                             : psum_runs<kPrimaryRun, kPart>(m0, n0, valid);
      if (!(found & kHasPrimary)) idle_item<kPart>(m0, n0);
      if ((found & kHasOthers) && local < kRemembered && lane == local / 32) others |= 1u << (local % 32);
    }
    local = 0;
#pragma unroll 1
    for (int t = cta; t < units; t += num_ctas, ++local) {
      if (local < kRemembered && !((__shfl_sync(0xFFFFFFFFu, others, local / 32) >> (local % 32)) & 1u)) continue;
      int m_blk = 0, n_blk = 0;
      band_tile(args, m_blocks, t, m_blk, n_blk);
      const int m0 = m_blk * kBlockM, n0 = n_blk * kBlockN;
      const int valid = min(kBlockM, args.m - m0);
      if (args.kind == kRowIds) {
        row_id_runs<kOtherRuns, kPart>(m0, n0, valid);
      } else {
        psum_runs<kOtherRuns, kPart>(m0, n0, valid);
      }
    }
    finish<kPart>();
  }

  __device__ void run(int cta, int num_ctas) {
    if (args.kind == kBatched || args.kind == kKGrouped) {
      const int per_group = args.m_blocks * args.n_blocks;
      // (The K-grouped kernel alone passes a table: the other kernels drop this path.)
      const int count = table != nullptr ? table->count : args.groups;
      const int units = count * per_group;
#pragma unroll 1
      for (int t = cta; t < units; t += num_ctas) {
        const int gi = t / per_group;
        int m_blk = 0, n_blk = 0;
        tile_of(t - gi * per_group, m_blk, n_blk);
        const int m0 = m_blk * kBlockM, n0 = n_blk * kBlockN;
        const int valid = min(kBlockM, args.m - m0);
        if (table != nullptr) {
          // (A table built on the device lists the empty groups too: D keeps C there.)
          if (table->k_blocks[gi] == 0) continue;
          load(&table->a[gi], &table->b[gi], m0, n0, 0, m0, table->group[gi], n0, 0, valid, table->k_blocks[gi],
               args.sfa, m0, args.sfb, table->sf_block0[gi]);
        } else {
          load(tm_a, tm_b, m0, n0, gi, m0, gi, n0, 0, valid, args.num_k_blocks,
               args.sfa + static_cast<int64_t>(gi) * args.sfa_group, m0,
               args.sfb + static_cast<int64_t>(gi) * args.sfb_group, 0);
        }
      }
    } else if (args.kind == kMasked) {
      run_masked(cta, num_ctas, 0);  // the masked kernel's walk, described stages, the end of work
      return;
    } else {
      const int m_blocks = contiguous_m_blocks<kBlockM>(args);  // args.m_blocks but for psum
      const int units = m_blocks * args.n_blocks;
#pragma unroll 1
      for (int t = cta; t < units; t += num_ctas) {
        int m_blk = 0, n_blk = 0;
        band_tile(args, m_blocks, t, m_blk, n_blk);
        flat_tile(m_blk, n_blk);
      }
    }
    finish();
  }
};

// kSchedule: the consumers' schedule (kScheduleGeneral, kScheduleDense, kScheduleContiguous; below).
// kLeanOut: the output is bf16 D through the TMA unit with no C, always (Note [lean kernels]).
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kSchedule = kScheduleGeneral, int kMajors = 0,
          int kSplit = 1, int kCast = kCastNone, bool kLeanOut = false>
__device__ __forceinline__ void gemm_body(const CUtensorMap& tm_a, const CUtensorMap& tm_b, const CUtensorMap& tm_d,
                                          const KGroupTable* table, const KernelArgs& args) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kBf16, kSplit>;
  static_assert(kSplit == 1 || kSchedule == kScheduleDense, "split K serves the dense kernel");
  static_assert(kCast == kCastNone || kSchedule == kScheduleDense, "multicast pairs serve the dense kernel");
  static_assert(
      !kLeanOut || ((kSchedule == kScheduleDense || kSchedule == kScheduleContiguous || kSchedule == kScheduleMasked) &&
                    (!kBf16 || ((kSchedule == kScheduleMasked || kCast != kCastNone) && kMajors == 0)) && !kSfbPerRow &&
                    kSplit == 1 && T::kOutViaSmem),
      "the lean output serves the FP8 dense, contiguous and masked kernels and the K-major BF16 masked and "
      "multicast ones, through the output buffer");
  // The CTAs of a cluster (split K, or a multicast pair) reach each other's shared memory.
  constexpr bool kCluster = kSplit > 1 || kCast != kCastNone;
  constexpr int kClusterSize = kSplit > 1 ? kSplit : kCast != kCastNone ? 2 : 1;
  // The FP8 dense kernels (split K included; multicast pairs are BF16): 128x128 SFB blocks.
  constexpr bool kFp8Dense = !kBf16 && kSchedule == kScheduleDense && kCast == kCastNone;
  static_assert(!kFp8Dense || !kSfbPerRow, "the dense FP8 kernels take 128x128 SFB blocks");
  // The lean contiguous 256x128 kernel (Note [lean contiguous 256x128]) takes the dense kernel's
  // K loop and epilogue.
  constexpr bool kLeanContiguous256 =
      kLeanOut && kSchedule == kScheduleContiguous && is_fp8_256x128_tile(kBlockM, kBlockN, kBf16, kSfbPerRow);
  namespace p = deep_gemm::cuda::sm90;
  constexpr int kStages = T::kStages;

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, so the compiler still sees shared-memory pointers
  // (LDS and STS, not generic loads and stores).
  uint8_t* smem = smem_raw + ((1024u - p::smem_addr(smem_raw) % 1024u) % 1024u);
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem_a + kStages * T::kABytes;
  uint8_t* smem_out = smem_b + kStages * T::kBBytes;
  float* smem_sfa = reinterpret_cast<float*>(smem_out + T::kOutBytes);
  float* smem_sfb = smem_sfa + kStages * kBlockM;
  StageInfo* info = reinterpret_cast<StageInfo*>(smem_sfb + kStages * T::kSfbFloats);
  uint64_t* full = reinterpret_cast<uint64_t*>(info + kStages);
  uint64_t* empty = full + kStages;
  StageInfo* held_info = reinterpret_cast<StageInfo*>(empty + kStages);
  // Split K: the received partial tile and its barriers (full: the partial has landed, in the
  // first CTA; empty: the first CTA has read it, in the other).
  float4* red = reinterpret_cast<float4*>(smem + T::kOffRed);
  uint64_t* red_full = reinterpret_cast<uint64_t*>(smem + T::kOffRedBar);
  uint64_t* red_empty = red_full + 1;
  const uint32_t split_rank = kCluster ? p::cluster_cta_rank() : 0;  // (a multicast pair's rank too)
  const int split_cluster = static_cast<int>(blockIdx.x) / kClusterSize;
  const int split_clusters = static_cast<int>(gridDim.x) / kClusterSize;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  // Warp-uniform values pass through a shuffle (lane 0's value), a hint that they are the same
  // in every lane.  In the general kernel the consumers' stage counter still lives in per-thread
  // registers (its loop bounds come from the stage descriptions in shared memory), so each wgmma
  // moves its descriptors with four R2UR; the dense kernel's own schedule avoids that (below).
  const int warpgroup = __shfl_sync(0xFFFFFFFFu, static_cast<int>(threadIdx.x / 128), 0);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      p::mbar_init(&full[s], 1 + 32);  // the producer's expect_tx, and 32 lanes' scale copies
      // Every consumer warp's release (of both CTAs of a multicast pair).
      p::mbar_init(&empty[s], T::kMathWarpgroups * 4 * (kCast != kCastNone ? 2 : 1));
    }
    if constexpr (kSplit > 1) {
      p::mbar_init(red_full, 1);
      p::mbar_init(red_empty, 1);
    }
    p::fence_mbar_init();
    // The first tile's partial: armed before the other CTA can send it (after cluster_sync).
    if constexpr (kSplit > 1) p::mbar_arrive_expect_tx(red_full, T::kRedBytes);
  }
  __syncthreads();
  if constexpr (kCluster) p::cluster_sync();  // the other CTA's barriers are initialised

  if (warpgroup == T::kMathWarpgroups) {
    // ---------------------------------------------------------------- producer
    p::regs_decrease<T::kProducerRegs>();
    // The FP8 kernels with 128x128 SFB blocks and a schedule of their own (dense, split K included,
    // M-grouped contiguous and masked) may split each stage over two warps (Note [a warp for the
    // scales]); both walk the same units.  Not the plain contiguous 256x128 kernel, whose ptxas
    // spills it grew from 196/228 to 320/360 bytes; its lean twin has it (Note [lean contiguous
    // 256x128]).
    constexpr bool kScaleWarp = !kBf16 && !kSfbPerRow && kCast == kCastNone &&
                                (kSchedule == kScheduleDense || kSchedule == kScheduleMasked ||
                                 (kSchedule == kScheduleContiguous && (kBlockM < 256 || kLeanContiguous256)));
    const int dense_cta = kCluster ? split_cluster : static_cast<int>(blockIdx.x);
    const int dense_ctas = kCluster ? split_clusters : static_cast<int>(gridDim.x);
    const int dense_rank = kCluster ? static_cast<int>(split_rank) : 0;
    // (For those, the producer warp's index through a shuffle: a hint that it is warp-uniform,
    // so that both warps' loops keep their state in uniform registers.)
    const int producer_warp = kScaleWarp ? __shfl_sync(0xFFFFFFFFu, warp % 4, 0) : warp % 4;
    // This kernel's schedule as the producer walks it, all of each stage or one warp's part.
    auto walk = [&](auto& producer, const auto part) {
      constexpr int kPart = decltype(part)::value;
      if constexpr (kSchedule == kScheduleDense) {  // (split K and multicast pairs included)
        producer.template run_dense<kPart>(dense_cta, dense_ctas, dense_rank);
      } else if constexpr (kSchedule == kScheduleContiguous) {
        producer.template run_contiguous<kPart>(blockIdx.x, gridDim.x);
      } else if constexpr (kSchedule == kScheduleMasked) {
        producer.template run_masked<kPart>(blockIdx.x, gridDim.x, 0);
      } else {
        static_assert(kPart == kPartAll, "the other schedules' stages are never split");
        producer.run(blockIdx.x, gridDim.x);
      }
    };
    if (producer_warp == 0) {
      if (lane == 0) {
        p::tma_prefetch_map(&tm_a);
        p::tma_prefetch_map(&tm_b);
      }
      Producer<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast> producer{&tm_a, &tm_b, table,
                                                                                     args,  smem,  lane};
      if (kScaleWarp && args.scale_warp) {
        if constexpr (kScaleWarp) walk(producer, std::integral_constant<int, kPartOperands>{});
      } else {
        walk(producer, std::integral_constant<int, kPartAll>{});
      }
      DG_TRACE(producer.tracer.flush(lane == 0);)
    } else if (producer_warp == 1 && args.scale_warp) {
      if constexpr (kScaleWarp) {
        // Note [a warp for the scales]: the second producer warp copies the scales.
        Producer<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast> scales{&tm_a, &tm_b, table,
                                                                                     args,  smem,  lane};
        walk(scales, std::integral_constant<int, kPartScales>{});
      }
    }
    // Note [producers leave the cluster barrier]: the producer warps return without the final
    // cluster barrier.  barrier.cluster.wait waits for the cluster's non-exited threads only, so
    // the consumers' barrier at the end of the kernel still keeps both CTAs' shared memory alive
    // until neither CTA's consumers can reach the other's (every stage a producer filled, in its
    // own CTA or, multicast, in both, is waited for by those consumers before that barrier).
    // With a barrier here ptxas kept every cluster kernel's producer loop state in per-thread
    // registers, each TMA issue going through an R2UR loop (9-21 R2UR per stage in the split-K
    // and BF16 pair kernels, none without it).  Timed level on the H100 (twenty-ninth session).
    return;
  }

  // ---------------------------------------------------------------- consumers
  p::regs_increase<T::kConsumerRegs>();
  // Note [staggered warpgroups]: the two math warpgroups of a 128- or 256-row tile finish its K
  // loop together and write their slabs together, so the tensor cores idle through every
  // epilogue.  Started stagger_cycles late, the second runs behind the first (by at most the
  // pipeline's depth, since a stage is freed only when both are done with it), and each one's
  // epilogue may overlap the other's last or first MMAs.  Opt-in (DG_GEMM_STAGGER_CYCLES, 0 by
  // default): on the H200 (twenty-first session, one process, rotated order) level on all 18 dense
  // shapes at 2000 cycles and slower on the grouped families, so it stays off.
  if (T::kMathWarpgroups == 2 && warpgroup == 1 && args.stagger_cycles > 0) {
    const long long start = clock64();
    while (clock64() - start < args.stagger_cycles) {
    }
  }
  const int wg_warp = warp % 4;
  // Tile-local rows row_lo and row_lo + 8 of wave 0; wave w adds w * kWaveRows.
  const int row_lo = warpgroup * 64 + wg_warp * 16 + lane / 4;
  const int col_in_group = 2 * (lane % 4);
  const int wg_thread = threadIdx.x % 128;
  bool stores_pending = false;
  int last_slab = -1;  // the slab whose bf16 store this thread committed last (Note [slab waits])
  // The lean contiguous 256x128 kernel keeps neither, only whether this item's wave-0 slab went
  // out through the TMA unit, set in its epilogue (Note [epilogue state in registers]).
  bool slab0_committed = false;
  DG_TRACE(trace::Tracer tracer{warpgroup};)  // Note [tile trace]
  constexpr int kWaves = T::kWaves;
  // Idle waves are skipped (Note [idle waves]) wherever an item may leave a warpgroup's wave
  // without rows: every schedule but the plain dense kernel's (multicast pairs walk masked
  // problems too).
  constexpr bool kSkipIdle = kSchedule != kScheduleDense || kCast != kCastNone;
  constexpr int kAccs = kBlockN / 2;  // accumulator floats per thread and wave
  // FP8 scratch chunks: each wave's columns in two halves when the halves are multiples of
  // 32 columns, BLOCK_N is at least 128 and SFB is per block.  Measured on the H200 (one CTA,
  // per K block): 64x128 296 -> 278 ns, 128x192 665 -> 633 ns, 128x128 and 256x128 unchanged;
  // 64x64 (halves of 32) 218 -> 228 ns and 128x160 (halves of 80) 534 -> 545 ns; the K-grouped
  // problems (per-row SFB, 128x128) 8% slower.  Those stay whole.
  // A tile of three SFB blocks (176, one wave) goes in two chunks, 96 and 80 columns wide, and
  // its K loop is compiled once per possible split (Note [SFB splits]), chosen per item: each
  // chunk's fold then takes its groups' scales at compile time, as the two-block tiles do.
  constexpr bool kThreeSfb = !kBf16 && !kSfbPerRow && !sfb_two_blocks(kBlockN);
  // Note [whole waves]: the 256x128 FP8 tile issues one m64 x 128 chain per wave into one scratch
  // buffer, waits for it and folds it before the next goes out (upstream's structure), and its K
  // loop is unrolled by eight, so that ptxas places the next stage's try-wait, the release and the
  // next K block's scale loads among the last wave's fold instructions in seven K blocks of eight
  // (a loop of one K block keeps the wait behind the back edge).  The plain dense kernel takes it,
  // and the lean contiguous and masked 256x128 kernels (below); the other grouped kernels keep the
  // chunks.  Measured on the H100 (thirty-third session, trace harness, three rounds, µs), chunks /
  // whole waves / whole unrolled by 2 / by 4:
  // 4096x4096x7168 186.2-187.4 / 187.1-187.6 / 181.1-181.6 / 179.6-179.9, 4096x7168x16384
  // 725.3-726.2 / 726.5-730.2 / 710.2-710.8 / 694.2-695.2, 4096x7168x2048 105.0-105.6 /
  // 104.1-104.6 / 103.6-103.7 / 103.2-103.4; the chunks unrolled by 2, 184.6-185.2 at
  // 4096x4096x7168.  Thirty-fourth session (H100, two rounds, µs), whole waves unrolled by 4 / by 8
  // / chunks unrolled by 4: 4096x4096x7168 181.6-182.0 / 179.8-180.0 / 186.0-186.3,
  // 4096x7168x16384 708.8-709.0 / 700.2-701.1 / 730.8-731.2, 4096x7168x2048 103.4-103.8 /
  // 102.7-102.9 / 104.4-104.7, 2816x1536x16384 103.1-103.8 / 102.1 / 104.9-105.4.  Whole waves at
  // 128x192 (one scratch buffer of 192 columns) lost 2-5%, unrolled or not, and that tile's chunks
  // unrolled by 2 or 4 lost up to 7% (4096x32768x512 145.0 against 154.1 and 155.1): it keeps its
  // chunks, not unrolled.  tools/wgmma_probe.cu keeps both structures for study.
  // At long K too: a 128x192 twin of the contiguous and lean masked kernels in whole waves (one
  // m64 x 192 chain per K block, A read once) ran slower than the chunks on 18 of the 23
  // contiguous, psum and masked benchmark problems timed and level on 5 (H100, one process,
  // forty-first session: chunks/twin 0.90-1.01, geomean 0.968), so the chunks' second read of A
  // is not the contiguous gap.  Nor with the K loop unrolled by eight and the SFB split settled at
  // compile time (forty-second session, same measure): contiguous 0.961 (8 of 8 slower), psum
  // 0.985, masked 0.995, dense 128x192 picks 0.976.
  // The lean contiguous 256x128 kernel takes whole waves too (Note [lean contiguous 256x128]), and
  // so does the lean masked FP8 kernel's 256x128 tile, unrolled by four like the contiguous one
  // (ptxas: no spill either way).  Trace harness on one H200 (fifty-eighth session, three rounds
  // against main, µs, the same error against float64): 32x192x6144x7168 549.2-549.8 -> 546.5-547.8,
  // 32x192x4096x2048 127.9-128.5 -> 127.2-127.9, and 6x1024x6144x7168 (groups of about 1024 rows,
  // where the heuristic takes another tile) 457.1-458.0 -> 435.5-437.2; unrolled by eight 548.3-548.4,
  // 128.1-128.8 and 434.2-434.8.
  constexpr bool kLeanMasked256 =
      kLeanOut && kSchedule == kScheduleMasked && is_fp8_256x128_tile(kBlockM, kBlockN, kBf16, kSfbPerRow);
  constexpr bool kLeanGrouped256 = kLeanContiguous256 || kLeanMasked256;  // whole waves, unrolled by four
  constexpr bool kWholeWaves = (kFp8Dense && kBlockN == 128 && kWaves == 2) || kLeanGrouped256;
  constexpr int kChunksPerWave =
      kThreeSfb || (!kWholeWaves && !kSfbPerRow && kBlockN >= 128 && kBlockN % 64 == 0) ? 2 : 1;
  constexpr int kChunkN = kThreeSfb ? 96 : kBlockN / kChunksPerWave;  // (the first chunk's width)
  constexpr int kLastChunkN = kBlockN - (kChunksPerWave - 1) * kChunkN;  // the last chunk's width
  constexpr int kChunkAccs = kChunkN / 2;
  constexpr int kChunks = kWaves * kChunksPerWave;
  static_assert(!kThreeSfb || (sfb_max_blocks(kBlockN) == 3 && kWaves == 1 && kLastChunkN > 0 &&
                               kLastChunkN <= kChunkN && kLastChunkN % 16 == 0),
                "a tile spans at most three SFB blocks, in two chunks");
  // Note [SFB splits]: tiles start at multiples of BLOCK_N, so a tile's columns before its next
  // 128-wide SFB block, min(128 - n0 % 128, BLOCK_N), take one of a few values known at compile
  // time: 128 or 64 for BLOCK_N 192, BLOCK_N alone when it divides 128.
  constexpr SfbSplits kSplits = sfb_splits(kBlockN);
  float acc[kWaves * kAccs];
  // The low words of stage 0's wgmma descriptors (this warpgroup's 64 rows of A, and B); stage
  // s adds its offset in 16-byte units to the start-address field, which never carries (shared
  // memory < 256 KiB).  The high word is a constant.
  // A K-major tile's 64-row slab and an MN-major tile's 64-wide slice both span 8 KiB, so a
  // warpgroup's part of A starts at the same offset either way.  MN-major operands carry the
  // slices' stride in the leading-byte-offset field.
  constexpr bool kMnA = (kMajors & kMnMajorA) != 0, kMnB = (kMajors & kMnMajorB) != 0;
  int red_tiles = 0;  // split K: partial tiles sent or received so far (the barriers' phases)
  const uint32_t desc_a0 =
      __shfl_sync(0xFFFFFFFFu, p::gmma_desc_lo(smem_a + warpgroup * 64 * kBlockK, kMnA ? kMnChunkBytes : 16), 0);
  const uint32_t desc_b0 = __shfl_sync(0xFFFFFFFFu, p::gmma_desc_lo(smem_b, kMnB ? kMnChunkBytes : 16), 0);
  // One k16 step (BF16) moves 32 bytes along a K-major row, or 16 rows of 128 bytes MN-major.
  constexpr uint32_t kStepA = kMnA ? 16 * kBlockK / 16 : 2, kStepB = kMnB ? 16 * kBlockK / 16 : 2;

  // One item, whose first stage the caller has waited for: rows [r_lo, r_hi) of the tile at D
  // row where.d_row0() (group where.z()), columns from n0, k_blocks stages (0: a zero item).
  // Each schedule below keeps its own stage and phase: a variable that one of them leaves in
  // per-thread registers would take the other's there too.
  auto consume_item = [&](int& stage, uint32_t& phase, const int flags, const int r_lo, const int r_hi, const int n0,
                          const int k_blocks, const auto& where) {
    // Columns of this tile before the next 128-wide SFB block (1D2D scales).
    [[maybe_unused]] const int sfb_split = 128 - n0 % 128;  // (unused with per-row SFB)
#pragma unroll
    for (int i = 0; i < kWaves * kAccs; ++i) acc[i] = 0.0f;
    DG_TRACE(tracer.begin(k_blocks);)

    auto advance = [&] {
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    };
    // acc_w[4 j ...] += part[4 jj ...] x the block's scale of its SFB block, for the 8-column
    // groups j = j0 + jj of a chunk: the rows' SFA times the first SFB block's value for the
    // columns before sfb_split, the second's after.  Over the tile's possible splits (Note [SFB
    // splits]) that choice is settled at compile time, or it is sfb_split >= the smallest
    // possible split above 8 j: one comparison shared by every group between two possible splits.
    auto fold_block_scaled = [&](float* acc_w, const float* pc, const int j0, const int groups, const float lo_first,
                                 const float lo_second, const float hi_first, const float hi_second) {
#pragma unroll
      for (int jj = 0; jj < groups; ++jj) {
        const int j = j0 + jj;
        const bool first = 8 * j < kSplits.min    ? true
                           : 8 * j >= kSplits.max ? false
                                                  : sfb_split >= sfb_split_above(kBlockN, 8 * j);
        const float lo = first ? lo_first : lo_second;
        const float hi = first ? hi_first : hi_second;
        acc_w[4 * j + 0] += pc[4 * jj + 0] * lo;
        acc_w[4 * j + 1] += pc[4 * jj + 1] * lo;
        acc_w[4 * j + 2] += pc[4 * jj + 2] * hi;
        acc_w[4 * j + 3] += pc[4 * jj + 3] * hi;
      }
    };

    // A stage's release: this warp is done with it (in both CTAs of a multicast pair, whose
    // producers both write into it).
    auto release = [&](const int st) {
      __syncwarp();
      if (lane == 0) {
        p::mbar_arrive(&empty[st]);
        if constexpr (kCast != kCastNone) p::mbar_arrive_remote(&empty[st], split_rank ^ 1u);
      }
    };
    if (k_blocks == 0) {
      release(stage);
      advance();
    }
    // Note [idle waves]: a warpgroup owns 64 rows of each wave, and the tensor cores it feeds
    // are the SM's, shared with the other warpgroup.  Where the item's rows [r_lo, r_hi) miss
    // some of a warpgroup's waves (the second 128-row tile of a masked group of 129-192 rows, a
    // contiguous tile's padding run or its second group's run, the empty items of tiles without
    // a primary run), those waves skip their MMAs: a warpgroup with no rows at all keeps to the
    // stage protocol (waits for each stage, releases it), and idle rows, which the epilogue
    // never writes, keep zeros.  The span of waves that run, [wave_first, wave_end), is chosen
    // once per item (outside the K loop: no wgmma is in flight at that branch) and compiled per
    // span.  Kernels whose items always fill their tiles' waves (the plain dense ones) compile
    // none of it.  The sums of the rows that are written do not change.
    int wave_first = 0, wave_end = kWaves;
    if constexpr (kSkipIdle) {
      if (args.skip_idle) {
        auto has_rows = [&](const int w) {
          const int lo = w * T::kWaveRows + warpgroup * 64;
          return lo < r_hi && lo + 64 > r_lo;
        };
        while (wave_end > 0 && !has_rows(wave_end - 1)) --wave_end;
        while (wave_first < wave_end && !has_rows(wave_first)) ++wave_first;
      }
    }
    const bool idle = wave_first >= wave_end;
    DG_TRACE(tracer.set_waves(wave_end - wave_first, std::is_same_v<std::decay_t<decltype(where)>, HeldItem>);)
    // The K blocks the MMA loops below take: none when this warpgroup is idle.
    const int k_mma = idle ? 0 : k_blocks;
    if (idle) {
      for (int kb = 0; kb < k_blocks; ++kb) {
        if (kb > 0) p::mbar_wait(&full[stage], phase);
        release(stage);
        advance();
      }
    }
    if constexpr (kBf16) {
      // One float32 accumulation over K: each K block's wgmmas go straight into `acc`, and
      // the stage of the block before is released once its group has retired (one group
      // stays in flight, so the tensor cores never wait for a release).
      int prev_stage = -1;
      for (int kb = 0; kb < k_mma; ++kb) {
        if (kb > 0) {
          DG_TRACE(tracer.wait_begin();)
          p::mbar_wait(&full[stage], phase);
          DG_TRACE(tracer.wait_end(kb < kStages);)
        }
        // Descriptor arithmetic on the 32-bit low words: the high word stays a constant.
        const uint32_t a_lo = desc_a0 + stage * (T::kABytes / 16);
        const uint32_t b_lo = desc_b0 + stage * (T::kBBytes / 16);
        p::wgmma_fence();
        // Each atom's four k16 steps (two atoms per stage: Note [merged K atoms]).
        static_assert(T::kAtoms == 1 || (!kMnA && !kMnB), "merged K atoms are K-major");
#pragma unroll
        for (int kk = 0; kk < T::kAtoms * (kBlockK / 32); ++kk) {
          const int atom = kk / (kBlockK / 32), step = kk % (kBlockK / 32);
          p::bf16_wgmma<kBlockN, kMnA, kMnB>(
              p::gmma_desc_k_sw128_at(a_lo + atom * (T::kAtomABytes / 16) + kStepA * step),
              p::gmma_desc_k_sw128_at(b_lo + atom * (T::kAtomBBytes / 16) + kStepB * step), acc, kb > 0 || kk > 0);
        }
        p::wgmma_commit();
        p::wgmma_wait<1>();
        if (prev_stage >= 0) release(prev_stage);
        prev_stage = stage;
        advance();
      }
      p::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) p::fence_operand(acc[i]);
      if (prev_stage >= 0) release(prev_stage);
    }
    // Note [paired K blocks]: a 64-row FP8 tile of one MMA chunk per K block (BLOCK_N <= 96,
    // SFB per block) issues two K blocks' MMAs back to back, each into its own scratch buffer,
    // then folds the first while the second runs.  The tensor cores then see eight wgmmas in a
    // row instead of four, and a block's MMA latency overlaps its neighbour's.  Measured on the
    // H200 (same build, pairing on and off): 64x7168x16384 41.7 against 42.6 us, 64x7168x2048
    // 10.3 against 10.5; 128-row tiles, whose two math warpgroups already overlap each other,
    // lost (128x64 at 128x7168x16384: 45.9 against 44.1), so they stay unpaired.  The narrow
    // decode tiles gain too (H100, 2026-12-06, a second build with 64x16 and 64x32 unpaired,
    // five rounds, same bits): 128x2112x7168 at 64x32 15.2 against 15.9 us, 64x2112x7168 at
    // 64x16 15.8 against 16.2, although upstream's 64x16 loop issues each block as soon as its
    // own stage is full.  Both stages are waited for before either block's MMAs go out, and
    // both are drained before the loop comes round, so no wgmma is in flight across a back
    // edge or an mbarrier wait's retry loop (where ptxas would serialise every wgmma, C7514).
    // The sums are those of the unpaired loop, in the same order: the bits do not change.
    constexpr bool kPairBlocks = !kBf16 && !kSfbPerRow && kChunks == 1 && kBlockM == 64 && kBlockN <= 96;
    int kb_single = 0;  // the first K block the unpaired loop below takes
    if constexpr (kPairBlocks) {
      struct BlockScales {
        float lo_first, lo_second, hi_first, hi_second;
      };
      auto scales_of = [&](const int st) {
        const float* sfa_s = smem_sfa + st * kBlockM;
        const float* sfb_s = smem_sfb + st * T::kSfbFloats;
        const float sa_lo = sfa_s[row_lo], sa_hi = sfa_s[row_lo + 8];
        const float sb_first = sfb_s[0], sb_second = sfb_s[1];
        return BlockScales{sa_lo * sb_first, sa_lo * sb_second, sa_hi * sb_first, sa_hi * sb_second};
      };
      float part[2][kChunkAccs];
      auto issue_block = [&](const int st, float* pc) {
        const uint32_t a_lo = desc_a0 + st * (T::kABytes / 16);
        const uint32_t b_lo = desc_b0 + st * (T::kBBytes / 16);
        p::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / 32; ++kk) {
          p::fp8_wgmma<kChunkN>(p::gmma_desc_k_sw128_at(a_lo + 2 * kk), p::gmma_desc_k_sw128_at(b_lo + 2 * kk), pc,
                                kk > 0);
        }
        p::wgmma_commit();
      };
      auto fold_block = [&](const int st, float* pc, const BlockScales& sc) {
#pragma unroll
        for (int i = 0; i < kChunkAccs; ++i) p::fence_operand(pc[i]);
        // Release the stage once every lane's shared-memory reads are done.
        release(st);
        fold_block_scaled(acc, pc, 0, kBlockN / 8, sc.lo_first, sc.lo_second, sc.hi_first, sc.hi_second);
      };
      for (; kb_single + 1 < k_mma; kb_single += 2) {
        DG_TRACE(tracer.wait_begin();)
        if (kb_single > 0) p::mbar_wait(&full[stage], phase);
        const int st0 = stage;
        const BlockScales sc0 = scales_of(st0);
        advance();
        p::mbar_wait(&full[stage], phase);
        DG_TRACE(tracer.wait_end(kb_single + 1 < kStages);)
        const int st1 = stage;
        const BlockScales sc1 = scales_of(st1);
        advance();
        issue_block(st0, part[0]);
        issue_block(st1, part[1]);
        p::wgmma_wait<1>();
        fold_block(st0, part[0], sc0);
        p::wgmma_wait<0>();
        fold_block(st1, part[1], sc1);
      }
    }
    // split_c: the item's split at compile time (three-block tiles), or 0 (unused); span_c: the
    // waves whose MMAs run (Note [idle waves]), first * 4 + end, at compile time.
    auto fp8_blocks = [&]([[maybe_unused]] const auto split_c, const auto span_c) {
      constexpr int kFirstChunk = decltype(span_c)::value / 4 * kChunksPerWave;
      constexpr int kEndChunk = decltype(span_c)::value % 4 * kChunksPerWave;
      // Whole-wave (256x128) tiles unroll by eight (Note [whole waves]), the lean contiguous and
      // masked ones by four (Note [lean contiguous 256x128], and above).  The others keep what the
      // compiler chose for them without a pragma: two for the 16-column tiles, none for the rest
      // (the SASS is the same as without it, but for the 64x16 loops' exit test, != for <=).
      constexpr int kUnrollK = kWholeWaves ? (kLeanGrouped256 ? 4 : 8) : kBlockN <= 16 ? 2 : 1;
#pragma unroll(kUnrollK)
      for (int kb = kb_single; kb < (kBf16 ? 0 : k_mma); ++kb) {
        if (kb > 0) {
          DG_TRACE(tracer.wait_begin();)
          p::mbar_wait(&full[stage], phase);
          DG_TRACE(tracer.wait_end(kb < kStages);)
        }
        // Note [late scales]: in the M-grouped contiguous kernels (row ids and psum) a K block of
        // one wave in two equal chunks (128x192, 128x128) sends its second chain without a wgmma fence
        // of its own, and the threads read the stage's scales from shared memory only once both
        // chains have gone out.  The fence (WARPGROUP.ARRIVE, a warpgroup-wide sync) must separate
        // the threads' own accesses to a chain's accumulator registers from the chain (PTX ISA,
        // wgmma.fence): the second chain's scratch buffer was last read by the previous block's
        // fold, before the first chain's fence, which covers it.  The scale loads no longer sit
        // between the full-stage wait and the first chain.  The MMAs and the folds, and so the
        // bits, do not change.  Measured on the H100 (forty-third session: four builds of the
        // extension, seven rounds of one process per build, alternated; D's bits equal to main's
        // in every case; old time over new, above 1 faster), both together: row ids 0.996-1.015, psum
        // 1.011-1.057 on the eight contiguous problems; either alone slower (fence 0.978-1.000,
        // scales 0.940-0.986).  The dense kernels' chunked tiles ran slower with both (0.974 at
        // 4096x2112x7168, 128x176; 0.992 at 4096x24576x1536, 128x192), so they keep a fence per
        // chain and read the scales first.  So do the masked kernels' 128x192 tiles: with both
        // changes they ran 0.992 and 0.997 of main (forty-fourth session, nine rounds, the same
        // bits), and the three-SFB-block tiles (128x176, not timed).
        constexpr bool kLateScales = kSchedule == kScheduleContiguous && kWaves == 1 && kChunks == 2 && !kThreeSfb;
        float sa_lo[kWaves], sa_hi[kWaves];
        [[maybe_unused]] float sb_first = 0.0f, sb_second = 0.0f, sb_third = 0.0f;
        float sb_cols[kSfbPerRow ? kBlockN / 4 : 1];
        // The stage's scales: before its first chain, or after its chains with kLateScales.
        auto read_scales = [&] {
          const float* sfa_s = smem_sfa + stage * kBlockM;
          const float* sfb_s = smem_sfb + stage * T::kSfbFloats;
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            sa_lo[w] = sfa_s[row_lo + w * T::kWaveRows];
            sa_hi[w] = sfa_s[row_lo + w * T::kWaveRows + 8];
          }
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
            if constexpr (kThreeSfb) sb_third = sfb_s[2];
            sb_cols[0] = 0.0f;
          }
        };
        if constexpr (!kLateScales) read_scales();

        const uint32_t b_lo = desc_b0 + stage * (T::kBBytes / 16);
        // The block's MMAs go in chunks of 64 rows (a wave) by kChunkN columns, through two scratch
        // buffers in turn: chunk c + 1 is issued before chunk c is waited for and folded in, so
        // the tensor cores work while the scales are applied (only the last chunk's fold is
        // exposed); whole-wave tiles take one chunk per wave through one buffer (Note [whole
        // waves]).  Every branch here is resolved at compile time: a runtime branch around the
        // wgmmas makes ptxas serialise them.
        constexpr int kScratch = kWholeWaves ? 1 : 2;  // scratch buffers, taken in turn
        float part[kScratch][kChunkAccs];
        auto issue = [&](const int c) {
          const int w = c / kChunksPerWave, h = c % kChunksPerWave;
          // Descriptor arithmetic on the 32-bit low words: the high word stays a constant.
          const uint32_t a_lo = desc_a0 + stage * (T::kABytes / 16) + w * (T::kWaveRows * kBlockK / 16);
          const uint32_t bh_lo = b_lo + h * (kChunkN * kBlockK / 16);
          if (!kLateScales || c != kFirstChunk + 1) p::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < kBlockK / 32; ++kk) {
            if (kLastChunkN != kChunkN && h == kChunksPerWave - 1) {  // (h is a constant once unrolled)
              p::fp8_wgmma<kLastChunkN>(p::gmma_desc_k_sw128_at(a_lo + 2 * kk), p::gmma_desc_k_sw128_at(bh_lo + 2 * kk),
                                        part[c % kScratch], kk > 0);
            } else {
              p::fp8_wgmma<kChunkN>(p::gmma_desc_k_sw128_at(a_lo + 2 * kk), p::gmma_desc_k_sw128_at(bh_lo + 2 * kk),
                                    part[c % kScratch], kk > 0);
            }
          }
          p::wgmma_commit();
        };
        if constexpr (!kWholeWaves) issue(kFirstChunk);
#pragma unroll
        for (int c = kFirstChunk; c < kEndChunk; ++c) {
          if constexpr (kWholeWaves) {  // one chain at a time (Note [whole waves])
            issue(c);
            p::wgmma_wait<0>();
          } else if (c + 1 < kEndChunk) {
            issue(c + 1);
            if constexpr (kLateScales) {
              if (c == kFirstChunk) read_scales();
            }
            p::wgmma_wait<1>();
          } else {
            p::wgmma_wait<0>();
          }
          float* pc = part[c % kScratch];
#pragma unroll
          for (int i = 0; i < kChunkAccs; ++i) p::fence_operand(pc[i]);
          // Release the stage once every lane's shared-memory reads are done.
          if (c == kEndChunk - 1) release(stage);
          const int w = c / kChunksPerWave;
          [[maybe_unused]] const int j0 = (c % kChunksPerWave) * (kChunkN / 8);  // the chunk's first 8-column group
          float* acc_w = acc + w * kAccs;
          if constexpr (kSfbPerRow) {
            // Note [per-row K loop]: one m64 chain per K block, scales read before it goes out.
            // Measured slower on the H100 (forty-seventh session, two builds, same bits, old time
            // over new): the scales read after the chain is out (Wgrad float32 2112x4096x7168
            // 0.919, 7168x4096x2048 0.895, bf16 D 0.852; ptxas then issues the chain's last wgmma
            // behind the products' FMULs, which wait for the loads); the K loop unrolled by 2
            // (0.825-0.974, geomean 0.885) or by 4 (geomean 0.902).  A whole float32 tile in the
            // output buffer (one round, no wait inside the epilogue, a stage fewer) was level
            // (0.959-1.004, geomean 0.988).
#pragma unroll
            for (int jj = 0; jj < kChunkN / 8; ++jj) {
              const int j = j0 + jj;
              acc_w[4 * j + 0] += pc[4 * jj + 0] * (sa_lo[w] * sb_cols[2 * j]);
              acc_w[4 * j + 1] += pc[4 * jj + 1] * (sa_lo[w] * sb_cols[2 * j + 1]);
              acc_w[4 * j + 2] += pc[4 * jj + 2] * (sa_hi[w] * sb_cols[2 * j]);
              acc_w[4 * j + 3] += pc[4 * jj + 3] * (sa_hi[w] * sb_cols[2 * j + 1]);
            }
          } else if constexpr (kThreeSfb) {
            constexpr int kS = decltype(split_c)::value;
            const float lo[3] = {sa_lo[w] * sb_first, sa_lo[w] * sb_second, sa_lo[w] * sb_third};
            const float hi[3] = {sa_hi[w] * sb_first, sa_hi[w] * sb_second, sa_hi[w] * sb_third};
            const int groups = (c % kChunksPerWave == kChunksPerWave - 1 ? kLastChunkN : kChunkN) / 8;
            // The 8-column group j lies in SFB block (8 j >= split) + (8 j >= split + 128).
#pragma unroll
            for (int jj = 0; jj < kChunkN / 8; ++jj) {
              const int j = j0 + jj, b = (8 * j >= kS ? 1 : 0) + (8 * j >= kS + 128 ? 1 : 0);
              if (jj < groups) {  // (a constant once unrolled)
                acc_w[4 * j + 0] += pc[4 * jj + 0] * lo[b];
                acc_w[4 * j + 1] += pc[4 * jj + 1] * lo[b];
                acc_w[4 * j + 2] += pc[4 * jj + 2] * hi[b];
                acc_w[4 * j + 3] += pc[4 * jj + 3] * hi[b];
              }
            }
          } else {
            fold_block_scaled(acc_w, pc, j0, kChunkN / 8, sa_lo[w] * sb_first, sa_lo[w] * sb_second,
                              sa_hi[w] * sb_first, sa_hi[w] * sb_second);
          }
        }
        advance();
      }
    };
    constexpr std::integral_constant<int, kWaves> kAllWaves{};  // the span [0, kWaves)
    [[maybe_unused]] constexpr std::integral_constant<int, 0> kNoSplit{};
    if constexpr (kThreeSfb) {
      // One branch per item, outside the K loop: no wgmma is in flight there.
      with_sfb_split<kBlockN>(min(sfb_split, kBlockN), [&](const auto split_c) { fp8_blocks(split_c, kAllWaves); });
    } else if constexpr (kSkipIdle && kWaves == 2) {
      if (wave_end == 1) {
        fp8_blocks(kNoSplit, std::integral_constant<int, 0 * 4 + 1>{});
      } else if (wave_first == 1) {
        fp8_blocks(kNoSplit, std::integral_constant<int, 1 * 4 + 2>{});
      } else {
        fp8_blocks(kNoSplit, kAllWaves);
      }
    } else {
      fp8_blocks(kNoSplit, kAllWaves);
    }

    DG_TRACE(tracer.main_done(wg_thread == 0);)

    // ---------------------------------------------------------------- split K
    // Note [split K in a cluster]: the second CTA of the cluster stages its float32 partial
    // tile in its own shared memory and sends it, one bulk copy, to the same offset in the
    // first CTA's (completing on red_full there); it is then done with the tile.  The first
    // adds the partial to its own (its K blocks' sum, then the received one: a fixed order)
    // and writes the tile.  Thread i's values sit at float4 slot q * threads + i, so both sides
    // touch consecutive 16-byte words.  The receiver re-arms red_full and arrives on the
    // sender's red_empty once every consumer has read the buffer; the sender waits for that
    // before it stages its next tile (the copy has then read the staging buffer too).
    if constexpr (kSplit > 1) {
      constexpr int kConsumerThreads = 128 * T::kMathWarpgroups;
      const int ct = static_cast<int>(threadIdx.x);
      const int phase_bit = red_tiles & 1;
      ++red_tiles;
      if (split_rank == 0) {
        p::mbar_wait(red_full, phase_bit);
#pragma unroll
        for (int q = 0; q < kAccs / 4; ++q) {
          const float4 v = red[q * kConsumerThreads + ct];
          acc[4 * q] += v.x;
          acc[4 * q + 1] += v.y;
          acc[4 * q + 2] += v.z;
          acc[4 * q + 3] += v.w;
        }
        p::named_barrier_sync(3, kConsumerThreads);  // every consumer has read the partial
        if (ct == 0) {
          p::mbar_arrive_expect_tx(red_full, T::kRedBytes);
          // (A CTA-scope arrive: the reads above are done; the cluster-scope release compiled to a
          // GPU-wide memory barrier ahead of this thread's TMA store of the tile.)
          p::mbar_arrive_remote(red_empty, split_rank + 1);
        }
      }
      if (split_rank != 0) {
        // The previous tile's partial has been read (phase red_tiles - 2 of red_empty).
        if (red_tiles > 1) p::mbar_wait_cluster(red_empty, phase_bit ^ 1);
#pragma unroll
        for (int q = 0; q < kAccs / 4; ++q) {
          red[q * kConsumerThreads + ct] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
        }
        p::fence_async_shared();  // the stores, before the bulk copy reads them
        p::named_barrier_sync(3, kConsumerThreads);
        if (ct == 0) p::bulk_copy_to_cluster(red, red, T::kRedBytes, red_full, split_rank - 1);
        return;
      }
    }

    // ---------------------------------------------------------------- epilogue
    // fn(accumulator index, row of the item, column, whether column + 1 exists) for each pair of
    // this thread's wave-w accumulators that lies inside the item's rows and D's columns.
    auto for_each_pair = [&](const int w, auto&& fn) {
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row_lo + w * T::kWaveRows + 8 * h;
          const int col = n0 + 8 * j + col_in_group;
          if (r < r_lo || r >= r_hi || col >= args.n) continue;
          fn(4 * j + 2 * h, r, col, col + 1 < args.n);
        }
      }
    };
    // C's elements of this thread added to its accumulators (bf16 or float32 C, as D): the loads
    // issue back to back, and C may be D since each thread reads only what it later writes.
    auto add_c = [&](float* acc_w, const int w) {
      for_each_pair(w, [&](const int i, const int r, const int col, const bool pair) {
        const int64_t ci = where.z() * args.c_group + static_cast<int64_t>(where.d_row0() + r) * args.ldc + col;
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
        acc_w[i] += c0;
        acc_w[i + 1] += c1;
      });
    };

    // Whether the wave-w slab of this warpgroup goes out through the TMA unit: the item owns all
    // its rows in D (a whole slab, or, clip_rows, any non-empty slab, the map clipping rows past
    // the item's end).
    auto owns_slab = [&](const int w) {
      const int slab = w * T::kWaveRows + warpgroup * 64;
      return args.clip_rows ? (r_lo == 0 && slab < r_hi) : (r_lo <= slab && slab + 64 <= r_hi);
    };
    // The wave-w slab in bf16 through the output buffer and the TMA unit (C, if any, already added).
    auto store_slab_bf16 = [&](const int w) {
      const float* acc_w = acc + w * kAccs;
      const int slab = w * T::kWaveRows + warpgroup * 64;
      uint8_t* out = smem_out + slab * kBlockN * 2;
      const int row0 = where.d_row0() + slab;
      // Note [slab waits]: a warpgroup's two slabs of a 256-row tile lie in separate regions of
      // the output buffer, and the slab about to be written needs only its own region's last
      // store to have read it.  Where the last committed store was the other region's
      // (this tile's first slab, or the last tile's second), every older one has to be done:
      // wait for all but that one; otherwise for all.  On by default in the FP8 dense kernel
      // (DG_GEMM_SLAB_WAIT, csrc/cuda/gemm_switches.h, with the figures).
      if constexpr (kLeanContiguous256) {
        // Note [epilogue state in registers]: wave 0 waits for every store, wave 1 for all but
        // this item's wave-0 store where there was one.
        if (wg_thread == 0) {
          if (args.slab_wait && w == 1 && slab0_committed) {
            p::tma_store_wait_read_all_but_last();
          } else {
            p::tma_store_wait_read();
          }
        }
      } else if (wg_thread == 0 && stores_pending) {
        if (kWaves == 2 && args.slab_wait && last_slab != w) {
          p::tma_store_wait_read_all_but_last();
        } else {
          p::tma_store_wait_read();
        }
      }
      p::named_barrier_sync(1 + warpgroup, 128);
      // Boxes of 64 rows x kOutBoxCols columns: 64-byte rows with the 64-byte swizzle (16-byte
      // unit u of row r at u ^ ((r >> 1) & 3)), or 32-byte rows with the 32-byte one (u ^ ((r >> 2) & 1)).
      constexpr int kBoxCols = T::kOutBoxCols, kUnits = kBoxCols / 8, kBoxBytes = 64 * kBoxCols * 2;
      // Note [stmatrix epilogue]: with args.stsm, each stmatrix x4 writes the 8-column groups j
      // and j + 1 of this warp's 16 rows (matrix i: group j + i / 2, rows 8 * (i % 2) on), 16
      // 16-byte row pieces per lane and tile instead of 64 4-byte STS.  Lane l addresses row l % 8
      // of matrix l / 8; the swizzle moves whole 16-byte units, so each matrix row stays whole.
      // Compiled into the FP8 dense kernels and the lean contiguous 256x128 one alone: the second
      // path costs the contiguous 128x192 kernel a 24-byte spill in its K loop.
      if ((kFp8Dense || kLeanContiguous256) && kBlockN % 16 == 0 && args.stsm) {
        const int mi = lane / 8;
        const int r = wg_warp * 16 + 8 * (mi % 2) + lane % 8;
        const int swz = kUnits == 4 ? (r >> 1) & 3 : (r >> 2) & 1;
        const uint32_t row_base = p::smem_addr(out) + r * (kBoxCols * 2);
#pragma unroll
        for (int j = 0; j < kBlockN / 8; j += 2) {
          const int jl = j + mi / 2;  // this lane's matrix's 8-column group
          const uint32_t addr = row_base + (jl / kUnits) * kBoxBytes + (((jl % kUnits) ^ swz) * 16);
          p::stmatrix_x4(
              addr, pack_bf16x2(acc_w[4 * j], acc_w[4 * j + 1]), pack_bf16x2(acc_w[4 * j + 2], acc_w[4 * j + 3]),
              pack_bf16x2(acc_w[4 * j + 4], acc_w[4 * j + 5]), pack_bf16x2(acc_w[4 * j + 6], acc_w[4 * j + 7]));
        }
      } else {
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
          const int chunk = j / kUnits, unit16 = j % kUnits;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = wg_warp * 16 + lane / 4 + 8 * h;
            const uint32_t v = pack_bf16x2(acc_w[4 * j + 2 * h], acc_w[4 * j + 2 * h + 1]);
            const int swz = kUnits == 4 ? (r >> 1) & 3 : (r >> 2) & 1;
            const int offset = chunk * kBoxBytes + r * (kBoxCols * 2) + ((unit16 ^ swz) * 16) + (lane % 4) * 4;
            *reinterpret_cast<uint32_t*>(out + offset) = v;
          }
        }
      }
      p::fence_async_shared();
      p::named_barrier_sync(1 + warpgroup, 128);
      if (wg_thread == 0) {
#pragma unroll
        for (int q = 0; q < kBlockN / kBoxCols; ++q) {
          const int col = n0 + q * kBoxCols;
          if (col < args.n)
            tma_store_3d_as(l2_hint_at(args.l2_hints, kL2ShiftD), &tm_d, out + q * kBoxBytes, col, row0, where.z());
        }
        p::tma_store_commit();
        if constexpr (!kLeanContiguous256) {
          stores_pending = true;
          last_slab = w;
        }
      }
    };

    // This thread's pairs of the wave-w slab written to D from registers (C, if any, already
    // added; a lean kernel's D is bf16).
    auto store_rows = [&](const int w) {
      const float* acc_w = acc + w * kAccs;
      for_each_pair(w, [&](const int i, const int r, const int col, const bool pair) {
        const float v0 = acc_w[i], v1 = acc_w[i + 1];
        const int64_t di = where.z() * args.d_group + static_cast<int64_t>(where.d_row0() + r) * args.ldd + col;
        if (!kLeanOut && args.d_f32) {
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
      });
    };

    // Each wave's 64-row slab of this warpgroup, written in turn.
    auto write_slab = [&](const int w) {
      float* acc_w = acc + w * kAccs;
      const int slab = w * T::kWaveRows + warpgroup * 64;
      if ((T::kOutViaSmem || T::kOutF32Box8) && args.tma_out && owns_slab(w) && !(flags & kZero)) {
        [[maybe_unused]] uint8_t* out = smem_out + slab * kBlockN * 2;
        const int row0 = where.d_row0() + slab;
        if constexpr (T::kOutViaSmem) {
          if (!args.d_f32) {
            // A bf16 C (D itself or not) is read here, before this slab's store can overwrite it.
            if (args.c != nullptr) add_c(acc_w, w);
            store_slab_bf16(w);
            return;
          }
        }
        // Note [float32 in 8-column boxes] (the host takes this path for float32 D only): box q,
        // row r at q * 2048 + r * 32 bytes; rounds of eight boxes, the last one shorter.
        if constexpr (T::kOutF32Box8) {
          constexpr int kBoxes = kBlockN / 8, kPerRound = 8;
#pragma unroll
          for (int b0 = 0; b0 < kBoxes; b0 += kPerRound) {
            if (wg_thread == 0 && stores_pending) p::tma_store_wait_read();
            p::named_barrier_sync(1 + warpgroup, 128);
#pragma unroll
            for (int j = b0; j < b0 + kPerRound && j < kBoxes; ++j) {
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int r = wg_warp * 16 + lane / 4 + 8 * h;
                const int offset = (j - b0) * 2048 + r * 32 + (lane % 4) * 8;
                *reinterpret_cast<float2*>(out + offset) = make_float2(acc_w[4 * j + 2 * h], acc_w[4 * j + 2 * h + 1]);
              }
            }
            p::fence_async_shared();
            p::named_barrier_sync(1 + warpgroup, 128);
            if (wg_thread == 0) {
#pragma unroll
              for (int j = b0; j < b0 + kPerRound && j < kBoxes; ++j) {
                const int col = n0 + 8 * j;
                if (col >= args.n) continue;
                if (args.out_add) {
                  tma_reduce_add_3d(&tm_d, out + (j - b0) * 2048, col, row0, where.z());
                } else {
                  tma_store_3d_as(l2_hint_at(args.l2_hints, kL2ShiftD), &tm_d, out + (j - b0) * 2048, col, row0,
                                  where.z());
                }
              }
              p::tma_store_commit();
              stores_pending = true;
            }
          }
          return;
        }
        // float32: the buffer holds half the slab's columns as boxes of 64 rows x 16 columns
        // (64-byte rows, 64-byte swizzle); two rounds.  (Other widths: the host keeps float32 D
        // off this path.)
        if constexpr (T::kOutViaSmemF32) {
          constexpr int kHalfJ = kBlockN / 16;  // 8-column groups per half
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            if (wg_thread == 0 && stores_pending) p::tma_store_wait_read();
            p::named_barrier_sync(1 + warpgroup, 128);
#pragma unroll
            for (int jj = 0; jj < kHalfJ; ++jj) {
              const int j = half * kHalfJ + jj;
              const int box = jj / 2, unit16 = 2 * (jj % 2) + (lane % 4) / 2;
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int r = wg_warp * 16 + lane / 4 + 8 * h;
                const int offset = box * 4096 + r * 64 + ((unit16 ^ ((r >> 1) & 3)) * 16) + (lane % 2) * 8;
                *reinterpret_cast<float2*>(out + offset) = make_float2(acc_w[4 * j + 2 * h], acc_w[4 * j + 2 * h + 1]);
              }
            }
            p::fence_async_shared();
            p::named_barrier_sync(1 + warpgroup, 128);
            if (wg_thread == 0) {
#pragma unroll
              for (int q = 0; q < kBlockN / 32; ++q) {
                const int col = n0 + half * (kBlockN / 2) + q * 16;
                if (col >= args.n) continue;
                if (args.out_add) {
                  tma_reduce_add_3d(&tm_d, out + q * 4096, col, row0, where.z());
                } else {
                  tma_store_3d_as(l2_hint_at(args.l2_hints, kL2ShiftD), &tm_d, out + q * 4096, col, row0, where.z());
                }
              }
              p::tma_store_commit();
              stores_pending = true;
            }
          }
          return;
        }
      }
      if (args.c != nullptr && !(flags & kZero)) add_c(acc_w, w);
      store_rows(w);
    };
    // Note [compact epilogue]: with args.compact_epilogue (DG_GEMM_COMPACT_EPILOGUE), the
    // common tile (bf16 D through the TMA unit, no C, every slab owned: where write_slab would go
    // straight to store_slab_bf16 for each wave) takes a path of its own, whose instructions ptxas
    // lays out together.  Through write_slab they come in fragments between the other paths' code
    // (the float32 buffer, C, the register path), over some 100 KB of the 256x128 kernel's SASS,
    // and each jump is an instruction-cache miss.  Nsight Compute on the H100 (4096x7168x2048, the
    // 256x128 tile, path always taken): "no instruction" stall samples 834 -> 361 of 10,694 ->
    // 10,312 (upstream's whole kernel: 51 of 9,044), SM active cycles 165.4k -> 159.8k.  Trace
    // harness, same card, two to five rounds: 4096x7168x2048 101.0-101.6 -> 100.2-100.6 us,
    // 4096x4096x7168 level (178.3-179.1 -> 178.0-178.2), 2816x1536x16384 level, 4096x7168x16384
    // 693.0-693.4 -> 694.2-694.7; the 128x192 tile 0.4-0.9% slower at 4096x32768x512.  In-run
    // with the stmatrix epilogue (gemm_switches.h): 18 dense shapes none slower, geomean 1.006 and
    // 1.009, so both are on by default in the plain FP8 dense kernel.  Every kernel compiles it
    // (ptxas: the general 256x128 FP8 kernel's stack 64 -> 72 bytes, its spills 104/180 -> 88/152
    // bytes stored/loaded; the rest unchanged).  compact_output() is the test but for the slabs,
    // which each branch below checks in its own form: one shared loop over the waves gave the
    // contiguous 128x192 kernel a 24-byte stack frame; this form compiles as the two spellings of
    // the whole test did, instruction for instruction.
    auto compact_output = [&]() {
      return args.compact_epilogue && T::kOutViaSmem && args.tma_out && !args.d_f32 && args.c == nullptr &&
             !(flags & kZero);
    };
    if constexpr (kLeanOut && kSchedule == kScheduleDense && kCast == kCastNone) {
      // Note [lean kernels]: every slab with rows is owned (a dense item starts at its tile's
      // first row, and the map clips rows past D's end); a slab without rows has nothing to write.
#pragma unroll
      for (int w = 0; w < kWaves; ++w) {
        if (owns_slab(w)) store_slab_bf16(w);
      }
    } else if constexpr (kLeanOut) {
      // The lean contiguous, masked and multicast kernels: a slab of the item's rows through the TMA
      // unit, any other (a run, zero item or group that covers part of it) from registers, none
      // for a pair's empty partner; one call per wave, as below.
      auto lean_slab = [&](const int w) {
        if (owns_slab(w) && !(flags & kZero)) {
          store_slab_bf16(w);
        } else {
          store_rows(w);
        }
      };
      // lean_slab's test for wave 0, kept apart: lean_slab returning it cost the lean contiguous
      // 256x128 kernel 8 more bytes of spill loads (ptxas), unmeasured on a GPU.
      if constexpr (kLeanContiguous256) slab0_committed = owns_slab(0) && !(flags & kZero);
      lean_slab(0);
      if constexpr (kWaves == 2) lean_slab(1);
    } else if constexpr (kSchedule == kScheduleDense && kCast == kCastNone) {
      bool common = compact_output();
#pragma unroll
      for (int w = 0; w < kWaves; ++w) common = common && owns_slab(w);
      if (common) {
#pragma unroll
        for (int w = 0; w < kWaves; ++w) store_slab_bf16(w);
      } else {
#pragma unroll
        for (int w = 0; w < kWaves; ++w) write_slab(w);
      }
    } else {
      // One call per wave: with the loop above, the general and contiguous kernels' 256-row
      // tiles kept the wave index at run time and their accumulators in local memory (a
      // 512-byte stack frame, from 3c24bbd on); the plain dense kernels unroll it.
      if (compact_output() && owns_slab(0) && (kWaves == 1 || owns_slab(1))) {
        store_slab_bf16(0);
        if constexpr (kWaves == 2) store_slab_bf16(1);
      } else {
        write_slab(0);
        if constexpr (kWaves == 2) write_slab(1);
      }
    }
    DG_TRACE(tracer.end(wg_thread == 0);)
  };

  // The described items: an item's first stage says what it is; a K item then spans its
  // k_blocks stages, a zero item one stage; the end of work stops the loop.
  // (Always inlined: once the K loop grew, the compiler made it a call in the contiguous 128x176
  // kernel, and ptxas serialised that kernel's wgmmas across it, C7510.)
  auto described_items = [&](int stage, uint32_t phase) __attribute__((always_inline)) {
#pragma unroll 1
    for (;;) {
      p::mbar_wait(&full[stage], phase);
      // The item's description is kept in this warp's shared slot rather than in registers
      // (the accumulators need them): its output coordinates are read where they are used.
      StageInfo* held = held_info + warp;
      __syncwarp();  // every lane is done with the previous item's copy
      if (lane == 0) *held = info[stage];
      __syncwarp();
      const int flags = __shfl_sync(0xFFFFFFFFu, held->flags, 0);
      if (flags & kEnd) break;
      const int rows = __shfl_sync(0xFFFFFFFFu, held->rows, 0);
      const int k_blocks = (flags & kZero) ? 0 : __shfl_sync(0xFFFFFFFFu, held->k_blocks, 0);
      consume_item(stage, phase, flags, rows & 0xFFFF, rows >> 16, __shfl_sync(0xFFFFFFFFu, held->n0, 0), k_blocks,
                   HeldItem{held});
    }
  };

  if constexpr (kSchedule == kScheduleDense) {
    // Dense problems: the consumers walk the producer's tile order themselves, from kernel
    // parameters and blockIdx alone, so the compiler keeps their loop state (stage, phase,
    // barrier addresses, wgmma descriptors) in uniform registers.  Reading the stage
    // descriptions from shared memory costs that: every wgmma then moved its descriptors with
    // four R2UR (docs/performance.md, third H200 session).  This is a kernel of its own: with
    // both schedules in one function the compiler left both in per-thread registers.
    // Split K: the cluster's tiles, this CTA's part of their K blocks.
    const int units = dense_units<kCast>(args);
    const int first = kCluster ? split_cluster : static_cast<int>(blockIdx.x);
    const int step = kCluster ? split_clusters : static_cast<int>(gridDim.x);
    int k_begin = 0, k_count = args.num_k_blocks;
    if constexpr (kSplit > 1) split_k_range(args.num_k_blocks, static_cast<int>(split_rank), kSplit, k_begin, k_count);
    int stage = 0;
    uint32_t phase = 0;
    bool walked = false;
    if constexpr (kCast != kCastNone) {
      // A masked problem in multicast pairs: the producer's walk (MaskedPairs), unit by unit.
      if (args.kind == kMasked) {
        walked = true;
        MaskedPairs<kBlockM, kCast> walk;
        int m0 = 0, n_blk = 0, rows = 0;
#pragma unroll 1
        for (int t = first; walk.find(args, t, static_cast<int>(split_rank), m0, n_blk, rows); t += step) {
          p::mbar_wait(&full[stage], phase);
          consume_item(stage, phase, 0, 0, rows, n_blk * kBlockN, k_count, DenseItem{walk.g * args.m + m0});
        }
      }
    }
#pragma unroll 1
    for (int t = first; t < units && !walked; t += step) {
      p::mbar_wait(&full[stage], phase);
      int m_blk = 0, n_blk = 0;
      dense_tile<kCast>(args, t, static_cast<int>(split_rank), m_blk, n_blk);
      const int m0 = m_blk * kBlockM;
      consume_item(stage, phase, 0, 0, min(kBlockM, args.m - m0), n_blk * kBlockN, k_count, DenseItem{m0});
    }
  } else if constexpr (kSchedule == kScheduleMasked) {
    // A masked problem's tiles, walked as the producer walks them (Producer::run_masked): the
    // K-block count is a kernel parameter, so the loop state stays uniform as in the dense
    // kernel; only the rows (the epilogue's and Note [idle waves]'s) come from masked_m.
    MaskedPairs<kBlockM, kCastNone> walk;
    int stage = 0, m0 = 0, n_blk = 0, rows = 0;
    uint32_t phase = 0;
#pragma unroll 1
    for (int t = static_cast<int>(blockIdx.x); walk.find(args, t, 0, m0, n_blk, rows);
         t += static_cast<int>(gridDim.x)) {
      p::mbar_wait(&full[stage], phase);
      consume_item(stage, phase, 0, 0, rows, n_blk * kBlockN, args.num_k_blocks, DenseItem{walk.g * args.m + m0});
    }
  } else if constexpr (kSchedule == kScheduleKGrouped) {
    // A K-grouped problem's tiles in the producer's order (Producer::run, its table path): groups
    // in table order, each group's tiles in bands, the empty groups skipped.  The table is a
    // kernel parameter, so each group's K-block count stays uniform, as in the dense kernel.
    const int per_group = args.m_blocks * args.n_blocks;
    const int units = table->count * per_group;
    int stage = 0;
    uint32_t phase = 0;
#pragma unroll 1
    for (int t = static_cast<int>(blockIdx.x); t < units; t += static_cast<int>(gridDim.x)) {
      const int gi = t / per_group;
      const int k_blocks = table->k_blocks[gi];
      if (k_blocks == 0) continue;
      int m_blk = 0, n_blk = 0;
      band_tile(args, t - gi * per_group, m_blk, n_blk);
      const int m0 = m_blk * kBlockM;
      p::mbar_wait(&full[stage], phase);
      consume_item(stage, phase, 0, 0, min(kBlockM, args.m - m0), n_blk * kBlockN, k_blocks,
                   DenseItem{m0, table->group[gi]});
    }
  } else if constexpr (kSchedule == kScheduleContiguous) {
    // Note [uniform contiguous schedule]: an M-grouped contiguous problem in two passes
    // (Producer::run_contiguous).  The first is the dense kernel's walk: every tile of this CTA
    // once, over all K blocks, so the loop state stays uniform as there.  Only the item's rows,
    // which the epilogue alone uses, come from the stage description (the tile's primary run;
    // an idle tile's is empty and writes nothing).  In the layouts' usual form, groups aligned
    // to BLOCK_M, that pass is all the work; the rest of a tile (padding rows, rows of a second
    // group) follows as described items, after this CTA's last tile.
    const int m_blocks = contiguous_m_blocks<kBlockM>(args);
    const int units = m_blocks * args.n_blocks;
    int stage = 0;
    uint32_t phase = 0;
#pragma unroll 1
    for (int t = static_cast<int>(blockIdx.x); t < units; t += static_cast<int>(gridDim.x)) {
      p::mbar_wait(&full[stage], phase);
      const int rows = info[stage].rows;  // read before the item releases its first stage
      int m_blk = 0, n_blk = 0;
      band_tile(args, m_blocks, t, m_blk, n_blk);
      consume_item(stage, phase, 0, rows & 0xFFFF, rows >> 16, n_blk * kBlockN, args.num_k_blocks,
                   DenseItem{m_blk * kBlockM});
    }
    described_items(stage, phase);
  } else {
    described_items(0, 0u);
  }
  DG_TRACE(tracer.flush(wg_thread == 0);)
  if (kLeanContiguous256 || stores_pending) p::tma_store_wait_all();
  if constexpr (kCluster) p::cluster_sync();
}

// Kernel names, so that profiles tell the families apart (`fp8_gemm`, `bf16_gemm`, ...).
template <int kBlockM, int kBlockN, bool kSfbPerRow>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, kSfbPerRow, false>::kThreads, 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                         const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, kSfbPerRow, false>(tm_a, tm_b, tm_d, nullptr, args);
}

// Dense FP8 with 128x128 SFB blocks (the consumers' own tile schedule).
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_dense_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                               const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleDense>(tm_a, tm_b, tm_d, nullptr, args);
}

// Note [lean kernels]: the dense FP8 kernel compiled for one output form, bf16 D through the
// output buffer and the TMA unit with no C (the launcher's choice where the problem has that form;
// by default for dense and masked problems, DG_GEMM_LEAN in gemm_switches.h).  The other forms'
// code (float32 D, C added, the register path) is then not in the kernel: the plain kernel's
// epilogue paths spread the executed instructions over most of its SASS, and its instruction-cache
// misses showed in Nsight Compute as "no instruction" stalls (Note [compact epilogue]).  Every
// dense and masked FP8 tile with an output buffer has a lean twin (the 16- and 48-column tiles have
// none); the masked twins keep the register path, bf16 only, for slabs that a group covers in part.
// The contiguous kernel's 128x192 twin does the same for partial runs, and runs only with
// DG_GEMM_LEAN=1: it spills 64/56 bytes in the producer's row-id walk and measured
// slower.  K-major BF16 masked problems outside multicast pairs have a lean kernel of the masked
// schedule (sm90_bf16_gemm_m_grouped_masked_lean_kernel) and no plain one: without it they run
// the general kernel.  The BF16 multicast pairs have a lean twin each
// (sm90_bf16_gemm_multicast_lean_kernel), for dense and masked problems alike.  SASS
// instructions, plain -> lean (nvcc 13.0): dense 256x128 13,072 -> 3,712, dense 128x192 8,624 ->
// 1,728, contiguous 128x192 23,432 -> 10,456, masked 256x128 11,600 -> 4,208; the K loops the
// same.  The contiguous 256x128 twin has the dense kernel's K loop and epilogue besides, and is on
// by default (Note [lean contiguous 256x128]).  has_lean_twin lists the FP8 tiles.
constexpr bool has_lean_twin(int schedule, int block_m, int block_n) {
  return schedule == kScheduleDense || schedule == kScheduleMasked ||
         (schedule == kScheduleContiguous &&
          ((block_m == 128 && block_n == 192) || is_fp8_256x128_tile(block_m, block_n, false, false)));
}

template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_dense_lean_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                    const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleDense, 0, 1, kCastNone, true>(tm_a, tm_b, tm_d, nullptr, args);
}

// The masked FP8 kernel compiled for bf16 D with no C (Note [lean kernels]; the API never
// passes C here): the float32 and C paths left out, a group's partial slabs written from
// registers.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_m_grouped_masked_lean_kernel(const __grid_constant__ CUtensorMap tm_a,
                                               const __grid_constant__ CUtensorMap tm_b,
                                               const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleMasked, 0, 1, kCastNone, true>(tm_a, tm_b, tm_d, nullptr, args);
}

// M-grouped masked FP8 with 128x128 SFB blocks: the consumers walk the groups' tiles themselves.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_m_grouped_masked_kernel(const __grid_constant__ CUtensorMap tm_a,
                                          const __grid_constant__ CUtensorMap tm_b,
                                          const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleMasked>(tm_a, tm_b, tm_d, nullptr, args);
}

// The contiguous FP8 kernel compiled for bf16 D with no C (Note [lean kernels]; the API never
// passes C here): the float32 and C paths left out, partial slabs written from registers.  For
// 128x192 and 256x128 (Note [lean contiguous 256x128]).
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_m_grouped_contiguous_lean_kernel(const __grid_constant__ CUtensorMap tm_a,
                                                   const __grid_constant__ CUtensorMap tm_b,
                                                   const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleContiguous, 0, 1, kCastNone, true>(tm_a, tm_b, tm_d, nullptr,
                                                                                        args);
}

// M-grouped contiguous FP8 (row ids or psum) with 128x128 SFB blocks: the uniform first pass.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false>::kThreads, 1)
    sm90_fp8_gemm_m_grouped_contiguous_kernel(const __grid_constant__ CUtensorMap tm_a,
                                              const __grid_constant__ CUtensorMap tm_b,
                                              const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleContiguous>(tm_a, tm_b, tm_d, nullptr, args);
}

// Dense FP8 with 128x128 SFB blocks, split K: clusters of kSplit CTAs, one tile per cluster.
template <int kBlockM, int kBlockN, int kSplit>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, false, kSplit>::kThreads, 1)
    sm90_fp8_gemm_split_k_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                 const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, false, kScheduleDense, 0, kSplit>(tm_a, tm_b, tm_d, nullptr, args);
}

// Dense BF16 (K-major operands), split K: clusters of kSplit CTAs, one tile per cluster.
template <int kBlockM, int kBlockN, int kSplit>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true, kSplit>::kThreads, 1)
    sm90_bf16_gemm_split_k_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                  const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleDense, 0, kSplit>(tm_a, tm_b, tm_d, nullptr, args);
}

// K-grouped FP8 (per-row SFB): the groups' operand maps come in `table`.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, true, false>::kThreads, 1)
    sm90_fp8_k_grouped_gemm_kernel(const __grid_constant__ KGroupTable table, const __grid_constant__ CUtensorMap tm_d,
                                   const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, true, false>(table.a[0], table.b[0], tm_d, &table, args);
}

// K-grouped FP8, the consumers walking the table's tiles themselves (the default;
// DG_GEMM_K_GROUPED_SCHEDULE=0 takes the general K-grouped kernel).
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, true, false>::kThreads, 1)
    sm90_fp8_k_grouped_gemm_uniform_kernel(const __grid_constant__ KGroupTable table,
                                           const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, true, false, kScheduleKGrouped>(table.a[0], table.b[0], tm_d, &table, args);
}

template <int kBlockM, int kBlockN, int kMajors = 0>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                          const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleGeneral, kMajors>(tm_a, tm_b, tm_d, nullptr, args);
}

// Dense BF16 (the consumers' own tile schedule, as the dense FP8 kernel).
template <int kBlockM, int kBlockN, int kMajors>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_dense_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleDense, kMajors>(tm_a, tm_b, tm_d, nullptr, args);
}

// Dense BF16 (K-major operands) in multicast pairs: clusters of two CTAs on neighbouring tiles,
// sharing A (kCastA) or B (kCastB) (Note [multicast pairs]).
template <int kBlockM, int kBlockN, int kCast>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_multicast_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                    const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleDense, 0, 1, kCast>(tm_a, tm_b, tm_d, nullptr, args);
}

// The multicast-pair BF16 kernel compiled for bf16 D with no C (Note [lean kernels]): dense
// problems' pairs and masked ones' (MaskedPairs), a group's partial slabs written from registers.
template <int kBlockM, int kBlockN, int kCast>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_multicast_lean_kernel(const __grid_constant__ CUtensorMap tm_a,
                                         const __grid_constant__ CUtensorMap tm_b,
                                         const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleDense, 0, 1, kCast, true>(tm_a, tm_b, tm_d, nullptr, args);
}

// M-grouped masked BF16 (K-major), compiled for its one output form, bf16 D with no C (Note [lean
// kernels]): the consumers walk the groups' tiles themselves, as in the masked FP8 kernel.  The
// launcher takes it for masked problems outside multicast pairs whose D suits the TMA unit; the
// others run the general kernel.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_m_grouped_masked_lean_kernel(const __grid_constant__ CUtensorMap tm_a,
                                                const __grid_constant__ CUtensorMap tm_b,
                                                const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleMasked, 0, 1, kCastNone, true>(tm_a, tm_b, tm_d, nullptr, args);
}

// M-grouped contiguous BF16 (row ids or psum; B K-major or MN-major): the uniform first pass.
template <int kBlockM, int kBlockN, int kMajors>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_m_grouped_contiguous_kernel(const __grid_constant__ CUtensorMap tm_a,
                                               const __grid_constant__ CUtensorMap tm_b,
                                               const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleContiguous, kMajors>(tm_a, tm_b, tm_d, nullptr, args);
}

// K-grouped BF16 (k_grouped_bf16_gemm_tn: A_g [k_g, M] and B_g [k_g, N], both MN-major).
template <int kBlockM, int kBlockN, int kMajors>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_k_grouped_kernel(const __grid_constant__ KGroupTable table, const __grid_constant__ CUtensorMap tm_d,
                                    const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true, kScheduleGeneral, kMajors>(table.a[0], table.b[0], tm_d, &table, args);
}

// K-grouped BF16 with the group sizes on the device: the table was built in global memory by
// build_k_group_tables (every group, the empty ones with no K blocks), so the producer thread
// acquires its maps before its first TMA.
template <int kBlockM, int kBlockN, int kMajors>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_gemm_k_grouped_device_kernel(const KGroupTable* table, const __grid_constant__ CUtensorMap tm_d,
                                           const KernelArgs args) {
  if (threadIdx.x == Traits<kBlockM, kBlockN, false, true>::kMathWarpgroups * 128) {
    const int count = table->count;
    for (int i = 0; i < count; ++i) {
      deep_gemm::cuda::sm90::tensor_map_acquire(&table->a[i]);
      deep_gemm::cuda::sm90::tensor_map_acquire(&table->b[i]);
    }
  }
  gemm_body<kBlockM, kBlockN, false, true, kScheduleGeneral, kMajors>(table->a[0], table->b[0], tm_d, table, args);
}

// BF16 D = C + sum_g A[g] B[g]^T (the einsum 'bmk,bnk->mn'), one accumulation over every K.
template <int kBlockM, int kBlockN>
__global__ void __launch_bounds__(Traits<kBlockM, kBlockN, false, true>::kThreads, 1)
    sm90_bf16_bmn_bnk_mn_gemm_impl(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                                   const __grid_constant__ CUtensorMap tm_d, const KernelArgs args) {
  gemm_body<kBlockM, kBlockN, false, true>(tm_a, tm_b, tm_d, nullptr, args);
}

}  // namespace deep_gemm::cuda::gemm_detail
