#pragma once
// The cuBLASLt GEMMs of the gemm family: D = C + A . B^T without scales, in the
// four operand layouts (one of the gemm family's headers in ops.yaml).
//
// Every build registers them (callers look them up by name whatever the device).
// This implementation is ATen.  On a GPU the product runs on cuBLASLt as the name
// says, so that profiles find its kernels (DeepGEMM's tests time it by the `nvjet`
// substring): FP8 operands through the scaled matmul with unit scales and BF16
// operands with float32 output, both summing in float32 without fast accumulation.
// Elsewhere, and for shapes cuBLASLt's FP8 path does not take (K or N not a multiple
// of 16), both operands are converted to float32 and multiplied in full float32.
// Either way the float32 product is cast once into `d` (after adding `c`).

#include <ATen/ATen.h>

#include <optional>
#include <utility>

#include "apis/gemm.hpp"
#include "reference/output.hpp"
#include "utils/checks.hpp"

namespace deep_gemm::gemm {

namespace detail {

// The float32 product a . b^T on cuBLASLt (see above), or nothing where the float32 path serves.
inline std::optional<at::Tensor> cublaslt_product(const at::Tensor& a, const at::Tensor& b) {
  if (!a.is_cuda()) return std::nullopt;
  if (a.scalar_type() == at::kFloat8_e4m3fn) {
    if (a.size(1) % 16 != 0 || b.size(0) % 16 != 0) return std::nullopt;
    const auto one = at::ones({}, a.options().dtype(at::kFloat));
    // The scaled matmul takes A row-major and B column-major: b^T of a row-major [N, K] b.
    return at::_scaled_mm(a.contiguous(), b.contiguous().t(), one, one, std::nullopt, std::nullopt, at::kFloat,
                          /*use_fast_accum=*/false);
  }
  if (a.scalar_type() == at::kBFloat16) return at::mm(a, b.t(), at::kFloat);
  return std::nullopt;
}

}  // namespace detail

inline void cublaslt_gemm_nt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                             const std::optional<at::Tensor>& c) {
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{a, "a"}, {b, "b"}}) {
    checks::dtype(t, name, {at::kBFloat16, at::kFloat, at::kFloat8_e4m3fn});
    checks::dim(t, name, 2);
    checks::major(t, name);
    checks::same_device(t, name, d, "d");
  }
  DG_CHECK_ARG(b.scalar_type() == a.scalar_type(), "b", "must have the dtype of 'a' (", a.scalar_type(), "), got ",
               b.scalar_type());
  DG_CHECK_ARG(a.size(1) == b.size(1), "b", "has K=", b.size(1), " but 'a' has K=", a.size(1));
  output::check(d, c, {a.size(0), b.size(0)}, {at::kBFloat16, at::kFloat});
  if (d.numel() == 0) return;
  std::optional<at::Tensor> product;
  if (a.size(1) == 0) {
    product = at::zeros(d.sizes(), d.options().dtype(at::kFloat));
  } else {
    product = detail::cublaslt_product(a, b);
    if (!product) product = at::matmul(a.to(at::kFloat), b.to(at::kFloat).t());
  }
  output::write(d, c, *product);
}

inline void cublaslt_gemm_nn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                             const std::optional<at::Tensor>& c) {
  cublaslt_gemm_nt(a, detail::t(b, "b"), d, c);
}

inline void cublaslt_gemm_tn(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                             const std::optional<at::Tensor>& c) {
  cublaslt_gemm_nt(detail::t(a, "a"), detail::t(b, "b"), d, c);
}

inline void cublaslt_gemm_tt(const at::Tensor& a, const at::Tensor& b, const at::Tensor& d,
                             const std::optional<at::Tensor>& c) {
  cublaslt_gemm_nt(detail::t(a, "a"), b, d, c);
}

}  // namespace deep_gemm::gemm
