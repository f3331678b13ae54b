#pragma once
// Scale-factor layouts the GEMM kernels consume, and the contiguous-layout
// alignment of grouped GEMMs.
//
// Every op here returns a new tensor, never a view of its input, so that it
// stays functional under torch.compile.

#include <ATen/ATen.h>

#include <optional>
#include <tuple>
#include <variant>
#include <vector>

#include "apis/runtime.hpp"
#include "reference/quant.hpp"
#include "utils/checks.hpp"
#include "utils/math.hpp"

#ifdef DG_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "cuda/sf_layout.h"
#endif

namespace deep_gemm::layout {

// int64 arithmetic: x may be as large as INT_MAX, whose aligned size does not fit an int.
inline int64_t get_tma_aligned_size(int x, int element_size) {
  DG_CHECK_ARG(element_size > 0 && 16 % element_size == 0, "element_size",
               "must be a positive divisor of 16 (bytes per element), got ", element_size);
  DG_CHECK_ARG(x >= 0, "x", "must be non-negative, got ", x);
  return align<int64_t>(x, 16 / element_size);
}

namespace detail {

// [B, mn, cols] storage laid out MN-major with mn padded to a multiple of 4
// (strides (tma_mn * cols, 1, tma_mn)); padding is zero.
inline at::Tensor mn_major_empty(int64_t batch, int64_t mn, int64_t cols, const at::TensorOptions& options) {
  const int64_t tma_mn = align<int64_t>(mn, 4);
  return at::zeros({batch, cols, tma_mn}, options).transpose(1, 2).narrow(1, 0, mn);
}

inline void check_sf(const at::Tensor& sf, const char* arg, std::initializer_list<at::ScalarType> dtypes) {
  checks::dtype(sf, arg, dtypes);
  DG_CHECK_ARG(sf.dim() == 2 || sf.dim() == 3, arg, "must be 2-D or 3-D, got ", sf.dim(), "-D with shape ", sf.sizes());
}

// Rows [0, mn) that belong to a group of a psum layout: group g covers
// [align(end[g-1], alignment), end[g]).  Computed on the device (no host sync).
inline at::Tensor psum_valid_rows(const at::Tensor& psum, int64_t mn, int alignment) {
  const auto ends = psum.to(at::kLong);
  auto prev = at::cat({at::zeros({1}, ends.options()), ends.narrow(0, 0, ends.size(0) - 1)});
  const auto starts = at::floor_divide(prev + (alignment - 1), alignment) * alignment;
  const auto rows = at::arange(mn, ends.options()).unsqueeze(1);
  return at::logical_and(rows >= starts.unsqueeze(0), rows < ends.unsqueeze(0)).any(1);
}

}  // namespace detail

// CUDA tensors take one kernel pass (csrc/cuda/sf_layout.cu); `valid_rows` (bool [mn]) masks rows.
inline bool mn_major_on_cuda(const at::Tensor& sf3, bool pack, at::Tensor& out,
                             const std::optional<at::Tensor>& valid_rows) {
#ifdef DG_WITH_CUDA
  if (sf3.is_cuda()) {
    const int64_t tma_mn = align<int64_t>(sf3.size(1), 4);
    const int64_t cols = pack ? ceil_div<int64_t>(sf3.size(2), 4) : sf3.size(2);
    auto base = at::empty({sf3.size(0), cols, tma_mn}, sf3.options().dtype(pack ? at::kInt : at::kFloat));
    const c10::cuda::CUDAGuard guard(sf3.device());
    const at::Tensor valid = valid_rows.has_value() ? valid_rows->contiguous() : at::Tensor();
    const cudaError_t status = cuda::sf_mn_major(
        sf3.data_ptr<float>(), cuda::SfStrides{sf3.stride(0), sf3.stride(1), sf3.stride(2)}, sf3.size(0), sf3.size(1),
        sf3.size(2), tma_mn, cols, pack, valid.defined() ? valid.data_ptr<bool>() : nullptr, base.data_ptr(),
        at::cuda::getCurrentCUDAStream());
    C10_CUDA_CHECK(status);
    out = base.transpose(1, 2).narrow(1, 0, sf3.size(1));
    return true;
  }
#endif
  (void)sf3, (void)pack, (void)out, (void)valid_rows;
  return false;
}

inline at::Tensor get_mn_major_tma_aligned_tensor(const at::Tensor& sf) {
  detail::check_sf(sf, "sf", {at::kFloat});
  const bool batched = sf.dim() == 3;
  const auto sf3 = batched ? sf : sf.unsqueeze(0);
  at::Tensor out;
  if (!mn_major_on_cuda(sf3, false, out, std::nullopt)) {
    out = detail::mn_major_empty(sf3.size(0), sf3.size(1), sf3.size(2), sf.options());
    out.copy_(sf3);
  }
  return batched ? out : out.select(0, 0);
}

inline at::Tensor get_mn_major_tma_aligned_packed_ue8m0_tensor(const at::Tensor& sf,
                                                               const std::optional<at::Tensor>& psum_layout) {
  detail::check_sf(sf, "sf", {at::kFloat});
  const bool batched = sf.dim() == 3;
  auto sf3 = batched ? sf : sf.unsqueeze(0);
  const int64_t mn = sf3.size(1);
  std::optional<at::Tensor> valid;  // rows a psum layout covers; the others come out zero
  if (psum_layout.has_value()) {
    const auto& psum = *psum_layout;
    checks::dtype(psum, "psum_layout", {at::kInt});
    checks::dim(psum, "psum_layout", 1);
    checks::same_device(psum, "psum_layout", sf, "sf");
    DG_CHECK_ARG(sf3.size(0) == 1, "sf", "must hold a single batch when psum_layout is given, got ", sf3.size(0));
    DG_CHECK_ARG(sf.is_contiguous(), "sf", "must be contiguous when psum_layout is given, got strides ", sf.strides());
    valid = psum.numel() > 0 ? detail::psum_valid_rows(psum, mn, runtime::settings().mk_alignment)
                             : at::zeros({mn}, sf.options().dtype(at::kBool));
  }
  at::Tensor out;
  if (!mn_major_on_cuda(sf3, true, out, valid)) {
    auto packed = quant::pack_ue8m0_last_dim(sf3);
    if (valid.has_value()) packed = at::where(valid->view({1, mn, 1}), packed, at::zeros({}, packed.options()));
    out = detail::mn_major_empty(sf3.size(0), mn, packed.size(2), packed.options());
    out.copy_(packed);
  }
  return batched ? out : out.select(0, 0);
}

inline at::Tensor get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const at::Tensor& sf,
                                                                         const at::Tensor& grouped_layout,
                                                                         const std::optional<std::vector<int>>& ks_cpu,
                                                                         int gran_k, int k_alignment,
                                                                         bool use_psum_layout) {
  checks::dtype(sf, "sf", {at::kFloat});
  checks::dim(sf, "sf", 2);
  DG_CHECK_ARG(sf.is_contiguous(), "sf", "must be contiguous, got strides ", sf.strides());
  checks::dtype(grouped_layout, "grouped_layout", {at::kInt});
  checks::dim(grouped_layout, "grouped_layout", 1);
  checks::same_device(grouped_layout, "grouped_layout", sf, "sf");
  DG_CHECK_ARG(gran_k == 32 || gran_k == 128, "gran_k", "must be 32 or 128, got ", gran_k);
  DG_CHECK_ARG(k_alignment > 0 && k_alignment % 32 == 0, "k_alignment", "must be a positive multiple of 32, got ",
               k_alignment);
  const int64_t mn = sf.size(1);
  const int64_t num_groups = grouped_layout.size(0);
  DG_CHECK_ARG(mn % 4 == 0, "sf", "must have a multiple of 4 columns (MN), got ", mn);
  DG_CHECK_ARG(num_groups <= 128, "grouped_layout", "may describe at most 128 groups, got ", num_groups);

  std::vector<int64_t> ks;
  int64_t out_rows = 0;
  const bool have_ks = ks_cpu.has_value() && !ks_cpu->empty();
  if (have_ks) {
    DG_CHECK_ARG(static_cast<int64_t>(ks_cpu->size()) == num_groups, "ks_cpu", "has ", ks_cpu->size(),
                 " entries but grouped_layout describes ", num_groups, " groups");
    for (const int k : *ks_cpu) {
      DG_CHECK_ARG(k >= 0 && k % k_alignment == 0, "ks_cpu", "entries must be non-negative multiples of k_alignment (",
                   k_alignment, "), got ", k);
      ks.push_back(k);
      out_rows += ceil_div<int64_t>(ceil_div<int64_t>(k, gran_k), 4);
    }
  } else {
    DG_CHECK_ARG(use_psum_layout, "ks_cpu", "may be None or empty only with use_psum_layout=True");
    checks::not_meta_data_read(grouped_layout, "grouped_layout");
    const auto ends = grouped_layout.to(at::kCPU, at::kLong);
    int64_t prev_end = 0;
    for (int64_t g = 0; g < num_groups; ++g) {
      const int64_t start = align<int64_t>(prev_end, k_alignment);
      const int64_t end = ends[g].item<int64_t>();
      DG_CHECK_ARG(end >= start, "grouped_layout", "entry ", g, " ends at ", end, " before its aligned start ", start);
      ks.push_back(end - start);
      prev_end = end;
    }
    out_rows = (sf.size(0) + 3 * num_groups) / 4;
  }

  int64_t sf_rows = 0;
  for (const auto k : ks) sf_rows += ceil_div<int64_t>(k, gran_k);
  DG_CHECK_ARG(sf_rows == sf.size(0), "sf", "has ", sf.size(0), " rows, but the groups' K sizes need ", sf_rows,
               " (sum of ceil(k / gran_k))");

#ifdef DG_WITH_CUDA
  if (sf.is_cuda() && num_groups <= cuda::kMaxSfGroups) {
    // One pass on the device: every word of the output written once (no zero fill first).
    cuda::KGroupedSfWords words{};
    words.count = static_cast<int>(num_groups);
    int64_t sf_start = 0, out_start = 0;
    for (int64_t g = 0; g < num_groups; ++g) {
      const int64_t rows = ceil_div<int64_t>(ks[g], gran_k);
      words.sf_start[g] = sf_start;
      words.out_start[g] = out_start;
      words.rows[g] = rows;
      sf_start += rows;
      out_start += ceil_div<int64_t>(rows, 4);
    }
    auto packed = at::empty({out_rows, mn}, sf.options().dtype(at::kInt));
    const c10::cuda::CUDAGuard guard(sf.device());
    C10_CUDA_CHECK(cuda::k_grouped_sf_pack_ue8m0(sf.data_ptr<float>(), mn, out_rows, words,
                                                 reinterpret_cast<uint32_t*>(packed.data_ptr<int>()),
                                                 at::cuda::getCurrentCUDAStream()));
    return packed;
  }
#endif
  auto out = at::zeros({out_rows, mn}, sf.options().dtype(at::kInt));
  int64_t sf_offset = 0, out_offset = 0;
  for (const auto k : ks) {
    const int64_t rows = ceil_div<int64_t>(k, gran_k);
    const int64_t words = ceil_div<int64_t>(rows, 4);
    if (rows > 0) {
      // [rows, mn] -> [mn, rows] so the 4 K-groups of a word are adjacent, then pack.
      const auto group = sf.narrow(0, sf_offset, rows).transpose(0, 1);
      out.narrow(0, out_offset, words).copy_(quant::pack_ue8m0_last_dim(group).transpose(0, 1));
    }
    sf_offset += rows;
    out_offset += words;
  }
  return out;
}

namespace detail {

struct Granularity {
  int mn;
  int k;
};

inline Granularity sf_granularity(const std::vector<int>& recipe, const std::optional<bool>& is_sfa) {
  DG_CHECK_ARG(recipe.size() == 2 || recipe.size() == 3, "recipe", "must have 2 or 3 entries, got ", recipe.size());
  if (recipe.size() == 3) {
    DG_CHECK_ARG(is_sfa.has_value(), "is_sfa", "is required with a 3-entry recipe (it picks recipe[0] or recipe[1])");
    return {*is_sfa ? recipe[0] : recipe[1], recipe[2]};
  }
  DG_CHECK_ARG(!is_sfa.has_value(), "is_sfa", "must be None with a 2-entry recipe (gran_mn, gran_k)");
  return {recipe[0], recipe[1]};
}

inline at::Tensor copy_with_strides(const at::Tensor& sf) {
  auto out = at::empty_strided(sf.sizes(), sf.strides(), sf.options());
  out.copy_(sf);
  return out;
}

}  // namespace detail

inline at::Tensor transform_sf_into_required_layout(const at::Tensor& sf, int mn, int k, const std::vector<int>& recipe,
                                                    const std::optional<int>& num_groups,
                                                    const std::optional<bool>& is_sfa, bool disable_ue8m0_cast,
                                                    const std::optional<at::Tensor>& psum_layout) {
  const auto gran = detail::sf_granularity(recipe, is_sfa);
  DG_CHECK_ARG(gran.mn == 1 || gran.mn == 128, "recipe", "gives an MN granularity of ", gran.mn, "; expected 1 or 128");
  DG_CHECK_ARG(gran.k == 32 || gran.k == 128, "recipe", "gives a K granularity of ", gran.k, "; expected 32 or 128");
  checks::non_negative(mn, "mn");
  checks::non_negative(k, "k");
  checks::dtype(sf, "sf", {at::kFloat, at::kInt});
  const bool is_int = sf.scalar_type() == at::kInt;
  const int64_t expected_dim = num_groups.has_value() ? 3 : 2;
  checks::dim(sf, "sf", expected_dim);
  if (num_groups.has_value()) {
    DG_CHECK_ARG(sf.size(0) == *num_groups, "sf", "has ", sf.size(0), " groups in dim 0, but num_groups is ",
                 *num_groups);
  }
  const int64_t rows = ceil_div<int64_t>(mn, gran.mn);
  const int64_t cols = is_int ? ceil_div<int64_t>(k, 4 * gran.k) : ceil_div<int64_t>(k, gran.k);
  DG_CHECK_ARG(sf.size(-2) == rows && sf.size(-1) == cols, "sf", "must end in shape [", rows, ", ", cols,
               "] for mn=", mn, ", k=", k, " and granularity (", gran.mn, ", ", gran.k, ")",
               is_int ? " with packed UE8M0" : "", ", got ", sf.sizes());

  if (is_int) {
    DG_CHECK_ARG(gran.mn == 1, "recipe", "must have MN granularity 1 for packed UE8M0 scales, got ", gran.mn);
    const int64_t tma_mn = get_tma_aligned_size(mn, 4);
    DG_CHECK_ARG(mn == 1 || sf.stride(-2) == 1, "sf", "packed scales must be MN-major (stride(-2) == 1), got strides ",
                 sf.strides());
    DG_CHECK_ARG(sf.stride(-1) == tma_mn, "sf", "packed scales must have stride(-1) == ", tma_mn,
                 " (TMA-aligned MN), got ", sf.stride(-1));
    if (expected_dim == 3) {
      DG_CHECK_ARG(sf.stride(0) == sf.stride(-1) * sf.size(-1), "sf", "packed scales must have batch stride ",
                   sf.stride(-1) * sf.size(-1), ", got ", sf.stride(0));
    }
    return detail::copy_with_strides(sf);
  }

  // float32 scales: SM90 keeps them float (MN-major, TMA-aligned); SM100 packs
  // them to UE8M0.  Without a GPU, disable_ue8m0_cast picks the SM90 rules.
  const int arch = sf.is_cuda() ? runtime::device_arch_major() : 0;
  const bool keep_float = arch == 9 || (arch == 0 && disable_ue8m0_cast);
  if (keep_float) {
    DG_CHECK_SUPPORTED(gran.k == 128, "float32 scales with K granularity ", gran.k,
                       " need UE8M0 packing (SM100 rules; pass disable_ue8m0_cast=False)");
    if (gran.mn == 1) return get_mn_major_tma_aligned_tensor(sf);
    const bool contiguous = sf.is_contiguous() || sf.transpose(-1, -2).is_contiguous();
    DG_CHECK_ARG(contiguous, "sf", "128x128 block scales must be contiguous (or contiguous once the last two dims ",
                 "are swapped), got strides ", sf.strides());
    return detail::copy_with_strides(sf);
  }
  DG_CHECK_SUPPORTED(!disable_ue8m0_cast,
                     "disable_ue8m0_cast=True is not supported on this GPU (it needs UE8M0 scales)");
  at::Tensor per_row = sf;
  if (gran.mn != 1) {
    const auto index = at::floor_divide(at::arange(static_cast<int64_t>(mn), sf.options().dtype(at::kLong)), gran.mn);
    per_row = sf.index_select(-2, index);
  }
  return get_mn_major_tma_aligned_packed_ue8m0_tensor(per_row, psum_layout);
}

inline void set_mk_alignment_for_contiguous_layout(int new_value) {
  DG_CHECK_ARG(new_value > 0 && new_value % 32 == 0, "new_value", "must be a positive multiple of 32, got ", new_value);
  runtime::settings().mk_alignment = new_value;
}

inline int get_mk_alignment_for_contiguous_layout() { return runtime::settings().mk_alignment; }

inline int get_theoretical_mk_alignment_for_contiguous_layout(const std::optional<int>& expected_m) {
  if (expected_m.has_value()) checks::non_negative(*expected_m, "expected_m");
  if (runtime::device_arch_major() != 10) return 128;
  int alignment = 224;
  if (expected_m.has_value()) {
    while (alignment > 32 && alignment - 32 >= *expected_m) alignment -= 32;
  }
  return alignment;
}

}  // namespace deep_gemm::layout
