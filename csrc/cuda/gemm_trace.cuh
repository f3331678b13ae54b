#pragma once
// Note [tile trace]: built with DG_GEMM_TRACE defined (tools/gemm_trace.cu does so; the extension
// never does), the GEMM kernel records, per CTA, per role (math warpgroup 0 or 1, or the producer)
// and per item: the SM clock and the wall clock (%globaltimer) when the item starts (a consumer:
// its first stage is full; the producer: before it claims its first stage), the cycles to the end
// of its MMAs (the producer: its last stage issued) and to the end of its epilogue, and the cycles
// spent inside stage waits within the item (a consumer's waits for full stages after the first, the
// producer's waits for free ones).  From those a harness splits a tile's time into the gap before
// it (waiting for its first stage, the schedule), its K loop (of which stage waits) and its
// epilogue, and a math warpgroup's items by the number of waves whose MMAs ran and by whether
// the item came as a described stage (a contiguous kernel's second pass).  Without
// DG_GEMM_TRACE, DG_TRACE(...) is empty and the kernel is unchanged.

#ifdef DG_GEMM_TRACE

#include <cstdint>

namespace deep_gemm::cuda::gemm_detail::trace {

constexpr int kRoles = 3;  // math warpgroup 0, math warpgroup 1, the producer
constexpr int kProducerRole = 2;
constexpr int kMaxItems = 512;  // records kept per CTA and role (later items are counted only)

struct Record {
  unsigned long long start_clk;
  unsigned long long start_ns;
  uint32_t main_clk;  // from start_clk
  uint32_t end_clk;  // from start_clk
  uint32_t end_ns;  // from start_ns
  uint32_t wait_clk;
  uint32_t k_blocks;
  uint32_t early_wait_clk;  // of wait_clk, the waits for the item's first stages (those a producer
                            // running ahead would already have filled: K blocks 1 .. stages - 1)
  uint32_t waves;  // a math warpgroup's waves whose MMAs ran (Note [idle waves]); the producer: 0
  uint32_t described;  // a math warpgroup's item read from its stage description (1) or walked (0)
};

// Set by the harness (cudaMemcpyToSymbol): records[(cta * kRoles + role) * kMaxItems + i] and
// counts[cta * kRoles + role].
__device__ Record* g_records;
__device__ int* g_counts;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One role's clocks, kept by every thread of it; one thread of the role (`writer`) stores them.
struct Tracer {
  int role;
  int count = 0;
  unsigned long long start_clk = 0, start_ns = 0, wait_from = 0;
  uint32_t wait_clk = 0, k_blocks = 0, early_wait_clk = 0, waves = 0, described = 0;
  bool main_set = false;

  __device__ __forceinline__ void begin(int blocks) {
    start_clk = clock64();
    start_ns = global_ns();
    main_set = false;
    wait_clk = 0;
    early_wait_clk = 0;
    waves = 0;
    described = 0;
    k_blocks = static_cast<uint32_t>(blocks);
  }
  __device__ __forceinline__ void set_waves(int n, bool from_description) {
    waves = static_cast<uint32_t>(n);
    described = from_description ? 1u : 0u;
  }
  __device__ __forceinline__ void wait_begin() { wait_from = clock64(); }
  // `early`: the wait was for one of the item's first stages (Record::early_wait_clk).
  __device__ __forceinline__ void wait_end(bool early = false) {
    const uint32_t waited = static_cast<uint32_t>(clock64() - wait_from);
    wait_clk += waited;
    if (early) early_wait_clk += waited;
  }
  // The end of the K loop, stored at once by `writer` (end()'s writer) with a volatile store,
  // which ptxas keeps in place: a clock value kept in a register until end() was read only after
  // the epilogue, the scheduler having sunk the read to its use.  (begin() clears main_set.)
  __device__ __forceinline__ void main_done(bool writer) {
    const unsigned long long now = clock64();
    main_set = true;
    if (writer && count < kMaxItems) {
      uint32_t* at = &g_records[(blockIdx.x * kRoles + role) * kMaxItems + count].main_clk;
      asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(at), "r"(static_cast<uint32_t>(now - start_clk))
                   : "memory");
    }
  }
  __device__ __forceinline__ void end(bool writer) {
    if (writer && count < kMaxItems) {
      const unsigned long long now_clk = clock64(), now_ns = global_ns();
      Record& r = g_records[(blockIdx.x * kRoles + role) * kMaxItems + count];
      r.start_clk = start_clk;
      r.start_ns = start_ns;
      if (!main_set) r.main_clk = static_cast<uint32_t>(now_clk - start_clk);  // (no K loop end marked)
      r.end_clk = static_cast<uint32_t>(now_clk - start_clk);
      r.end_ns = static_cast<uint32_t>(now_ns - start_ns);
      r.wait_clk = wait_clk;
      r.k_blocks = k_blocks;
      r.early_wait_clk = early_wait_clk;
      r.waves = waves;
      r.described = described;
    }
    ++count;
  }
  __device__ __forceinline__ void flush(bool writer) {
    if (writer) g_counts[blockIdx.x * kRoles + role] = count;
  }
};

}  // namespace deep_gemm::cuda::gemm_detail::trace

#define DG_TRACE(...) __VA_ARGS__

#else

#define DG_TRACE(...)

#endif
