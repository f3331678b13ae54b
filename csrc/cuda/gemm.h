#pragma once
// Native sm90a GEMMs, dense, M-grouped, batched and K-grouped: D = C + (A * SFA)(B * SFB)^T
// for block-scaled FP8, D = C + A B^T for BF16.
//
// A [M, K] and B [N, K] have K contiguous.  FP8 (e4m3): SFA holds one float32 per row of A
// and 128-wide K block; SFB one float32 per 128x128 block of B (gran_n 128) or per row of B
// and K block (gran_n 1); products accumulate in float32 per K block and are scaled into a
// float32 accumulator.  BF16: no scales, one float32 accumulation over K.  D is bf16 or
// float32 and C (optional, D's dtype) may be D itself.  Plain C++ interface: raw pointers,
// sizes, element strides, a stream.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace deep_gemm::cuda {

enum class OutDtype : int { kBf16 = 0, kFloat = 1 };
enum class InDtype : int { kFp8E4m3 = 0, kBf16 = 1 };

// How rows map to groups (the group picks B, SFB and, when masked, A's and D's block):
//   kDense   one group;
//   kRowIds  group_layout[m] holds each row's group; rows of no group (an id outside
//            [0, groups), e.g. -1) come out zero;
//   kPsum    group_layout[groups] holds each group's end row, group g starting at the
//            previous end rounded up to `alignment`; with zero_padding the rows between an
//            end and the next start come out zero;
//   kMasked  A, D are [groups, m, ...]; group g computes its first group_layout[g] rows.
//   kBatched D[g] = A[g] B[g]^T for every g: A, B, D (and the scales) have free group
//            strides a_group, b_group, d_group (sfa_group, sfb_group);
//   kKGrouped D[g] = C[g] + A_g B_g^T where A_g is [m, k_g] row-major at element
//            a_offsets[g] with row stride k_g (B_g likewise [n, k_g] at b_offsets[g]); the
//            sizes live on the host (group_k), the scales are per row and 128-wide K block
//            with group g's blocks starting at column sf_block0[g]; FP8 with sfb_gran_n 1,
//            or BF16 with both operands MN-major (A_g [k_g, m], B_g [k_g, n], no scales).
//            BF16 may leave the sizes on the device instead (group_k null): group_layout
//            then holds each group's end row as in kPsum (starts rounded up to
//            `alignment`), A and B are [k, m] and [k, n] (k: their rows, which clip the
//            ends), and `workspace` holds gemm_workspace_bytes(p) bytes for the per-group
//            tables a small kernel builds there;
//   kBatchSum D = C + sum_g A[g] B[g]^T (BF16): one accumulation over every g's K.
enum class GemmLayout : int {
  kDense = 0,
  kRowIds = 1,
  kPsum = 2,
  kMasked = 3,
  kBatched = 4,
  kKGrouped = 5,
  kBatchSum = 6
};

struct GemmProblem {
  int m = 0, n = 0, k = 0;
  InDtype ab_dtype = InDtype::kFp8E4m3;
  GemmLayout layout = GemmLayout::kDense;
  int groups = 1;  // B is [groups, n, k] with group stride n * ldb
  const int* group_layout = nullptr;  // device int32: ids, ends or masked_m (see above)
  int alignment = 128;
  bool zero_padding = false;
  int expected_m = 0;  // masked: typical rows per group, a scheduling hint
  int64_t a_group = 0, b_group = 0, d_group = 0;  // kBatched / kBatchSum (a, b) / kKGrouped (d) group strides
  const int* group_k = nullptr;  // kKGrouped: host array of the groups' K sizes
  const int64_t* a_offsets = nullptr;  // kKGrouped: host arrays, element offsets of A_g and B_g
  const int64_t* b_offsets = nullptr;
  const int* sf_block0 = nullptr;  // kKGrouped: host array, first scale column of each group
  const void* a = nullptr;  // [m, k] (masked: [groups * m, k]), row stride lda (elements)
  int64_t lda = 0;
  const void* b = nullptr;  // [n, k], row stride ldb
  int64_t ldb = 0;
  // BF16 only: A (B) MN-major, stored [k, m] ([k, n]) with the M (N) values contiguous and K
  // rows lda (ldb) apart; K-grouped: A_g is [k_g, m] at element a_offsets[g] (B_g likewise);
  // M-grouped (B only): group g's B at element g * b_group.
  bool a_mn_major = false, b_mn_major = false;
  const float* sfa = nullptr;  // sfa[group * sfa_group + row * sfa_mn + kb * sfa_k] (group: masked only)
  int64_t sfa_group = 0, sfa_mn = 0, sfa_k = 0;
  const float* sfb = nullptr;  // sfb[group * sfb_group + (col / sfb_gran_n) * sfb_mn + kb * sfb_k]
  int64_t sfb_group = 0, sfb_mn = 0, sfb_k = 0;
  int sfb_gran_n = 128;  // 128 or 1
  void* d = nullptr;  // [m, n], row stride ldd
  int64_t ldd = 0;
  OutDtype d_dtype = OutDtype::kBf16;
  const void* c = nullptr;  // optional, D's dtype, row stride ldc (group stride c_group); may be d
  int64_t ldc = 0, c_group = 0;
  int num_sms = 0;  // SMs the kernel may use
  void* workspace = nullptr;  // device memory of gemm_workspace_bytes(p) bytes (K-grouped, sizes on the device)
};

// One compiled kernel shape: BLOCK_M x BLOCK_N tiles (K blocks of 128).
struct GemmConfig {
  int block_m = 0, block_n = 0;
  int stages = 0;  // pipeline depth the kernel was compiled with
  int swizzle = 0;  // N-units per band of the tile order
  int num_ctas = 0;  // persistent CTAs launched (split K: clusters, each of `split` CTAs)
  int split = 1;  // CTAs per tile (a cluster), each summing a part of K
  int cast = 0;  // dense BF16 in multicast pairs: 1 sharing A, 2 sharing B (num_ctas: pairs)
  int l2_hints = 0;  // the operands' L2 policies (KernelArgs::l2_hints; Note [L2 policies])
};

// Why the kernel cannot run this problem (alignment, sizes), or an empty string.
std::string gemm_unsupported(const GemmProblem& p);

// The configuration the launcher will use: a pure function of the problem's shape, SFB
// granularity, output dtype, group layout and num_sms (and of DG_SM90_GEMM_CONFIG=BMxBN, BMxBNs2, BMxBNma or BMxBNmb
// when set, a tuning override).
GemmConfig gemm_config(const GemmProblem& p);

// Device memory the problem needs in `workspace` (0 for all but K-grouped problems whose sizes
// live on the device: their per-group tables, about 17 KB per 64 groups).
size_t gemm_workspace_bytes(const GemmProblem& p);

// Enqueues the GEMM on `stream`.  No host synchronisation, no allocation.
cudaError_t gemm(const GemmProblem& p, cudaStream_t stream);

}  // namespace deep_gemm::cuda
