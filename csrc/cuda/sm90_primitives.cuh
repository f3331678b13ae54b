#pragma once
// sm90a building blocks of the native kernels: shared-memory barriers, bulk tensor
// copies (TMA) in and out, the asynchronous scale copies, cluster helpers, named
// barriers and register reallocation.  Each is one PTX instruction (or a short
// fixed sequence); they know nothing of the kernels that use them.

#include <cuda.h>

#include <cstdint>

namespace deep_gemm::cuda::sm90 {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers -------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// Makes barrier initialisation visible to the async proxy and to the other CTAs of the cluster.
__device__ __forceinline__ void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Note [barrier watchdog]: built with -DDG_MBAR_WATCHDOG, every barrier wait traps once it has
// waited about 2^31 cycles (a second at 2 GHz), so that a kernel whose barrier counts or
// transaction bytes do not add up fails its launch with an error instead of running until the
// process is killed.  A debugging build only: the wait then costs a clock read per retry.
#ifdef DG_MBAR_WATCHDOG
template <bool kCluster>
__device__ __forceinline__ void mbar_wait_watched(uint64_t* bar, uint32_t parity) {
  const long long start = clock64();
  while (true) {
    uint32_t done = 0;
    if constexpr (kCluster) {
      asm volatile(
          "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(smem_addr(bar)), "r"(parity)
          : "memory");
    } else {
      asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done)
                   : "r"(smem_addr(bar)), "r"(parity)
                   : "memory");
    }
    if (done) return;
    if (clock64() - start > (1ll << 31)) __trap();
  }
}
#endif

// Waits for the phase of `parity` to complete, retrying inside one asm block.  (On its own this
// did not move the GEMM consumers' loop state into uniform registers; the dense kernel's own
// schedule did, see gemm_kernel.cuh.)
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
#ifdef DG_MBAR_WATCHDOG
  mbar_wait_watched<false>(bar, parity);
#else
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#endif
}

// Waits as mbar_wait, with acquire at cluster scope: for a barrier that another CTA of the
// cluster arrives on (its earlier shared-memory accesses are then ordered before ours).
__device__ __forceinline__ void mbar_wait_cluster(uint64_t* bar, uint32_t parity) {
#ifdef DG_MBAR_WATCHDOG
  mbar_wait_watched<true>(bar, parity);
#else
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#endif
}

// Arrives on the barrier at `bar`'s offset in CTA `cta_rank` of this cluster, with the default
// (CTA-scope) release: enough to hand a buffer back to a CTA whose copies overwrite it (this
// CTA's reads of it are done by then).  A cluster-scope release (.release.cluster) compiles to
// a GPU-wide memory barrier (MEMBAR.ALL.GPU) ahead of every such arrive.
__device__ __forceinline__ void mbar_arrive_remote(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(cta_rank)
      : "memory");
}

// ---- clusters ---------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t cluster_cta_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster (release, then acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Copies `bytes` (a multiple of 16) of this CTA's shared memory at `src` to the same offset
// as `dst` in CTA `cta_rank`'s, by the bulk-copy unit; the copy completes its byte count on
// the barrier at `bar`'s offset there.  (One transfer: 16-byte st.async stores, each
// completing on the remote barrier, measured about 1.9 us per 16 KiB on an H200.)
__device__ __forceinline__ void bulk_copy_to_cluster(void* dst, const void* src, uint32_t bytes, uint64_t* bar,
                                                     uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 rdst, rbar;\n"
      "mapa.shared::cluster.u32 rdst, %0, %3;\n"
      "mapa.shared::cluster.u32 rbar, %2, %3;\n"
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [rdst], [%1], %4, [rbar];\n"
      "}\n" ::"r"(smem_addr(dst)),
      "r"(smem_addr(src)), "r"(smem_addr(bar)), "r"(cta_rank), "r"(bytes)
      : "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global memory into this
// CTA's shared memory by the bulk-copy unit; the copy completes its byte count on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// ---- asynchronous 4-byte copies that complete on an mbarrier (scale factors) ---------------
// Copies 4 bytes, or writes zeros when `valid` is false.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}

// The barrier sees one arrival once every earlier cp.async of this thread has landed.
__device__ __forceinline__ void cp_async_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// ---- bulk tensor copies -----------------------------------------------------------------------
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- tensor maps built on the device ---------------------------------------------------------
// A map in shared memory (128-byte aligned) gets a new global address, the size of dimension
// `dim`, and the byte stride of dimension `dim` (>= 1); the ordinal of a stride is its
// dimension minus one.  tensor_map_publish copies it to global memory with a release at GPU
// scope of the tensor-map proxy (all 32 lanes of the warp execute it); a kernel that then
// reads the map from global memory orders its TMA after tensor_map_acquire on it.
__device__ __forceinline__ void tensor_map_set_address(void* smem_map, const void* address) {
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(smem_addr(smem_map)),
               "l"(reinterpret_cast<uint64_t>(address))
               : "memory");
}

template <int kDim>
__device__ __forceinline__ void tensor_map_set_dim(void* smem_map, uint32_t size) {
  asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_addr(smem_map)),
               "n"(kDim), "r"(size)
               : "memory");
}

template <int kDim>
__device__ __forceinline__ void tensor_map_set_stride(void* smem_map, uint64_t bytes) {
  static_assert(kDim >= 1, "dimension 0 has unit stride");
  asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], %1, %2;" ::"r"(smem_addr(smem_map)),
               "n"(kDim - 1), "l"(bytes)
               : "memory");
}

__device__ __forceinline__ void tensor_map_publish(CUtensorMap* global_map, const void* smem_map) {
  asm volatile(
      "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;" ::"l"(
          reinterpret_cast<uint64_t>(global_map)),
      "r"(smem_addr(smem_map))
      : "memory");
}

__device__ __forceinline__ void tensor_map_acquire(const CUtensorMap* global_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(reinterpret_cast<uint64_t>(global_map))
               : "memory");
}

__device__ __forceinline__ void tma_load_2d(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// L2 cache policies for TMA loads: evict_first for data read once (it then displaces itself, not
// the rest of the cache), evict_last for data many CTAs re-read.
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

__device__ __forceinline__ uint64_t l2_policy_evict_last() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// The policy of an L2 hint code (1 evict_first, 2 evict_last); 0 for any other code (no hint).
__device__ __forceinline__ uint64_t l2_policy(int code) {
  return code == 1 ? l2_policy_evict_first() : code == 2 ? l2_policy_evict_last() : 0;
}

// tma_load_2d with an L2 cache policy from l2_policy_*.
__device__ __forceinline__ void tma_load_2d_hint(const CUtensorMap* map, uint64_t* bar, void* dst, int32_t c0,
                                                 int32_t c1, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, "
      "%4}], [%2], %5;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until every committed store has finished reading shared memory.
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

// Waits until every committed store but the most recent one has finished reading shared memory.
__device__ __forceinline__ void tma_store_wait_read_all_but_last() {
  asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
}

// Waits until every committed store has completed.
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Writes four 8x8 matrices of 16-bit values to shared memory (stmatrix x4): the warp's lane l gives
// the address of row l % 8 of matrix l / 8, and register i of each lane holds its two values of
// matrix i (lane l: row l / 4, columns 2 * (l % 4) and the next), as an m64nNk16 accumulator holds them.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v0), "r"(v1),
               "r"(v2), "r"(v3)
               : "memory");
}

// Orders this thread's ordinary shared-memory writes before later async-proxy reads (TMA, wgmma).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- warps ------------------------------------------------------------------------------------
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

template <uint32_t kRegs>
__device__ __forceinline__ void regs_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

template <uint32_t kRegs>
__device__ __forceinline__ void regs_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// ---- warpgroup MMA ----------------------------------------------------------------------------
// Descriptor of a K-major operand tile in shared memory laid out by a 128-byte-swizzled TMA
// load: rows of 128 bytes, 8-row groups 1024 bytes apart.  Advancing along K by 32 FP8 values
// adds 32 bytes (2 in the address field) to the start address.
// An MN-major BF16 tile (TMA boxes of 64 K rows x 64 values, one per 64-wide slice of M or N)
// has the same 128-byte rows and 1024-byte 8-row groups, now along K; its slices lie 8 KiB
// apart, the leading byte offset.  A k16 step then moves 16 rows (2048 bytes).
// The descriptor is split into its low word (start address, leading byte offset), which
// moves with the tile, and a constant high word (8-row stride, 128-byte swizzle).
constexpr uint32_t kGmmaDescHiSw128 = (1024u >> 4) | (1u << 30);
// The descriptor's low word: the start address and the leading byte offset (ignored by
// swizzled K-major operands; the stride between 64-wide slices of an MN-major one).
__device__ __forceinline__ uint32_t gmma_desc_lo(const void* tile, uint32_t leading_bytes = 16) {
  return ((smem_addr(tile) & 0x3FFFFu) >> 4) | ((leading_bytes >> 4) << 16);
}
__device__ __forceinline__ uint64_t gmma_desc_k_sw128_at(uint32_t lo) {
  return (static_cast<uint64_t>(kGmmaDescHiSw128) << 32) | lo;
}
__device__ __forceinline__ uint64_t gmma_desc_k_sw128(const void* tile) {
  return gmma_desc_k_sw128_at(gmma_desc_lo(tile));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads or writes of `x` across the asynchronous MMA.
__device__ __forceinline__ void fence_operand(float& x) { asm volatile("" : "+f"(x)::"memory"); }

}  // namespace deep_gemm::cuda::sm90
