#pragma once
// Launching one compiled shape of the GEMM kernel.  Included by the instantiation units
// (gemm_*.cu) and, for its declarations, by the dispatcher (gemm.cu).

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/gemm.h"

namespace deep_gemm::cuda::gemm_detail {

// K-grouped problems: one entry per group, up to kMaxKGroups per launch.  Built on the host
// from host-side sizes (the non-empty groups only; passed as a kernel parameter), or on the
// device from the groups' psum ends (every group, empty ones with k_blocks 0; in the
// problem's workspace, see build_k_group_tables).
constexpr int kMaxKGroups = 64;
struct KGroupTable {
  CUtensorMap a[kMaxKGroups];  // A_g [m, k_g], B_g [n, k_g]: 3-D maps with one group
  CUtensorMap b[kMaxKGroups];
  int group[kMaxKGroups];  // D's group
  int k_blocks[kMaxKGroups];
  int sf_block0[kMaxKGroups];  // first scale column
  int count;
};
// Tables built on the device lie this many bytes apart in the workspace (128-byte aligned maps).
constexpr size_t kKGroupTableStride = (sizeof(KGroupTable) + 127) / 128 * 128;
__host__ __device__ inline KGroupTable* k_group_table_at(void* workspace, int t) {
  return reinterpret_cast<KGroupTable*>(static_cast<uint8_t*>(workspace) + static_cast<size_t>(t) * kKGroupTableStride);
}

// The groups of a K-grouped problem whose sizes live on the device: group g holds rows
// [start_g, ends[g]) of A and B, start_g being ends[g - 1] (0 for g = 0) rounded up to
// `alignment`; ends past `rows` are clipped there, and a group whose end is not past its
// start is empty.  A K row of A (B) is a_row_bytes (b_row_bytes) bytes.
struct KGroupDeviceSizes {
  const int* ends;
  int groups;
  int alignment;
  int rows;
  const void* a;
  int64_t a_row_bytes;
  const void* b;
  int64_t b_row_bytes;
  int k_block_values;  // K values per stage (the tables' k_blocks)
};

// Fills ceil(groups / kMaxKGroups) tables, k_group_table_at(workspace, t), from the device
// sizes: each group's maps are copies of the templates (3-D [1, k, mn] maps with the tile's
// boxes) with its base address, K size and outer stride replaced on the device.  Defined in
// k_group_table.cu.
cudaError_t build_k_group_tables(void* workspace, const CUtensorMap& a_template, const CUtensorMap& b_template,
                                 const KGroupDeviceSizes& sizes, cudaStream_t stream);

// The L2 policy codes of GemmConfig::l2_hints and KernelArgs::l2_hints (Note [L2 policies] in
// gemm_kernel.cuh): two bits per TMA copy, A's loads at bit 0, B's at bit 2, D's stores at bit 4.
constexpr int kL2Normal = 0, kL2First = 1, kL2Last = 2;
constexpr int kL2ShiftA = 0, kL2ShiftB = 2, kL2ShiftD = 4;
constexpr int l2_hints_of(int a, int b, int d) { return a << kL2ShiftA | b << kL2ShiftB | d << kL2ShiftD; }
constexpr int l2_hint_at(int hints, int shift) { return (hints >> shift) & 3; }
static_assert(l2_hint_at(l2_hints_of(kL2Last, kL2First, kL2Last), kL2ShiftB) == kL2First);

// Note [merged K atoms]: a pipeline stage holds one K block of the operands, 128-byte rows of
// it per TMA box (128 FP8 or 64 BF16 values: the 128-byte swizzle's width).  The 64x64 BF16
// tile holds two such atoms per stage (128 K values, two boxes per operand): its MMAs per 64
// values are short (128 tensor cycles), so one stage's wait, release and MMA commit serve 128
// values rather than 64, in 6 stages rather than 13.  On the H200, forced, one call: split 2 it
// ran 2.5-5% faster at m = 128 (20.0 against 20.5 us at 128x2112x7168, 20.5 against 21.6 at
// 128x7168x2048); unsplit, 5% faster at 128x2112x7168 and level to 5% slower at the other two.
// 128x64 lost 10-20% with two atoms (4 stages rather than 8; split 2 at 128x4096x7168: 33.9
// against 28.6 us), so it keeps one.  The tile is K-major only and never multicast.
constexpr int k_atom_values(bool bf16) { return bf16 ? 64 : 128; }  // K values per 128-byte atom
constexpr int k_atoms_per_stage(bool bf16, int block_m, int block_n) {
  return bf16 && block_m == 64 && block_n == 64 ? 2 : 1;
}
// K values per stage (the kernel's K block): what the split-K and K-block counts are made of.
constexpr int k_block_values(bool bf16, int block_m, int block_n) {
  return k_atom_values(bf16) * k_atoms_per_stage(bf16, block_m, block_n);
}
// Whether a tile's float32 D leaves through the output buffer and the TMA unit (16-column boxes
// where BLOCK_N is a multiple of 32; a per-row FP8 tile of another width in 8-column boxes, Note
// [float32 in 8-column boxes]) rather than from registers: the kernel's Traits, the launcher and
// the cost model (gemm.cu) all take it from here.
constexpr bool f32_out_via_tma(bool sfb_per_row, int block_n) { return block_n % 32 == 0 || sfb_per_row; }

// Whether D (d_bytes per element, rows ldd and groups d_z elements apart) meets the TMA unit's
// 16-byte rules for its output map: both strides and the base 16-byte aligned.  The launchers'
// output path and the heuristic's contiguous_pick (gemm.cu) ask the same question.
inline bool d_fits_tma(const void* d, int64_t ldd, int64_t d_z, int d_bytes) {
  return (ldd * d_bytes) % 16 == 0 && (d_z * d_bytes) % 16 == 0 && reinterpret_cast<uintptr_t>(d) % 16 == 0;
}

// The compiled shapes: X(BLOCK_M, BLOCK_N, SFB per row, BF16 operands, MN-major operands: bit 0
// A, bit 1 B).
// clang-format off
#define DG_FP8_GEMM_SHAPES_BM64(X) \
  X(64, 16, false, false, 0) X(64, 32, false, false, 0) X(64, 48, false, false, 0) X(64, 64, false, false, 0) \
  X(64, 96, false, false, 0) X(64, 128, false, false, 0) X(64, 160, false, false, 0) X(64, 192, false, false, 0)
#define DG_FP8_GEMM_SHAPES_BM128(X) \
  X(128, 16, false, false, 0) X(128, 32, false, false, 0) X(128, 64, false, false, 0) X(128, 96, false, false, 0) \
  X(128, 128, false, false, 0) X(128, 144, false, false, 0) X(128, 160, false, false, 0) X(128, 192, false, false, 0)
#define DG_FP8_GEMM_SHAPES_BM256(X) X(256, 128, false, false, 0)
// An FP8 tile of a unit of its own (gemm_fp8_narrow.cu), 2112 / 12 columns wide, whose tiles span up
// to three 128-wide SFB blocks (Note [SFB splits]): at 4096 x 2112 it makes 384 tiles, 2.91 waves on
// 132 SMs, against 128x192's 352, 2.67 waves (three tiles on the busiest SM either way, each 8%
// smaller).  H200, forced, interleaved at 4096x2112x7168: 102.4 / 102.0 us against 128x192's
// 104.7 / 104.2 (in one chunk per wave, its fold after every MMA, it ran 109.5 against 104.9).
#define DG_FP8_GEMM_SHAPES_NARROW(X) X(128, 176, false, false, 0)
#define DG_FP8_GEMM_SHAPES_ROW(X) \
  X(64, 32, true, false, 0) X(64, 64, true, false, 0) X(64, 128, true, false, 0) X(128, 64, true, false, 0) \
  X(128, 128, true, false, 0)
// A wider per-row tile, a unit of its own (gemm_fp8_row_wide.cu), for the K-grouped FP8 family:
// 25% more columns per A tile read, 20% fewer tiles.  ptxas (sm_90a): the K-grouped kernel whose
// consumers walk the table (the default, DG_GEMM_K_GROUPED_SCHEDULE) keeps no stack frame and no
// spill; the general kernels spill 84 bytes.  The heuristic takes it for K-grouped problems on that
// kernel: on the H200, in one process, 1.15x against 128x128 on both benchmark shapes (three runs),
// which brought the family to 1.03x upstream in-run.  (128x192 per-row spills 478-644 bytes in all
// three kernels; 256x128 per-row 2.2-2.6 KB.)
// 128x136 (17 groups of 8 columns; float32 D through the TMA unit in 8-column boxes, bf16 D from
// registers) is for Wgrad problems whose 128x128 tiles run just past a whole number of waves:
// 2112 x 4096 makes 544 tiles of 128x128, 4.12 waves on 132 SMs, so 5, and 527 of 128x136, 3.99,
// so 4 (wide_row_saves_waves in gemm.cu).
#define DG_FP8_GEMM_SHAPES_ROW_WIDE(X) X(128, 136, true, false, 0) X(128, 160, true, false, 0)
#define DG_BF16_GEMM_SHAPES(X) \
  X(64, 64, false, true, 0) X(64, 128, false, true, 0) X(64, 192, false, true, 0) X(64, 256, false, true, 0) \
  X(128, 64, false, true, 0) X(128, 128, false, true, 0) X(128, 192, false, true, 0) X(128, 256, false, true, 0)
// A BF16 tile of a unit of its own (gemm_bf16_narrow.cu), a width that divides n = 2112 into 12
// tiles: at 4096 x 2112 it makes 384 tiles, 2.91 waves on 132 SMs, against 128x192's 2.67 (H200:
// 161.5 against 172.2 us at k = 7168).
#define DG_BF16_GEMM_SHAPES_NARROW(X) X(128, 176, false, true, 0)
// BF16 with MN-major operands (the last field: 2, B MN-major; 3, both).
#define DG_BF16_MN_GEMM_SHAPES(X) \
  X(64, 128, false, true, 2) X(128, 128, false, true, 2) X(128, 256, false, true, 2) \
  X(64, 128, false, true, 3) X(128, 128, false, true, 3) X(128, 256, false, true, 3)
// Dense FP8 split K across a cluster: Y(BLOCK_M, BLOCK_N, CTAs per tile).
#define DG_FP8_GEMM_SHAPES_SPLIT(Y) \
  Y(64, 32, 2) Y(64, 64, 2) Y(64, 128, 2) Y(128, 64, 2)
// Dense BF16 split K across a cluster: Z(BLOCK_M, BLOCK_N, CTAs per tile).
#define DG_BF16_GEMM_SHAPES_SPLIT(Z) \
  Z(64, 64, 2) Z(64, 128, 2) Z(128, 64, 2)
// Dense BF16 (K-major operands) in multicast pairs: W(BLOCK_M, BLOCK_N, 1 sharing A along N or
// 2 sharing B along M).
// Measured on the H200 (twelfth session) at 0.77-0.99 of the same tile without pairs on the six
// benchmark shapes (one run), so the heuristic never picks them; they stay compiled as forced configs
// ("128x128ma", "128x256mb") for the grouped BF16 families to build on.
#define DG_BF16_GEMM_SHAPES_CAST(W) W(128, 128, 1) W(128, 256, 2)
#define DG_GEMM_SHAPES(X) \
  DG_FP8_GEMM_SHAPES_BM64(X) DG_FP8_GEMM_SHAPES_BM128(X) DG_FP8_GEMM_SHAPES_BM256(X) DG_FP8_GEMM_SHAPES_NARROW(X) \
  DG_FP8_GEMM_SHAPES_ROW(X) DG_FP8_GEMM_SHAPES_ROW_WIDE(X) \
  DG_BF16_GEMM_SHAPES(X) DG_BF16_GEMM_SHAPES_NARROW(X) DG_BF16_MN_GEMM_SHAPES(X)
// clang-format on

// kCast: dense BF16 in multicast pairs (1: sharing A, 2: sharing B; see Note [multicast pairs]).
template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit = 1, int kCast = 0>
struct Shape {
  static int stages();
  static cudaError_t launch(const GemmProblem& p, const GemmConfig& cfg, cudaStream_t stream);
};

}  // namespace deep_gemm::cuda::gemm_detail

// Explicit instantiations of Shape, one per X, Y or Z entry (the gemm_*.cu units, over the
// definitions of gemm_instantiate.cuh; tools/gemm_picks.cu, over stubs).
#define DG_GEMM_INSTANTIATE(BM, BN, ROW, BF16, MAJ) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, ROW, BF16, MAJ>;
#define DG_GEMM_INSTANTIATE_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, false, 0, SPLIT>;
#define DG_GEMM_INSTANTIATE_BF16_SPLIT(BM, BN, SPLIT) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, true, 0, SPLIT>;
#define DG_GEMM_INSTANTIATE_BF16_CAST(BM, BN, CAST) \
  template struct deep_gemm::cuda::gemm_detail::Shape<BM, BN, false, true, 0, 1, CAST>;
