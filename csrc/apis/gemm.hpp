#pragma once
// Dense GEMMs: block-scaled FP8/FP4 and BF16, in the four operand layouts.
//
// The NT form is the computation (D = C + A . B^T with A [M, K], B [N, K]);
// NN, TN and TT hand it transposed views, exactly like the upstream library.
// On sm90 GPUs FP8 e4m3 operands with K contiguous run the native kernel
// (apis/gemm_cuda.hpp); everything else runs the reference (ATen) path, which works
// on every device ATen supports, accumulates in float32 and casts once into `d`.

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <utility>

#include "reference/cublas_paths.hpp"
#include "reference/output.hpp"
#include "reference/scaled.hpp"
#include "utils/checks.hpp"

#ifdef DG_WITH_SM90_KERNELS
#include "apis/gemm_cuda.hpp"
#endif

namespace deep_gemm::gemm {

using scaled::OperandRecipe;
using scaled::Pair;
using scaled::Recipe;

inline void fp8_fp4_gemm_nt(const Pair& a, const Pair& b, const at::Tensor& d, const std::optional<at::Tensor>& c,
                            const std::optional<Recipe>& recipe, const std::optional<OperandRecipe>& recipe_a,
                            const std::optional<OperandRecipe>& recipe_b, const std::string& compiled_dims,
                            bool disable_ue8m0_cast) {
  (void)disable_ue8m0_cast;  // only selects the scale format on GPUs; the reference accepts both
  scaled::check_compiled_dims(compiled_dims);
  const auto A = scaled::check_operand(a, "a", "sfa");
  const auto B = scaled::check_operand(b, "b", "sfb");
  checks::same_device(A.data, "a", d, "d");
  checks::same_device(A.sf, "sfa", d, "d");
  checks::same_device(B.data, "b", d, "d");
  checks::same_device(B.sf, "sfb", d, "d");
  DG_CHECK_ARG(A.k == B.k, "b", "has K=", B.k, " but 'a' has K=", A.k, " (logical sizes, FP4 counts 2 per byte)");
  output::check(d, c, {A.mn, B.mn}, {at::kBFloat16, at::kFloat});
  const auto recipes = scaled::resolve_recipes(recipe, recipe_a, recipe_b, B.sf);
  scaled::check_scale_shape(A, recipes.a);
  scaled::check_scale_shape(B, recipes.b);
  if (A.mn == 0 || B.mn == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (A.k > 0 && gemm_cuda::fp8_gemm(A, B, recipes, d, c)) return;
#endif
  if (A.k > 0 && cublas_paths::scaled_mm(A, B, recipes, d, c)) return;
  const auto product = A.k == 0 ? at::zeros({A.mn, B.mn}, d.options().dtype(at::kFloat))
                                : at::matmul(scaled::dequantize(A, recipes.a), scaled::dequantize(B, recipes.b).t());
  output::write(d, c, product);
}

namespace detail {
// The transposed view of a 2-D argument given in T/N layout (checked first, so
// a wrong rank is reported against the caller's own argument name).
inline at::Tensor t(const at::Tensor& x, const char* arg) {
  checks::dim(x, arg, 2);
  return x.transpose(0, 1);
}
inline Pair t(const Pair& x, const char* data_arg, const char* sf_arg) {
  return {t(x.first, data_arg), t(x.second, sf_arg)};
}
}  // namespace detail

inline void fp8_fp4_gemm_nn(const Pair& a, const Pair& b, const at::Tensor& d, const std::optional<at::Tensor>& c,
                            const std::optional<Recipe>& recipe, const std::optional<OperandRecipe>& recipe_a,
                            const std::optional<OperandRecipe>& recipe_b, const std::string& compiled_dims,
                            bool disable_ue8m0_cast) {
  fp8_fp4_gemm_nt(a, detail::t(b, "b", "sfb"), d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast);
}

inline void fp8_fp4_gemm_tn(const Pair& a, const Pair& b, const at::Tensor& d, const std::optional<at::Tensor>& c,
                            const std::optional<Recipe>& recipe, const std::optional<OperandRecipe>& recipe_a,
                            const std::optional<OperandRecipe>& recipe_b, const std::string& compiled_dims,
                            bool disable_ue8m0_cast) {
  fp8_fp4_gemm_nt(detail::t(a, "a", "sfa"), detail::t(b, "b", "sfb"), d, c, recipe, recipe_a, recipe_b, compiled_dims,
                  disable_ue8m0_cast);
}

inline void fp8_fp4_gemm_tt(const Pair& a, const Pair& b, const at::Tensor& d, const std::optional<at::Tensor>& c,
                            const std::optional<Recipe>& recipe, const std::optional<OperandRecipe>& recipe_a,
                            const std::optional<OperandRecipe>& recipe_b, const std::string& compiled_dims,
                            bool disable_ue8m0_cast) {
  fp8_fp4_gemm_nt(detail::t(a, "a", "sfa"), b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast);
}

inline void bf16_gemm_nt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                         const std::optional<at::Tensor>& c, const std::string& compiled_dims) {
  scaled::check_compiled_dims(compiled_dims);
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a, "a"}, {b, "b"}}) {
    checks::dtype(t, name, {at::kBFloat16});
    checks::dim(t, name, 2);
    checks::major(t, name);
    checks::same_device(t, name, d, "d");
  }
  DG_CHECK_ARG(a.size(1) == b.size(1), "b", "has K=", b.size(1), " but 'a' has K=", a.size(1));
  output::check(d, c, {a.size(0), b.size(0)}, {at::kBFloat16, at::kFloat});
  if (a.size(0) == 0 || b.size(0) == 0) return;
#ifdef DG_WITH_SM90_KERNELS
  if (a.size(1) > 0 && gemm_cuda::bf16_dense_native() && gemm_cuda::bf16_gemm(a, b, d, c)) return;
#endif
  if (a.size(1) > 0 && cublas_paths::bf16_mm(a, b, d, c)) return;
  output::write(d, c, at::matmul(a.to(at::kFloat), b.to(at::kFloat).t()));
}

inline void bf16_gemm_nn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                         const std::optional<at::Tensor>& c, const std::string& compiled_dims) {
  bf16_gemm_nt(a, detail::t(b, "b"), d, c, compiled_dims);
}

inline void bf16_gemm_tn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                         const std::optional<at::Tensor>& c, const std::string& compiled_dims) {
  bf16_gemm_nt(detail::t(a, "a"), detail::t(b, "b"), d, c, compiled_dims);
}

inline void bf16_gemm_tt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                         const std::optional<at::Tensor>& c, const std::string& compiled_dims) {
  bf16_gemm_nt(detail::t(a, "a"), b, d, c, compiled_dims);
}

}  // namespace deep_gemm::gemm
