// Note [TMA probe]: how fast the TMA unit fills the FP8 kernel's stages from L2, with nothing
// else running, alone or in multicast pairs.
//
// The twenty-third session's trace found the dense kernel's stage waits steady through the K loop
// (90-110 cycles per 256x128 K block) and barely shortened by a fourth stage: each CTA took its
// 48 KiB per K block at about 38-40 bytes per SM cycle, so the copies' throughput, not their
// latency, holds the loop back.  Whether that figure is a per-SM limit (what one SM can take in)
// or an aggregate one (what L2 can hand out to 132 SMs at once) decides the next kernel: an
// aggregate limit is what multicast pairs relieve (two CTAs that share A read it from L2 once),
// a per-SM limit is not, since each SM still receives every byte of its stages.  The pair
// kernels measured 3-20% slower in four sessions, with no way to tell the copies' part from the
// pairing's.  This probe times the copies alone, in the dense kernel's load pattern (its tile order,
// one A box of BLOCK_M rows and one B box of BLOCK_N rows of 128 bytes per K block, 128-byte
// swizzle, full and empty barriers per stage as the kernel uses them), with one producer thread and
// one consumer warp per CTA and one CTA per SM:
//   single  each CTA loads its tile's A and B (the kernel);
//   half    clusters of two CTAs on neighbouring N tiles (the same A rows): each loads its half of
//           A's rows into both CTAs (TMA multicast) and its own B (the pair kernels built so far);
//   lead    as half, but the first CTA loads all of A into both (upstream's SM90 pairs).
// A stage of a pair is refilled once the consumers of both CTAs have released it.  The consumer
// may hold each stage for --hold cycles before releasing it (`ideal`: the tensor cores' time for
// the K block, BLOCK_M x BLOCK_N x 128 / 4096 cycles), which makes it a consumer that computes at
// the ideal rate; its waits on full barriers are then the stage waits such a kernel would see.
// --ctas runs fewer CTAs than SMs: if the per-SM rate rises as fewer SMs load, the limit is
// aggregate.  --box splits each load into boxes of fewer rows.  --store 1 adds the epilogue's
// traffic: after each tile's last K block the consumer stores a bf16 tile (BLOCK_M x BLOCK_N, from a
// shared-memory buffer of that size, as the kernel's TMA epilogue does, after the previous tile's
// store has read it), so that short-K shapes, whose output outweighs their operands, load against
// the stores as the kernel does.  --hold takes cycles, `ideal`, or `ideal*F` (F times the ideal).
//
// Reported per configuration (median over launches with L2 flushed before each, and over CTAs):
// bytes delivered into each SM's shared memory per SM cycle, the consumer's share of time waiting
// for data and the producer's waiting for free stages, the kernel time (CUDA events), the bytes
// delivered and the bytes read from L2 per second over the grid, and the SM clock it implies.
// --check makes every consumer sum each stage's rows (weighted by row, so a box in the wrong place
// counts) and compares the sums with the host's replay of the same tile order: every byte each CTA
// should have received, and no other.
//
// Build and run (GPU machine, repo root; CUTLASS the nvidia-cutlass wheel's include folder):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -DDG_WITH_CUDA -DDG_WITH_SM90_KERNELS -Icsrc -I$CUTLASS tools/tma_probe.cu -o build/tma_probe
//   build/tma_probe [M N K] [--tile 256x128] [--mode single,half,lead] [--ctas 132,66] [--hold 0,ideal]
//                   [--box ROWS] [--stages S] [--store 0,1] [--swizzle W] [--launches L] [--check]
//   build/tma_probe --selftest     (the host side: tile orders and expected sums; no GPU needed)
// Every option takes a comma list; each combination prints one line.  benchmarks/h200_trace.sh
// runs it.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda/gemm_instantiate.cuh"
#include "cuda_check.h"

namespace {

namespace p = deep_gemm::cuda::sm90;
namespace g = deep_gemm::cuda::gemm_detail;

constexpr int kRowBytes = g::kBlockK;  // one K block of an FP8 row, one 128-byte swizzle atom
enum Mode : int { kSingle = 0, kHalf = 1, kLead = 2 };
const char* const kModeNames[] = {"single", "half", "lead"};

struct Plan {
  int m, n, k;
  int k_blocks;
  int bm, bn;
  g::KernelArgs order;  // the tile order's fields (m_blocks, n_blocks, swizzle), as the kernel reads them
  int mode;
  int cluster;  // 1 (single) or 2 (pairs sharing A)
  int box_a, box_b;  // rows per TMA box
  int stages, stage_bytes;
  int hold;  // cycles the consumer holds each stage
  int check;
  int store;  // the consumer stores a bf16 tile after each tile's last K block
  int out_offset;  // the output buffer's offset (after the stages), BLOCK_M x BLOCK_N bf16
  int out_rows, out_cols;  // the output map's box
};

// The units a grid walks (tiles, or pairs of neighbouring N tiles sharing A) and CTA `rank`'s tile
// in unit r: the dense kernel's own order (dense_units, dense_tile).
__host__ __device__ inline int units_of(const Plan& pl) {
  return pl.cluster == 1 ? g::dense_units<g::kCastNone>(pl.order) : g::dense_units<g::kCastA>(pl.order);
}

__host__ __device__ inline void tile_of(const Plan& pl, int r, int rank, int& m_blk, int& n_blk) {
  if (pl.cluster == 1) {
    g::dense_tile<g::kCastNone>(pl.order, r, 0, m_blk, n_blk);
  } else {
    g::dense_tile<g::kCastA>(pl.order, r, rank, m_blk, n_blk);
  }
}

// The rows of A that CTA `rank` loads into the pair (or alone): [first, first + count).
__host__ __device__ inline void a_rows_of(const Plan& pl, int rank, int& first, int& count) {
  if (pl.mode == kSingle) {
    first = 0, count = pl.bm;
  } else if (pl.mode == kHalf) {
    first = rank * (pl.bm / 2), count = pl.bm / 2;
  } else {
    first = 0, count = rank == 0 ? pl.bm : 0;
  }
}

struct CtaRecord {
  long long cycles;  // the consumer's, from before its first wait to after its last release
  long long waited;  // the consumer's waits on full barriers
  long long producer_waited;  // the producer's waits on empty barriers
  long long stages;  // stages consumed
  long long store_waited;  // --store: the consumer's waits for the previous tile's store to read its buffer
  unsigned long long sum_a, sum_b;  // --check: sum over stages and rows of (row + 1) x the row's byte sum
};

// A barrier wait: with acquire at cluster scope in a pair (the partner arrives on this CTA's
// barriers), as the kernel's pairs wait.
__device__ __forceinline__ void wait_phase(bool pair, uint64_t* bar, uint32_t parity) {
  if (pair) {
    p::mbar_wait_cluster(bar, parity);
  } else {
    p::mbar_wait(bar, parity);
  }
}

// Sum over rows i of `rows` 128-byte rows at `base` of (i + 1) x (the row's bytes summed), by
// the warp's lanes (lane l takes rows l, l + 32, ...); every lane returns the warp's total.
__device__ unsigned long long weighted_rows(const uint8_t* base, int rows, int lane) {
  unsigned long long total = 0;
  for (int i = lane; i < rows; i += 32) {
    const uint4* row = reinterpret_cast<const uint4*>(base + static_cast<int64_t>(i) * kRowBytes);
    unsigned int s = 0;
#pragma unroll
    for (int j = 0; j < kRowBytes / 16; ++j) {
      const uint4 v = row[j];
      s = __dp4a(v.x, 0x01010101u, s);
      s = __dp4a(v.y, 0x01010101u, s);
      s = __dp4a(v.z, 0x01010101u, s);
      s = __dp4a(v.w, 0x01010101u, s);
    }
    total += static_cast<unsigned long long>(i + 1) * s;
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xFFFFFFFFu, total, offset);
  return total;
}

// Warp 0's lane 0 produces, warp 1 consumes.
__global__ void __launch_bounds__(64, 1)
    tma_probe_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_d, const Plan pl, CtaRecord* out) {
  extern __shared__ uint8_t raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) / 1024 * 1024);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + pl.out_offset + (pl.store ? pl.bm * pl.bn * 2 : 0));
  uint64_t* empty = full + pl.stages;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const bool pair = pl.cluster == 2;
  const int rank = pair ? static_cast<int>(p::cluster_cta_rank()) : 0;
  const int first_unit = static_cast<int>(blockIdx.x) / pl.cluster;
  const int unit_step = static_cast<int>(gridDim.x) / pl.cluster;
  const int units = units_of(pl);
  const int a_bytes = pl.bm * kRowBytes, b_bytes = pl.bn * kRowBytes;
  if (threadIdx.x == 0) {
    for (int s = 0; s < pl.stages; ++s) {
      p::mbar_init(&full[s], 1);
      p::mbar_init(&empty[s], pl.cluster);  // this CTA's consumer, and the partner's in a pair
    }
    p::fence_mbar_init();
  }
  if (pair) {
    p::cluster_sync();
  } else {
    __syncthreads();
  }

  if (warp == 0) {
    if (lane == 0) {
      p::tma_prefetch_map(&map_a);
      p::tma_prefetch_map(&map_b);
      int a_first = 0, a_count = 0;
      a_rows_of(pl, rank, a_first, a_count);
      long long waited = 0;
      int stage = 0;
      uint32_t phase = 0;
      for (int r = first_unit; r < units; r += unit_step) {
        int m_blk = 0, n_blk = 0;
        tile_of(pl, r, rank, m_blk, n_blk);
        for (int kb = 0; kb < pl.k_blocks; ++kb) {
          const long long t = clock64();
          wait_phase(pair, &empty[stage], phase ^ 1);
          waited += clock64() - t;
          uint8_t* a = smem + static_cast<int64_t>(stage) * pl.stage_bytes;
          uint8_t* b = a + a_bytes;
          p::mbar_arrive_expect_tx(&full[stage], a_bytes + b_bytes);  // all of A lands here, and this B
          const int kc = kb * kRowBytes;
          for (int row = a_first; row < a_first + a_count; row += pl.box_a) {
            if (pair) {
              g::tma_load_3d_multicast(&map_a, &full[stage], a + row * kRowBytes, kc, m_blk * pl.bm + row, 0, 0x3);
            } else {
              g::tma_load_3d(&map_a, &full[stage], a + row * kRowBytes, kc, m_blk * pl.bm + row, 0);
            }
          }
          for (int row = 0; row < pl.bn; row += pl.box_b) {
            g::tma_load_3d(&map_b, &full[stage], b + row * kRowBytes, kc, n_blk * pl.bn + row, 0);
          }
          if (++stage == pl.stages) stage = 0, phase ^= 1;
        }
      }
      out[blockIdx.x].producer_waited = waited;
    }
    __syncwarp();
  } else {
    long long waited = 0, consumed = 0;
    unsigned long long sum_a = 0, sum_b = 0;
    int stage = 0;
    uint32_t phase = 0;
    const long long start = clock64();
    bool stores_pending = false;
    long long store_waited = 0;
    for (int r = first_unit; r < units; r += unit_step) {
      for (int kb = 0; kb < pl.k_blocks; ++kb) {
        const long long t = clock64();
        wait_phase(pair, &full[stage], phase);
        const long long got = clock64();
        waited += got - t;
        const uint8_t* a = smem + static_cast<int64_t>(stage) * pl.stage_bytes;
        if (pl.check) {
          sum_a += weighted_rows(a, pl.bm, lane);
          sum_b += weighted_rows(a + a_bytes, pl.bn, lane);
        }
        if (pl.hold > 0) {
          while (clock64() - got < pl.hold) {
          }
        }
        __syncwarp();
        if (lane == 0) {
          p::mbar_arrive(&empty[stage]);
          if (pair) p::mbar_arrive_remote(&empty[stage], static_cast<uint32_t>(rank ^ 1));
        }
        ++consumed;
        if (++stage == pl.stages) stage = 0, phase ^= 1;
      }
      if (pl.store && lane == 0) {  // the tile's output, as the kernel's TMA epilogue writes it
        int m_blk = 0, n_blk = 0;
        tile_of(pl, r, rank, m_blk, n_blk);
        const long long t = clock64();
        if (stores_pending) p::tma_store_wait_read();  // the buffer is free again
        store_waited += clock64() - t;
        const uint8_t* box = smem + pl.out_offset;  // boxes of out_rows x out_cols, 2 or 4 KiB each
        for (int row = 0; row < pl.bm; row += pl.out_rows) {
          for (int col = 0; col < pl.bn; col += pl.out_cols, box += pl.out_rows * pl.out_cols * 2) {
            g::tma_store_3d(&map_d, box, n_blk * pl.bn + col, m_blk * pl.bm + row, 0);
          }
        }
        p::tma_store_commit();
        stores_pending = true;
      }
    }
    if (stores_pending && lane == 0) p::tma_store_wait_all();
    const long long end = clock64();
    if (lane == 0) {
      CtaRecord& rec = out[blockIdx.x];
      rec.cycles = end - start;
      rec.waited = waited;
      rec.stages = consumed;
      rec.store_waited = store_waited;
      rec.sum_a = sum_a;
      rec.sum_b = sum_b;
    }
  }
  // A CTA of a pair leaves only when its partner has no copy or arrive left to send into it.
  if (pair) p::cluster_sync();
}

// ---- host ---------------------------------------------------------------------------------

// Row sums of a [rows, k] byte matrix per K block: sums[row * k_blocks + kb].
std::vector<uint32_t> block_row_sums(const std::vector<uint8_t>& x, int rows, int k) {
  const int k_blocks = (k + kRowBytes - 1) / kRowBytes;
  std::vector<uint32_t> sums(static_cast<size_t>(rows) * k_blocks, 0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < k; ++c)
      sums[static_cast<size_t>(r) * k_blocks + c / kRowBytes] += x[static_cast<size_t>(r) * k + c];
  }
  return sums;
}

// What CTA `cta` of a grid of `ctas` should have summed: the host's replay of the kernel's walk.
// (Rows past the matrix read as zeros.)
void expected_sums(const Plan& pl, int cta, int ctas, const std::vector<uint32_t>& rows_a,
                   const std::vector<uint32_t>& rows_b, unsigned long long& sum_a, unsigned long long& sum_b,
                   long long& stages) {
  sum_a = sum_b = 0;
  stages = 0;
  const int rank = cta % pl.cluster;
  for (int r = cta / pl.cluster; r < units_of(pl); r += ctas / pl.cluster) {
    int m_blk = 0, n_blk = 0;
    tile_of(pl, r, rank, m_blk, n_blk);
    for (int kb = 0; kb < pl.k_blocks; ++kb) {
      for (int i = 0; i < pl.bm; ++i) {
        const int row = m_blk * pl.bm + i;
        if (row < pl.m)
          sum_a += static_cast<unsigned long long>(i + 1) * rows_a[static_cast<size_t>(row) * pl.k_blocks + kb];
      }
      for (int i = 0; i < pl.bn; ++i) {
        const int row = n_blk * pl.bn + i;
        if (row < pl.n)
          sum_b += static_cast<unsigned long long>(i + 1) * rows_b[static_cast<size_t>(row) * pl.k_blocks + kb];
      }
      ++stages;
    }
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Every combination of the lists' values, the last list varying fastest.
std::vector<std::vector<std::string>> product(const std::vector<std::vector<std::string>>& lists) {
  std::vector<std::vector<std::string>> combos{{}};
  for (const auto& list : lists) {
    std::vector<std::vector<std::string>> longer;
    for (const auto& combo : combos) {
      for (const auto& value : list) {
        longer.push_back(combo);
        longer.back().push_back(value);
      }
    }
    combos = std::move(longer);
  }
  return combos;
}

// --hold's value: cycles, `ideal` (the tensor cores' time per K block of the tile, BLOCK_M x BLOCK_N
// x 128 / 4096 cycles) or `ideal*F`.
int hold_cycles(const std::string& s, int bm, int bn) {
  const double ideal = static_cast<double>(bm) * bn * kRowBytes / 4096.0;
  if (s == "ideal") return static_cast<int>(ideal);
  if (s.rfind("ideal*", 0) == 0) {
    const double factor = std::atof(s.c_str() + 6);
    if (factor > 0.0) return static_cast<int>(ideal * factor);
  } else if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {
    return std::atoi(s.c_str());
  }
  std::fprintf(stderr, "tma_probe: --hold wants cycles, ideal or ideal*F, got %s\n", s.c_str());
  std::exit(2);
}

int parse_mode(const std::string& s) {
  for (int i = 0; i < 3; ++i) {
    if (s == kModeNames[i]) return i;
  }
  std::fprintf(stderr, "tma_probe: unknown mode %s (single, half, lead)\n", s.c_str());
  std::exit(2);
}

// The dense FP8 kernel's stage count for a tile it compiles (Traits::kStages, from gemm_launch.cuh's
// shape lists), 0 for any other tile (then --stages must say).
template <int kBM, int kBN, bool kRow, bool kBf16, int kMajors>
constexpr int dense_fp8_stages(int bm, int bn) {
  if constexpr (!kRow && !kBf16 && kMajors == 0) {
    if (bm == kBM && bn == kBN) return g::Traits<kBM, kBN, false, false, 1>::kStages;
  }
  return 0;
}

int kernel_stages(int bm, int bn) {
  int stages = 0;
#define DG_PROBE_STAGES(BM, BN, ROW, BF16, MAJ) \
  stages = std::max(stages, dense_fp8_stages<BM, BN, ROW, BF16, MAJ>(bm, bn));
  DG_GEMM_SHAPES(DG_PROBE_STAGES)
#undef DG_PROBE_STAGES
  return stages;
}

// A plan, or an empty string's reason why the combination cannot run.
std::string make_plan(Plan& pl, int m, int n, int k, int bm, int bn, int mode, int swizzle, int box, int stages,
                      int hold, bool check, bool store) {
  pl = Plan{};
  pl.m = m, pl.n = n, pl.k = k;
  pl.k_blocks = (k + kRowBytes - 1) / kRowBytes;
  pl.bm = bm, pl.bn = bn;
  pl.order.m_blocks = (m + bm - 1) / bm, pl.order.n_blocks = (n + bn - 1) / bn;
  pl.mode = mode;
  pl.cluster = mode == kSingle ? 1 : 2;
  pl.order.swizzle = swizzle;
  const int a_rows = mode == kHalf ? bm / 2 : bm;  // the most rows one CTA loads of A
  pl.box_a = std::min({box > 0 ? box : 256, a_rows, 256});
  pl.box_b = std::min({box > 0 ? box : 256, bn, 256});
  pl.stage_bytes = ((bm + bn) * kRowBytes + 1023) / 1024 * 1024;
  pl.stages = stages > 0 ? stages : kernel_stages(bm, bn);
  pl.hold = hold;
  pl.check = check ? 1 : 0;
  pl.store = store ? 1 : 0;
  pl.out_offset = pl.stages * pl.stage_bytes;
  pl.out_rows = std::min(bm, 64);
  pl.out_cols = bn % 32 == 0 ? 32 : 16;  // the kernel's bf16 boxes
  if (bm % 16 != 0 || bn % 16 != 0 || bm < 16 || bn < 16) return "tile sides must be multiples of 16";
  if (mode == kHalf && bm % 32 != 0) return "half: BLOCK_M must split into two halves of whole 16-row groups";
  if (a_rows % pl.box_a != 0 || bn % pl.box_b != 0 || pl.box_a % 8 != 0 || pl.box_b % 8 != 0) {
    return "box rows must be multiples of 8 (whole swizzle atoms) dividing the rows each CTA loads";
  }
  if (swizzle < 1) return "swizzle must be at least 1";
  if (store && bm % 64 != 0) return "--store: BLOCK_M a multiple of 64 (the kernel's 64-row slabs)";
  if (pl.stages < 1) return "not a compiled dense FP8 tile: give --stages";
  if (1024 + pl.stages * (pl.stage_bytes + 16) + (store ? bm * bn * 2 : 0) > g::kSmemLimit) {
    return "stages do not fit";
  }
  return "";
}

// The host side without a GPU: every tile is walked exactly once by the grid in each mode (the pair's
// partners side by side along N, an odd N tile count leaving the last partner past the matrix), and
// the expected sums of a small matrix agree with a brute-force walk over its bytes.
int selftest() {
  int failures = 0;
  for (const int mode : {kSingle, kHalf, kLead}) {
    for (const int n_blocks : {7, 8, 33}) {
      for (const int swizzle : {1, 3, 8, 16}) {
        Plan pl;
        const std::string why =
            make_plan(pl, 5 * 256 + 17, n_blocks * 128, 1000, 256, 128, mode, swizzle, 0, 0, 0, true, false);
        if (!why.empty()) {
          std::printf("selftest: plan refused: %s\n", why.c_str());
          ++failures;
          continue;
        }
        std::vector<int> seen(static_cast<size_t>(pl.order.m_blocks) * pl.order.n_blocks, 0);
        int past = 0;
        const int ctas = 132;
        for (int cta = 0; cta < ctas; ++cta) {
          for (int r = cta / pl.cluster; r < units_of(pl); r += ctas / pl.cluster) {
            int m_blk = 0, n_blk = 0, partner_m = 0, partner_n = 0;
            tile_of(pl, r, cta % pl.cluster, m_blk, n_blk);
            if (pl.cluster == 2) {
              tile_of(pl, r, (cta % 2) ^ 1, partner_m, partner_n);
              if (partner_m != m_blk || (partner_n ^ 1) != n_blk) ++failures;  // one A tile, neighbouring N tiles
            }
            if (n_blk >= pl.order.n_blocks) {
              ++past;
              continue;
            }
            ++seen[static_cast<size_t>(m_blk) * pl.order.n_blocks + n_blk];
          }
        }
        for (const int s : seen) failures += s != 1;
        const int expected_past = pl.cluster == 2 ? (n_blocks % 2) * pl.order.m_blocks : 0;
        failures += past != expected_past;
      }
    }
  }
  // Expected sums against brute force: 40 x 300 A, 50 x 300 B, tiles 32 x 32 (partial tiles on both
  // sides, a K tail), 6 CTAs.
  std::mt19937 rng(3);
  const int m = 40, n = 50, k = 300;
  std::vector<uint8_t> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
  for (auto& x : a) x = static_cast<uint8_t>(rng());
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  const auto rows_a = block_row_sums(a, m, k), rows_b = block_row_sums(b, n, k);
  for (const int mode : {kSingle, kHalf, kLead}) {
    Plan pl;
    if (!make_plan(pl, m, n, k, 32, 32, mode, 2, 0, 2, 0, true, false).empty()) {
      ++failures;
      continue;
    }
    const int ctas = 6;
    for (int cta = 0; cta < ctas; ++cta) {
      unsigned long long sa = 0, sb = 0, want_a = 0, want_b = 0;
      long long stages = 0, want_stages = 0;
      expected_sums(pl, cta, ctas, rows_a, rows_b, sa, sb, stages);
      for (int r = cta / pl.cluster; r < units_of(pl); r += ctas / pl.cluster) {
        int m_blk = 0, n_blk = 0;
        tile_of(pl, r, cta % pl.cluster, m_blk, n_blk);
        for (int kb = 0; kb < pl.k_blocks; ++kb) {
          for (int i = 0; i < pl.bm; ++i) {
            for (int c = kb * kRowBytes; c < std::min(k, (kb + 1) * kRowBytes); ++c) {
              const int row = m_blk * pl.bm + i;
              if (row < m) want_a += static_cast<unsigned long long>(i + 1) * a[static_cast<size_t>(row) * k + c];
            }
          }
          for (int i = 0; i < pl.bn; ++i) {
            for (int c = kb * kRowBytes; c < std::min(k, (kb + 1) * kRowBytes); ++c) {
              const int row = n_blk * pl.bn + i;
              if (row < n) want_b += static_cast<unsigned long long>(i + 1) * b[static_cast<size_t>(row) * k + c];
            }
          }
          ++want_stages;
        }
      }
      failures += sa != want_a || sb != want_b || stages != want_stages || (want_stages > 0 && want_a == 0);
    }
  }
  // The kernel's stage counts (docs: 256x128 three, 128x192 and 128x176 four); none for a tile it lacks.
  failures += kernel_stages(256, 128) != 3 || kernel_stages(128, 192) != 4 || kernel_stages(128, 176) != 4 ||
              kernel_stages(256, 192) != 0;
  // The option lists' combinations and --hold's spellings.
  const auto combos = product({{"a", "b"}, {"1"}, {"x", "y", "z"}});
  failures += combos.size() != 6 || combos[1] != std::vector<std::string>{"a", "1", "y"} || combos[5][0] != "b";
  failures += hold_cycles("ideal", 256, 128) != 1024 || hold_cycles("ideal*1.5", 128, 192) != 1152 ||
              hold_cycles("700", 256, 128) != 700 || hold_cycles("0", 64, 64) != 0;
  std::printf("selftest: %s (%d failures)\n", failures == 0 ? "passed" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Matrices {
  int m, n, k;
  uint8_t *a = nullptr, *b = nullptr;
  uint16_t* d = nullptr;  // bf16 [m, n], written by --store (its values are not read)
  std::vector<uint32_t> rows_a, rows_b;
};

Matrices make_matrices(int m, int n, int k) {
  Matrices x{m, n, k};
  std::mt19937_64 rng(11);
  std::vector<uint8_t> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
  for (auto& v : a) v = static_cast<uint8_t>(rng() >> 56);
  for (auto& v : b) v = static_cast<uint8_t>(rng() >> 56);
  x.rows_a = block_row_sums(a, m, k);
  x.rows_b = block_row_sums(b, n, k);
  CHECK(cudaMalloc(&x.a, a.size()));
  CHECK(cudaMalloc(&x.b, b.size()));
  CHECK(cudaMemcpy(x.a, a.data(), a.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x.b, b.data(), b.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&x.d, static_cast<size_t>(m) * n * 2));
  return x;
}

// One configuration: launches (L2 flushed before each), the line of figures; false when --check
// finds a CTA whose sums or stage count differ from the replay.
bool run_plan(const Plan& pl, const Matrices& x, int ctas, int launches, void* flush, size_t flush_bytes,
              cudaStream_t stream) {
  CUtensorMap map_a{}, map_b{}, map_d{};
  const auto u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const auto sw = CU_TENSOR_MAP_SWIZZLE_128B;
  if (!g::make_map_3d(&map_a, u8, 1, x.a, x.k, x.m, 1, x.k, static_cast<int64_t>(x.m) * x.k, kRowBytes, pl.box_a, sw) ||
      !g::make_map_3d(&map_b, u8, 1, x.b, x.k, x.n, 1, x.k, static_cast<int64_t>(x.n) * x.k, kRowBytes, pl.box_b, sw) ||
      !g::make_map_3d(&map_d, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, x.d, x.n, x.m, 1, x.n, static_cast<int64_t>(x.m) * x.n,
                      pl.out_cols, pl.out_rows,
                      pl.out_cols == 32 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B)) {
    std::fprintf(stderr, "tma_probe: tensor map encoding failed\n");
    std::exit(1);
  }
  const int grid = ctas / pl.cluster * pl.cluster;
  CtaRecord* records = nullptr;
  CHECK(cudaMalloc(&records, sizeof(CtaRecord) * grid));
  CHECK(cudaFuncSetAttribute(tma_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, g::kSmemLimit));
  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(static_cast<unsigned>(grid));
  launch.blockDim = dim3(64);
  launch.dynamicSmemBytes = g::kSmemLimit;  // one CTA per SM, as the GEMM kernel
  launch.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(pl.cluster);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  launch.attrs = &cluster;
  launch.numAttrs = pl.cluster == 2 ? 1 : 0;  // single CTAs launch as the GEMM kernel does, without clusters
  int resident = grid;
  if (pl.cluster == 2) CHECK(cudaOccupancyMaxActiveClusters(&resident, tma_probe_kernel, &launch));
  if (resident * pl.cluster < grid) {
    std::printf("tma_probe: only %d clusters of %d resident for a grid of %d CTAs; skipped\n", resident, pl.cluster,
                grid);
    CHECK(cudaFree(records));
    return true;
  }
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  std::vector<double> times, rates, waits, producer_waits, store_waits, clocks;
  std::vector<CtaRecord> host(grid);
  bool ok = true;
  for (int i = 0; i < launches + 2; ++i) {
    CHECK(cudaMemsetAsync(records, 0, sizeof(CtaRecord) * grid, stream));
    CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, stream));
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaLaunchKernelEx(&launch, tma_probe_kernel, map_a, map_b, map_d, pl, records));
    CHECK(cudaEventRecord(end, stream));
    CHECK(cudaEventSynchronize(end));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    CHECK(cudaMemcpy(host.data(), records, sizeof(CtaRecord) * grid, cudaMemcpyDeviceToHost));
    if (pl.check && i == 0) {
      for (int cta = 0; cta < grid; ++cta) {
        unsigned long long sa = 0, sb = 0;
        long long stages = 0;
        expected_sums(pl, cta, grid, x.rows_a, x.rows_b, sa, sb, stages);
        if (host[cta].sum_a != sa || host[cta].sum_b != sb || host[cta].stages != stages) {
          if (ok) {
            std::printf(
                "tma_probe: CTA %d received other bytes than its tiles': A %llu (want %llu), B %llu (want %llu), "
                "%lld stages (want %lld)\n",
                cta, host[cta].sum_a, sa, host[cta].sum_b, sb, host[cta].stages, stages);
          }
          ok = false;
        }
      }
    }
    if (i < 2) continue;  // warm-up launches
    times.push_back(ms * 1e3);
    long long longest = 0;
    for (const CtaRecord& rec : host) {
      if (rec.stages == 0 || rec.cycles <= 0) continue;
      rates.push_back(static_cast<double>(rec.stages) * (pl.bm + pl.bn) * kRowBytes / rec.cycles);
      waits.push_back(100.0 * rec.waited / rec.cycles);
      producer_waits.push_back(100.0 * rec.producer_waited / rec.cycles);
      store_waits.push_back(100.0 * rec.store_waited / rec.cycles);
      longest = std::max(longest, rec.cycles);
    }
    clocks.push_back(longest / (ms * 1e3));  // cycles per us = MHz (the slowest CTA spans most of the launch)
  }
  const double us = median_of(times);
  const double stages_total = static_cast<double>(units_of(pl)) * pl.cluster * pl.k_blocks;
  const double delivered = stages_total * (pl.bm + pl.bn) * kRowBytes;
  const double from_l2 = pl.cluster == 1 ? delivered : stages_total * (pl.bm / 2.0 + pl.bn) * kRowBytes;
  const double stored = pl.store ? static_cast<double>(x.m) * x.n * 2 : 0.0;
  std::sort(rates.begin(), rates.end());
  std::printf(
      "%-6s %4dx%-4d %5dx%-5dx%-5d ctas %3d stages %2d box %3d/%-3d hold %5d%s | %5.1f B/cycle/SM (p10 %5.1f) | "
      "waits: consumer %5.1f%%, producer %5.1f%%, store %5.1f%% | %8.1f us, %5.2f TB/s into SMs, %5.2f TB/s from L2, "
      "%5.2f TB/s "
      "stored, %4.0f MHz%s\n",
      kModeNames[pl.mode], pl.bm, pl.bn, pl.m, pl.n, pl.k, grid, pl.stages, pl.box_a, pl.box_b, pl.hold,
      pl.store ? " store" : "", median_of(rates), rates.empty() ? 0.0 : rates[rates.size() / 10], median_of(waits),
      median_of(producer_waits), median_of(store_waits), us, delivered / (us * 1e-6) / 1e12,
      from_l2 / (us * 1e-6) / 1e12, stored / (us * 1e-6) / 1e12, median_of(clocks),
      pl.check ? (ok ? " | check passed" : " | CHECK FAILED") : "");
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(end));
  CHECK(cudaFree(records));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  std::string tiles = "256x128", modes = "single,half,lead", ctas_list, holds = "0", boxes = "0", stages_list = "0",
              stores = "0";
  int swizzle = 8, launches = 10;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tma_probe: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    // The options that take comma lists.
    const std::pair<const char*, std::string*> lists[] = {
        {"--tile", &tiles}, {"--mode", &modes},         {"--ctas", &ctas_list}, {"--hold", &holds},
        {"--box", &boxes},  {"--stages", &stages_list}, {"--store", &stores}};
    const auto list = std::find_if(std::begin(lists), std::end(lists), [&](const auto& l) { return arg == l.first; });
    if (arg == "--selftest") return selftest();
    if (list != std::end(lists)) {
      *list->second = value();
    } else if (arg == "--swizzle") {
      swizzle = std::atoi(value().c_str());
    } else if (arg == "--launches") {
      launches = std::atoi(value().c_str());
    } else if (arg == "--check") {
      check = true;
    } else if (!arg.empty() && arg[0] != '-' && sizes.size() < 3) {
      sizes.push_back(std::atoi(arg.c_str()));
    } else {
      std::fprintf(stderr, "tma_probe: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  if (!sizes.empty() && sizes.size() != 3) {
    std::fprintf(stderr, "tma_probe: give M N K, or none (4096 4096 7168)\n");
    return 2;
  }
  const int m = sizes.empty() ? 4096 : sizes[0], n = sizes.empty() ? 4096 : sizes[1],
            k = sizes.empty() ? 7168 : sizes[2];
  if (m < 1 || n < 1 || k < 16 || k % 16 != 0 || launches < 1) {
    std::fprintf(stderr, "tma_probe: M, N >= 1, K a multiple of 16, --launches >= 1\n");
    return 2;
  }
  for (const std::string& h : split(holds)) hold_cycles(h, 128, 128);  // bad spellings stop here, before the GPU
  for (const std::string& mode : split(modes)) parse_mode(mode);
  int num_sms = 0;
  CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0));
  if (ctas_list.empty()) ctas_list = std::to_string(num_sms);
  Matrices x = make_matrices(m, n, k);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  const size_t flush_bytes = 512ull << 20;
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  bool ok = true;
  for (const std::vector<std::string>& combo : product({split(tiles), split(modes), split(ctas_list), split(holds),
                                                        split(boxes), split(stages_list), split(stores)})) {
    const std::string& tile = combo[0];
    const size_t cross = tile.find('x');
    const int bm = cross == std::string::npos ? 0 : std::atoi(tile.substr(0, cross).c_str());
    const int bn = cross == std::string::npos ? 0 : std::atoi(tile.substr(cross + 1).c_str());
    Plan pl;
    const std::string why = bm <= 0 || bn <= 0 ? "--tile wants BMxBN"
                                               : make_plan(pl, m, n, k, bm, bn, parse_mode(combo[1]), swizzle,
                                                           std::atoi(combo[4].c_str()), std::atoi(combo[5].c_str()),
                                                           hold_cycles(combo[3], bm, bn), check, combo[6] == "1");
    if (!why.empty()) {
      std::printf("%s %s box %s stages %s store %s: not run (%s)\n", combo[1].c_str(), tile.c_str(), combo[4].c_str(),
                  combo[5].c_str(), combo[6].c_str(), why.c_str());
      continue;
    }
    ok = run_plan(pl, x, std::min(std::atoi(combo[2].c_str()), num_sms), launches, flush, flush_bytes, stream) && ok;
  }
  return ok ? 0 : 1;
}
