#pragma once
// Definitions of Shape<...>::stages/launch; each gemm_*.cu unit instantiates a part of
// the shape list so the kernels compile in parallel.

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "cuda/gemm_kernel.cuh"
#include "cuda/gemm_launch.cuh"
#include "cuda/gemm_switches.h"
#include "cuda/tensor_map.cuh"

namespace deep_gemm::cuda::gemm_detail {

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit, int kCast>
int Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast>::stages() {
  return Traits<kBlockM, kBlockN, kSfbPerRow, kBf16, kSplit>::kStages;
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors>
auto* kernel_of() {
  if constexpr (kBf16) {
    return &sm90_bf16_gemm_kernel<kBlockM, kBlockN, kMajors>;
  } else {
    return &sm90_fp8_gemm_kernel<kBlockM, kBlockN, kSfbPerRow>;
  }
}

// A kernel as a type (a lambda's argument that its body can use at compile time).
template <auto kKernel>
struct KernelConstant {
  static constexpr auto value = kKernel;
};

// A kernel's dynamic shared memory limit, set on its first launch (one static per kernel).
template <auto kKernel>
cudaError_t smem_attribute_once(int bytes) {
  static const cudaError_t status = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  return status;
}

// A 3-D map over [d2, d1, d0] elements (d0 contiguous) with element strides s1, s2 of dims
// 1 and 2; boxes of [1, b1, b0].  Out-of-bounds reads give zeros; stores are clipped.
inline bool make_map_3d(CUtensorMap* map, CUtensorMapDataType dtype, int elem_bytes, const void* base, uint64_t d0,
                        uint64_t d1, uint64_t d2, int64_t s1, int64_t s2, uint32_t b0, uint32_t b1,
                        CUtensorMapSwizzle swizzle) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {d0, d1, d2};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(s1) * static_cast<cuuint64_t>(elem_bytes),
                                 static_cast<cuuint64_t>(s2) * static_cast<cuuint64_t>(elem_bytes)};
  const cuuint32_t box[3] = {b0, b1, 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  return encode(map, dtype, 3, const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int kBlockM, int kBlockN, bool kSfbPerRow, bool kBf16, int kMajors, int kSplit, int kCast>
cudaError_t Shape<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors, kSplit, kCast>::launch(const GemmProblem& p,
                                                                                       const GemmConfig& cfg,
                                                                                       cudaStream_t stream) {
  using T = Traits<kBlockM, kBlockN, kSfbPerRow, kBf16, kSplit>;
  static_assert(kCast == 0 || (kBf16 && kMajors == 0 && kSplit == 1), "multicast pairs: BF16, K-major");
  if constexpr (kCast != 0) {
    if (p.layout != GemmLayout::kDense && p.layout != GemmLayout::kMasked) return cudaErrorNotSupported;
  }
  if constexpr (kSplit > 1) {
    if (p.layout != GemmLayout::kDense || (p.k + T::kBlockKValues - 1) / T::kBlockKValues < kSplit) {
      return cudaErrorNotSupported;
    }
  }
  const bool k_grouped = p.layout == GemmLayout::kKGrouped;
  const bool batch_sum = p.layout == GemmLayout::kBatchSum;
  const bool batched = p.layout == GemmLayout::kBatched;
  constexpr bool kMnA = (kMajors & kMnMajorA) != 0, kMnB = (kMajors & kMnMajorB) != 0;
  // K-grouped kernels: FP8 with per-row scales, or BF16 with both operands MN-major.
  constexpr bool kKGroupedKernel = (kSfbPerRow && !kBf16) || (kBf16 && kMnA && kMnB);
  if constexpr (!kKGroupedKernel) {
    if (k_grouped) return cudaErrorNotSupported;
  }
  if constexpr (kMnA) {
    if (p.layout != GemmLayout::kDense && !batched && !k_grouped) return cudaErrorNotSupported;
  }
  if constexpr (!kBf16) {
    if (batch_sum) return cudaErrorNotSupported;
  }

  const bool masked = p.layout == GemmLayout::kMasked;
  const bool three_d = batched || batch_sum;  // A and B have a group stride
  const uint64_t rows = static_cast<uint64_t>(p.m) * (masked ? p.groups : 1);  // A's and D's 2-D views
  CUtensorMap tm_a{}, tm_b{}, tm_d{};
  const auto ab = kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const int ab_bytes = kBf16 ? 2 : 1;
  const uint64_t b_rows = static_cast<uint64_t>(p.n) * (three_d ? 1 : p.groups);
  if (!k_grouped) {
    const uint64_t zs = three_d ? p.groups : 1;
    const int64_t a_z = three_d ? p.a_group : static_cast<int64_t>(rows) * p.lda;
    const int64_t b_z = three_d ? p.b_group : static_cast<int64_t>(b_rows) * p.ldb;
    // K-major: [zs, rows, k] in boxes of BLOCK x one K block; MN-major: [zs, k, rows] in boxes of
    // one K block x 64 (the producer loads a tile's 64-wide slices one by one).
    const bool ok_a = kMnA ? make_map_3d(&tm_a, ab, ab_bytes, p.a, rows, p.k, zs, p.lda, a_z, 64, T::kBoxKValues,
                                         CU_TENSOR_MAP_SWIZZLE_128B)
                           : make_map_3d(&tm_a, ab, ab_bytes, p.a, p.k, rows, zs, p.lda, a_z, T::kBoxKValues,
                                         kCast == 1 ? kBlockM / 2 : kBlockM, CU_TENSOR_MAP_SWIZZLE_128B);
    // An MN-major B is always [groups, k, n] (its K tails must not reach the next group).
    const int64_t b_group_mn = p.b_group != 0 ? p.b_group : static_cast<int64_t>(p.k) * p.ldb;
    const bool ok_b = kMnB ? make_map_3d(&tm_b, ab, ab_bytes, p.b, p.n, p.k, p.groups, p.ldb, b_group_mn, 64,
                                         T::kBoxKValues, CU_TENSOR_MAP_SWIZZLE_128B)
                           : make_map_3d(&tm_b, ab, ab_bytes, p.b, p.k, b_rows, zs, p.ldb, b_z, T::kBoxKValues,
                                         kCast == 2 ? kBlockN / 2 : kBlockN, CU_TENSOR_MAP_SWIZZLE_128B);
    if (!ok_a || !ok_b) return cudaErrorInvalidValue;
  }

  // The output map: [groups, m, n] for batched and K-grouped problems, else [1, rows, n].
  const bool f32 = p.d_dtype == OutDtype::kFloat;
  const int d_bytes = f32 ? 4 : 2;
  const bool grouped_out = batched || k_grouped;
  const uint64_t d_zs = grouped_out ? p.groups : 1;
  const int64_t d_z = grouped_out ? p.d_group : static_cast<int64_t>(rows) * p.ldd;
  const bool c_is_d = p.c != nullptr && p.c == p.d && p.ldc == p.ldd && (!grouped_out || p.c_group == p.d_group);
  // A separate float32 C is copied into D first (one 2-D copy: groups packed), then added.
  const bool c_copyable =
      p.c != nullptr && !c_is_d && (!grouped_out || (p.c_group == p.ldc * p.m && p.d_group == p.ldd * p.m));
  // A bf16 C (D itself or not) is added in registers before the TMA store (not K-grouped: those
  // D are float32).
  const bool c_in_regs = p.c != nullptr && !f32 && !k_grouped;
  const bool tma_out = (f32 ? T::kOutF32ViaTma : T::kOutViaSmem) &&
                       (p.c == nullptr || (f32 && (c_is_d || c_copyable)) || c_in_regs) &&
                       d_fits_tma(p.d, p.ldd, d_z, d_bytes);
  if (tma_out) {
    // Boxes of 64 rows and 64 bytes (16 float32 or 32 bf16 columns, 64-byte swizzle), or of 32
    // bytes for a bf16 tile whose width is an odd multiple of 16 (32-byte swizzle), or for float32
    // in 8-column boxes (no swizzle; Note [float32 in 8-column boxes]).
    const bool narrow = !f32 && T::kOutBoxCols == 16;
    const bool box8 = f32 && T::kOutF32Box8;
    if (!make_map_3d(&tm_d, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, d_bytes, p.d, p.n,
                     rows, d_zs, p.ldd, d_z,
                     box8  ? 8
                     : f32 ? 16
                           : T::kOutBoxCols,
                     64,
                     box8     ? CU_TENSOR_MAP_SWIZZLE_NONE
                     : narrow ? CU_TENSOR_MAP_SWIZZLE_32B
                              : CU_TENSOR_MAP_SWIZZLE_64B)) {
      return cudaErrorInvalidValue;
    }
  } else {
    tm_d = tm_a;  // unused
  }
  // K-grouped problems always copy a separate C first: empty groups are never visited.
  if (k_grouped && p.c != nullptr && !c_is_d && !c_copyable) return cudaErrorNotSupported;
  const void* c = p.c;
  if ((tma_out || k_grouped) && c != nullptr && !c_is_d && !c_in_regs) {
    const uint64_t copy_rows = static_cast<uint64_t>(p.m) * (grouped_out ? p.groups : 1);
    const cudaError_t st =
        cudaMemcpy2DAsync(p.d, static_cast<size_t>(p.ldd) * d_bytes, p.c, static_cast<size_t>(p.ldc) * d_bytes,
                          static_cast<size_t>(p.n) * d_bytes, copy_rows, cudaMemcpyDeviceToDevice, stream);
    if (st != cudaSuccess) return st;
    c = p.d;
  }

  KernelArgs args{};
  args.kind = static_cast<int>(p.layout);
  args.m = p.m;
  args.n = p.n;
  args.groups = p.groups;
  args.num_k_blocks = (p.k + T::kBlockKValues - 1) / T::kBlockKValues;
  args.m_blocks = (p.m + kBlockM - 1) / kBlockM;
  args.n_blocks = (p.n + kBlockN - 1) / kBlockN;
  args.swizzle = cfg.swizzle;
  args.layout = p.group_layout;
  args.alignment = p.alignment;
  args.zero_padding = p.zero_padding ? 1 : 0;
  args.sfa = p.sfa;
  args.sfa_group = p.sfa_group;
  args.sfa_mn = p.sfa_mn;
  args.sfa_k = p.sfa_k;
  args.sfb = p.sfb;
  args.sfb_group = p.sfb_group;
  args.sfb_mn = p.sfb_mn;
  args.sfb_k = p.sfb_k;
  args.sfb_rows = kSfbPerRow ? p.n : (p.n + 127) / 128;
  args.d = p.d;
  args.ldd = p.ldd;
  args.c = c;
  args.ldc = c == p.c ? p.ldc : p.ldd;
  args.d_group = grouped_out ? p.d_group : 0;
  args.c_group = grouped_out ? (c == p.c ? p.c_group : p.d_group) : 0;
  args.d_f32 = f32 ? 1 : 0;
  args.tma_out = tma_out ? 1 : 0;
  args.out_add = tma_out && c != nullptr && !c_in_regs ? 1 : 0;
  args.clip_rows = p.layout == GemmLayout::kDense || batched || k_grouped || batch_sum ? 1 : 0;
  const uintptr_t pair_bytes = f32 ? 8 : 4;
  args.paired_access = p.ldd % 2 == 0 && (c == nullptr || args.ldc % 2 == 0) && p.d_group % 2 == 0 &&
                       args.c_group % 2 == 0 && reinterpret_cast<uintptr_t>(p.d) % pair_bytes == 0 &&
                       reinterpret_cast<uintptr_t>(c) % pair_bytes == 0;
  // Whether this launch runs the FP8 masked kernel (decided once, here: the launch below follows
  // it).  Idle waves are skipped by default there (measured faster), not elsewhere (BF16 masked
  // and the contiguous families measured level to slower).
  const bool masked_kernel = !kBf16 && !kSfbPerRow && kSplit == 1 && kCast == 0 && masked && masked_schedule_chosen() &&
                             !general_schedule_forced();
  // Note [lean kernels]: the kernels compiled for bf16 D through the TMA unit with no C (FP8 with
  // 128x128 SFB blocks; BF16 K-major, masked or in multicast pairs), for problems of that form
  // (has_lean_twin says which FP8 tiles have one); on by default for dense and masked problems,
  // where they were measured faster, and for the contiguous 256x128 tile (Note [lean contiguous
  // 256x128]).
  const bool contiguous = p.layout == GemmLayout::kRowIds || p.layout == GemmLayout::kPsum;
  constexpr bool kContiguous256 = !kMnA && is_fp8_256x128_tile(kBlockM, kBlockN, kBf16, kSfbPerRow);
  constexpr bool kLeanable = !kSfbPerRow && (!kBf16 || kMajors == 0) && kSplit == 1 && T::kOutViaSmem;
  const bool lean_chosen =
      setting_or(lean_setting(), p.layout == GemmLayout::kDense || masked || (kContiguous256 && contiguous));
  const bool lean_out = kLeanable && lean_chosen && args.tma_out && !args.d_f32 && args.c == nullptr;
  // Whether this launch runs the lean contiguous 256x128 kernel (the launch below follows it): it
  // takes idle waves, slab waits, the scale warp and stmatrix by default, as the dense kernel does.
  const bool lean_contiguous_256 = kContiguous256 && contiguous && lean_out && !general_schedule_forced();
  args.skip_idle = setting_or(idle_waves_setting(), masked_kernel || lean_contiguous_256) ? 1 : 0;
  // Whether this launch runs a plain dense kernel (the launch below follows it), and whether it
  // runs the FP8 dense kernel's epilogue (that kernel, or the lean contiguous 256x128 one).  Slab
  // waits (Note [slab waits]) are on by default there alone, where they were measured.
  const bool dense_kernel =
      kSplit == 1 && kCast == 0 && !kSfbPerRow && p.layout == GemmLayout::kDense && !general_schedule_forced();
  const bool fp8_dense_epilogue = (!kBf16 && dense_kernel) || lean_contiguous_256;
  args.slab_wait = setting_or(slab_wait_setting(), fp8_dense_epilogue) ? 1 : 0;
  args.stagger_cycles = stagger_cycles();
  // Read by the FP8 kernels with 128x128 SFB blocks and a schedule of their own (dense, split K,
  // M-grouped contiguous and masked; Note [a warp for the scales]); on by default for dense
  // problems, the lean contiguous 256x128 kernel, and short-K M-grouped contiguous ones (row ids
  // and psum ends apart: gemm_switches.h).
  const bool scale_warp_default = p.layout == GemmLayout::kDense || lean_contiguous_256 ||
                                  (p.layout == GemmLayout::kRowIds && args.num_k_blocks <= kScaleWarpRowIdsKBlocks) ||
                                  (p.layout == GemmLayout::kPsum && args.num_k_blocks <= kScaleWarpPsumKBlocks);
  args.scale_warp = !kBf16 && kCast == 0 && setting_or(scale_warp_setting(), scale_warp_default) ? 1 : 0;
  args.l2_hints = cfg.l2_hints;  // Note [L2 policies]
  // Note [stmatrix epilogue] and Note [compact epilogue]: on by default in the plain FP8 dense
  // kernel, where they were measured; stmatrix in the lean contiguous 256x128 kernel too.
  args.stsm = setting_or(stsm_setting(), fp8_dense_epilogue) ? 1 : 0;
  args.compact_epilogue = setting_or(compact_epilogue_setting(), !kBf16 && dense_kernel) ? 1 : 0;

  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(static_cast<unsigned>(cfg.num_ctas));
  launch.blockDim = dim3(T::kThreads);
  launch.dynamicSmemBytes = T::kSmemBytes;
  launch.stream = stream;
  if constexpr (kSplit > 1 || kCast != 0) {
    static_assert(kMajors == 0 && !kSfbPerRow, "split K: K-major operands, 128x128 SFB blocks (FP8)");
    // Split K: one tile per cluster of kSplit CTAs, each taking a part of its K blocks.
    // Multicast pairs: one pair of tiles per cluster of two.
    constexpr int kClusterSize = kSplit > 1 ? kSplit : 2;
    // The kernel and the status of its shared-memory limit, set on its first launch.
    const auto chosen = [](auto kernel) {
      return std::make_pair(decltype(kernel)::value, smem_attribute_once<decltype(kernel)::value>(T::kSmemBytes));
    };
    const auto [split_kernel, split_attr] = [&] {
      if constexpr (kCast != 0) {
        if constexpr (kLeanable) {
          if (lean_out) return chosen(KernelConstant<&sm90_bf16_gemm_multicast_lean_kernel<kBlockM, kBlockN, kCast>>{});
        }
        return chosen(KernelConstant<&sm90_bf16_gemm_multicast_kernel<kBlockM, kBlockN, kCast>>{});
      } else if constexpr (kBf16) {
        return chosen(KernelConstant<&sm90_bf16_gemm_split_k_kernel<kBlockM, kBlockN, kSplit>>{});
      } else {
        return chosen(KernelConstant<&sm90_fp8_gemm_split_k_kernel<kBlockM, kBlockN, kSplit>>{});
      }
    }();
    if (split_attr != cudaSuccess) return split_attr;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kClusterSize;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    launch.attrs = &cluster;
    launch.numAttrs = 1;
    // At most as many clusters as can be resident at once (a GPC with an odd SM count leaves
    // one SM out), asked once per device: the answer depends on the kernel and the GPU alone.
    static int resident_of[64] = {};
    int device = 0;
    int resident = cfg.num_ctas;
    if (cudaGetDevice(&device) == cudaSuccess && device >= 0 && device < 64) {
      if (resident_of[device] == 0) {
        launch.gridDim = dim3(static_cast<unsigned>(kClusterSize * resident));
        int found = 0;
        resident_of[device] =
            cudaOccupancyMaxActiveClusters(&found, split_kernel, &launch) == cudaSuccess && found > 0 ? found : -1;
      }
      if (resident_of[device] > 0) resident = std::min(resident, resident_of[device]);
    }
    // (A masked problem's units are counted on the device: every resident cluster walks them.)
    const int64_t units = masked       ? resident
                          : kCast == 1 ? static_cast<int64_t>(args.m_blocks) * ((args.n_blocks + 1) / 2)
                          : kCast == 2 ? static_cast<int64_t>((args.m_blocks + 1) / 2) * args.n_blocks
                                       : static_cast<int64_t>(args.m_blocks) * args.n_blocks;
    const int64_t clusters = std::max<int64_t>(1, std::min<int64_t>(units, resident));
    launch.gridDim = dim3(static_cast<unsigned>(kClusterSize * clusters));
    return cudaLaunchKernelEx(&launch, split_kernel, tm_a, tm_b, tm_d, args);
  } else {
    // (A split shape compiles its split kernel alone.)
    if constexpr (kKGroupedKernel) {
      if (k_grouped) {
        // Non-empty groups, kMaxKGroups per launch (their outputs are disjoint).
        auto* grouped_kernel = [] {
          if constexpr (kBf16) {
            return &sm90_bf16_gemm_k_grouped_kernel<kBlockM, kBlockN, kMajors>;
          } else {
            return &sm90_fp8_k_grouped_gemm_kernel<kBlockM, kBlockN>;
          }
        }();
        static const cudaError_t grouped_attr =
            cudaFuncSetAttribute(grouped_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
        if (grouped_attr != cudaSuccess) return grouped_attr;
        // FP8: the kernel whose consumers walk the table, unless DG_GEMM_K_GROUPED_SCHEDULE=0.
        auto* table_kernel = grouped_kernel;
        if constexpr (!kBf16) {
          if (k_grouped_schedule_chosen() && !general_schedule_forced()) {
            constexpr auto kUniformKernel = &sm90_fp8_k_grouped_gemm_uniform_kernel<kBlockM, kBlockN>;
            const cudaError_t attr = smem_attribute_once<kUniformKernel>(T::kSmemBytes);
            if (attr != cudaSuccess) return attr;
            table_kernel = kUniformKernel;
          }
        }
        KGroupTable table{};
        const auto* a_bytes = static_cast<const uint8_t*>(p.a);
        const auto* b_bytes = static_cast<const uint8_t*>(p.b);
        // FP8: A_g [m, k_g] and B_g [n, k_g], K-major and packed; BF16: A_g [k_g, m] and B_g [k_g,
        // n], MN-major with K rows lda and ldb apart.
        // Group maps at element offsets a_off and b_off with k rows (K values) each.
        const auto group_maps = [&](int i, int64_t a_off, int64_t b_off, int k) {
          if constexpr (kBf16) {
            return make_map_3d(&table.a[i], ab, 2, a_bytes + a_off * 2, p.m, k, 1, p.lda,
                               static_cast<int64_t>(k) * p.lda, 64, T::kBoxKValues, CU_TENSOR_MAP_SWIZZLE_128B) &&
                   make_map_3d(&table.b[i], ab, 2, b_bytes + b_off * 2, p.n, k, 1, p.ldb,
                               static_cast<int64_t>(k) * p.ldb, 64, T::kBoxKValues, CU_TENSOR_MAP_SWIZZLE_128B);
          } else {
            return make_map_3d(&table.a[i], ab, 1, a_bytes + a_off, k, p.m, 1, k, static_cast<int64_t>(k) * p.m,
                               T::kBoxKValues, kBlockM, CU_TENSOR_MAP_SWIZZLE_128B) &&
                   make_map_3d(&table.b[i], ab, 1, b_bytes + b_off, k, p.n, 1, k, static_cast<int64_t>(k) * p.n,
                               T::kBoxKValues, kBlockN, CU_TENSOR_MAP_SWIZZLE_128B);
          }
        };
        const int64_t tiles_per_group = static_cast<int64_t>(args.m_blocks) * args.n_blocks;
        if (p.group_k == nullptr) {
          // BF16 with the sizes on the device: a small kernel fills the tables in the workspace
          // from the psum ends, then one launch per table of kMaxKGroups groups.
          if constexpr (kBf16) {
            // The templates: one-row maps at the operands' bases, with the tile's boxes.
            if (!group_maps(0, 0, 0, 1)) return cudaErrorInvalidValue;
            const KGroupDeviceSizes sizes{p.group_layout, p.groups,        p.alignment, p.k, p.a, p.lda * 2, p.b,
                                          p.ldb * 2,      T::kBlockKValues};
            cudaError_t st = build_k_group_tables(p.workspace, table.a[0], table.b[0], sizes, stream);
            if (st != cudaSuccess) return st;
            constexpr auto device_kernel = &sm90_bf16_gemm_k_grouped_device_kernel<kBlockM, kBlockN, kMajors>;
            st = smem_attribute_once<device_kernel>(T::kSmemBytes);
            if (st != cudaSuccess) return st;
            for (int first = 0, t = 0; first < p.groups; first += kMaxKGroups, ++t) {
              const int count = std::min(kMaxKGroups, p.groups - first);
              launch.gridDim = dim3(static_cast<unsigned>(
                  std::max<int64_t>(1, std::min<int64_t>(cfg.num_ctas, tiles_per_group * count))));
              const KGroupTable* table_t = k_group_table_at(p.workspace, t);
              st = cudaLaunchKernelEx(&launch, device_kernel, table_t, tm_d, args);
              if (st != cudaSuccess) return st;
            }
            return cudaSuccess;
          } else {
            return cudaErrorNotSupported;
          }
        }
        for (int g = 0; g <= p.groups; ++g) {
          const bool flush = table.count == kMaxKGroups || (g == p.groups && table.count > 0);
          if (flush) {
            launch.gridDim = dim3(static_cast<unsigned>(
                std::max<int64_t>(1, std::min<int64_t>(cfg.num_ctas, tiles_per_group * table.count))));
            const cudaError_t st = cudaLaunchKernelEx(&launch, table_kernel, table, tm_d, args);
            if (st != cudaSuccess) return st;
            table.count = 0;
          }
          if (g == p.groups) break;
          const int k = p.group_k[g];
          if (k == 0) continue;
          const int i = table.count++;
          if (!group_maps(i, p.a_offsets[g], p.b_offsets[g], k)) return cudaErrorInvalidValue;
          table.group[i] = g;
          table.k_blocks[i] = (k + T::kBlockKValues - 1) / T::kBlockKValues;
          table.sf_block0[i] = kBf16 ? 0 : p.sf_block0[g];
        }
        return cudaSuccess;
      }
    }
    if constexpr (kBf16 && kMajors == 0) {
      if (batch_sum) {
        auto* sum_kernel = &sm90_bf16_bmn_bnk_mn_gemm_impl<kBlockM, kBlockN>;
        static const cudaError_t sum_attr =
            cudaFuncSetAttribute(sum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
        if (sum_attr != cudaSuccess) return sum_attr;
        return cudaLaunchKernelEx(&launch, sum_kernel, tm_a, tm_b, tm_d, args);
      }
    }
    // Dense and M-grouped contiguous problems run the kernels whose consumers keep a uniform
    // schedule (FP8 with 128x128 SFB blocks, or BF16), and so do masked FP8 problems (unless
    // DG_GEMM_MASKED_SCHEDULE=0); the general kernel serves the rest, and all of them under
    // DG_GEMM_GENERAL_SCHEDULE=1 (a measuring switch).
    if constexpr (!kSfbPerRow) {
      if (!general_schedule_forced()) {
        // A kernel (a KernelConstant) launched, its shared memory set on its first launch.
        const auto launch_kernel = [&](auto kernel) -> cudaError_t {
          const cudaError_t attr = smem_attribute_once<decltype(kernel)::value>(T::kSmemBytes);
          if (attr != cudaSuccess) return attr;
          return cudaLaunchKernelEx(&launch, decltype(kernel)::value, tm_a, tm_b, tm_d, args);
        };
        if (dense_kernel) {
          if constexpr (kBf16) {
            return launch_kernel(KernelConstant<&sm90_bf16_gemm_dense_kernel<kBlockM, kBlockN, kMajors>>{});
          } else {
            if constexpr (kLeanable && has_lean_twin(kScheduleDense, kBlockM, kBlockN)) {
              if (lean_out) return launch_kernel(KernelConstant<&sm90_fp8_gemm_dense_lean_kernel<kBlockM, kBlockN>>{});
            }
            return launch_kernel(KernelConstant<&sm90_fp8_gemm_dense_kernel<kBlockM, kBlockN>>{});
          }
        }
        if constexpr (kBf16 && kLeanable) {
          // BF16 masked problems have no plain masked kernel: without the lean one, the general kernel.
          if (masked && lean_out && masked_schedule_chosen()) {
            return launch_kernel(KernelConstant<&sm90_bf16_gemm_m_grouped_masked_lean_kernel<kBlockM, kBlockN>>{});
          }
        }
        if constexpr (!kBf16) {
          if (masked_kernel) {
            if constexpr (kLeanable && has_lean_twin(kScheduleMasked, kBlockM, kBlockN)) {
              if (lean_out) {
                return launch_kernel(KernelConstant<&sm90_fp8_gemm_m_grouped_masked_lean_kernel<kBlockM, kBlockN>>{});
              }
            }
            return launch_kernel(KernelConstant<&sm90_fp8_gemm_m_grouped_masked_kernel<kBlockM, kBlockN>>{});
          }
        }
        if constexpr (!kMnA) {
          if (contiguous) {
            if constexpr (kBf16) {
              return launch_kernel(
                  KernelConstant<&sm90_bf16_gemm_m_grouped_contiguous_kernel<kBlockM, kBlockN, kMajors>>{});
            } else {
              if constexpr (kLeanable && has_lean_twin(kScheduleContiguous, kBlockM, kBlockN)) {
                if (lean_out) {
                  return launch_kernel(
                      KernelConstant<&sm90_fp8_gemm_m_grouped_contiguous_lean_kernel<kBlockM, kBlockN>>{});
                }
              }
              return launch_kernel(KernelConstant<&sm90_fp8_gemm_m_grouped_contiguous_kernel<kBlockM, kBlockN>>{});
            }
          }
        }
      }
    }
    auto* kernel = kernel_of<kBlockM, kBlockN, kSfbPerRow, kBf16, kMajors>();
    static const cudaError_t attr_status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    if (attr_status != cudaSuccess) return attr_status;
    return cudaLaunchKernelEx(&launch, kernel, tm_a, tm_b, tm_d, args);
  }
}

}  // namespace deep_gemm::cuda::gemm_detail
