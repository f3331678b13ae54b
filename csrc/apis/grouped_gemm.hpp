#pragma once
// Grouped GEMMs of the gemm family: M-grouped (contiguous and masked) and
// K-grouped (weight-gradient) products with block-scaled FP8/FP4 or BF16
// operands (one of the gemm family's headers in ops.yaml).  Over 400 lines: the M- and
// K-grouped forms share the layout helpers at the top of this file.
//
// This is the reference (ATen) implementation: it accumulates in float32 and
// casts once into `d`, after every check has passed.
//
// Note [Grouped layouts without host reads]
// The group structure of the M-grouped ops lives on the device (grouped_layout,
// masked_m).  Instead of reading it back, each op computes the product of every
// one of the G groups (G is a host-side size: the groups of `b`) and picks, row
// by row, the one that row belongs to with device-side masks.  That costs G
// times the arithmetic of a real grouped kernel, but never synchronises with the
// host, so the ops stay CUDA-graph safe.  Values that fit no group (an id
// outside [0, G), a row past a group's end) select no product, so out-of-range
// input cannot index out of bounds; such rows are simply not written.
// The K-grouped ops take their sizes from the host list ks_cpu; only with
// use_psum_layout and no ks_cpu do they read grouped_layout on the host.  On sm90 the
// K-major FP8 form (k_grouped_fp8_gemm_nt_contiguous) and the BF16 form run on the native
// kernel, which builds per-group operand maps from those host sizes; the MN-major FP8 form
// stays here.  The BF16 form's psum layout without ks_cpu skips the host read on sm90 (unless
// DG_K_GROUPED_DEVICE_SIZES=0): a small kernel builds the maps from grouped_layout on the device.

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apis/gemm.hpp"
#include "apis/runtime.hpp"
#include "reference/output.hpp"
#include "reference/quant.hpp"
#include "reference/scaled.hpp"
#include "utils/checks.hpp"
#include "utils/math.hpp"

namespace deep_gemm::gemm {

namespace grouped {

// ---- M-grouped operands ------------------------------------------------------

// One block-scaled operand per group: data [G, mn, k] (FP8, or FP4 packed along
// its contiguous dim) and scales [G, ...] laid out as for a dense operand.
struct Batched {
  at::Tensor data;
  at::Tensor sf;
  const char* data_arg;
  const char* sf_arg;
  int64_t groups;
  int64_t mn;
  int64_t k;
};

inline Batched check_batched(const Pair& pair, const char* data_arg, const char* sf_arg) {
  const auto& [data, sf] = pair;
  checks::dtype(data, data_arg, {at::kFloat8_e4m3fn, at::kChar});
  checks::dim(data, data_arg, 3);
  checks::major(data, data_arg);
  checks::dtype(sf, sf_arg, {at::kFloat, at::kInt});
  checks::dim(sf, sf_arg, 3);
  int64_t mn = data.size(1), k = data.size(2);
  if (quant::is_fp4(data)) {
    (checks::is_k_major(data) ? k : mn) *= 2;
  }
  return {data, sf, data_arg, sf_arg, data.size(0), mn, k};
}

inline void check_batched_scale_shape(const Batched& x, const scaled::Granularity& g) {
  DG_CHECK_ARG(x.sf.size(0) == x.groups, x.sf_arg, "has ", x.sf.size(0), " groups in dim 0, but '", x.data_arg,
               "' has ", x.groups);
  const int64_t groups_k = ceil_div<int64_t>(x.k, g.k);
  if (x.sf.scalar_type() == at::kInt) {
    DG_CHECK_ARG(g.mn == 1, x.sf_arg, "is packed UE8M0, which needs MN granularity 1, but the recipe gives ", g.mn);
    const int64_t words = ceil_div<int64_t>(groups_k, 4);
    DG_CHECK_ARG(x.sf.size(1) == x.mn && x.sf.size(2) == words, x.sf_arg, "must have shape [", x.groups, ", ", x.mn,
                 ", ", words, "] (packed UE8M0, K granularity ", g.k, "), got ", x.sf.sizes());
  } else {
    const int64_t rows = ceil_div<int64_t>(x.mn, g.mn);
    DG_CHECK_ARG(x.sf.size(1) == rows && x.sf.size(2) == groups_k, x.sf_arg, "must have shape [", x.groups, ", ", rows,
                 ", ", groups_k, "] for granularity (", g.mn, ", ", g.k, "), got ", x.sf.sizes());
  }
}

// Packed UE8M0 [.., w] -> float32 [.., 4w], from a copy with default strides:
// is_contiguous() ignores size-1 dims, so a [mn, 1] MN-major tensor counts as
// contiguous yet has stride(-1) != 1, which the int32 -> byte view rejects.
inline at::Tensor unpack_ue8m0(const at::Tensor& packed) {
  return quant::unpack_ue8m0(at::empty(packed.sizes(), packed.options()).copy_(packed));
}

// Scales [.., ceil(mn/g_mn), ceil(k/g_k)] (float32) or packed UE8M0 [.., mn, words]
// -> float32 [.., mn, k], one scale per element (any number of leading dims).
inline at::Tensor expand_scales(const at::Tensor& sf, int64_t mn, int64_t k, int gran_mn, int gran_k) {
  const at::Tensor per_block =
      sf.scalar_type() == at::kInt ? unpack_ue8m0(sf).narrow(-1, 0, ceil_div<int64_t>(k, gran_k)) : sf.to(at::kFloat);
  return per_block.repeat_interleave(gran_mn, -2).narrow(-2, 0, mn).repeat_interleave(gran_k, -1).narrow(-1, 0, k);
}

// float32 [G, mn, k]: data times its scale.
inline at::Tensor dequantize(const Batched& x, const scaled::Granularity& g) {
  return quant::data_to_float(x.data) * expand_scales(x.sf, x.mn, x.k, g.mn, g.k);
}

// [G, K, N]-style argument given for an NN op: checked to be 3-D, then viewed as [G, N, K].
inline at::Tensor t3(const at::Tensor& x, const char* arg) {
  checks::dim(x, arg, 3);
  return x.transpose(1, 2);
}
inline Pair t3(const Pair& x, const char* data_arg, const char* sf_arg) {
  return {t3(x.first, data_arg), t3(x.second, sf_arg)};
}

// ---- M-grouped contiguous layout ---------------------------------------------

// Which rows of a [M, ...] contiguous layout belong to which of the G groups.
struct RowGroups {
  at::Tensor member;  // bool [M, G]: row r belongs to group g
  at::Tensor padding;  // bool [M]: rows written as zero (undefined when none)
};

inline void check_contiguous_layout(const at::Tensor& layout, int64_t m, int64_t groups, bool use_psum_layout,
                                    const std::optional<int>& expected_m_for_psum_layout) {
  checks::dtype(layout, "grouped_layout", {at::kInt});
  checks::dim(layout, "grouped_layout", 1);
  if (use_psum_layout) {
    DG_CHECK_ARG(layout.size(0) == groups, "grouped_layout",
                 "must hold one end row per group with use_psum_layout=True (", groups,
                 " entries, the groups of 'b'), got ", layout.size(0));
  } else {
    DG_CHECK_ARG(layout.size(0) == m, "grouped_layout", "must hold one group id per row of 'a' (", m, " entries), got ",
                 layout.size(0));
  }
  if (expected_m_for_psum_layout.has_value()) {
    DG_CHECK_ARG(use_psum_layout, "expected_m_for_psum_layout", "is only allowed with use_psum_layout=True");
    checks::non_negative(*expected_m_for_psum_layout, "expected_m_for_psum_layout");
  }
}

// A row-id layout puts row r in group layout[r]; rows whose id lies outside [0, G)
// (the -1 padding rows) are in no group and always come out zero.  Group g of a psum
// layout covers [align(end[g-1], alignment), end[g]); the rows
// [end[g], align(end[g], alignment)) after it are its padding, zeroed only with
// ensure_zero_padding.  All on the device.
inline RowGroups row_groups(const at::Tensor& layout, int64_t m, int64_t groups, bool use_psum_layout,
                            bool ensure_zero_padding) {
  const auto opts = layout.options().dtype(at::kLong);
  const auto values = layout.to(at::kLong);
  if (!use_psum_layout) {
    const auto member = values.unsqueeze(1) == at::arange(groups, opts).unsqueeze(0);
    return {member, member.any(1).logical_not()};
  }
  const int64_t alignment = runtime::settings().mk_alignment;
  const auto round_up = [&](const at::Tensor& x) {
    return at::floor_divide(x + (alignment - 1), alignment) * alignment;
  };
  const auto prev_ends = at::cat({at::zeros({1}, opts), values}).narrow(0, 0, groups);
  const auto starts = round_up(prev_ends).unsqueeze(0);
  const auto ends = values.unsqueeze(0);
  const auto rows = at::arange(m, opts).unsqueeze(1);
  RowGroups out{at::logical_and(rows >= starts, rows < ends), at::Tensor()};
  if (ensure_zero_padding) {
    out.padding = at::logical_and(rows >= ends, rows < round_up(ends)).any(1);
  }
  return out;
}

// d [M, N] <- for each row, the product of its group (float32 a_f [M, K] times
// b_f[g]^T); `rows.padding` rows become zero, any other row of no group keeps its value.
//
// On the CPU the products are summed in float64 and rounded once to float32
// (then to d's dtype): the float32 accumulation the op's doc asks for, correctly
// rounded, so the result depends neither on BLAS's summation order nor on its
// thread count, and an MoE layer built from these GEMMs gives the same bits as
// the fused Mega MoE, which rounds the same way.  The dequantised operands are
// exact in float32, so widening them loses nothing.  On CUDA, float32.
inline void write_contiguous(const at::Tensor& d, const at::Tensor& a_f, const at::Tensor& b_f, const RowGroups& rows) {
  const int64_t groups = b_f.size(0);
  const auto acc = d.is_cuda() ? at::kFloat : at::kDouble;
  const auto a_acc = a_f.to(acc), b_acc = b_f.to(acc);
  auto result = at::zeros({d.size(0), d.size(1)}, d.options().dtype(acc));
  for (int64_t g = 0; g < groups; ++g) {
    result = at::where(rows.member.select(1, g).unsqueeze(1), at::matmul(a_acc, b_acc[g].t()), result);
  }
  const auto covered = rows.member.any(1);
  auto out = at::where(covered.unsqueeze(1), result.to(at::kFloat).to(d.scalar_type()), d);
  if (rows.padding.defined()) {
    const auto zero_rows = at::logical_and(rows.padding, covered.logical_not());
    out = at::where(zero_rows.unsqueeze(1), at::zeros({}, d.options()), out);
  }
  d.copy_(out);
}

// ---- M-grouped masked layout ----------------------------------------------------

inline void check_masked(const at::Tensor& masked_m, int64_t groups, int expected_m, const at::Tensor& d) {
  checks::dtype(masked_m, "masked_m", {at::kInt});
  checks::dim(masked_m, "masked_m", 1);
  checks::same_device(masked_m, "masked_m", d, "d");
  DG_CHECK_ARG(masked_m.size(0) == groups, "masked_m", "must hold one row count per group (", groups, " entries), got ",
               masked_m.size(0));
  DG_CHECK_ARG(expected_m > 0, "expected_m", "must be positive (a hint of the typical rows per group), got ",
               expected_m);
}

// d [G, max_m, N] <- product [G, max_m, N] (float32) on the rows r < masked_m[g]; the rest keep their value.
inline void write_masked(const at::Tensor& d, const at::Tensor& masked_m, const at::Tensor& product) {
  const auto rows = at::arange(d.size(1), masked_m.options().dtype(at::kLong)).unsqueeze(0);
  const auto keep = rows < masked_m.to(at::kLong).unsqueeze(1);
  d.copy_(at::where(keep.unsqueeze(2), product.to(d.scalar_type()), d));
}

// ---- K-grouped layout ---------------------------------------------------------

// Sizes and row offsets of the K groups.  Group g's rows are [start[g], start[g] + k[g]);
// start[g] is the end of group g-1 rounded up to the contiguous-layout alignment
// (without psum every k is aligned, so the groups simply follow each other).
struct KGroups {
  std::vector<int64_t> ks;
  std::vector<int64_t> starts;
  int64_t end = 0;  // one past the last row of the last group
};

// grouped_layout of a K-grouped op: int32, one entry per group.
inline void check_k_layout(const at::Tensor& layout, int64_t groups) {
  checks::dtype(layout, "grouped_layout", {at::kInt});
  checks::dim(layout, "grouped_layout", 1);
  DG_CHECK_ARG(layout.size(0) == groups, "grouped_layout", "must hold one entry per group (", groups,
               ", the groups of 'd'), got ", layout.size(0));
}

inline KGroups resolve_k_groups(const std::optional<std::vector<int>>& ks_cpu, const at::Tensor& layout, int64_t groups,
                                bool use_psum_layout) {
  check_k_layout(layout, groups);
  const int64_t alignment = runtime::settings().mk_alignment;
  KGroups out;
  const bool have_ks = ks_cpu.has_value() && !ks_cpu->empty();
  if (have_ks) {
    DG_CHECK_ARG(static_cast<int64_t>(ks_cpu->size()) == groups, "ks_cpu", "has ", ks_cpu->size(),
                 " entries but 'd' has ", groups, " groups");
    for (const int k : *ks_cpu) {
      DG_CHECK_ARG(k >= 0, "ks_cpu", "entries must be non-negative, got ", k);
      DG_CHECK_ARG(use_psum_layout || k % alignment == 0, "ks_cpu",
                   "entries must be multiples of get_mk_alignment_for_contiguous_layout() (", alignment,
                   ") without use_psum_layout, got ", k);
      out.ks.push_back(k);
    }
  } else {
    DG_CHECK_ARG(use_psum_layout, "ks_cpu", "may be None or empty only with use_psum_layout=True");
    // Documented host read: the sizes exist only in grouped_layout (end offsets).
    checks::not_meta_data_read(layout, "grouped_layout");
    const auto ends = layout.to(at::kCPU, at::kLong);
    int64_t prev_end = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t start = align<int64_t>(prev_end, alignment);
      const int64_t end = ends[g].item<int64_t>();
      DG_CHECK_ARG(end >= start, "grouped_layout", "entry ", g, " ends at ", end, " before its aligned start ", start);
      out.ks.push_back(end - start);
      prev_end = end;
    }
  }
  for (const int64_t k : out.ks) {
    const int64_t start = align<int64_t>(out.end, alignment);
    out.starts.push_back(start);
    out.end = start + k;
  }
  // A host-side grouped_layout can be checked against the sizes for free.
  if (have_ks && layout.is_cpu()) {
    const auto values = layout.to(at::kLong);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t expected = use_psum_layout ? out.starts[g] + out.ks[g] : out.ks[g];
      const int64_t got = values[g].item<int64_t>();
      DG_CHECK_ARG(got == expected, "grouped_layout", "entry ", g, " is ", got, " but ks_cpu gives ", expected,
                   use_psum_layout ? " (the group's end offset)" : " (the group's K size)");
    }
  }
  return out;
}

// Rows of the K-stacked data: exactly the groups' rows, or (psum) at least up to the last end.
inline void check_k_rows(int64_t rows, const char* arg, const KGroups& groups, bool use_psum_layout) {
  if (use_psum_layout) {
    DG_CHECK_ARG(rows >= groups.end, arg, "has ", rows, " rows (K), but the last group ends at row ", groups.end);
  } else {
    DG_CHECK_ARG(rows == groups.end, arg, "has ", rows, " rows (K), but the groups' K sizes sum to ", groups.end);
  }
}

// Scale rows a K-grouped operand needs: sum ceil(k_g / gran_k), or words of 4 of them when packed.
inline int64_t k_scale_rows(const KGroups& groups, int gran_k, bool packed) {
  int64_t rows = 0;
  for (const int64_t k : groups.ks) {
    const int64_t blocks = ceil_div<int64_t>(k, gran_k);
    rows += packed ? ceil_div<int64_t>(blocks, 4) : blocks;
  }
  return rows;
}

// Per-channel scales of one K group, [k, mn] float32, from rows [row, ...) of
// sf [rows, mn] (float32 blocks, or packed UE8M0 words of 4 blocks each).
inline at::Tensor k_group_scales(const at::Tensor& sf, int64_t row, int64_t k, int gran_k) {
  const int64_t blocks = ceil_div<int64_t>(k, gran_k);
  at::Tensor per_block;
  if (sf.scalar_type() == at::kInt) {
    const auto words = sf.narrow(0, row, ceil_div<int64_t>(blocks, 4));
    per_block = unpack_ue8m0(words.t()).narrow(1, 0, blocks).t();
  } else {
    per_block = sf.narrow(0, row, blocks).to(at::kFloat);
  }
  return per_block.repeat_interleave(gran_k, 0).narrow(0, 0, k);
}

inline int k_grouped_gran_k(const Recipe& recipe, bool allow_32) {
  const auto [gran_a, gran_b, gran_k] = recipe;
  DG_CHECK_ARG(gran_a == 1 && gran_b == 1 && (gran_k == 128 || (allow_32 && gran_k == 32)), "recipe", "must be ",
               allow_32 ? "(1, 1, 32) or (1, 1, 128)" : "(1, 1, 128)", ", got (", gran_a, ", ", gran_b, ", ", gran_k,
               ")");
  return gran_k;
}

// d and c: float32 [G, M, N], c required.  Returns G.
inline int64_t check_k_grouped_output(const at::Tensor& d, const std::optional<at::Tensor>& c, int64_t m, int64_t n) {
  checks::dtype(d, "d", {at::kFloat});
  checks::dim(d, "d", 3);
  DG_CHECK_ARG(c.has_value(), "c",
               "is required: K-grouped GEMMs accumulate (D = C + A^T B); pass d itself to accumulate in place");
  output::check(d, c, {d.size(0), m, n}, {at::kFloat});
  return d.size(0);
}

// d <- c + the per-group products; product_of(g, start, k) gives group g's float32 [M, N] (k > 0).
template <typename ProductOf>
inline void write_k_grouped(const at::Tensor& d, const std::optional<at::Tensor>& c, const KGroups& groups,
                            ProductOf&& product_of) {
  if (d.numel() == 0) return;
  std::vector<at::Tensor> products;
  for (size_t g = 0; g < groups.ks.size(); ++g) {
    const int64_t k = groups.ks[g];
    products.push_back(k == 0 ? at::zeros({d.size(1), d.size(2)}, d.options().dtype(at::kFloat))
                              : product_of(g, groups.starts[g], k));
  }
  output::write(d, c, at::stack(products));
}

inline void check_k_stacked(const at::Tensor& x, const char* arg, at::ScalarType dtype) {
  checks::dtype(x, arg, {dtype});
  checks::dim(x, arg, 2);
}

// Scales of a K-stacked operand: [blocks, mn] float32 or packed UE8M0 int32 words of 4 blocks.
inline void check_k_scales(const at::Tensor& sf, const char* arg, int64_t mn, const KGroups& groups,
                           bool use_psum_layout, int gran_k) {
  checks::dtype(sf, arg, {at::kFloat, at::kInt});
  checks::dim(sf, arg, 2);
  const int64_t needed = k_scale_rows(groups, gran_k, sf.scalar_type() == at::kInt);
  const bool ok = sf.size(1) == mn && (use_psum_layout ? sf.size(0) >= needed : sf.size(0) == needed);
  DG_CHECK_ARG(ok, arg, "must have shape [", use_psum_layout ? "at least " : "", needed, ", ", mn, "] (",
               sf.scalar_type() == at::kInt ? "packed UE8M0 words of 4 " : "", "K blocks of ", gran_k,
               " per group), got ", sf.sizes());
}

}  // namespace grouped

// ---- M-grouped contiguous ------------------------------------------------------

inline void m_grouped_fp8_fp4_gemm_nt_contiguous(const Pair& a, const Pair& b, const at::Tensor& d,
                                                 const at::Tensor& grouped_layout, const std::optional<Recipe>& recipe,
                                                 const std::optional<OperandRecipe>& recipe_a,
                                                 const std::optional<OperandRecipe>& recipe_b,
                                                 const std::string& compiled_dims, bool disable_ue8m0_cast,
                                                 bool use_psum_layout, bool ensure_zero_padding,
                                                 const std::optional<int>& expected_m_for_psum_layout) {
  (void)disable_ue8m0_cast;  // only selects the scale format on GPUs; the reference accepts both
  scaled::check_compiled_dims(compiled_dims);
  const auto A = scaled::check_operand(a, "a", "sfa");
  const auto B = grouped::check_batched(b, "b", "sfb");
  checks::same_device(A.data, "a", d, "d");
  checks::same_device(A.sf, "sfa", d, "d");
  checks::same_device(B.data, "b", d, "d");
  checks::same_device(B.sf, "sfb", d, "d");
  checks::same_device(grouped_layout, "grouped_layout", d, "d");
  DG_CHECK_ARG(A.k == B.k, "b", "has K=", B.k, " but 'a' has K=", A.k, " (logical sizes, FP4 counts 2 per byte)");
  output::check(d, std::nullopt, {A.mn, B.mn}, {at::kBFloat16});
  const auto recipes = scaled::resolve_recipes(recipe, recipe_a, recipe_b, B.sf);
  scaled::check_scale_shape(A, recipes.a);
  grouped::check_batched_scale_shape(B, recipes.b);
  grouped::check_contiguous_layout(grouped_layout, A.mn, B.groups, use_psum_layout, expected_m_for_psum_layout);
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (A.k > 0 && gemm_cuda::m_grouped_contiguous(A.data, A.sf, B.data, B.sf, recipes, d, grouped_layout,
                                                 use_psum_layout, ensure_zero_padding)) {
    return;
  }
#endif
  const auto rows = grouped::row_groups(grouped_layout, A.mn, B.groups, use_psum_layout, ensure_zero_padding);
  const auto a_f = A.k == 0 ? at::zeros({A.mn, 0}, d.options().dtype(at::kFloat)) : scaled::dequantize(A, recipes.a);
  const auto b_f =
      A.k == 0 ? at::zeros({B.groups, B.mn, 0}, d.options().dtype(at::kFloat)) : grouped::dequantize(B, recipes.b);
  grouped::write_contiguous(d, a_f, b_f, rows);
}

inline void m_grouped_fp8_fp4_gemm_nn_contiguous(const Pair& a, const Pair& b, const at::Tensor& d,
                                                 const at::Tensor& grouped_layout, const std::optional<Recipe>& recipe,
                                                 const std::optional<OperandRecipe>& recipe_a,
                                                 const std::optional<OperandRecipe>& recipe_b,
                                                 const std::string& compiled_dims, bool disable_ue8m0_cast,
                                                 bool use_psum_layout, bool ensure_zero_padding) {
  m_grouped_fp8_fp4_gemm_nt_contiguous(a, grouped::t3(b, "b", "sfb"), d, grouped_layout, recipe, recipe_a, recipe_b,
                                       compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding,
                                       std::nullopt);
}

inline void m_grouped_bf16_gemm_nt_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                              const at::Tensor& grouped_layout, const std::string& compiled_dims,
                                              bool use_psum_layout, bool ensure_zero_padding,
                                              const std::optional<int>& expected_m_for_psum_layout) {
  scaled::check_compiled_dims(compiled_dims);
  checks::dtype(a, "a", {at::kBFloat16});
  checks::dim(a, "a", 2);
  checks::major(a, "a");
  checks::dtype(b, "b", {at::kBFloat16});
  checks::dim(b, "b", 3);
  checks::major(b, "b");
  checks::same_device(a, "a", d, "d");
  checks::same_device(b, "b", d, "d");
  checks::same_device(grouped_layout, "grouped_layout", d, "d");
  DG_CHECK_ARG(a.size(1) == b.size(2), "b", "has K=", b.size(2), " but 'a' has K=", a.size(1));
  output::check(d, std::nullopt, {a.size(0), b.size(1)}, {at::kBFloat16});
  grouped::check_contiguous_layout(grouped_layout, a.size(0), b.size(0), use_psum_layout, expected_m_for_psum_layout);
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (a.size(1) > 0 &&
      gemm_cuda::m_grouped_bf16_contiguous(a, b, d, grouped_layout, use_psum_layout, ensure_zero_padding)) {
    return;
  }
#endif
  const auto rows = grouped::row_groups(grouped_layout, a.size(0), b.size(0), use_psum_layout, ensure_zero_padding);
  grouped::write_contiguous(d, a.to(at::kFloat), b.to(at::kFloat), rows);
}

inline void m_grouped_bf16_gemm_nn_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                              const at::Tensor& grouped_layout, const std::string& compiled_dims,
                                              bool use_psum_layout, bool ensure_zero_padding) {
  m_grouped_bf16_gemm_nt_contiguous(a, grouped::t3(b, "b"), d, grouped_layout, compiled_dims, use_psum_layout,
                                    ensure_zero_padding, std::nullopt);
}

// ---- M-grouped masked ------------------------------------------------------------

inline void m_grouped_fp8_fp4_gemm_nt_masked(const Pair& a, const Pair& b, const at::Tensor& d,
                                             const at::Tensor& masked_m, int expected_m,
                                             const std::optional<Recipe>& recipe,
                                             const std::optional<OperandRecipe>& recipe_a,
                                             const std::optional<OperandRecipe>& recipe_b,
                                             const std::string& compiled_dims, bool disable_ue8m0_cast) {
  (void)disable_ue8m0_cast;
  scaled::check_compiled_dims(compiled_dims);
  const auto A = grouped::check_batched(a, "a", "sfa");
  const auto B = grouped::check_batched(b, "b", "sfb");
  checks::same_device(A.data, "a", d, "d");
  checks::same_device(A.sf, "sfa", d, "d");
  checks::same_device(B.data, "b", d, "d");
  checks::same_device(B.sf, "sfb", d, "d");
  DG_CHECK_ARG(A.groups == B.groups, "b", "has ", B.groups, " groups but 'a' has ", A.groups);
  DG_CHECK_ARG(A.k == B.k, "b", "has K=", B.k, " but 'a' has K=", A.k, " (logical sizes, FP4 counts 2 per byte)");
  output::check(d, std::nullopt, {A.groups, A.mn, B.mn}, {at::kBFloat16});
  const auto recipes = scaled::resolve_recipes(recipe, recipe_a, recipe_b, B.sf);
  grouped::check_batched_scale_shape(A, recipes.a);
  grouped::check_batched_scale_shape(B, recipes.b);
  grouped::check_masked(masked_m, A.groups, expected_m, d);
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (A.k > 0 && gemm_cuda::m_grouped_masked(A.data, A.sf, B.data, B.sf, recipes, d, masked_m, expected_m)) return;
#endif
  const auto product =
      A.k == 0 ? at::zeros(d.sizes(), d.options().dtype(at::kFloat))
               : at::matmul(grouped::dequantize(A, recipes.a), grouped::dequantize(B, recipes.b).transpose(1, 2));
  grouped::write_masked(d, masked_m, product);
}

inline void m_grouped_bf16_gemm_nt_masked(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                          const at::Tensor& masked_m, int expected_m,
                                          const std::string& compiled_dims) {
  scaled::check_compiled_dims(compiled_dims);
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a, "a"}, {b, "b"}}) {
    checks::dtype(t, name, {at::kBFloat16});
    checks::dim(t, name, 3);
    checks::major(t, name);
    checks::same_device(t, name, d, "d");
  }
  DG_CHECK_ARG(a.size(0) == b.size(0), "b", "has ", b.size(0), " groups but 'a' has ", a.size(0));
  DG_CHECK_ARG(a.size(2) == b.size(2), "b", "has K=", b.size(2), " but 'a' has K=", a.size(2));
  output::check(d, std::nullopt, {a.size(0), a.size(1), b.size(1)}, {at::kBFloat16});
  grouped::check_masked(masked_m, a.size(0), expected_m, d);
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (a.size(2) > 0 && gemm_cuda::m_grouped_bf16_masked(a, b, d, masked_m, expected_m)) return;
#endif
  grouped::write_masked(d, masked_m, at::matmul(a.to(at::kFloat), b.to(at::kFloat).transpose(1, 2)));
}

// ---- K-grouped -----------------------------------------------------------------------

inline void k_grouped_fp8_gemm_tn_contiguous(const Pair& a, const Pair& b, const at::Tensor& d,
                                             const std::optional<std::vector<int>>& ks_cpu,
                                             const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c,
                                             const Recipe& recipe, const std::string& compiled_dims,
                                             bool use_psum_layout) {
  scaled::check_compiled_dims(compiled_dims);
  const int gran_k = grouped::k_grouped_gran_k(recipe, /*allow_32=*/true);
  const auto& [a_data, sfa] = a;
  const auto& [b_data, sfb] = b;
  grouped::check_k_stacked(a_data, "a", at::kFloat8_e4m3fn);
  grouped::check_k_stacked(b_data, "b", at::kFloat8_e4m3fn);
  checks::same_device(a_data, "a", d, "d");
  checks::same_device(sfa, "sfa", d, "d");
  checks::same_device(b_data, "b", d, "d");
  checks::same_device(sfb, "sfb", d, "d");
  checks::same_device(grouped_layout, "grouped_layout", d, "d");
  const int64_t m = a_data.size(1), n = b_data.size(1);
  const int64_t num_groups = grouped::check_k_grouped_output(d, c, m, n);
  const auto groups = grouped::resolve_k_groups(ks_cpu, grouped_layout, num_groups, use_psum_layout);
  grouped::check_k_rows(a_data.size(0), "a", groups, use_psum_layout);
  grouped::check_k_rows(b_data.size(0), "b", groups, use_psum_layout);
  grouped::check_k_scales(sfa, "sfa", m, groups, use_psum_layout, gran_k);
  grouped::check_k_scales(sfb, "sfb", n, groups, use_psum_layout, gran_k);
  // Scale rows of each group (blocks, or packed words) in sfa and sfb.
  std::vector<int64_t> row_a, row_b;
  int64_t next_a = 0, next_b = 0;
  for (const int64_t k : groups.ks) {
    row_a.push_back(next_a);
    row_b.push_back(next_b);
    const int64_t blocks = ceil_div<int64_t>(k, gran_k);
    next_a += sfa.scalar_type() == at::kInt ? ceil_div<int64_t>(blocks, 4) : blocks;
    next_b += sfb.scalar_type() == at::kInt ? ceil_div<int64_t>(blocks, 4) : blocks;
  }
  grouped::write_k_grouped(d, c, groups, [&](size_t g, int64_t start, int64_t k) {
    const auto a_g = a_data.narrow(0, start, k).to(at::kFloat) * grouped::k_group_scales(sfa, row_a[g], k, gran_k);
    const auto b_g = b_data.narrow(0, start, k).to(at::kFloat) * grouped::k_group_scales(sfb, row_b[g], k, gran_k);
    return at::matmul(a_g.t(), b_g);
  });
}

inline void k_grouped_fp8_gemm_nt_contiguous(const Pair& a, const Pair& b, const at::Tensor& d,
                                             const std::optional<std::vector<int>>& ks_cpu,
                                             const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c,
                                             const Recipe& recipe, const std::string& compiled_dims,
                                             bool use_psum_layout) {
  scaled::check_compiled_dims(compiled_dims);
  constexpr int kGranK = 128;
  grouped::k_grouped_gran_k(recipe, /*allow_32=*/false);
  DG_CHECK_ARG(!use_psum_layout, "use_psum_layout", "must be False: the K-major K-grouped layout has no psum form");
  const auto& [a_data, sfa] = a;
  const auto& [b_data, sfb] = b;
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a_data, "a"}, {b_data, "b"}}) {
    checks::dtype(t, name, {at::kFloat8_e4m3fn});
    checks::dim(t, name, 1);
  }
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{sfa, "sfa"}, {sfb, "sfb"}}) {
    checks::dtype(t, name, {at::kFloat});
    checks::dim(t, name, 2);
  }
  checks::same_device(a_data, "a", d, "d");
  checks::same_device(sfa, "sfa", d, "d");
  checks::same_device(b_data, "b", d, "d");
  checks::same_device(sfb, "sfb", d, "d");
  checks::same_device(grouped_layout, "grouped_layout", d, "d");
  // The data is flat, so M and N come from d [G, M, N].
  checks::dtype(d, "d", {at::kFloat});
  checks::dim(d, "d", 3);
  const int64_t m = d.size(1), n = d.size(2);
  const int64_t num_groups = grouped::check_k_grouped_output(d, c, m, n);
  const auto groups = grouped::resolve_k_groups(ks_cpu, grouped_layout, num_groups, false);
  DG_CHECK_ARG(a_data.numel() == groups.end * m, "a", "must hold sum(ks_cpu) * M = ", groups.end, " * ", m,
               " elements (the K-major groups one after another), got ", a_data.numel());
  DG_CHECK_ARG(b_data.numel() == groups.end * n, "b", "must hold sum(ks_cpu) * N = ", groups.end, " * ", n,
               " elements (the K-major groups one after another), got ", b_data.numel());
  const int64_t blocks = grouped::k_scale_rows(groups, kGranK, false);
  DG_CHECK_ARG(sfa.size(0) == m && sfa.size(1) == blocks, "sfa", "must have shape [", m, ", ", blocks,
               "] (M, K blocks of 128 per group), got ", sfa.sizes());
  DG_CHECK_ARG(sfb.size(0) == n && sfb.size(1) == blocks, "sfb", "must have shape [", n, ", ", blocks,
               "] (N, K blocks of 128 per group), got ", sfb.sizes());
  std::vector<int64_t> block_of;
  int64_t next = 0;
  for (const int64_t k : groups.ks) {
    block_of.push_back(next);
    next += ceil_div<int64_t>(k, kGranK);
  }
#ifdef DG_WITH_SM90_KERNELS
  if (d.numel() == 0) return;
  if (gemm_cuda::k_grouped_fp8_nt(a_data, sfa, b_data, sfb, d, *c, groups.ks, groups.starts, block_of)) return;
#endif
  // Group g of x (flat) is [mn, k] row-major at element start * mn; its scales are columns of sf [mn, blocks].
  const auto group_of = [&](const at::Tensor& x, const at::Tensor& sf, int64_t mn, size_t g, int64_t start, int64_t k) {
    const auto data = x.narrow(0, start * mn, k * mn).reshape({mn, k}).to(at::kFloat);
    const auto scales = grouped::k_group_scales(sf.t(), block_of[g], k, kGranK).t();
    return data * scales;
  };
  grouped::write_k_grouped(d, c, groups, [&](size_t g, int64_t start, int64_t k) {
    return at::matmul(group_of(a_data, sfa, m, g, start, k), group_of(b_data, sfb, n, g, start, k).t());
  });
}

inline void k_grouped_bf16_gemm_tn_contiguous(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                                              const std::optional<std::vector<int>>& ks_cpu,
                                              const at::Tensor& grouped_layout, const std::optional<at::Tensor>& c,
                                              const std::string& compiled_dims, bool use_psum_layout) {
  scaled::check_compiled_dims(compiled_dims);
  grouped::check_k_stacked(a, "a", at::kBFloat16);
  grouped::check_k_stacked(b, "b", at::kBFloat16);
  checks::same_device(a, "a", d, "d");
  checks::same_device(b, "b", d, "d");
  checks::same_device(grouped_layout, "grouped_layout", d, "d");
  const int64_t num_groups = grouped::check_k_grouped_output(d, c, a.size(1), b.size(1));
#ifdef DG_WITH_SM90_KERNELS
  // The psum ends without ks_cpu, on the device (unless DG_K_GROUPED_DEVICE_SIZES=0): no host read.
  // Ends past the rows of a and b are clipped there, and a group that ends before its aligned
  // start is empty (the host path below raises for both).
  const bool have_ks = ks_cpu.has_value() && !ks_cpu->empty();
  if (!have_ks && use_psum_layout && grouped_layout.is_cuda() && gemm_cuda::k_grouped_device_sizes_enabled()) {
    grouped::check_k_layout(grouped_layout, num_groups);
    DG_CHECK_ARG(a.size(0) == b.size(0), "b", "must have the rows (K) of 'a' (", a.size(0), "), got ", b.size(0));
    if (d.numel() == 0) return;
    const int alignment = static_cast<int>(runtime::settings().mk_alignment);
    if (gemm_cuda::k_grouped_bf16_tn_device_sizes(a, b, d, *c, grouped_layout.contiguous(), alignment)) return;
  }
#endif
  const auto groups = grouped::resolve_k_groups(ks_cpu, grouped_layout, num_groups, use_psum_layout);
  grouped::check_k_rows(a.size(0), "a", groups, use_psum_layout);
  grouped::check_k_rows(b.size(0), "b", groups, use_psum_layout);
#ifdef DG_WITH_SM90_KERNELS
  if (d.numel() == 0) return;
  if (gemm_cuda::k_grouped_bf16_tn(a, b, d, *c, groups.ks, groups.starts)) return;
#endif
  grouped::write_k_grouped(d, c, groups, [&](size_t, int64_t start, int64_t k) {
    return at::matmul(a.narrow(0, start, k).to(at::kFloat).t(), b.narrow(0, start, k).to(at::kFloat));
  });
}

}  // namespace deep_gemm::gemm
