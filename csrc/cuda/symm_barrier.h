#pragma once
// A device-side barrier across the ranks of a Mega MoE symmetric buffer (symm_barrier.cu).

#include <cuda_runtime_api.h>

#include <cstdint>

namespace deep_gemm::cuda {

// Where the barrier keeps its state inside every rank's workspace (int64 words).
struct BarrierWords {
  int64_t epoch;  // barriers this rank has passed
  int64_t timeout;  // 0, or 1 + a rank that did not arrive in time or whose call failed
  int64_t signals;  // signals[r]: the last epoch rank r announced to this rank
};

inline constexpr int kMaxBarrierRanks = 32;

// Enqueues on `stream` a barrier across `world` ranks: every rank tells every peer (through
// `workspaces`, the device address of each rank's workspace, own rank included) that it has
// arrived, then waits until every peer has told it the same.  Memory writes this rank made to
// any buffer before the barrier (stream order) are visible to all peers after it.  A peer
// missing for `timeout_ns` makes the barrier give up and record the rank in the timeout word,
// and a nonzero timeout word (written by a failing peer) ends every wait at once; the caller
// reads the word when it next syncs.  cudaErrorInvalidValue for a world or rank out of range.
cudaError_t symm_barrier(const int64_t* workspaces, int world, int rank, const BarrierWords& words, int64_t timeout_ns,
                         cudaStream_t stream);

}  // namespace deep_gemm::cuda
