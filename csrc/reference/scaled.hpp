#pragma once
// Block-scaled operands (FP8 e4m3 or packed FP4 data with float32 or packed
// UE8M0 scale factors): checking, recipe resolution and dequantisation.
// Shared by every FP8/FP4 GEMM family.

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "reference/quant.hpp"
#include "utils/checks.hpp"
#include "utils/math.hpp"

namespace deep_gemm::scaled {

using Pair = std::pair<at::Tensor, at::Tensor>;
using Recipe = std::tuple<int, int, int>;
using OperandRecipe = std::tuple<int, int>;

struct Granularity {
  int mn;
  int k;
};

struct Recipes {
  Granularity a;
  Granularity b;
};

// recipe (gran_m_a, gran_n_b, gran_k), or recipe_a + recipe_b ((gran_mn, gran_k) each),
// or none: (1, 128, 128) with float32 SFB and (1, 1, 128) with packed SFB.
inline Recipes resolve_recipes(const std::optional<Recipe>& recipe, const std::optional<OperandRecipe>& recipe_a,
                               const std::optional<OperandRecipe>& recipe_b, const at::Tensor& sfb) {
  DG_CHECK_ARG(!(recipe.has_value() && (recipe_a.has_value() || recipe_b.has_value())), "recipe",
               "cannot be combined with recipe_a/recipe_b; pass one or the other");
  DG_CHECK_ARG(recipe_a.has_value() == recipe_b.has_value(), recipe_a.has_value() ? "recipe_b" : "recipe_a",
               "must be given together with ", recipe_a.has_value() ? "recipe_a" : "recipe_b");
  Recipes out{};
  if (recipe.has_value()) {
    const auto [ga, gb, gk] = *recipe;
    out = {{ga, gk}, {gb, gk}};
  } else if (recipe_a.has_value()) {
    out = {{std::get<0>(*recipe_a), std::get<1>(*recipe_a)}, {std::get<0>(*recipe_b), std::get<1>(*recipe_b)}};
  } else {
    out = sfb.scalar_type() == at::kInt ? Recipes{{1, 128}, {1, 128}} : Recipes{{1, 128}, {128, 128}};
  }
  const char* which = recipe.has_value() ? "recipe" : (recipe_a.has_value() ? "recipe_a" : "recipe");
  DG_CHECK_ARG(out.a.mn == 1, which, "must give A an MN granularity of 1 (per-token scales), got ", out.a.mn);
  DG_CHECK_ARG(out.b.mn == 1 || out.b.mn == 128, recipe_b.has_value() ? "recipe_b" : which,
               "must give B an MN granularity of 1 or 128, got ", out.b.mn);
  for (const auto& g : {out.a, out.b}) {
    DG_CHECK_ARG(g.k == 16 || g.k == 32 || g.k == 128, which, "must use a K granularity of 16, 32 or 128, got ", g.k);
  }
  return out;
}

struct Operand {
  at::Tensor data;
  at::Tensor sf;
  const char* data_arg;
  const char* sf_arg;
  int64_t mn;
  int64_t k;
};

// Checks one (data, sf) pair of a 2-D operand viewed as [mn, k].
inline Operand check_operand(const Pair& pair, const char* data_arg, const char* sf_arg) {
  const auto& [data, sf] = pair;
  checks::dtype(data, data_arg, {at::kFloat8_e4m3fn, at::kChar});
  checks::dim(data, data_arg, 2);
  checks::major(data, data_arg);
  checks::dtype(sf, sf_arg, {at::kFloat, at::kInt});
  checks::dim(sf, sf_arg, 2);
  const auto [mn, k] = quant::logical_mn_k(data);
  return {data, sf, data_arg, sf_arg, mn, k};
}

// The scale tensor's expected shape for granularity g.
inline void check_scale_shape(const Operand& x, const Granularity& g) {
  const int64_t groups_k = ceil_div<int64_t>(x.k, g.k);
  if (x.sf.scalar_type() == at::kInt) {
    DG_CHECK_ARG(g.mn == 1, x.sf_arg, "is packed UE8M0, which needs MN granularity 1, but the recipe gives ", g.mn);
    const int64_t words = ceil_div<int64_t>(groups_k, 4);
    DG_CHECK_ARG(x.sf.size(0) == x.mn && x.sf.size(1) == words, x.sf_arg, "must have shape [", x.mn, ", ", words,
                 "] (packed UE8M0, K granularity ", g.k, "), got ", x.sf.sizes());
  } else {
    const int64_t rows = ceil_div<int64_t>(x.mn, g.mn);
    DG_CHECK_ARG(x.sf.size(0) == rows && x.sf.size(1) == groups_k, x.sf_arg, "must have shape [", rows, ", ", groups_k,
                 "] for granularity (", g.mn, ", ", g.k, "), got ", x.sf.sizes());
  }
}

// float32 [mn, k]: data times its scale.
inline at::Tensor dequantize(const Operand& x, const Granularity& g) {
  return quant::data_to_float(x.data) * quant::expand_scales(x.sf, x.mn, x.k, g.mn, g.k);
}

inline void check_compiled_dims(const std::string& compiled_dims) {
  bool seen[3] = {false, false, false};
  for (const char ch : compiled_dims) {
    const int idx = ch == 'm' ? 0 : ch == 'n' ? 1 : ch == 'k' ? 2 : -1;
    DG_CHECK_ARG(idx >= 0 && !seen[idx], "compiled_dims", "must list distinct dims from 'm', 'n', 'k', got '",
                 compiled_dims, "'");
    seen[idx] = true;
  }
}

}  // namespace deep_gemm::scaled
