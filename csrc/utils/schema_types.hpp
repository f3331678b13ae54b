#pragma once
// Conversions from the types TORCH_LIBRARY passes (int64_t, IntArrayRef, ...)
// to the natural C++ types of the implementations (int, std::tuple<int, ...>,
// std::optional<std::vector<int>>, ...).  Generated wrappers pick a helper
// through the table in codegen/conversions.py; each helper checks the value
// and names the argument when it does not fit.

#include <ATen/ATen.h>
#include <c10/util/OptionalArrayRef.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "utils/error.hpp"

namespace deep_gemm::torch_utils {

inline int to_int(int64_t value, const char* arg) {
  DG_CHECK_ARG(value >= std::numeric_limits<int>::min() && value <= std::numeric_limits<int>::max(), arg, "is ", value,
               ", which does not fit a 32-bit int");
  return static_cast<int>(value);
}

inline std::optional<int> to_optional_int(const std::optional<int64_t>& value, const char* arg) {
  if (!value.has_value()) return std::nullopt;
  return to_int(*value, arg);
}

inline std::optional<float> to_optional_float(const std::optional<double>& value, const char*) {
  if (!value.has_value()) return std::nullopt;
  return static_cast<float>(*value);
}

inline std::string to_string(c10::string_view value, const char*) { return std::string(value); }

inline std::optional<std::string> to_optional_string(const std::optional<c10::string_view>& value, const char*) {
  if (!value.has_value()) return std::nullopt;
  return std::string(*value);
}

inline std::vector<int> to_int_vector(at::IntArrayRef values, const char* arg) {
  std::vector<int> out;
  out.reserve(values.size());
  for (const auto v : values) out.push_back(to_int(v, arg));
  return out;
}

// int[] -> whichever list the implementation takes: std::vector<int> (every
// value checked to fit, as to_int does) or std::vector<int64_t> (values as
// given, e.g. device pointers).  The wrapper passes this proxy; the
// implementation's parameter type picks the conversion.
class IntList {
 public:
  IntList(at::IntArrayRef values, const char* arg) : values_(values), arg_(arg) {}
  operator std::vector<int>() const { return to_int_vector(values_, arg_); }  // NOLINT(google-explicit-constructor)
  operator std::vector<int64_t>() const { return values_.vec(); }  // NOLINT(google-explicit-constructor)

 private:
  at::IntArrayRef values_;
  const char* arg_;
};

inline IntList to_int_list(at::IntArrayRef values, const char* arg) { return {values, arg}; }

inline std::optional<std::vector<int>> to_optional_int_vector(at::OptionalIntArrayRef values, const char* arg) {
  if (!values.has_value()) return std::nullopt;
  return to_int_vector(*values, arg);
}

namespace detail {
template <size_t... I>
auto make_int_tuple(at::IntArrayRef values, const char* arg, std::index_sequence<I...>) {
  return std::make_tuple(((void)I, to_int(values[I], arg))...);
}
}  // namespace detail

// int[N] -> std::tuple<int, ..., int> (N entries).
template <size_t N>
auto to_tuple(at::IntArrayRef values, const char* arg) {
  DG_CHECK_ARG(values.size() == N, arg, "must have ", N, " entries, got ", values.size(), " (", values, ")");
  return detail::make_int_tuple(values, arg, std::make_index_sequence<N>{});
}

template <size_t N>
auto to_optional_tuple(at::OptionalIntArrayRef values, const char* arg)
    -> std::optional<decltype(to_tuple<N>(at::IntArrayRef{}, arg))> {
  if (!values.has_value()) return std::nullopt;
  return to_tuple<N>(*values, arg);
}

}  // namespace deep_gemm::torch_utils
