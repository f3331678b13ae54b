// The Mega MoE barrier: one block, one thread per rank.  Thread p stores the new epoch into
// rank p's signal slot for this rank, then spins until this rank's slot for p reaches the
// epoch.  Epochs only grow, and no rank can be more than one barrier ahead of another, so "at
// least the epoch" is the test.  A nonzero timeout word ends the wait early: a peer whose call
// failed writes it (deep_gemm.mega does), so the others stop waiting for that peer.

#include <cstdint>

#include "cuda/symm_barrier.h"

namespace deep_gemm::cuda {

namespace {

using Word = unsigned long long;

struct Workspaces {
  Word* at[kMaxBarrierRanks];
};

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void barrier_kernel(Workspaces ws, int rank, int world, BarrierWords words, uint64_t timeout_ns) {
  __shared__ Word target;
  Word* own = ws.at[rank];
  if (threadIdx.x == 0) target = own[words.epoch] + 1;
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < world) {
    __threadfence_system();  // this rank's earlier writes, to any rank, land before the signal
    atomicExch_system(ws.at[peer] + words.signals + rank, target);
    const volatile Word* slot = own + words.signals + peer;
    const volatile Word* stop = own + words.timeout;  // set by a peer whose call failed, or below
    const uint64_t start = now_ns();
    while (*slot < target && *stop == 0) {
      if (now_ns() - start > timeout_ns) {
        atomicCAS(own + words.timeout, Word{0}, static_cast<Word>(peer + 1));
        break;
      }
    }
    __threadfence_system();  // the peers' writes before their signals are seen after this
  }
  __syncthreads();
  if (threadIdx.x == 0) own[words.epoch] = target;
}

}  // namespace

cudaError_t symm_barrier(const int64_t* workspaces, int world, int rank, const BarrierWords& words, int64_t timeout_ns,
                         cudaStream_t stream) {
  if (world < 1 || world > kMaxBarrierRanks || rank < 0 || rank >= world) return cudaErrorInvalidValue;
  Workspaces ws{};
  for (int r = 0; r < world; ++r) ws.at[r] = reinterpret_cast<Word*>(workspaces[r]);
  barrier_kernel<<<1, kMaxBarrierRanks, 0, stream>>>(ws, rank, world, words, static_cast<uint64_t>(timeout_ns));
  return cudaGetLastError();
}

}  // namespace deep_gemm::cuda
