// The per-group tables of K-grouped GEMMs whose group sizes live on the device (psum ends):
// one warp per group reads its start and end, edits a copy of the operand map templates in
// shared memory and publishes the maps to the group's table slot, so the GEMM that follows
// needs nothing from the host.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/gemm_launch.cuh"
#include "cuda/sm90_primitives.cuh"

namespace deep_gemm::cuda::gemm_detail {

namespace {

__global__ void __launch_bounds__(32)
    k_group_tables_kernel(void* workspace, const __grid_constant__ CUtensorMap a_template,
                          const __grid_constant__ CUtensorMap b_template, const KGroupDeviceSizes sizes) {
  namespace p = deep_gemm::cuda::sm90;
  __shared__ alignas(128) CUtensorMap maps[2];
  const int g = static_cast<int>(blockIdx.x);
  const int lane = static_cast<int>(threadIdx.x);
  // Lanes 0-7 copy A's template, 8-15 B's, 16 bytes each.
  if (lane < 16) {
    const auto* src = reinterpret_cast<const uint4*>(lane < 8 ? &a_template : &b_template);
    reinterpret_cast<uint4*>(&maps[lane / 8])[lane % 8] = src[lane % 8];
  }
  const int prev_end = g > 0 ? min(sizes.ends[g - 1], sizes.rows) : 0;
  const int start = (max(prev_end, 0) + sizes.alignment - 1) / sizes.alignment * sizes.alignment;
  const int end = min(sizes.ends[g], sizes.rows);
  const int k = end > start ? end - start : 0;
  // An empty group keeps a valid map (one row) that the GEMM never uses.
  const int map_k = k > 0 ? k : 1;
  const int map_start = k > 0 ? start : 0;
  __syncwarp();
  if (lane == 0) {
    const auto* a = static_cast<const uint8_t*>(sizes.a) + static_cast<int64_t>(map_start) * sizes.a_row_bytes;
    const auto* b = static_cast<const uint8_t*>(sizes.b) + static_cast<int64_t>(map_start) * sizes.b_row_bytes;
    p::tensor_map_set_address(&maps[0], a);
    p::tensor_map_set_dim<1>(&maps[0], static_cast<uint32_t>(map_k));
    p::tensor_map_set_stride<2>(&maps[0], static_cast<uint64_t>(map_k) * sizes.a_row_bytes);
    p::tensor_map_set_address(&maps[1], b);
    p::tensor_map_set_dim<1>(&maps[1], static_cast<uint32_t>(map_k));
    p::tensor_map_set_stride<2>(&maps[1], static_cast<uint64_t>(map_k) * sizes.b_row_bytes);
  }
  __syncwarp();
  KGroupTable& table = *k_group_table_at(workspace, g / kMaxKGroups);
  const int i = g % kMaxKGroups;
  p::tensor_map_publish(&table.a[i], &maps[0]);
  p::tensor_map_publish(&table.b[i], &maps[1]);
  if (lane == 0) {
    table.group[i] = g;
    table.k_blocks[i] = (k + sizes.k_block_values - 1) / sizes.k_block_values;
    table.sf_block0[i] = 0;
    if (i == 0) table.count = min(kMaxKGroups, sizes.groups - g);
  }
}

}  // namespace

cudaError_t build_k_group_tables(void* workspace, const CUtensorMap& a_template, const CUtensorMap& b_template,
                                 const KGroupDeviceSizes& sizes, cudaStream_t stream) {
  if (sizes.groups <= 0) return cudaSuccess;
  k_group_tables_kernel<<<sizes.groups, 32, 0, stream>>>(workspace, a_template, b_template, sizes);
  return cudaGetLastError();
}

}  // namespace deep_gemm::cuda::gemm_detail
