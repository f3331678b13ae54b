// The GEMM dispatcher: argument limits, the tile-configuration heuristic and the launch.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/gemm.h"
#include "cuda/gemm_launch.cuh"
#include "cuda/gemm_switches.h"

namespace deep_gemm::cuda {

namespace {

using gemm_detail::kL2First;
using gemm_detail::kL2Normal;
using gemm_detail::l2_hints_of;
using gemm_detail::Shape;

struct Compiled {
  int block_m, block_n;
  bool sfb_per_row;
  bool bf16;
  int majors;  // MN-major operands: bit 0 A, bit 1 B
  int split;  // CTAs (a cluster) per tile, each summing a part of K
  int cast;  // multicast pairs (dense BF16): 1 sharing A, 2 sharing B
  int (*stages)();
  cudaError_t (*launch)(const GemmProblem&, const GemmConfig&, cudaStream_t);
};

// clang-format off
#define DG_GEMM_ENTRY(BM, BN, ROW, BF16, MAJ) \
  Compiled{BM, BN, ROW, BF16, MAJ, 1, 0, &Shape<BM, BN, ROW, BF16, MAJ>::stages, &Shape<BM, BN, ROW, BF16, MAJ>::launch},
#define DG_GEMM_SPLIT_ENTRY(BM, BN, SPLIT) \
  Compiled{BM, BN, false, false, 0, SPLIT, 0, &Shape<BM, BN, false, false, 0, SPLIT>::stages, \
           &Shape<BM, BN, false, false, 0, SPLIT>::launch},
#define DG_GEMM_BF16_SPLIT_ENTRY(BM, BN, SPLIT) \
  Compiled{BM, BN, false, true, 0, SPLIT, 0, &Shape<BM, BN, false, true, 0, SPLIT>::stages, \
           &Shape<BM, BN, false, true, 0, SPLIT>::launch},
#define DG_GEMM_BF16_CAST_ENTRY(BM, BN, CAST) \
  Compiled{BM, BN, false, true, 0, 1, CAST, &Shape<BM, BN, false, true, 0, 1, CAST>::stages, \
           &Shape<BM, BN, false, true, 0, 1, CAST>::launch},
// clang-format on
const Compiled kCompiled[] = {DG_GEMM_SHAPES(DG_GEMM_ENTRY) DG_FP8_GEMM_SHAPES_SPLIT(DG_GEMM_SPLIT_ENTRY)
                                  DG_BF16_GEMM_SHAPES_SPLIT(DG_GEMM_BF16_SPLIT_ENTRY)
                                      DG_BF16_GEMM_SHAPES_CAST(DG_GEMM_BF16_CAST_ENTRY)};
#undef DG_GEMM_ENTRY
#undef DG_GEMM_BF16_CAST_ENTRY
#undef DG_GEMM_SPLIT_ENTRY
#undef DG_GEMM_BF16_SPLIT_ENTRY

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// A masked problem's expected rows per group: the caller's hint, at most m.
int expected_rows(const GemmProblem& p) { return p.expected_m > 0 ? std::min(p.expected_m, p.m) : p.m; }

// M blocks the schedule will visit: masked problems are sized by the caller's expected rows
// per group (a hint: the kernel reads the real counts on the device).
int m_blocks_of(const GemmProblem& p, int block_m) {
  if (p.layout == GemmLayout::kMasked) return p.groups * ceil_div(expected_rows(p), block_m);
  return ceil_div(p.m, block_m);
}

// Groups whose tiles the schedule visits one after another (batched: all; K-grouped: the
// non-empty ones), 1 otherwise.
int tile_groups(const GemmProblem& p) {
  if (p.layout == GemmLayout::kBatched) return p.groups;
  if (p.layout == GemmLayout::kKGrouped) {
    if (p.group_k == nullptr) return p.groups;  // (sizes on the device)
    int count = 0;
    for (int g = 0; g < p.groups; ++g) count += p.group_k[g] > 0 ? 1 : 0;
    return count;
  }
  return 1;
}

// K of one tile, for the estimate: K-grouped tiles take the mean non-empty group's K, a
// batch-summed tile every group's.
int64_t tile_k(const GemmProblem& p) {
  if (p.layout == GemmLayout::kBatchSum) return static_cast<int64_t>(p.k) * p.groups;
  if (p.layout == GemmLayout::kKGrouped) {
    const int groups = tile_groups(p);
    return groups == 0 ? 0 : p.k / groups;
  }
  return p.k;
}

// Estimated nanoseconds for one configuration: a model of the kernel, its constants fitted
// to a sweep of every compiled shape over the dense benchmark's problems on an H200 (see
// docs/performance.md).  Per K block a CTA needs the larger of its tensor-core time and its
// operand traffic at a per-SM share of L2 bandwidth; two math warpgroups expose some of their
// MMA wait; waves of persistent tiles add up; and the call is never faster than moving its
// operands once through HBM.
// A split tile's extra cost: the cluster launch and the partial tile's trip to the first CTA
// (fitted to a sweep of the dense shapes on an H200).
constexpr double kSplitExchangeNs = 3000.0;
constexpr double kSplitMaxBBytes = 20e6;
constexpr double kSplitMaxBf16Values = 30e6;
// A masked BF16 group's B (n x k values) above which pairs sharing B beat pairs sharing A
// (masked_pick).
constexpr double kMaskedShareBValues = 20e6;
// Contiguous problems take the lean 256x128 tile from this many full waves of it on, and above this
// many K blocks (contiguous_pick).
constexpr int kContiguous256MinWaves = 4;
constexpr int kContiguous256MaxShortKBlocks = 16;

// The problem's output tiles under a BM x BN tile (one CTA each, unsplit).
int64_t tiles_of(const GemmProblem& p, int block_m, int block_n) {
  return static_cast<int64_t>(m_blocks_of(p, block_m)) * ceil_div(p.n, block_n) * std::max(1, tile_groups(p));
}

double estimate_ns(const GemmProblem& p, const Compiled& c, int num_sms) {
  const double tiles = static_cast<double>(tiles_of(p, c.block_m, c.block_n));
  // A split tile occupies `split` SMs, each summing a part of K, and the first adds the others'
  // partial tiles (one shared-memory round trip).
  const double waves = std::ceil(tiles * c.split / num_sms);
  // The model's BF16 K block is 64 values (one atom, whatever a stage holds: Note [merged K
  // atoms]): the same bytes as FP8's 128, half the MMA work.
  const int64_t k = tile_k(p);
  const int atom = gemm_detail::k_atom_values(c.bf16);
  const int64_t all_k_blocks = (k + atom - 1) / atom;
  const double k_blocks = static_cast<double>((all_k_blocks + c.split - 1) / c.split);
  const double exchange = c.split > 1 ? kSplitExchangeNs : 0.0;
  constexpr double kFlopPerNsPerSm = 9000.0;
  constexpr double kL2BytesPerNsPerSm = 30.0;
  constexpr double kHbmBytesPerNs = 3500.0;
  const double mma = 2.0 * c.block_m * std::max(c.block_n, 32) * 128 / kFlopPerNsPerSm;
  const double mem = (c.block_m + c.block_n) * 128.0 / kL2BytesPerNsPerSm;
  // The general kernel's two math warpgroups expose some of their MMA wait (BF16 keeps one MMA
  // group in flight; the dense kernel's own schedule measured nothing exposed).
  const double exposed = c.block_m == 128 && !c.bf16 && p.layout != GemmLayout::kDense ? 25.0 : 0.0;
  const bool f32 = p.d_dtype == OutDtype::kFloat;
  // Float32 D written from registers (f32_out_via_tma false: BLOCK_N no multiple of 32, block
  // SFB) is slower than the TMA path, charged as three times the bytes.  Bf16 D of a width that is
  // no multiple of 32 leaves in 16-column boxes (kOutBoxCols) or from registers: twice a 32-column
  // tile's TMA stores per slab, charged as twice the bytes.  On the H100 (forty-fifth session, one
  // process, 12 rounds) 4096x7168x576 ran 128x176 in 56.8 us (10 waves) against 128x160's 44.3,
  // 128x128's 45.5 and 256x128's 44.5; without the bf16 term the model picked 128x176.
  const double narrow_out =
      f32 ? (gemm_detail::f32_out_via_tma(c.sfb_per_row, c.block_n) ? 1.0 : 3.0) : (c.block_n % 32 == 0 ? 1.0 : 2.0);
  const double out_bytes = (f32 ? 4.0 : 2.0) * (p.c != nullptr ? 3.0 : 1.0) * narrow_out;
  // A 256-row tile's fixed cost per tile (its two waves' hand-over and epilogue), fitted to
  // interleaved timings on the H200 against 128x192: it loses at short K (4096x32768x512 177.6
  // against 159.7 us, 4096x24576x1536 263.0 against 254.6) and wins from K = 2048 on
  // (4096x7168x2048 116.7 against 123.7, 4096x4096x7168 208.5 against 223.2).
  const double tall = c.block_m == 256 ? 3000.0 : 0.0;
  const double tile = k_blocks * (std::max(mma, mem) + exposed) +
                      c.block_m * c.block_n * out_bytes / kL2BytesPerNsPerSm + exchange + tall;
  const double rows = static_cast<double>(m_blocks_of(p, 1)) * std::max(1, tile_groups(p));
  const double b_groups = p.layout == GemmLayout::kBatchSum   ? 1.0
                          : p.layout == GemmLayout::kKGrouped ? std::max(1, tile_groups(p))
                                                              : p.groups;
  const double hbm = (rows * static_cast<double>(k) + static_cast<double>(p.n) * static_cast<double>(k) * b_groups +
                      rows * p.n * (f32 ? 4 : 2) * (p.c != nullptr ? 2 : 1)) /
                     kHbmBytesPerNs;
  return std::max(waves * tile, hbm) + 2000.0;
}

bool usable(const GemmProblem& p, const Compiled& c) {
  const bool bf16 = p.ab_dtype == InDtype::kBf16;
  // 256-row tiles serve dense, masked and M-grouped contiguous problems (a contiguous tile's runs
  // each pay for the waves that hold their rows only: Note [idle waves]).
  if (c.block_m == 256 && p.layout != GemmLayout::kDense && p.layout != GemmLayout::kMasked &&
      p.layout != GemmLayout::kRowIds && p.layout != GemmLayout::kPsum) {
    return false;
  }
  // Split K: dense problems (FP8 with 128x128 SFB blocks, or BF16) of at least one K block per CTA.
  const int k_block = gemm_detail::k_block_values(bf16, c.block_m, c.block_n);
  if (c.split > 1 &&
      (p.layout != GemmLayout::kDense || (!bf16 && p.sfb_gran_n != 128) || (p.k + k_block - 1) / k_block < c.split)) {
    return false;
  }
  // Multicast pairs: dense and masked BF16 problems with K-major operands.
  if (c.cast != 0 && p.layout != GemmLayout::kDense && p.layout != GemmLayout::kMasked) return false;
  if (c.majors != ((p.a_mn_major ? 1 : 0) | (p.b_mn_major ? 2 : 0))) return false;
  return c.bf16 == bf16 && (bf16 || c.sfb_per_row == (p.sfb_gran_n == 1));
}

// The compiled shape of these parameters, if the problem can run it.
const Compiled* find_compiled(const GemmProblem& p, int bm, int bn, int split, int cast) {
  for (const auto& c : kCompiled) {
    if (c.block_m == bm && c.block_n == bn && c.split == split && c.cast == cast && usable(p, c)) return &c;
  }
  return nullptr;
}

// DG_SM90_GEMM_CONFIG=BMxBN (e.g. 128x128), BMxBNsS for a split-K shape (64x64s2), or BMxBNma /
// BMxBNmb for a multicast pair sharing A / B (128x256mb), forces one compiled shape when it fits.
const Compiled* override_shape(const GemmProblem& p) {
  const char* env = std::getenv("DG_SM90_GEMM_CONFIG");
  if (env == nullptr || *env == '\0') return nullptr;
  int bm = 0, bn = 0, split = 1, cast = 0, used = 0;
  if (std::sscanf(env, "%dx%d%n", &bm, &bn, &used) < 2) return nullptr;
  const std::string rest = env + used;
  if (rest == "ma" || rest == "mb") {
    cast = rest == "ma" ? 1 : 2;
  } else if (!rest.empty() && std::sscanf(rest.c_str(), "s%d", &split) != 1) {
    return nullptr;
  }
  return find_compiled(p, bm, bn, split, cast);
}

// Masked problems of more than 128 expected rows per group take a measured rule rather than
// the model, which charges no tile for B's trips through HBM: the two 128-row tiles of a group
// both fetch its B, and at 32 groups x 192 rows x 6144 x 7168 (BF16, 128x256) the profiler read
// 3.76 TB/s from HBM at a 43% L2 hit rate, about twice B.  Interleaved on the H200 (µs, the old
// pick first):
// - FP8, 256x128 (one tile, B fetched once) against 128x192: 32x192x6144x7168 663.2 against
//   723.1, 32x192x4096x2048 197.6 against 223.3; at 6 x 1024 rows it lost (539.6 against 498.7,
//   151.6 against 124.1), so only groups of at most 256 rows take it.
// - BF16, multicast pairs against 128x256: 128x128 sharing A won on all four shapes
//   (32x192x6144x7168 1289.2 against 1361.6, 32x192x4096x2048 267.1 / 302.8, 6x1024x6144x7168
//   821.9 / 913.8, 6x1024x4096x2048 186.2 / 202.2), and 128x256 sharing B (two M tiles, one B) won
//   more where a group fits one pair and its B is large (32x192x6144x7168 1173.9), not where it is
//   small (32x192x4096x2048 299.8).
// - BF16 since its lean masked kernel and masked bands (Note [masked bands]), in one process on
//   the H100 (fortieth session), 128x192 against 128x128ma: 32x192x4096x2048 264.3 against 328.0,
//   6x1024x6144x7168 805.0 / 835.0, 6x1024x4096x2048 179.2 / 185.3; at 32x192x6144x7168 the pair
//   sharing B stays ahead (1224.0 against 128x192's 1341.7 and 128x256's 1284.3).
const Compiled* masked_pick(const GemmProblem& p) {
  if (p.layout != GemmLayout::kMasked) return nullptr;
  const int expected = expected_rows(p);
  if (expected <= 128) return nullptr;
  int bm = 0, bn = 0, cast = 0;
  if (p.ab_dtype == InDtype::kBf16) {
    const bool one_pair = expected <= 256 && static_cast<double>(p.n) * p.k > kMaskedShareBValues;
    bm = 128;
    bn = one_pair ? 256 : 192;
    cast = one_pair ? 2 : 0;
  } else if (expected <= 256) {
    bm = 256;
    bn = 128;
  } else {
    return nullptr;
  }
  return find_compiled(p, bm, bn, 1, cast);
}

// M-grouped contiguous FP8 problems (row ids or psum ends, 128x128 SFB blocks) whose bf16 D
// leaves through the TMA unit with no C run the lean contiguous 256x128 kernel (Note [lean
// contiguous 256x128] in gemm_kernel.cuh) where three measured conditions hold:
// - SFA is M-major (the layout get_mn_major_tma_aligned_tensor gives, which upstream's tests and
//   the engines pass).  A K-major SFA puts each row's scale in its own 32-byte sector, and a
//   256x128 tile loads 1.5 times as many of them per MMA as 128x192: there the lean 256x128 kernel
//   ran level to 2-5% slower than 128x192 on the benchmark problems.
// - K spans more than kContiguous256MaxShortKBlocks K blocks: at K = 2048 128x192 ran up to 4.6%
//   faster (row ids), at K = 3072 and above the lean 256x128 kernel 1-9% faster on the M-major
//   problems but one (8x28800x7168x3072, level to 2.7% slower).
// - Its tiles fill at least kContiguous256MinWaves waves: a group's last tile may hold rows of
//   the next group or padding, and a small problem pays for those rows in tiles of 256.
// The figures: H100, fifty-sixth session, four processes per SFA layout, the pick against 128x192
// forced in the same rounds (docs/performance.md).  DG_GEMM_LEAN=0 (the plain kernels) keeps the
// model's pick.
const Compiled* contiguous_pick(const GemmProblem& p) {
  if (p.layout != GemmLayout::kRowIds && p.layout != GemmLayout::kPsum) return nullptr;
  if (p.ab_dtype == InDtype::kBf16 || p.sfb_gran_n != 128 || p.d_dtype != OutDtype::kBf16 || p.c != nullptr) {
    return nullptr;
  }
  const bool tma_out = gemm_detail::d_fits_tma(p.d, p.ldd, static_cast<int64_t>(p.m) * p.ldd, 2);
  if (!tma_out || !setting_or(lean_setting(), true)) return nullptr;
  if (p.sfa_mn != 1 || ceil_div(p.k, 128) <= kContiguous256MaxShortKBlocks) return nullptr;
  if (tiles_of(p, 256, 128) < static_cast<int64_t>(kContiguous256MinWaves) * p.num_sms) return nullptr;
  return find_compiled(p, 256, 128, 1, 0);
}

// A per-row tile wider than 128 columns pays only where it saves waves: its waves each take about
// as long as 128x128's times the columns' ratio, or longer.  The general kernel's 128x160 (it
// spills at that width) ran about 1.33 times as long as 128x128 per wave, the uniform K-grouped
// kernel's 1.26 times.  So a wide tile is taken only where its waves times its width stay within
// 90% of 128x128's.  On the H100 (forty-fifth session, one process, 12 rounds, 128x160 over
// 128x128): Wgrad 576x4096x7168 (1 wave against 2) 1.13x faster with a float32 D and C, 1.28x
// with a bf16 D; 2112x4096x7168 (4 waves against 5) 0.94x, 4096x4096x7168 (7 against 8) 0.89x,
// 7168x4096x16384 0.95x, 32768x4096x512 0.98x.  128x136 takes 2112x4096x7168 (4 waves against 5:
// 544 column-waves against 640).  Forty-sixth session, one process, 12-15 rounds: with a bf16 D,
// 156.6 us against 128x128's 176.3 (H100), 159.5 against 179.6 (H200); with a float32 D and C
// through the TMA unit (Note [float32 in 8-column boxes]), 159.3 against 182.2 (H200).  Written
// from registers, as it first was, its float32 D and C took 210.1 us against 184.2 (H100).
bool wide_row_saves_waves(const GemmProblem& p, const Compiled& c) {
  if (!c.sfb_per_row || c.block_m != 128 || c.block_n <= 128) return false;
  const int64_t wide = (tiles_of(p, c.block_m, c.block_n) + p.num_sms - 1) / p.num_sms;
  const int64_t base = (tiles_of(p, 128, 128) + p.num_sms - 1) / p.num_sms;
  return wide * c.block_n * 10 <= base * 128 * 9;
}

const Compiled* choose(const GemmProblem& p) {
  if (const Compiled* forced = override_shape(p)) return forced;
  if (const Compiled* masked = masked_pick(p)) return masked;
  if (const Compiled* contiguous = contiguous_pick(p)) return contiguous;
  // FP8 splits K only where no unsplit tile fills every SM.  With a warp for the scales (Note [a
  // warp for the scales]) the narrow unsplit tiles no longer wait on their producer: on the H100
  // (thirtieth session, a sweep and forced tiles in one process each) 128x2112x7168 ran 64x32 in
  // 14.8 and 15.2 us against 64x64 split 2's 16.1 and 16.1, and 64x2112x7168 64x32 or 64x16 in
  // 14.3 and 14.1 against 64x32 split 2's 15.0 and 14.9; the model, fitted before, still
  // preferred the splits.
  bool unsplit_fills = false;
  if (p.ab_dtype != InDtype::kBf16 && setting_or(scale_warp_setting(), true)) {
    for (const auto& c : kCompiled) {
      if (c.split == 1 && c.cast == 0 && usable(p, c) && tiles_of(p, c.block_m, c.block_n) >= p.num_sms) {
        unsplit_fills = true;
        break;
      }
    }
  }
  const Compiled* best = nullptr;
  double best_ns = 0.0;
  for (const auto& c : kCompiled) {
    if (!usable(p, c)) continue;
    if (c.split > 1 && unsplit_fills) continue;  // (set for FP8 problems only)
    // The heuristic splits K only where B is small enough that DRAM does not bound the call (a
    // forced split shape still runs anywhere).  On the H200 sweep, split tiles won at m <= 128
    // with n x k = 15 MB (2112 x 7168: 13.4 against 15.8 us at m = 64) and lost from 29 MB on
    // (4096 x 7168: 17.9 against 17.6 us), where reading B once takes over half the call.
    // BF16 (not DRAM-bound there: its MMAs take twice as long per byte) splits up to
    // n x k = 4096 x 7168, where 128x64 split 2 measured 2-4% faster than 64x64 in three calls
    // (m = 128: 28.8 against 29.6, 28.7 against 29.3, 28.8 against 29.3 us).
    const double split_max = c.bf16 ? kSplitMaxBf16Values : kSplitMaxBBytes;
    if (c.split > 1 && static_cast<double>(p.n) * p.k > split_max) continue;
    // Multicast pairs: dense problems measured slower than single CTAs (docs/performance.md).
    // Masked problems take pairs and 256-row tiles through masked_pick only.
    if (c.cast != 0) continue;
    if (c.block_m == 256 && p.layout == GemmLayout::kMasked) continue;
    // Contiguous problems take 256-row tiles through contiguous_pick only (the plain 256x128 kernel,
    // H200, one process: 12-20% slower than the pick on all 16 contiguous and psum benchmark problems).
    if (c.block_m == 256 && (p.layout == GemmLayout::kRowIds || p.layout == GemmLayout::kPsum)) continue;
    // Per-row tiles wider than 128 columns: 128x160 for K-grouped problems of several groups on the
    // uniform kernel (H200, one process: 1.15x against 128x128 on both benchmark shapes), and
    // elsewhere, one group included, only where they save enough waves (wide_row_saves_waves).
    // A dense Wgrad problem run as one K group (one_k_group) on the uniform kernel, against the
    // general kernel's 128x128 (H100, forty-fifth session, one process, 10 rounds): at 128x128
    // 2112x4096x7168 1.029, 4096x4096x7168 1.032, 7168x4096x2048 1.018,
    // 7168x4096x16384 1.019, 24576x4096x1536 1.000, 32768x4096x512 0.997; at 128x160 0.94-0.98 on
    // those six, and 1.086 at 576x4096x7168 (one wave against two).
    const bool several_k_groups = p.layout == GemmLayout::kKGrouped && tile_groups(p) > 1;
    const bool wide_row_ok =
        (several_k_groups && c.block_n == 160 && k_grouped_schedule_chosen()) || wide_row_saves_waves(p, c);
    if (c.sfb_per_row && c.block_n > 128 && !wide_row_ok) continue;
    const double ns = estimate_ns(p, c, p.num_sms);
    // Ties (within 1%) go to the larger tile: fewer operand re-reads; between equal areas, to
    // the taller one, whose B tiles go to fewer CTAs (m = 128, n = 7168: 128x64 measured 9% faster
    // than 64x128).
    const int area = c.block_m * c.block_n;
    const int best_area = best == nullptr ? 0 : best->block_m * best->block_n;
    const bool better =
        best == nullptr || ns < best_ns * 0.99 ||
        (ns <= best_ns * 1.01 && (area > best_area || (area == best_area && c.block_m > best->block_m)));
    if (better) {
      best = &c;
      best_ns = ns;
    }
  }
  // FP8 dense with m in (64, 128]: a 64-row pick's two tile rows each read all of B, its 128-row
  // twin of half the width (as many tiles, BLOCK_N >= 32, one wave) reads each B line once, which
  // is what the L2 policy of a one-wave problem assumes (Note [L2 policies]).  On the H100, interleaved in
  // one process: 128x4096x7168 ran 128x32 in 21.5 us against 64x64's 22.3 (thirtieth session, no
  // policy) and 1.129x faster with B evict_first (thirty-first).
  if (best != nullptr && !best->bf16 && p.layout == GemmLayout::kDense && best->block_m == 64 && best->split == 1 &&
      m_blocks_of(p, 64) == 2 && best->block_n / 2 >= 32 && tiles_of(p, 128, best->block_n / 2) <= p.num_sms) {
    if (const Compiled* tall = find_compiled(p, 128, best->block_n / 2, 1, 0)) return tall;
  }
  return best;
}

GemmConfig config_of(const GemmProblem& p, const Compiled& c) {
  GemmConfig cfg;
  cfg.block_m = c.block_m;
  cfg.block_n = c.block_n;
  cfg.stages = c.stages();
  cfg.swizzle = gemm_swizzle();
  cfg.split = c.split;
  cfg.cast = c.cast;
  // Masked problems size their schedule on the device: every SM gets a producer.
  // Multicast pairs: the units are pairs of neighbouring tiles, a cluster of two CTAs each.
  const int m_units = c.cast == 2 ? ceil_div(ceil_div(p.m, c.block_m), 2) : ceil_div(p.m, c.block_m);
  const int n_units = c.cast == 1 ? ceil_div(ceil_div(p.n, c.block_n), 2) : ceil_div(p.n, c.block_n);
  const int64_t tiles =
      p.layout == GemmLayout::kMasked ? p.num_sms : static_cast<int64_t>(m_units) * n_units * tile_groups(p);
  const int per_cluster = c.cast != 0 ? 2 : c.split;
  cfg.num_ctas = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tiles, p.num_sms / per_cluster)));
  // Note [L2 policies] (gemm_kernel.cuh): an FP8 dense problem whose tiles all run at once, in one
  // or two rows of tiles (each B line read by at most two CTAs, the measured cases), streams B with
  // evict_first; DG_GEMM_L2_HINTS overrides.  (A taller one-wave problem, e.g. Dgrad's 4096 x 512 x
  // 32768, has up to 32 CTAs reading each B line as they drift apart: not tagged, not measured.)
  const bool b_read_once = p.ab_dtype != InDtype::kBf16 && p.layout == GemmLayout::kDense &&
                           tiles <= p.num_sms / per_cluster && m_units <= 2;
  const int hints = l2_hints_setting();
  cfg.l2_hints = hints >= 0 ? hints : l2_hints_of(kL2Normal, b_read_once ? kL2First : kL2Normal, kL2Normal);
  return cfg;
}

}  // namespace

std::string gemm_unsupported(const GemmProblem& p) {
  const bool k_grouped = p.layout == GemmLayout::kKGrouped;
  if (p.m <= 0 || p.n <= 0 || (p.k <= 0 && !k_grouped) || p.k < 0) return "empty problem";
  const int ab_bytes = p.ab_dtype == InDtype::kBf16 ? 2 : 1;
  const bool mn_major = p.a_mn_major || p.b_mn_major;
  if (mn_major) {
    if (p.ab_dtype != InDtype::kBf16) return "MN-major operands are BF16";
    // M-grouped layouts (contiguous, masked) take an MN-major B (the NN forms), A stays K-major.
    const bool m_grouped =
        p.layout == GemmLayout::kRowIds || p.layout == GemmLayout::kPsum || p.layout == GemmLayout::kMasked;
    if (p.layout != GemmLayout::kDense && p.layout != GemmLayout::kBatched && !k_grouped &&
        !(m_grouped && !p.a_mn_major)) {
      return "MN-major operands serve dense, batched, K-grouped and (B) M-grouped problems";
    }
  }
  const bool bf16_k_grouped = k_grouped && p.ab_dtype == InDtype::kBf16;
  if (bf16_k_grouped && !(p.a_mn_major && p.b_mn_major)) return "BF16 K-grouped problems have MN-major operands";
  if (k_grouped) {
    if (!bf16_k_grouped && (p.ab_dtype != InDtype::kFp8E4m3 || p.sfb_gran_n != 1)) {
      return "K-grouped FP8 problems have per-row scales";
    }
    const bool device_sizes = p.group_k == nullptr;
    if (device_sizes) {
      if (!bf16_k_grouped) return "K-grouped FP8 problems need the host-side group sizes";
      if (p.group_layout == nullptr || p.alignment < 1) return "device-side K-grouped sizes need the psum ends";
      if (p.workspace == nullptr) return "device-side K-grouped sizes need a workspace";
      if (reinterpret_cast<uintptr_t>(p.workspace) % 128 != 0) return "the workspace must be 128-byte aligned";
    } else if (p.a_offsets == nullptr || p.b_offsets == nullptr || (!bf16_k_grouped && p.sf_block0 == nullptr)) {
      return "K-grouped problems need the host-side group sizes and offsets";
    }
    for (int g = 0; g < (device_sizes ? 0 : p.groups); ++g) {
      if (p.group_k[g] < 0) return "K-grouped sizes must be non-negative";
      // FP8 groups are K-major (K rows of 16-byte multiples); BF16 ones MN-major (any K).
      if (!bf16_k_grouped && p.group_k[g] % 16 != 0) return "K-grouped sizes must be multiples of 16";
      if ((reinterpret_cast<uintptr_t>(p.a) + p.a_offsets[g] * ab_bytes) % 16 != 0 ||
          (reinterpret_cast<uintptr_t>(p.b) + p.b_offsets[g] * ab_bytes) % 16 != 0) {
        return "K-grouped operand blocks must be 16-byte aligned";
      }
    }
    if (p.d_dtype != OutDtype::kFloat) return "K-grouped output is float32";
  }
  if (p.layout == GemmLayout::kBatched || p.layout == GemmLayout::kBatchSum) {
    if ((p.a_group * ab_bytes) % 16 != 0 || (p.b_group * ab_bytes) % 16 != 0) {
      return "group strides of a and b must be multiples of 16 bytes";
    }
  }
  if (p.layout == GemmLayout::kBatchSum && p.ab_dtype != InDtype::kBf16) return "batch sums are BF16";
  if (p.ab_dtype != InDtype::kBf16 && p.sfb_gran_n != 1 && p.sfb_gran_n != 128) {
    return "SFB granularity along N must be 1 or 128";
  }
  if ((!k_grouped || bf16_k_grouped) && ((p.lda * ab_bytes) % 16 != 0 || (p.ldb * ab_bytes) % 16 != 0)) {
    return "row strides of a and b must be multiples of 16 bytes";
  }
  if (reinterpret_cast<uintptr_t>(p.a) % 16 != 0 || reinterpret_cast<uintptr_t>(p.b) % 16 != 0) {
    return "a and b must be 16-byte aligned";
  }
  if (p.num_sms < 1) return "needs at least one SM";
  if (p.groups < 1) return "needs at least one group";
  const bool device_layout =
      p.layout == GemmLayout::kRowIds || p.layout == GemmLayout::kPsum || p.layout == GemmLayout::kMasked;
  if (device_layout && p.group_layout == nullptr) return "grouped layouts need group_layout";
  if (p.layout == GemmLayout::kPsum && p.alignment < 1) return "psum layouts need a positive alignment";
  if (p.layout == GemmLayout::kMasked && static_cast<int64_t>(p.m) * p.groups > INT32_MAX) {
    return "masked problems must have groups * m below 2^31";
  }
  if (static_cast<int64_t>(p.n) * p.groups > INT32_MAX) return "groups * n must be below 2^31";
  if ((p.layout == GemmLayout::kBatched || k_grouped) && static_cast<int64_t>(p.m) * p.groups > INT32_MAX) {
    return "batched and K-grouped problems must have groups * m below 2^31";
  }
  return {};
}

size_t gemm_workspace_bytes(const GemmProblem& p) {
  if (p.layout != GemmLayout::kKGrouped || p.group_k != nullptr || p.groups < 1) return 0;
  const size_t tables = (static_cast<size_t>(p.groups) + gemm_detail::kMaxKGroups - 1) / gemm_detail::kMaxKGroups;
  return tables * gemm_detail::kKGroupTableStride;
}

namespace {

// A dense FP8 problem with per-row B scales and a float32 D (the Wgrad form), A and B packed
// ([m, k] and [n, k] with row stride k, as K-grouped operand blocks are), is the K-grouped
// problem of one group of size k: D[0] = C[0] + A_0 B_0^T with the scales' blocks from column 0.
// `problem` points into `group_k`, `offset` and `block0`, so it lives as long as they do.
struct OneKGroup {
  GemmProblem problem;
  int group_k = 0;
  int64_t offset = 0;
  int block0 = 0;
};

// The K-grouped problem's own rules (K-major FP8, K a multiple of 16, ...) are gemm_unsupported's;
// the test here only keeps the common dense calls from building the copy.
bool one_k_group(const GemmProblem& p, OneKGroup& out) {
  const bool eligible = p.layout == GemmLayout::kDense && p.ab_dtype == InDtype::kFp8E4m3 && p.sfb_gran_n == 1 &&
                        p.d_dtype == OutDtype::kFloat && p.groups == 1 && p.k > 0 && p.lda == p.k && p.ldb == p.k &&
                        row_as_k_group_chosen();
  if (!eligible) return false;
  out.group_k = p.k;
  out.problem = p;
  GemmProblem& q = out.problem;
  q.layout = GemmLayout::kKGrouped;
  q.group_k = &out.group_k;
  q.a_offsets = &out.offset;
  q.b_offsets = &out.offset;
  q.sf_block0 = &out.block0;
  q.d_group = static_cast<int64_t>(p.m) * p.ldd;
  q.c_group = static_cast<int64_t>(p.m) * p.ldc;
  return gemm_unsupported(q).empty();
}

}  // namespace

GemmConfig gemm_config(const GemmProblem& p) {
  if (OneKGroup one; one_k_group(p, one)) return gemm_config(one.problem);
  const Compiled* c = choose(p);
  return c == nullptr ? GemmConfig{} : config_of(p, *c);
}

cudaError_t gemm(const GemmProblem& p, cudaStream_t stream) {
  if (OneKGroup one; one_k_group(p, one)) return gemm(one.problem, stream);
  const Compiled* c = choose(p);
  if (c == nullptr) return cudaErrorNotSupported;
  const GemmConfig cfg = config_of(p, *c);
  if (const char* print = std::getenv("DG_PRINT_CONFIGS"); print != nullptr && *print != '\0' && *print != '0') {
    std::fprintf(stderr,
                 "sm90 gemm layout=%d groups=%d m=%d n=%d k=%d sfb_gran_n=%d -> %dx%d%s split=%d stages=%d ctas=%d "
                 "l2=%d bands=%d\n",
                 static_cast<int>(p.layout), p.groups, p.m, p.n, p.k, p.sfb_gran_n, cfg.block_m, cfg.block_n,
                 cfg.cast == 1   ? "ma"
                 : cfg.cast == 2 ? "mb"
                                 : "",
                 cfg.split, cfg.stages, cfg.num_ctas, cfg.l2_hints, cfg.swizzle);
  }
  return c->launch(p, cfg, stream);
}

}  // namespace deep_gemm::cuda
