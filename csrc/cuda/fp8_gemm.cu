// The FP8 GEMM dispatcher: argument limits, the tile-configuration heuristic and the launch.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/fp8_gemm.h"
#include "cuda/fp8_gemm_launch.cuh"

namespace deep_gemm::cuda {

namespace {

using fp8_gemm_detail::Shape;

struct Compiled {
  int block_m, block_n;
  bool sfb_per_row;
  int multicast;
  int (*stages)();
  int (*max_ctas)(int);
  cudaError_t (*launch)(const Fp8GemmProblem&, const Fp8GemmConfig&, cudaStream_t);
};

#define DG_FP8_GEMM_ENTRY(BM, BN, ROW, MC)    \
  Compiled{BM,                                \
           BN,                                \
           ROW,                               \
           MC,                                \
           &Shape<BM, BN, ROW, MC>::stages,   \
           &Shape<BM, BN, ROW, MC>::max_ctas, \
           &Shape<BM, BN, ROW, MC>::launch},
const Compiled kCompiled[] = {DG_FP8_GEMM_SHAPES(DG_FP8_GEMM_ENTRY)};
#undef DG_FP8_GEMM_ENTRY

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Paired (cluster) shapes measured slower than single CTAs on every benchmark problem so far
// (docs/performance.md): they stay compiled and testable, and the model charges them this much.
constexpr double kClusterPenaltyNs = 1e9;

// Estimated nanoseconds for one configuration: a model of the kernel, its constants fitted
// to a sweep of every compiled shape over the dense benchmark's problems on an H200 (see
// docs/performance.md).  Per K block a CTA needs the larger of its tensor-core time and its
// operand traffic at a per-SM share of L2 bandwidth (a cluster halves the shared operand);
// two math warpgroups expose some of their MMA wait; waves of persistent tiles add up; and
// the call is never faster than moving its operands once through HBM.
double estimate_ns(const Fp8GemmProblem& p, const Compiled& c, int num_sms) {
  const int cluster = c.multicast == 0 ? 1 : 2;
  const int m_blocks = ceil_div(p.m, c.block_m);
  const int n_blocks = ceil_div(p.n, c.block_n);
  const int units = m_blocks * n_blocks / cluster;
  const int slots = c.max_ctas(num_sms) / cluster;
  if (slots == 0) return 1e30;
  const int waves = ceil_div(units, slots);
  const int k_blocks = ceil_div(p.k, 128);
  constexpr double kFlopPerNsPerSm = 9000.0;
  constexpr double kL2BytesPerNsPerSm = 30.0;
  constexpr double kHbmBytesPerNs = 3500.0;
  const double mma = 2.0 * c.block_m * std::max(c.block_n, 32) * 128 / kFlopPerNsPerSm;
  const double bytes = c.block_m * 128.0 / (c.multicast == 1 ? 2 : 1) + c.block_n * 128.0 / (c.multicast == 2 ? 2 : 1);
  const double mem = bytes / kL2BytesPerNsPerSm;
  const double exposed = c.block_m == 128 ? 25.0 : 0.0;
  const bool f32 = p.d_dtype == OutDtype::kFloat;
  const double out_bytes = (f32 ? 4.0 : 2.0) * (p.c != nullptr ? 3.0 : 1.0);
  const double tile =
      k_blocks * (std::max(mma, mem) + exposed) + c.block_m * c.block_n * out_bytes / kL2BytesPerNsPerSm;
  const double hbm = (static_cast<double>(p.m) * p.k + static_cast<double>(p.n) * p.k +
                      static_cast<double>(p.m) * p.n * (f32 ? 4 : 2) * (p.c != nullptr ? 2 : 1)) /
                     kHbmBytesPerNs;
  return std::max(waves * tile, hbm) + 2000.0 + (c.multicast != 0 ? kClusterPenaltyNs : 0.0);
}

bool usable(const Fp8GemmProblem& p, const Compiled& c) {
  if (c.sfb_per_row != (p.sfb_gran_n == 1)) return false;
  const int m_blocks = ceil_div(p.m, c.block_m);
  const int n_blocks = ceil_div(p.n, c.block_n);
  if (c.multicast == 1 && n_blocks % 2 != 0) return false;
  if (c.multicast == 2 && m_blocks % 2 != 0) return false;
  return true;
}

// DG_SM90_FP8_GEMM_CONFIG=BMxBNxMC (e.g. 128x128x1) forces one compiled shape when it fits.
const Compiled* override_shape(const Fp8GemmProblem& p) {
  const char* env = std::getenv("DG_SM90_FP8_GEMM_CONFIG");
  if (env == nullptr || *env == '\0') return nullptr;
  int bm = 0, bn = 0, mc = 0;
  if (std::sscanf(env, "%dx%dx%d", &bm, &bn, &mc) != 3) return nullptr;
  for (const auto& c : kCompiled) {
    if (c.block_m == bm && c.block_n == bn && c.multicast == mc && usable(p, c)) return &c;
  }
  return nullptr;
}

const Compiled* choose(const Fp8GemmProblem& p) {
  if (const Compiled* forced = override_shape(p)) return forced;
  const Compiled* best = nullptr;
  double best_ns = 0.0;
  for (const auto& c : kCompiled) {
    if (!usable(p, c)) continue;
    const double ns = estimate_ns(p, c, p.num_sms);
    // Ties (within 1%) go to the larger tile, then to no cluster: fewer operand re-reads.
    const bool better = best == nullptr || ns < best_ns * 0.99 ||
                        (ns <= best_ns * 1.01 &&
                         (c.block_m * c.block_n > best->block_m * best->block_n ||
                          (c.block_m * c.block_n == best->block_m * best->block_n && c.multicast < best->multicast)));
    if (better) {
      best = &c;
      best_ns = ns;
    }
  }
  return best;
}

Fp8GemmConfig config_of(const Fp8GemmProblem& p, const Compiled& c) {
  Fp8GemmConfig cfg;
  cfg.block_m = c.block_m;
  cfg.block_n = c.block_n;
  cfg.multicast = c.multicast;
  cfg.stages = c.stages();
  const int cluster = c.multicast == 0 ? 1 : 2;
  const int m_blocks = ceil_div(p.m, c.block_m);
  const int n_blocks = ceil_div(p.n, c.block_n);
  const int units = m_blocks * n_blocks / cluster;
  cfg.swizzle = 8;
  const int resident = c.max_ctas(p.num_sms);
  cfg.num_ctas = std::min(units, (resident > 0 ? resident : p.num_sms) / cluster) * cluster;
  return cfg;
}

}  // namespace

std::string fp8_gemm_unsupported(const Fp8GemmProblem& p) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "empty problem";
  if (p.sfb_gran_n != 1 && p.sfb_gran_n != 128) return "SFB granularity along N must be 1 or 128";
  if (p.lda % 16 != 0 || p.ldb % 16 != 0) return "row strides of a and b must be multiples of 16 bytes";
  if (reinterpret_cast<uintptr_t>(p.a) % 16 != 0 || reinterpret_cast<uintptr_t>(p.b) % 16 != 0) {
    return "a and b must be 16-byte aligned";
  }
  if (p.num_sms < 2) return "needs at least 2 SMs";
  return {};
}

Fp8GemmConfig fp8_gemm_config(const Fp8GemmProblem& p) {
  const Compiled* c = choose(p);
  return c == nullptr ? Fp8GemmConfig{} : config_of(p, *c);
}

cudaError_t fp8_gemm(const Fp8GemmProblem& p, cudaStream_t stream) {
  const Compiled* c = choose(p);
  if (c == nullptr) return cudaErrorNotSupported;
  const Fp8GemmConfig cfg = config_of(p, *c);
  if (const char* print = std::getenv("DG_PRINT_CONFIGS"); print != nullptr && *print != '\0' && *print != '0') {
    std::fprintf(stderr, "sm90 fp8 gemm m=%d n=%d k=%d sfb_gran_n=%d -> %dx%dx%d stages=%d swizzle=%d ctas=%d\n", p.m,
                 p.n, p.k, p.sfb_gran_n, cfg.block_m, cfg.block_n, cfg.multicast, cfg.stages, cfg.swizzle,
                 cfg.num_ctas);
  }
  return c->launch(p, cfg, stream);
}

}  // namespace deep_gemm::cuda
