#pragma once
// The cuBLASLt GEMMs of the gemm family: D = C + A . B^T without scales, in the
// four operand layouts (one of the gemm family's headers in ops.yaml).
//
// Every build registers them (callers look them up by name whatever the device).
// This implementation is ATen: it converts both operands to float32, multiplies
// in full float32 (cuBLASLt's FAST_TF32 / FP8 fast-accumulation modes round
// more) and casts once into `d`; on a GPU the product runs on cuBLAS(Lt).

#include <ATen/ATen.h>

#include <optional>
#include <utility>

#include "apis/gemm.hpp"
#include "reference/output.hpp"
#include "utils/checks.hpp"

namespace deep_gemm::gemm {

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
  const auto product = a.size(1) == 0 ? at::zeros(d.sizes(), d.options().dtype(at::kFloat))
                                      : at::matmul(a.to(at::kFloat), b.to(at::kFloat).t());
  output::write(d, c, product);
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
