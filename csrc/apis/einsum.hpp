#pragma once
// Family 'einsum': a few fixed batched contractions, spelled as einsum expressions.
//
// Only the expressions listed below exist (matched exactly, as upstream does);
// anything else is rejected by name.  On sm90, 'bmk,bnk->mn', 'bhr,hdr->bhd' (BF16) and
// fp8_einsum 'bhr,hdr->bhd' run on the native GEMM kernel (csrc/cuda/gemm.h: a batch-summed
// and a batched problem).  Otherwise this is the reference (ATen) implementation: operands are widened to float32 (FP8
// ones multiplied by their block scales first; the two bf16 head contractions stay bf16, see bf16_head_contraction),
// contracted with at::einsum, and the result is cast once into `d` after every check has passed.

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "reference/batched.hpp"
#include "reference/output.hpp"
#include "reference/scaled.hpp"
#include "utils/checks.hpp"

#ifdef DG_WITH_SM90_KERNELS
#include "apis/gemm_cuda.hpp"
#endif

namespace deep_gemm::einsum {

using scaled::Pair;
using scaled::Recipe;

namespace detail {

inline constexpr const char* kBmkBnkMn = "bmk,bnk->mn";
inline constexpr const char* kBhrHdrBhd = "bhr,hdr->bhd";
inline constexpr const char* kBhdHdrBhr = "bhd,hdr->bhr";
inline constexpr const char* kBhdBhrHdr = "bhd,bhr->hdr";

// Rejects `expr` unless it is one of `supported` (a "'x', 'y' or 'z'" list for the message).
inline void check_expr(const std::string& expr, std::initializer_list<const char*> supported) {
  std::string list;
  size_t i = 0;
  for (const char* s : supported) {
    if (expr == s) return;
    list += c10::str(i == 0 ? "" : (i + 1 == supported.size() ? " or " : ", "), "'", s, "'");
    ++i;
  }
  fail_argument("expr", c10::str("must be ", list, " (spelled exactly, no spaces), got '", expr, "'"));
}

// A bf16 operand of rank 3 on d's device whose last dim is contiguous.
inline void bf16_operand(const at::Tensor& t, const char* arg, const at::Tensor& d) {
  checks::dtype(t, arg, {at::kBFloat16});
  checks::dim(t, arg, 3);
  batched::last_dim_contiguous(t, arg);
  checks::same_device(t, arg, d, "d");
}

inline void no_c(const std::optional<at::Tensor>& c, const std::string& expr) {
  DG_CHECK_ARG(!c.has_value(), "c", "must be None for '", expr, "' (d is overwritten, nothing is accumulated)");
}

// A float32 d accumulates, so c is required: d itself (accumulate in place) or a separate
// tensor of d's shape and dtype (D = C + ..., as the GEMMs do).  Its shape, dtype and aliasing
// are checked by output::check.
inline void accumulator(const std::optional<at::Tensor>& c, const std::string& expr) {
  DG_CHECK_ARG(c.has_value(), "c", "must be given for '", expr,
               "' with a float32 'd' (D = C + ...; pass d itself to accumulate in place), got None");
}

// D[m, n] (+)= sum_b A[b] B[b]^T.
inline void bmk_bnk_mn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                       const std::optional<at::Tensor>& c, bool use_cublaslt) {
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a, "a"}, {b, "b"}}) {
    bf16_operand(t, name, d);
    batched::contiguous(t, name);
  }
  DG_CHECK_ARG(b.size(0) == a.size(0), "b", "has batch size ", b.size(0), " but 'a' has ", a.size(0),
               " ('bmk,bnk->mn' sums over b)");
  DG_CHECK_ARG(b.size(2) == a.size(2), "b", "has K=", b.size(2), " but 'a' has K=", a.size(2));
  checks::dtype(d, "d", {at::kFloat, at::kBFloat16});
  if (d.scalar_type() == at::kFloat) {
    accumulator(c, kBmkBnkMn);
  } else {
    DG_CHECK_ARG(!c.has_value(), "c", "must be None for '", kBmkBnkMn,
                 "' with a bfloat16 'd' (d is overwritten; only a float32 d accumulates)");
  }
  output::check(d, c, {a.size(1), b.size(1)}, {at::kFloat, at::kBFloat16});
  batched::contiguous(d, "d");
  DG_CHECK_ARG(!use_cublaslt, "use_cublaslt", "must be False for '", kBmkBnkMn, "' (it has no cuBLASLt path)");
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (a.size(0) > 0 && a.size(2) > 0 && gemm_cuda::bf16_batch_sum(a, b, d, c)) return;
#endif
  output::write(d, c, at::einsum("bmk,bnk->mn", {a.to(at::kFloat), b.to(at::kFloat)}));
}

// 'bhr,hdr->bhd' (contract r: B is [h, d, r]) or 'bhd,hdr->bhr' (contract d: B is [h, d, r]).
inline void bf16_head_contraction(const std::string& expr, const at::Tensor& a, const at::Tensor& b,
                                  const at::Tensor& d, const std::optional<at::Tensor>& c) {
  const bool over_r = expr == kBhrHdrBhd;
  bf16_operand(a, "a", d);
  bf16_operand(b, "b", d);
  const int64_t nb = a.size(0), nh = a.size(1), k = a.size(2);
  const int64_t k_in_b = over_r ? b.size(2) : b.size(1);
  const int64_t n = over_r ? b.size(1) : b.size(2);
  DG_CHECK_ARG(b.size(0) == nh, "b", "has h=", b.size(0), " (dim 0) but 'a' has h=", nh, " (dim 1)");
  DG_CHECK_ARG(k_in_b == k, "b", "has ", over_r ? "r=" : "d=", k_in_b, " (dim ", over_r ? 2 : 1, ") but 'a' has ",
               over_r ? "r=" : "d=", k, " (dim 2)");
  checks::dtype(d, "d", {at::kBFloat16});
  checks::shape(d, "d", {nb, nh, n});
  batched::last_dim_contiguous(d, "d");
  batched::writable(d, "d");
  no_c(c, expr);
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (k > 0 && gemm_cuda::bf16_heads(a, b, d, /*b_mn_major=*/!over_r)) return;
#endif
  // Contracted in bf16 by ATen: a float32 accumulator and one rounding to bf16, the computation
  // torch.einsum performs on these operands, so the two agree bit for bit (the native sm90
  // paths above accumulate in another order and may differ from it in the last bit).
  // (Widening to float32 first would round the same sums in another order and differ in the
  // last bit of a few elements.)
  d.copy_(at::einsum(expr, {a, b}));
}

}  // namespace detail

inline void einsum(const std::string& expr, const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                   const std::optional<at::Tensor>& c, bool use_cublaslt) {
  detail::check_expr(expr, {detail::kBmkBnkMn, detail::kBhrHdrBhd, detail::kBhdHdrBhr});
  if (expr == detail::kBmkBnkMn) {
    detail::bmk_bnk_mn(a, b, d, c, use_cublaslt);
  } else {
    // use_cublaslt only picks the GPU backend of these two; the reference has one.
    detail::bf16_head_contraction(expr, a, b, d, c);
  }
}

namespace detail {

inline void fp8_data(const at::Tensor& t, const char* arg, const at::Tensor& d) {
  checks::dtype(t, arg, {at::kFloat8_e4m3fn});
  checks::dim(t, arg, 3);
  batched::last_dim_contiguous(t, arg);
  checks::same_device(t, arg, d, "d");
}

// A scale dim in a message: "d" for one scale per element, "ceil(d/128)" for blocks of 128.
inline std::string blocked(const char* letter, int gran) {
  return gran == 1 ? std::string(letter) : c10::str("ceil(", letter, "/", gran, ")");
}

inline std::string recipe_str(const Recipe& r) {
  return c10::str("(", std::get<0>(r), ", ", std::get<1>(r), ", ", std::get<2>(r), ")");
}

}  // namespace detail

inline void fp8_einsum(const std::string& expr, const Pair& a, const Pair& b, const at::Tensor& d,
                       const std::optional<at::Tensor>& c, const Recipe& recipe) {
  using namespace detail;
  check_expr(expr, {kBhrHdrBhd, kBhdHdrBhr, kBhdBhrHdr});
  const auto& [x, sfx] = a;
  const auto& [y, sfy] = b;
  const auto [gran_a, gran_b, gran_k] = recipe;
  const bool weight_grad = expr == kBhdBhrHdr;
  if (weight_grad) {
    DG_CHECK_ARG(recipe == Recipe(1, 1, 128), "recipe", "must be (1, 1, 128) for '", expr,
                 "' (per-channel scales over b), got ", recipe_str(recipe));
  } else {
    DG_CHECK_ARG(gran_a == 1 && (gran_b == 128 || gran_b == 1) && gran_k == 128, "recipe",
                 "must be (1, 128, 128) or (1, 1, 128) for '", expr, "', got ", recipe_str(recipe));
  }
  fp8_data(x, "a", d);
  fp8_data(y, "b", d);
  checks::same_device(sfx, "sfa", d, "d");
  checks::same_device(sfy, "sfb", d, "d");
  // x is [b, h, r] for the first expression and [b, h, d] for the other two.
  const int64_t nb = x.size(0), nh = x.size(1), x_last = x.size(2);
  std::vector<int64_t> grans_x, grans_y, out_shape;
  std::string layout_x, layout_y;
  if (expr == kBhrHdrBhd) {
    // Per head: D_h [b, d] = X_h [b, r] . Y_h [d, r]^T.
    DG_CHECK_ARG(y.size(0) == nh, "b", "has h=", y.size(0), " (dim 0) but 'a' has h=", nh, " (dim 1)");
    DG_CHECK_ARG(y.size(2) == x_last, "b", "has r=", y.size(2), " (dim 2) but 'a' has r=", x_last, " (dim 2)");
    grans_x = {1, 1, gran_k};
    grans_y = {1, gran_b, gran_k};
    layout_x = "[b, h, ceil(r/128)]";
    layout_y = c10::str("[h, ", blocked("d", gran_b), ", ceil(r/128)]");
    out_shape = {nb, nh, y.size(1)};
  } else if (expr == kBhdHdrBhr) {
    // Per head: D_h [b, r] = X_h [b, d] . Y_h [d, r].
    DG_CHECK_ARG(y.size(0) == nh, "b", "has h=", y.size(0), " (dim 0) but 'a' has h=", nh, " (dim 1)");
    DG_CHECK_ARG(y.size(1) == x_last, "b", "has d=", y.size(1), " (dim 1) but 'a' has d=", x_last, " (dim 2)");
    grans_x = {1, 1, gran_k};
    grans_y = {1, gran_k, gran_b};
    layout_x = "[b, h, ceil(d/128)]";
    layout_y = c10::str("[h, ceil(d/128), ", blocked("r", gran_b), "]");
    out_shape = {nb, nh, y.size(2)};
  } else {
    // Per head: D_h [d, r] += X_h^T [d, b] . Y_h [b, r], scales per channel over b.
    DG_CHECK_ARG(y.size(0) == nb, "b", "has b=", y.size(0), " (dim 0) but 'a' has b=", nb, " (dim 0)");
    DG_CHECK_ARG(y.size(1) == nh, "b", "has h=", y.size(1), " (dim 1) but 'a' has h=", nh, " (dim 1)");
    grans_x = {gran_k, 1, 1};
    grans_y = {gran_k, 1, 1};
    layout_x = "[ceil(b/128), h, d]";
    layout_y = "[ceil(b/128), h, r]";
    out_shape = {nh, x_last, y.size(2)};
  }
  batched::check_scales(sfx, "sfa", x.sizes(), grans_x, layout_x);
  batched::check_scales(sfy, "sfb", y.sizes(), grans_y, layout_y);
  checks::dtype(d, "d", {weight_grad ? at::kFloat : at::kBFloat16});
  if (weight_grad) {
    accumulator(c, expr);
  } else {
    no_c(c, expr);
  }
  output::check(d, c, out_shape, {weight_grad ? at::kFloat : at::kBFloat16});
  batched::writable(d, "d");
  if (d.numel() == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (expr == kBhrHdrBhd && x_last > 0 && sfx.dim() == 3 && sfy.dim() == 3 &&
      gemm_cuda::fp8_heads(x, sfx, y, sfy, gran_b, d)) {
    return;
  }
#endif
  const auto product = at::einsum(expr, {batched::dequantize(x, sfx, grans_x), batched::dequantize(y, sfy, grans_y)});
  output::write(d, c, product);
}

}  // namespace deep_gemm::einsum
