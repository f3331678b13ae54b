#pragma once
// CUDA builds: the dense, M-grouped and K-grouped FP8 GEMMs, the M-grouped BF16 GEMMs and
// the batched einsum forms on the native sm90a kernel (csrc/cuda/gemm.h).
// This header turns checked ATen arguments into the kernel's plain problem description;
// it returns false for what the kernel does not serve (see docs/gpu.md, "Native FP8 GEMM kernel"),
// and the caller then takes the next path.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "apis/runtime.hpp"
#include "cuda/gemm.h"
#include "reference/scaled.hpp"
#include "utils/error.hpp"

namespace deep_gemm::gemm_cuda {

inline bool is_sm90() {
  static const bool value = runtime::device_arch_major() == 9;
  return value;
}

// Row stride of a K-major operand viewed as 2-D rows (3-D ones must be packed across groups).
inline bool row_stride(const at::Tensor& t, int64_t& ld) {
  if (t.stride(-1) != 1 && t.size(-1) > 1) return false;
  if (t.dim() == 3 && t.size(0) > 1 && t.stride(0) != t.size(1) * t.stride(1)) return false;
  ld = t.stride(-2);
  return true;
}

// The operands, scales and output of `p` from FP8 e4m3 data (2-D, or 3-D group-major) with
// float32 scales per 1x128 (A) and 128x128 or 1x128 (B) blocks.  False when the kernel does
// not serve them.
inline bool fill_operands(cuda::GemmProblem& p, const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b,
                          const at::Tensor& sfb, const scaled::Recipes& recipes, const at::Tensor& d,
                          const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kFloat8_e4m3fn || b.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (sfa.scalar_type() != at::kFloat || sfb.scalar_type() != at::kFloat) return false;
  if (recipes.a.mn != 1 || recipes.a.k != 128 || recipes.b.k != 128) return false;
  if (!row_stride(a, p.lda) || !row_stride(b, p.ldb) || !row_stride(d, p.ldd)) return false;
  if (c.has_value() && !row_stride(*c, p.ldc)) return false;
  if (a.size(-1) > INT32_MAX || a.size(-2) > INT32_MAX || b.size(-2) > INT32_MAX) return false;
  p.k = static_cast<int>(a.size(-1));
  p.n = static_cast<int>(b.size(-2));
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.sfa = sfa.data_ptr<float>();
  p.sfa_group = sfa.dim() == 3 ? sfa.stride(0) : 0;
  p.sfa_mn = sfa.stride(-2);
  p.sfa_k = sfa.stride(-1);
  p.sfb = sfb.data_ptr<float>();
  p.sfb_group = sfb.dim() == 3 ? sfb.stride(0) : 0;
  p.sfb_mn = sfb.stride(-2);
  p.sfb_k = sfb.stride(-1);
  p.sfb_gran_n = recipes.b.mn;
  p.d = d.data_ptr();
  p.d_dtype = d.scalar_type() == at::kFloat ? cuda::OutDtype::kFloat : cuda::OutDtype::kBf16;
  if (c.has_value()) p.c = c->data_ptr();
  return true;
}

// BF16 A and B (2-D, or 3-D group-major), K contiguous; no scales.
// B [G, N, K] with N contiguous (the NN forms' [G, K, N] argument, viewed): an MN-major operand
// whose K rows lie ldb elements apart and whose groups b_group apart.
inline bool mn_major_b(cuda::GemmProblem& p, const at::Tensor& b) {
  if (b.dim() != 3 || b.stride(1) != 1 || (b.size(2) > 1 && b.stride(2) == 1)) return false;
  p.b_mn_major = true;
  p.ldb = b.stride(2);
  p.b_group = b.stride(0);
  return true;
}

inline bool fill_bf16_operands(cuda::GemmProblem& p, const at::Tensor& a, const at::Tensor& b, const at::Tensor& d) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kBFloat16 || b.scalar_type() != at::kBFloat16) return false;
  if (!row_stride(a, p.lda) || !(row_stride(b, p.ldb) || mn_major_b(p, b)) || !row_stride(d, p.ldd)) return false;
  if (a.size(-1) > INT32_MAX || b.size(-2) > INT32_MAX) return false;
  p.ab_dtype = cuda::InDtype::kBf16;
  p.k = static_cast<int>(a.size(-1));
  p.n = static_cast<int>(b.size(-2));
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.d = d.data_ptr();
  p.d_dtype = d.scalar_type() == at::kFloat ? cuda::OutDtype::kFloat : cuda::OutDtype::kBf16;
  return true;
}

inline bool launch(cuda::GemmProblem& p, const at::Tensor& d) {
  const c10::cuda::CUDAGuard guard(d.device());
  p.num_sms = runtime::get_num_sms();
  if (!cuda::gemm_unsupported(p).empty()) return false;
  const cudaError_t status = cuda::gemm(p, at::cuda::getCurrentCUDAStream());
  if (status != cudaSuccess) {
    fail_unsupported(std::string("the sm90a FP8 GEMM kernel failed: ") + cudaGetErrorString(status));
  }
  return true;
}

// D = C + (A * SFA)(B * SFB)^T on the native kernel.
inline bool fp8_gemm(const scaled::Operand& A, const scaled::Operand& B, const scaled::Recipes& recipes,
                     const at::Tensor& d, const std::optional<at::Tensor>& c) {
  cuda::GemmProblem p;
  if (!fill_operands(p, A.data, A.sf, B.data, B.sf, recipes, d, c) || A.mn > INT32_MAX) return false;
  p.m = static_cast<int>(A.mn);
  return launch(p, d);
}

// Whether the environment variable `name` is "1" (callers read it once, into a static).
inline bool env_switch(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && env[0] == '1';
}

// DG_BF16_GEMM_NATIVE=1: dense BF16 on the native kernel instead of cuBLAS (a measuring switch).
inline bool bf16_dense_native() {
  static const bool value = env_switch("DG_BF16_GEMM_NATIVE");
  return value;
}

// Whether a 2-D operand [rows, K] is MN-major (rows contiguous, K rows ld apart).
inline bool mn_major_2d(const at::Tensor& t) {
  return t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 && t.stride(1) != 1;
}

// Dense BF16: D = C + A B^T, A [M, K] and B [N, K], D bf16 or float32.  K-major operands, an
// MN-major B (the NN form), or both MN-major (TN); an MN-major A alone (TT) is not compiled.
inline bool bf16_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                      const std::optional<at::Tensor>& c) {
  cuda::GemmProblem p;
  const bool a_mn = mn_major_2d(a), b_mn = mn_major_2d(b);
  if (a_mn && !b_mn) return false;
  // An MN-major A is filled as a K-major one of its transposed view, then described as MN-major.
  if (!fill_bf16_operands(p, a_mn ? a.t() : a, b_mn ? b.unsqueeze(0) : b, d) || p.b_mn_major != b_mn ||
      a.size(0) > INT32_MAX) {
    return false;
  }
  if (a_mn) {
    p.a = a.data_ptr();
    p.a_mn_major = true;
    p.lda = a.stride(1);
    p.k = static_cast<int>(a.size(1));
  }
  p.b_group = 0;  // one group
  if (c.has_value()) {
    if (!row_stride(*c, p.ldc)) return false;
    p.c = c->data_ptr();
  }
  p.m = static_cast<int>(a.size(0));
  return launch(p, d);
}

inline bool contiguous_layout(cuda::GemmProblem& p, const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                              const at::Tensor& layout, bool use_psum_layout, bool ensure_zero_padding) {
  if (!layout.is_contiguous() || a.size(0) > INT32_MAX || b.size(0) > INT32_MAX) return false;
  p.m = static_cast<int>(a.size(0));
  p.groups = static_cast<int>(b.size(0));
  p.layout = use_psum_layout ? cuda::GemmLayout::kPsum : cuda::GemmLayout::kRowIds;
  p.group_layout = layout.data_ptr<int>();
  p.alignment = runtime::settings().mk_alignment;
  p.zero_padding = use_psum_layout && ensure_zero_padding;
  return launch(p, d);
}

inline bool masked_layout(cuda::GemmProblem& p, const at::Tensor& a, const at::Tensor& d, const at::Tensor& masked_m,
                          int expected_m) {
  if (!masked_m.is_contiguous() || a.size(0) > INT32_MAX || a.size(1) > INT32_MAX) return false;
  p.m = static_cast<int>(a.size(1));
  p.groups = static_cast<int>(a.size(0));
  p.layout = cuda::GemmLayout::kMasked;
  p.group_layout = masked_m.data_ptr<int>();
  p.expected_m = expected_m;
  return launch(p, d);
}

// M-grouped contiguous: A [M, K], B [G, N, K], D [M, N] bf16; `layout` holds per-row group
// ids or (psum) the groups' end rows, int32 on the device.
inline bool m_grouped_contiguous(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                                 const scaled::Recipes& recipes, const at::Tensor& d, const at::Tensor& layout,
                                 bool use_psum_layout, bool ensure_zero_padding) {
  cuda::GemmProblem p;
  return fill_operands(p, a, sfa, b, sfb, recipes, d, std::nullopt) &&
         contiguous_layout(p, a, b, d, layout, use_psum_layout, ensure_zero_padding);
}

// M-grouped masked: A [G, max_m, K], B [G, N, K], D [G, max_m, N] bf16; group g computes its
// first masked_m[g] rows (int32 on the device).
inline bool m_grouped_masked(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                             const scaled::Recipes& recipes, const at::Tensor& d, const at::Tensor& masked_m,
                             int expected_m) {
  cuda::GemmProblem p;
  return fill_operands(p, a, sfa, b, sfb, recipes, d, std::nullopt) && masked_layout(p, a, d, masked_m, expected_m);
}

// The BF16 forms of the two above.
inline bool m_grouped_bf16_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                      const at::Tensor& layout, bool use_psum_layout, bool ensure_zero_padding) {
  cuda::GemmProblem p;
  return fill_bf16_operands(p, a, b, d) && contiguous_layout(p, a, b, d, layout, use_psum_layout, ensure_zero_padding);
}

inline bool m_grouped_bf16_masked(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                  const at::Tensor& masked_m, int expected_m) {
  cuda::GemmProblem p;
  return fill_bf16_operands(p, a, b, d) && masked_layout(p, a, d, masked_m, expected_m);
}

// The K-grouped part of `p`, shared by both element types: D and C float32 [G, m, n]
// (contiguous; a separate C is copied into D), each group's K, and its A and B blocks at element
// starts[g] * a_row and starts[g] * b_row (a_row, b_row: the elements of one K row).  `host`
// keeps the arrays `p` points to.  False when the sizes leave int32.
struct KGroupedHost {
  std::vector<int> group_k;
  std::vector<int64_t> a_offsets, b_offsets;
};
// The K-grouped layout and output of `p` (k: the K extent, a total or a bound); false when the
// sizes leave int32 or D and C are not contiguous.
inline bool fill_k_grouped_output(cuda::GemmProblem& p, const at::Tensor& d, const at::Tensor& c, int64_t k) {
  if (!d.is_contiguous() || !c.is_contiguous()) return false;
  const int64_t m = d.size(1), n = d.size(2), groups = d.size(0);
  if (m > INT32_MAX || n > INT32_MAX || groups > INT32_MAX || k > INT32_MAX) return false;
  p.layout = cuda::GemmLayout::kKGrouped;
  p.groups = static_cast<int>(groups);
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.d = d.data_ptr();
  p.ldd = d.stride(1);
  p.d_group = d.stride(0);
  p.d_dtype = cuda::OutDtype::kFloat;
  p.c = c.data_ptr();
  p.ldc = c.stride(1);
  p.c_group = c.stride(0);
  return true;
}

inline bool fill_k_grouped(cuda::GemmProblem& p, KGroupedHost& host, const at::Tensor& d, const at::Tensor& c,
                           const std::vector<int64_t>& ks, const std::vector<int64_t>& starts, int64_t a_row,
                           int64_t b_row) {
  int64_t total_k = 0;
  for (const int64_t k : ks) total_k += k;
  if (!fill_k_grouped_output(p, d, c, total_k)) return false;
  for (size_t g = 0; g < ks.size(); ++g) {
    host.group_k.push_back(static_cast<int>(ks[g]));
    host.a_offsets.push_back(starts[g] * a_row);
    host.b_offsets.push_back(starts[g] * b_row);
  }
  p.group_k = host.group_k.data();
  p.a_offsets = host.a_offsets.data();
  p.b_offsets = host.b_offsets.data();
  return true;
}

// K-grouped, K-major FP8: D[g] = C[g] + (A_g * SFA_g)(B_g * SFB_g)^T with A_g [m, k_g] at
// element starts[g] * m of the flat `a` (B_g likewise), per-row scales sfa [m, blocks] and
// sfb [n, blocks] whose group g starts at column block0[g]; d and c float32 [G, m, n].  The
// sizes are host values: the kernel's per-group operand maps are built from them.
inline bool k_grouped_fp8_nt(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                             const at::Tensor& d, const at::Tensor& c, const std::vector<int64_t>& ks,
                             const std::vector<int64_t>& starts, const std::vector<int64_t>& block0) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kFloat8_e4m3fn || b.scalar_type() != at::kFloat8_e4m3fn) return false;
  if (sfa.scalar_type() != at::kFloat || sfb.scalar_type() != at::kFloat || d.scalar_type() != at::kFloat) {
    return false;
  }
  // Flat operands with unit stride: group g's A_g [m, k_g] is packed, so a K row is m elements.
  if ((a.numel() > 1 && a.stride(0) != 1) || (b.numel() > 1 && b.stride(0) != 1)) return false;
  cuda::GemmProblem p;
  KGroupedHost host;
  if (!fill_k_grouped(p, host, d, c, ks, starts, d.size(1), d.size(2))) return false;
  std::vector<int> sf_block0;
  for (const int64_t b0 : block0) sf_block0.push_back(static_cast<int>(b0));
  p.sf_block0 = sf_block0.data();
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.sfa = sfa.data_ptr<float>();
  p.sfa_mn = sfa.stride(0);
  p.sfa_k = sfa.stride(1);
  p.sfb = sfb.data_ptr<float>();
  p.sfb_mn = sfb.stride(0);
  p.sfb_k = sfb.stride(1);
  p.sfb_gran_n = 1;
  return launch(p, d);
}

// k_grouped_bf16_gemm_tn: D[g] = C[g] + A_g^T B_g with A_g = a[start_g : start_g + k_g] ([k_g, M],
// M contiguous) and B_g likewise from b [sum k, N]: MN-major operands, float32 D [G, M, N].
inline bool k_grouped_bf16_tn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, const at::Tensor& c,
                              const std::vector<int64_t>& ks, const std::vector<int64_t>& starts) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kBFloat16 || b.scalar_type() != at::kBFloat16 || d.scalar_type() != at::kFloat) {
    return false;
  }
  if ((a.size(1) > 1 && a.stride(1) != 1) || (b.size(1) > 1 && b.stride(1) != 1)) return false;
  cuda::GemmProblem p;
  KGroupedHost host;
  if (!fill_k_grouped(p, host, d, c, ks, starts, a.stride(0), b.stride(0))) return false;
  p.ab_dtype = cuda::InDtype::kBf16;
  p.a_mn_major = p.b_mn_major = true;
  p.a = a.data_ptr();
  p.lda = a.stride(0);
  p.b = b.data_ptr();
  p.ldb = b.stride(0);
  return launch(p, d);
}

// k_grouped_bf16_gemm_tn_contiguous with the psum layout and no ks_cpu reads its group sizes on
// the device (k_grouped_bf16_tn_device_sizes); DG_K_GROUPED_DEVICE_SIZES=0 (read once) reads them
// on the host instead, where bad ends raise rather than clip.
inline bool k_grouped_device_sizes_enabled() {
  static const bool value = [] {
    const char* env = std::getenv("DG_K_GROUPED_DEVICE_SIZES");
    return env == nullptr || env[0] != '0';
  }();
  return value;
}

// k_grouped_bf16_gemm_tn with the groups' end rows in `ends` (device int32 [G], the psum
// layout: group g is rows [align(ends[g - 1], alignment), ends[g]) of a and b, clipped to their
// rows): no host read, the per-group operand maps are built on the device in a workspace of a
// few KB.  a [K, M] and b [K, N] with the same rows; d and c float32 [G, M, N].
inline bool k_grouped_bf16_tn_device_sizes(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                           const at::Tensor& c, const at::Tensor& ends, int alignment) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kBFloat16 || b.scalar_type() != at::kBFloat16 || d.scalar_type() != at::kFloat) {
    return false;
  }
  if ((a.size(1) > 1 && a.stride(1) != 1) || (b.size(1) > 1 && b.stride(1) != 1)) return false;
  if (!ends.is_contiguous()) return false;
  cuda::GemmProblem p;
  if (!fill_k_grouped_output(p, d, c, std::min(a.size(0), b.size(0)))) return false;
  p.ab_dtype = cuda::InDtype::kBf16;
  p.a_mn_major = p.b_mn_major = true;
  p.group_layout = ends.data_ptr<int>();
  p.alignment = alignment;
  p.a = a.data_ptr();
  p.lda = a.stride(0);
  p.b = b.data_ptr();
  p.ldb = b.stride(0);
  // The tables live until the kernels that read them have run: the caching allocator hands
  // this block to later work on the same stream only.
  const auto workspace = at::empty({static_cast<int64_t>(cuda::gemm_workspace_bytes(p))},
                                   at::TensorOptions().dtype(at::kByte).device(d.device()));
  p.workspace = workspace.data_ptr();
  return launch(p, d);
}

// Per head h: D[:, h, :] = A[:, h, :] B[h]^T, A [b, h, k], B [h, n, k], D [b, h, n] with the
// last dims contiguous and the other strides free: a batched problem over the heads.  With
// b_mn_major, B is [h, k, n] ('bhd,hdr->bhr': y[h] is [d, r], r contiguous) and D[:, h, :] =
// A[:, h, :] B[h].
inline bool fill_heads(cuda::GemmProblem& p, const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                       bool b_mn_major = false) {
  if (a.stride(2) != 1 || b.stride(2) != 1 || d.stride(2) != 1) return false;
  const int64_t n = b.size(b_mn_major ? 2 : 1);
  if (a.size(0) > INT32_MAX || a.size(1) > INT32_MAX || a.size(2) > INT32_MAX || n > INT32_MAX) return false;
  p.layout = cuda::GemmLayout::kBatched;
  p.b_mn_major = b_mn_major;
  p.groups = static_cast<int>(a.size(1));
  p.m = static_cast<int>(a.size(0));
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(a.size(2));
  p.a = a.data_ptr();
  p.lda = a.stride(0);
  p.a_group = a.stride(1);
  p.b = b.data_ptr();
  p.ldb = b.stride(1);
  p.b_group = b.stride(0);
  p.d = d.data_ptr();
  p.ldd = d.stride(0);
  p.d_group = d.stride(1);
  p.d_dtype = cuda::OutDtype::kBf16;
  return true;
}

// einsum 'bhr,hdr->bhd' in BF16 (d bf16), or with b_mn_major 'bhd,hdr->bhr'.
inline bool bf16_heads(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d, bool b_mn_major = false) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kBFloat16 || b.scalar_type() != at::kBFloat16 || d.scalar_type() != at::kBFloat16) {
    return false;
  }
  cuda::GemmProblem p;
  p.ab_dtype = cuda::InDtype::kBf16;
  return fill_heads(p, a, b, d, b_mn_major) && launch(p, d);
}

// fp8_einsum 'bhr,hdr->bhd': SFA [b, h, ceil(k/128)], SFB [h, ceil(n/gran_n), ceil(k/128)].
inline bool fp8_heads(const at::Tensor& a, const at::Tensor& sfa, const at::Tensor& b, const at::Tensor& sfb,
                      int gran_n, const at::Tensor& d) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kFloat8_e4m3fn || b.scalar_type() != at::kFloat8_e4m3fn ||
      sfa.scalar_type() != at::kFloat || sfb.scalar_type() != at::kFloat || d.scalar_type() != at::kBFloat16) {
    return false;
  }
  if (gran_n != 1 && gran_n != 128) return false;
  cuda::GemmProblem p;
  if (!fill_heads(p, a, b, d)) return false;
  p.sfa = sfa.data_ptr<float>();
  p.sfa_group = sfa.stride(1);
  p.sfa_mn = sfa.stride(0);
  p.sfa_k = sfa.stride(2);
  p.sfb = sfb.data_ptr<float>();
  p.sfb_group = sfb.stride(0);
  p.sfb_mn = sfb.stride(1);
  p.sfb_k = sfb.stride(2);
  p.sfb_gran_n = gran_n;
  return launch(p, d);
}

// einsum 'bmk,bnk->mn': D = C + sum_b A[b] B[b]^T, A [s, m, k], B [s, n, k] and D [m, n]
// contiguous; a float32 d with c (d itself or separate), a bf16 d without.
inline bool bf16_batch_sum(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                           const std::optional<at::Tensor>& c) {
  if (!d.is_cuda() || !is_sm90()) return false;
  if (a.scalar_type() != at::kBFloat16 || b.scalar_type() != at::kBFloat16) return false;
  if (!a.is_contiguous() || !b.is_contiguous() || !d.is_contiguous()) return false;
  if (c.has_value() && c->stride(1) != 1 && c->size(1) > 1) return false;
  if (a.size(0) > INT32_MAX || a.size(1) > INT32_MAX || a.size(2) > INT32_MAX || b.size(1) > INT32_MAX) return false;
  cuda::GemmProblem p;
  p.ab_dtype = cuda::InDtype::kBf16;
  p.layout = cuda::GemmLayout::kBatchSum;
  p.groups = static_cast<int>(a.size(0));
  p.m = static_cast<int>(a.size(1));
  p.n = static_cast<int>(b.size(1));
  p.k = static_cast<int>(a.size(2));
  p.a = a.data_ptr();
  p.lda = a.stride(1);
  p.a_group = a.stride(0);
  p.b = b.data_ptr();
  p.ldb = b.stride(1);
  p.b_group = b.stride(0);
  p.d = d.data_ptr();
  p.ldd = d.stride(0);
  p.d_dtype = d.scalar_type() == at::kFloat ? cuda::OutDtype::kFloat : cuda::OutDtype::kBf16;
  if (c.has_value()) {
    p.c = c->data_ptr();
    p.ldc = c->stride(0);
  }
  return launch(p, d);
}

}  // namespace deep_gemm::gemm_cuda
