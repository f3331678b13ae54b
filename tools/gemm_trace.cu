// Where an FP8 GEMM's time goes, tile by tile (Note [tile trace], csrc/cuda/gemm_trace.cuh): one
// compiled tile shape of the sm90a kernel, built with DG_GEMM_TRACE, run on a dense, an M-grouped
// masked or an M-grouped contiguous problem (per-row ids or psum ends) of random operands (group
// sizes drawn as the benchmarks draw them: masked around the expected rows, contiguous in
// multiples of 128 rows around total / groups) with L2 flushed before every launch, and each CTA's items
// split into the gap before them (the first stage's wait and the schedule), their K loop (and the
// stage waits inside it) and their epilogue, per math warpgroup, with the producer's waits for
// free stages and the last wave's tail.  Built without DG_GEMM_TRACE it times the same launches
// untraced, for the trace's cost.  Outside the extension: no torch; the tile is a compile-time
// choice (TRACE_BM x TRACE_BN); the kernel switches (DG_GEMM_SLAB_WAIT, DG_GEMM_MASKED_SCHEDULE,
// ...) are read from the environment as in the extension.
//
// Build and run (GPU machine, repo root; CUTLASS the nvidia-cutlass wheel's include folder):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -DDG_WITH_CUDA -DDG_WITH_SM90_KERNELS -DDG_GEMM_TRACE -DTRACE_BM=256 -DTRACE_BN=128 \
//     -Icsrc -I$CUTLASS tools/gemm_trace.cu -o build/gemm_trace_256x128
//   build/gemm_trace_256x128 4096 4096 7168 [launches]
//   build/gemm_trace_256x128 masked 32 4096 192 4096 2048 [launches]   (groups, max_m, expected_m, n, k)
//   build/gemm_trace_256x128 contiguous 4 33024 6144 7168 [launches]    (groups, total rows, n, k; row ids)
//   build/gemm_trace_256x128 psum 4 33024 6144 7168 [launches]          (the same groups as psum ends)
//   DG_GEMM_LEAN=1 build/gemm_trace_256x128 contiguous ...   (the contiguous lean twin, where the tile has one)
//   build/gemm_trace_256x128 --selftest       (the report on made-up records; no GPU needed)
//   DG_GEMM_SWIZZLE=16 build/gemm_trace_256x128 4096 4096 7168   (bands of 16 N tiles, not 8)
//   TRACE_COMPARE_SWITCH=DG_GEMM_SCALE_WARP build/gemm_time_256x128 contiguous ...   (after the timed
//     launches, D once as timed and once with that switch at 0, both into a poisoned buffer: the
//     count of elements whose bits differ, over all of D; any makes the exit status 1)
// benchmarks/h200_trace.sh builds the tiles the heuristic picks at m = 4096 and runs them.

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda/gemm_instantiate.cuh"
#include "cuda_check.h"

#ifndef TRACE_BM
#define TRACE_BM 256
#endif
#ifndef TRACE_BN
#define TRACE_BN 128
#endif

namespace {

using deep_gemm::cuda::GemmConfig;
using deep_gemm::cuda::GemmLayout;
using deep_gemm::cuda::GemmProblem;
using deep_gemm::cuda::InDtype;
using deep_gemm::cuda::OutDtype;
using TraceShape = deep_gemm::cuda::gemm_detail::Shape<TRACE_BM, TRACE_BN, false, false, 0>;

__device__ float hashed_uniform(uint64_t i, uint32_t seed) {  // in [0, 1)
  uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<float>(x >> 40) / static_cast<float>(1ull << 24);
}

__global__ void fill_fp8(__nv_fp8_e4m3* out, uint64_t count, uint32_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = __nv_fp8_e4m3(4.0f * hashed_uniform(i, seed) - 2.0f);
  }
}

__global__ void fill_scales(float* out, uint64_t count, uint32_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = 0.5f + hashed_uniform(i, seed);
  }
}

// A [groups, m, k], B [b_groups, n, k], D [groups, m, n] (dense and contiguous: one group of A and
// D; masked: b_groups = groups); SFA per group MN-major with its K columns 16-byte aligned (as the
// ops pass it), SFB per group [n / 128, k / 128].
struct Operands {
  int groups, m, n, k, b_groups;
  __nv_fp8_e4m3 *a, *b;
  float *sfa, *sfb;
  __nv_bfloat16* d;
  int64_t sfa_k, sfb_blocks_k, sfa_group, sfb_group;
  std::vector<int> masked_m;  // masked problems: rows per group (also on the device)
  int* masked_m_device = nullptr;
  int expected_m = 0;
  std::vector<int> row_group;  // contiguous problems: each row's group (every row in one)
  int* layout_device = nullptr;  // contiguous problems: row ids, or psum ends
  bool psum = false;
};

Operands make_operands(int groups, int m, int n, int k, int b_groups) {
  Operands o{groups, m, n, k, b_groups};
  o.sfa_k = (m + 3) / 4 * 4;
  o.sfb_blocks_k = (k + 127) / 128;
  o.sfa_group = o.sfa_k * o.sfb_blocks_k;
  o.sfb_group = static_cast<int64_t>((n + 127) / 128) * o.sfb_blocks_k;
  const uint64_t a_count = static_cast<uint64_t>(groups) * m * k, b_count = static_cast<uint64_t>(b_groups) * n * k;
  const uint64_t sfa_count = static_cast<uint64_t>(groups) * o.sfa_group;
  const uint64_t sfb_count = static_cast<uint64_t>(b_groups) * o.sfb_group;
  CHECK(cudaMalloc(&o.a, a_count));
  CHECK(cudaMalloc(&o.b, b_count));
  CHECK(cudaMalloc(&o.sfa, sfa_count * 4));
  CHECK(cudaMalloc(&o.sfb, sfb_count * 4));
  CHECK(cudaMalloc(&o.d, static_cast<uint64_t>(groups) * m * n * 2));
  fill_fp8<<<1024, 256>>>(o.a, a_count, 1);
  fill_fp8<<<1024, 256>>>(o.b, b_count, 2);
  fill_scales<<<256, 256>>>(o.sfa, sfa_count, 3);
  fill_scales<<<256, 256>>>(o.sfb, sfb_count, 4);
  CHECK(cudaGetLastError());
  return o;
}

// Group sizes drawn in [0.7, 1.3] x expected (at most m), as benchmarks/gpu_grouped_gemm.py does.
void draw_masked(Operands& o, int expected_m) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> factor(0.7, 1.3);
  o.expected_m = expected_m;
  o.masked_m.resize(o.groups);
  for (int& rows : o.masked_m) rows = std::min(o.m, static_cast<int>(expected_m * factor(rng)));
  CHECK(cudaMalloc(&o.masked_m_device, o.groups * sizeof(int)));
  CHECK(cudaMemcpy(o.masked_m_device, o.masked_m.data(), o.groups * sizeof(int), cudaMemcpyHostToDevice));
}

// Contiguous group sizes in multiples of 128 rows, each in [0.7, 1.3] x total / groups, the last
// taking the rest (at least 128), as benchmarks/gpu_grouped_gemm.py's sizes_for draws them.
std::vector<int> draw_group_sizes(int groups, int total) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> factor(0.7, 1.3);
  std::vector<int> sizes(groups);
  int drawn = 0;
  for (int g = 0; g + 1 < groups; ++g) {
    sizes[g] = (static_cast<int>(total / groups * factor(rng)) + 127) / 128 * 128;
    drawn += sizes[g];
  }
  sizes[groups - 1] = std::max(128, total - drawn);
  return sizes;
}

// A contiguous problem's groups: each row's group on the host (for the check), and on the device
// the row ids or, psum, each group's end row.
void set_contiguous_layout(Operands& o, const std::vector<int>& sizes, bool psum) {
  std::vector<int> ends;
  for (size_t g = 0; g < sizes.size(); ++g) {
    o.row_group.insert(o.row_group.end(), sizes[g], static_cast<int>(g));
    ends.push_back(static_cast<int>(o.row_group.size()));
  }
  const std::vector<int>& layout = psum ? ends : o.row_group;
  o.psum = psum;
  CHECK(cudaMalloc(&o.layout_device, layout.size() * sizeof(int)));
  CHECK(cudaMemcpy(o.layout_device, layout.data(), layout.size() * sizeof(int), cudaMemcpyHostToDevice));
}

GemmProblem problem_of(const Operands& o, int num_sms) {
  GemmProblem p;
  p.m = o.m;
  p.n = o.n;
  p.k = o.k;
  p.ab_dtype = InDtype::kFp8E4m3;
  if (o.layout_device != nullptr) {
    p.layout = o.psum ? GemmLayout::kPsum : GemmLayout::kRowIds;
    p.groups = o.b_groups;
    p.group_layout = o.layout_device;
    p.expected_m = o.m / o.b_groups;
  } else {
    p.layout = o.masked_m_device != nullptr ? GemmLayout::kMasked : GemmLayout::kDense;
    p.groups = o.groups;
    p.group_layout = o.masked_m_device;
    p.expected_m = o.expected_m;
  }
  p.a = o.a;
  p.lda = o.k;
  p.b = o.b;
  p.ldb = o.k;
  p.sfa = o.sfa;
  p.sfa_group = o.sfa_group;
  p.sfa_mn = 1;
  p.sfa_k = o.sfa_k;
  p.sfb = o.sfb;
  p.sfb_group = o.sfb_group;
  p.sfb_mn = o.sfb_blocks_k;
  p.sfb_k = 1;
  p.sfb_gran_n = 128;
  p.d = o.d;
  p.ldd = o.n;
  p.d_dtype = OutDtype::kBf16;
  p.num_sms = num_sms;
  return p;
}

// The launch as the heuristic configures it (csrc/cuda/gemm.cu, config_of): dense problems one
// CTA per tile up to the SMs, masked ones every SM.
GemmConfig config_of(const GemmProblem& p) {
  GemmConfig cfg;
  cfg.block_m = TRACE_BM;
  cfg.block_n = TRACE_BN;
  cfg.stages = TraceShape::stages();
  cfg.swizzle = deep_gemm::cuda::gemm_swizzle();  // DG_GEMM_SWIZZLE, as the extension reads it
  const int64_t tiles = static_cast<int64_t>((p.m + TRACE_BM - 1) / TRACE_BM) * ((p.n + TRACE_BN - 1) / TRACE_BN);
  cfg.num_ctas = p.layout == GemmLayout::kMasked
                     ? p.num_sms
                     : static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tiles, p.num_sms)));
  return cfg;
}

float bf16_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// A few outputs against a float64 sum of the definition, so that a broken setup shows.
double worst_relative_error(const Operands& o) {
  const size_t g = static_cast<size_t>(o.groups);
  const size_t bg = static_cast<size_t>(o.b_groups);
  std::vector<__nv_fp8_e4m3> a(g * o.m * o.k), b(bg * o.n * o.k);
  std::vector<float> sfa(g * o.sfa_group), sfb(bg * o.sfb_group);
  std::vector<__nv_bfloat16> d(g * o.m * o.n);
  CHECK(cudaMemcpy(a.data(), o.a, a.size(), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), o.b, b.size(), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sfa.data(), o.sfa, sfa.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sfb.data(), o.sfb, sfb.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(d.data(), o.d, d.size() * 2, cudaMemcpyDeviceToHost));
  std::mt19937 rng(5);
  double worst = 0.0;
  for (int s = 0; s < 32; ++s) {
    const int z = static_cast<int>(rng() % o.groups);
    const int rows = o.masked_m.empty() ? o.m : o.masked_m[z];
    if (rows == 0) continue;
    const int i = static_cast<int>(rng() % rows), j = static_cast<int>(rng() % o.n);
    const int zb = o.row_group.empty() ? z : o.row_group[i];  // B's group
    const size_t a_row = (static_cast<size_t>(z) * o.m + i) * o.k, b_row = (static_cast<size_t>(zb) * o.n + j) * o.k;
    double sum = 0.0, scale = 0.0;
    for (int kk = 0; kk < o.k; ++kk) {
      const double term = static_cast<double>(static_cast<float>(a[a_row + kk])) * static_cast<float>(b[b_row + kk]) *
                          sfa[z * o.sfa_group + static_cast<size_t>(kk / 128) * o.sfa_k + i] *
                          sfb[zb * o.sfb_group + static_cast<size_t>(j / 128) * o.sfb_blocks_k + kk / 128];
      sum += term;
      scale += std::fabs(term);
    }
    const double got = bf16_to_float(d[(static_cast<size_t>(z) * o.m + i) * o.n + j]);
    worst = std::max(worst, std::fabs(got - sum) / std::max(scale, 1e-30));
  }
  return worst;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#ifdef DG_GEMM_TRACE
namespace tr = deep_gemm::cuda::gemm_detail::trace;

// The traced tile's waves (Note [idle waves]): an item's math warpgroup runs the MMAs of 0 to kWaves of them.
constexpr int kWaves = deep_gemm::cuda::gemm_detail::Traits<TRACE_BM, TRACE_BN, false, false>::kWaves;

void report(const std::vector<tr::Record>& records, const std::vector<int>& counts, int ctas, int k_blocks,
            float kernel_us) {
  const double ideal_per_block = static_cast<double>(TRACE_BM) * TRACE_BN * 128 / 4096.0;  // FP8 MACs per SM clock
  // Items kept per CTA and role (later ones are counted only), and one of them.
  auto kept = [&](int c, int role) { return std::min(counts[c * tr::kRoles + role], tr::kMaxItems); };
  auto record = [&](int c, int role, int i) -> const tr::Record& {
    return records[(static_cast<size_t>(c) * tr::kRoles + role) * tr::kMaxItems + i];
  };
  unsigned long long first_ns = ~0ull, last_ns = 0;
  double clk_sum = 0.0, ns_sum = 0.0;
  for (int c = 0; c < ctas; ++c) {
    for (int role = 0; role < tr::kRoles; ++role) {
      for (int i = 0; i < kept(c, role); ++i) {
        const tr::Record& r = record(c, role, i);
        first_ns = std::min(first_ns, r.start_ns);
        last_ns = std::max(last_ns, r.start_ns + r.end_ns);
        if (role != tr::kProducerRole) {
          clk_sum += r.end_clk;
          ns_sum += r.end_ns;
        }
      }
    }
  }
  const double ghz = ns_sum > 0 ? clk_sum / ns_sum : 0.0;
  std::printf("traced launch %.1f us; items span %.1f us; SM clock %.3f GHz\n", kernel_us, (last_ns - first_ns) / 1e3,
              ghz);
  std::printf("tile %dx%d, %d K blocks per tile: ideal tensor time %.0f cycles per K block, %.0f per tile\n", TRACE_BM,
              TRACE_BN, k_blocks, ideal_per_block, ideal_per_block * k_blocks);
  std::printf("%-10s %6s %10s %10s %10s %10s %10s %12s %10s\n", "role", "items", "gap", "K loop", "of it wait",
              "early", "epilogue", "K loop/ideal", "tail us");
  // Per math warpgroup, printed after the table: the fewest and most items a CTA ran (the most sets
  // the kernel's length in tile times), and the items by the waves whose MMAs ran (fewer than the
  // tile's: rows in part of it, as in a masked group's last slab or a contiguous tile that two groups
  // or a padding run split) and by how the consumers came to them (walked, or read from a stage
  // description: a contiguous kernel's second pass), with their K loop and epilogue.
  std::vector<std::string> by_waves;
  for (int role = 0; role < tr::kRoles; ++role) {
    double gap = 0, main = 0, wait = 0, early = 0, epi = 0, tail = 0;
    long items = 0;
    int busy_ctas = 0;  // CTAs with at least one item of this role
    int fewest = INT32_MAX, most = 0, at_most = 0;
    long wave_items[2][kWaves + 1] = {};  // [described][waves]
    double wave_main[2][kWaves + 1] = {}, wave_epi[2][kWaves + 1] = {};
    for (int c = 0; c < ctas; ++c) {
      const int all = counts[c * tr::kRoles + role];
      if (all > most) {
        most = all;
        at_most = 0;
      }
      if (all == most) ++at_most;
      fewest = std::min(fewest, all);
      const int n = kept(c, role);
      if (n == 0) continue;
      ++busy_ctas;
      unsigned long long prev_end_clk = 0, cta_last_ns = 0;
      for (int i = 0; i < n; ++i) {
        const tr::Record& r = record(c, role, i);
        if (i > 0) gap += static_cast<double>(r.start_clk - prev_end_clk);
        prev_end_clk = r.start_clk + r.end_clk;
        main += r.main_clk;
        wait += r.wait_clk;
        early += r.early_wait_clk;
        epi += r.end_clk - r.main_clk;
        cta_last_ns = std::max(cta_last_ns, r.start_ns + r.end_ns);
        ++items;
        if (role != tr::kProducerRole && r.waves <= kWaves && r.described <= 1) {
          ++wave_items[r.described][r.waves];
          wave_main[r.described][r.waves] += r.main_clk;
          wave_epi[r.described][r.waves] += r.end_clk - r.main_clk;
        }
      }
      tail += (last_ns - cta_last_ns) / 1e3;
    }
    if (items == 0) continue;
    const double gaps = std::max<long>(1, items - busy_ctas);
    const char* name = role == tr::kProducerRole ? "producer" : (role == 0 ? "math wg 0" : "math wg 1");
    std::printf("%-10s %6ld %10.0f %10.0f %10.0f %10.0f %10.0f %12.2f %10.1f\n", name, items, gap / gaps,
                main / items, wait / items, early / items, epi / items, main / items / (ideal_per_block * k_blocks),
                tail / busy_ctas);
    if (role == tr::kProducerRole) continue;
    char line[768];
    int len = std::snprintf(line, sizeof line, "%s: items per CTA %d to %d (%d CTAs at %d);", name, fewest, most,
                            at_most, most);
    for (int d = 0; d < 2; ++d) {
      for (int w = 0; w <= kWaves; ++w) {
        const long n = wave_items[d][w];
        if (n == 0) continue;
        len +=
            std::snprintf(line + len, sizeof line - len, " %d wave%s%s: %ld items, K loop %.0f, epilogue %.0f;", w,
                          w == 1 ? "" : "s", d == 1 ? " (described)" : "", n, wave_main[d][w] / n, wave_epi[d][w] / n);
      }
    }
    by_waves.push_back(line);
  }
  for (const std::string& line : by_waves) std::printf("%s\n", line.c_str());
  std::printf(
      "(cycles per item; gap: from an item's end to the next one's first full stage, the first item left "
      "out; early: of the waits, those for the item's K blocks 1 .. stages - 1, which a producer running a "
      "whole pipeline ahead would have filled (waits spread over the rest point at the copies' rate); tail: "
      "mean over the CTAs with items of the time from their last item's end to the last end)\n");
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef DG_GEMM_TRACE
  if (argc == 2 && std::string(argv[1]) == "--selftest") {
    // The report on made-up records (no GPU): 3 CTAs, the last without items, 3 items per role in the
    // others, 1000-cycle K loops, 200-cycle epilogues, 100-cycle gaps, 1 GHz, each math warpgroup's
    // third item of one wave fewer than the tile's and described; expected: gap 100, K loop 1000,
    // wait 50, early 20, epilogue 200, tail 500 us; items per CTA 0 to 3 (2 CTAs at 3), 4 items of
    // kWaves waves and 2 described ones of kWaves - 1.
    const int ctas = 3;
    std::vector<tr::Record> records(static_cast<size_t>(ctas) * tr::kRoles * tr::kMaxItems);
    std::vector<int> counts(static_cast<size_t>(ctas) * tr::kRoles, 3);
    for (int role = 0; role < tr::kRoles; ++role) counts[2 * tr::kRoles + role] = 0;
    for (int c = 0; c < 2; ++c) {
      for (int role = 0; role < tr::kRoles; ++role) {
        for (int i = 0; i < 3; ++i) {
          const unsigned long long t = 1000000ull * c + 1300ull * i;
          const uint32_t waves = role == tr::kProducerRole ? 0 : i == 2 ? kWaves - 1 : kWaves;
          records[(static_cast<size_t>(c) * tr::kRoles + role) * tr::kMaxItems + i] =
              tr::Record{t, t, 1000, 1200, 1200, 50, 4, 20, waves, role != tr::kProducerRole && i == 2 ? 1u : 0u};
        }
      }
    }
    report(records, counts, ctas, 4, 10.0f);
    return 0;
  }
#endif
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool masked = mode == "masked", psum = mode == "psum", contiguous = psum || mode == "contiguous";
  const int first = masked || contiguous ? 2 : 1;  // the first size argument
  const int sizes = masked ? 5 : contiguous ? 4 : 3;
  if (argc < first + sizes) {
    std::fprintf(stderr,
                 "usage: %s M N K [launches] | %s masked GROUPS MAX_M EXPECTED_M N K [launches] | %s "
                 "contiguous|psum GROUPS ROWS N K [launches]\n",
                 argv[0], argv[0], argv[0]);
    return 2;
  }
  const int groups = masked || contiguous ? std::atoi(argv[first]) : 1;
  int m = std::atoi(argv[first + (masked || contiguous ? 1 : 0)]);
  const int expected_m = masked ? std::atoi(argv[first + 2]) : 0;
  const int n = std::atoi(argv[first + sizes - 2]), k = std::atoi(argv[first + sizes - 1]);
  const int launches = argc > first + sizes ? std::atoi(argv[first + sizes]) : 20;
  int device = 0, num_sms = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device));
  std::vector<int> group_sizes;
  if (contiguous) {
    group_sizes = draw_group_sizes(groups, m);
    const int covered = std::accumulate(group_sizes.begin(), group_sizes.end(), 0);
    // (More rows than asked for where the last group's rest fell below 128: a dense run of ROWS is
    // then not the same rows.)
    if (covered != m) std::fprintf(stderr, "note: the %d groups cover %d rows, not %d\n", groups, covered, m);
    m = covered;
  }
  Operands o = make_operands(contiguous ? 1 : groups, m, n, k, groups);
  if (masked) draw_masked(o, expected_m);
  if (contiguous) set_contiguous_layout(o, group_sizes, psum);
  const GemmProblem p = problem_of(o, num_sms);
  const GemmConfig cfg = config_of(p);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  const size_t flush_bytes = 512ull << 20;
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
#ifdef DG_GEMM_TRACE
  const size_t slots = static_cast<size_t>(cfg.num_ctas) * tr::kRoles;
  tr::Record* records = nullptr;
  int* counts = nullptr;
  CHECK(cudaMalloc(&records, slots * tr::kMaxItems * sizeof(tr::Record)));
  CHECK(cudaMalloc(&counts, slots * sizeof(int)));
  CHECK(cudaMemcpyToSymbol(tr::g_records, &records, sizeof(records)));
  CHECK(cudaMemcpyToSymbol(tr::g_counts, &counts, sizeof(counts)));
#endif
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int i = 0; i < launches + 3; ++i) {
    CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, stream));
    CHECK(cudaEventRecord(start, stream));
    CHECK(TraceShape::launch(p, cfg, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i >= 3) times.push_back(ms * 1e3f);
  }
#ifdef DG_GEMM_TRACE
  // The last timed launch's records, taken before the launches below write their own.
  std::vector<tr::Record> host_records(slots * tr::kMaxItems);
  std::vector<int> host_counts(slots);
  CHECK(cudaMemcpy(host_records.data(), records, host_records.size() * sizeof(tr::Record), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host_counts.data(), counts, host_counts.size() * sizeof(int), cudaMemcpyDeviceToHost));
#endif
  const double error = worst_relative_error(o);
  // TRACE_COMPARE_SWITCH=NAME: D from one launch as timed and one with switch NAME set to 0, each
  // into a poisoned buffer, compared bit for bit over all of D (a switch that must not change the
  // result; rows a masked problem leaves alone stay poisoned in both).
  long long differing = -1;
  if (const char* name = std::getenv("TRACE_COMPARE_SWITCH")) {
    const size_t d_count = static_cast<size_t>(o.groups) * o.m * o.n;
    auto d_of_one_launch = [&]() {
      std::vector<uint16_t> bits(d_count);
      CHECK(cudaMemsetAsync(o.d, 0xFF, d_count * 2, stream));
      CHECK(TraceShape::launch(p, cfg, stream));
      CHECK(cudaMemcpyAsync(bits.data(), o.d, d_count * 2, cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
      return bits;
    };
    const std::vector<uint16_t> first_d = d_of_one_launch();
    setenv(name, "0", 1);  // (the launchers read the switches on every launch)
    const std::vector<uint16_t> second_d = d_of_one_launch();
    differing = 0;
    for (size_t i = 0; i < d_count; ++i) differing += first_d[i] != second_d[i] ? 1 : 0;
    std::printf("D with %s=0 against D as timed: %lld of %zu elements differ in bits\n", name, differing, d_count);
  }
  const char* kind_name = masked ? "masked " : psum ? "psum " : contiguous ? "contiguous " : "";
  std::printf(
      "%s%dx%dx%dx%d, tile %dx%d, %d stages, %d CTAs, bands of %d%s: median %.1f us over %d launches (L2 "
      "flushed); worst relative error of 32 outputs against float64 %.2e\n",
      kind_name, groups, masked ? expected_m : m, n, k, TRACE_BM, TRACE_BN, cfg.stages, cfg.num_ctas,
      cfg.swizzle,
#ifdef DG_GEMM_TRACE
      " (traced)",
#else
      "",
#endif
      median(times), launches, error);
#ifdef DG_GEMM_TRACE
  report(host_records, host_counts, cfg.num_ctas, (k + 127) / 128, times.back());
#endif
  return error < 1e-2 && differing <= 0 ? 0 : 1;
}
