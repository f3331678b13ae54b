#pragma once
// The GEMM kernels' switches, read from the environment on the host: which kernel a problem runs
// and how (the launchers, gemm_instantiate.cuh; the heuristic, gemm.cu).  Every switch but
// DG_GEMM_GENERAL_SCHEDULE is read on every launch, so one process can time both settings
// (benchmarks/variants.py).  Defaults are what the H200 measured faster (docs/performance.md,
// twenty-first session); a switch set to 0 or 1 overrides its default.

#include <algorithm>
#include <cstdlib>

namespace deep_gemm::cuda {

// The setting of switch `name`: 1 when it starts with '1', 0 with '0', -1 when unset (or anything
// else).
inline int env_setting(const char* name) {
  const char* env = std::getenv(name);
  if (env == nullptr) return -1;
  return env[0] == '1' ? 1 : env[0] == '0' ? 0 : -1;
}

// A switch's setting (env_setting) applied: 1 on, 0 off, unset the default.
inline bool setting_or(int setting, bool default_on) { return setting < 0 ? default_on : setting == 1; }

// Whether switch `name` is on: set to 1, or unset and on by default.
inline bool env_switch_or(const char* name, bool default_on) { return setting_or(env_setting(name), default_on); }

inline bool env_switch_on(const char* name) { return env_switch_or(name, false); }

// DG_GEMM_GENERAL_SCHEDULE=1 sends dense and M-grouped contiguous problems to the general kernel
// (read once per process: A/B measurements of the uniform-schedule kernels).
inline bool general_schedule_forced() {
  static const bool forced = env_switch_on("DG_GEMM_GENERAL_SCHEDULE");
  return forced;
}

// DG_GEMM_SKIP_IDLE_WAVES: warpgroups skip the MMAs of their waves that hold no rows of an item
// (Note [idle waves]).  Unset: on for the FP8 masked kernel and the lean contiguous 256x128 one
// (Note [lean contiguous 256x128]; the launcher decides); 1 or 0: everywhere.  Measured on the
// H200, in one process: with the masked kernel it ran the masked FP8 family 4-12% faster (geomean,
// three runs); alone on the general kernel 0.98, on BF16 masked 0.92, on the contiguous families
// level.
inline int idle_waves_setting() { return env_setting("DG_GEMM_SKIP_IDLE_WAVES"); }

// DG_GEMM_SLAB_WAIT: a 256-row tile's second slab waits only for its own output region's last
// store (Note [slab waits]).  Unset: on for the FP8 dense kernel and the lean contiguous 256x128
// one (the launcher decides), off elsewhere; 1 or 0: everywhere.  Measured on the H200 with the
// whole-wave dense kernel (one process, 18 shapes): on, 2 faster (4096x7168x2048 by 2.6%,
// 4096x4096x7168 by 0.9%), 16 level, none slower.
inline int slab_wait_setting() { return env_setting("DG_GEMM_SLAB_WAIT"); }

// DG_GEMM_STSM: the bf16 epilogue writes each slab to shared memory with stmatrix x4 rather than
// 4-byte stores (Note [stmatrix epilogue]; only the FP8 dense kernels and the lean contiguous
// 256x128 one compile it).  Unset: on in the plain FP8 dense kernel, with the compact epilogue
// below, and in the lean contiguous 256x128 one (the launcher decides); 1 or 0: everywhere it is
// compiled.  Alone, on the H100 (thirty-seventh session): 0.3-1.2% faster in the
// trace harness, level in-run (geomean 1.006 and 0.996); with the compact epilogue see there.
inline int stsm_setting() { return env_setting("DG_GEMM_STSM"); }

// DG_GEMM_COMPACT_EPILOGUE: the common tile (bf16 D through the TMA unit, no C, every slab owned)
// takes an epilogue path of its own, its instructions together after the K loop (Note [compact
// epilogue]).  Unset: on in the plain FP8 dense kernel (the launcher decides), off elsewhere; 1 or
// 0: everywhere.  Both switches on against both off, on the H100 (thirty-eighth session, in one
// process, 18 dense shapes, two runs): geomean 1.006 and 1.009, none slower, 4096x32768x512 faster
// in both (1.032, 1.036).  The compact epilogue alone on the grouped families: level to slower
// (contiguous geomean 0.995, K-grouped BF16 one shape 0.991), so those keep write_slab.
inline int compact_epilogue_setting() { return env_setting("DG_GEMM_COMPACT_EPILOGUE"); }

// DG_GEMM_LEAN: dense, M-grouped contiguous and masked FP8 problems with bf16 D, no C and D fit for
// the TMA unit run the kernel compiled for that output alone, where the tile has one (Note [lean
// kernels], has_lean_twin in gemm_kernel.cuh); so do K-major BF16 masked problems outside
// multicast pairs, which run the general kernel without it.  Unset: on for dense and masked
// problems and for the contiguous 256x128 tile (Note [lean contiguous 256x128]), off for the
// contiguous layouts' other tiles (the launcher decides); 1 or 0: everywhere.  Measured on the H100
// in one process (thirty-ninth session, base/variant).  Twins for the m = 4096 picks alone, lean as a
// variant, two runs: dense 18 shapes geomean 1.019 and 1.023, 7 faster, none slower; masked 1.083
// and 1.069, 7 of 8 faster, none slower; contiguous (row ids) 0.971 and 0.966, 7 of 8 slower;
// psum 0.984, 5 of 8 slower.  Twins for every tile, lean off as a variant: dense 0.964 (10 of 18
// slower without it: 64x32768x512 0.895, 128x32768x512 0.914, 128x24576x1536 0.919, the m = 4096
// ones 0.933-0.972), masked 0.902 (8 of 8 slower).  BF16 masked, the four benchmark problems
// forced onto one tile, lean off (the general kernel) as a variant: 64x256 0.847, 128x256 0.815,
// every problem slower without it (by 3-28%).
inline int lean_setting() { return env_setting("DG_GEMM_LEAN"); }

// DG_GEMM_STAGGER_CYCLES=N (N > 0): the second math warpgroup starts N SM cycles late (Note
// [staggered warpgroups]).  0: level on all 18 dense shapes at N = 2000 once the timing order
// was rotated, slower on the grouped families.
inline int stagger_cycles() {
  const char* env = std::getenv("DG_GEMM_STAGGER_CYCLES");
  return env == nullptr ? 0 : std::max(0, std::atoi(env));
}

// DG_GEMM_SCALE_WARP: a second producer warp copies each stage's scales (Note [a warp for the
// scales]).  Unset: on for dense problems (the dense and split-K kernels), for the lean
// contiguous 256x128 kernel, for other M-grouped contiguous problems with row ids of at most 16 K
// blocks and with psum ends of at most 32, off for longer contiguous ones and for the masked FP8
// kernels; 1 or 0: everywhere it is compiled.
// Measured on the H100, one process each (with/without time, or base/variant):
// - dense (thirtieth session): 2.0-3.6% faster on four of the six m = 4096 shapes, level on the
//   other fourteen;
// - contiguous and masked, off as a variant (thirty-eighth): mixed.  Row ids 1.012-1.065 on six
//   of eight shapes (slower with it; the two 33024x6144x7168 ones the most), 0.987-0.990 on the
//   two K = 2048 ones; psum 0.962-0.986 on six, 1.015 and 1.018 on the two 6144x7168 ones;
//   masked level on five, 0.972 on one, 1.016 and 1.085 on two;
// - K = 2048 (forty-first, two calls): faster with it in both, row ids and psum (on as a variant
//   1.009-1.016; on by default, off as a variant 0.958-0.991); the longer shapes level to 5%
//   slower, so contiguous problems took it for K <= 2048 alone;
// - psum on for K <= 4096 by default, off as a variant (forty-second): 4x34944x7168x3072 0.983,
//   the other K = 3072 and 4096 shapes level (0.996-0.997), the 6144x7168 ones level (1.001,
//   0.999), the K = 2048 ones 0.982 and 0.969: never faster without it up to K = 4096, so psum
//   takes it there.  Row ids keep K <= 2048 (slower with it at K = 3072 and 4096, above).
inline int scale_warp_setting() { return env_setting("DG_GEMM_SCALE_WARP"); }
constexpr int kScaleWarpRowIdsKBlocks = 16;  // contiguous problems with row ids up to this many K blocks
constexpr int kScaleWarpPsumKBlocks = 32;  // and with psum ends

// DG_GEMM_L2_HINTS=N: the TMA copies' L2 policies, KernelArgs::l2_hints's bits (A's loads in
// bits 0-1, B's in 2-3, D's bf16 and float32 stores in 4-5: 1 evict_first, 2 evict_last); a
// measuring switch (Note [L2 policies]).
// Unset: the heuristic's choice (config_of in gemm.cu).
inline int l2_hints_setting() {
  const char* env = std::getenv("DG_GEMM_L2_HINTS");
  return env == nullptr || env[0] < '0' || env[0] > '9' ? -1 : std::atoi(env) & 63;
}

// DG_GEMM_SWIZZLE=N (1 to 64): the tile order's bands are N tiles wide (along N; Note [FP8 GEMM
// kernel design]) instead of 8, for every problem whose schedule walks bands (a multicast pair's
// units: N / 2).  A measuring switch: the kernels take the width at run time, so one process can
// time several.  Unset or out of range: 8.
inline int gemm_swizzle() {
  const char* env = std::getenv("DG_GEMM_SWIZZLE");
  const int n = env == nullptr ? 0 : std::atoi(env);
  return n >= 1 && n <= 64 ? n : 8;
}

// DG_GEMM_MASKED_SCHEDULE sends masked FP8 problems (128x128 SFB blocks) to the kernel whose
// consumers walk the masked tiles themselves (sm90_fp8_gemm_m_grouped_masked_kernel) rather than
// to the general kernel.  On unless set to 0 (with idle waves skipped, 4-12% faster, above).
inline bool masked_schedule_chosen() { return env_switch_or("DG_GEMM_MASKED_SCHEDULE", true); }

// DG_GEMM_K_GROUPED_SCHEDULE sends K-grouped FP8 problems to the kernel whose consumers walk the
// table's tiles themselves (sm90_fp8_k_grouped_gemm_uniform_kernel), which also lets the
// heuristic take the 128x160 per-row tile.  On unless set to 0: 1.01-1.03x alone, 1.15x with
// 128x160, on the H200 in one process (three runs).
inline bool k_grouped_schedule_chosen() { return env_switch_or("DG_GEMM_K_GROUPED_SCHEDULE", true); }

// DG_GEMM_ROW_AS_K_GROUP runs a dense FP8 problem with per-row B scales and a float32 D (the Wgrad
// form) as a K-grouped problem of one group (gemm.cu, one_k_group), so that it takes the uniform
// K-grouped kernel.  On unless set to 0: on the H100 (forty-fifth session, one process) 0.997-1.086x
// the general kernel's time on the seven Wgrad benchmark problems, none slower beyond the rounds'
// spread (figures at choose() in gemm.cu).
inline bool row_as_k_group_chosen() { return env_switch_or("DG_GEMM_ROW_AS_K_GROUP", true); }

}  // namespace deep_gemm::cuda
