// @generated from ops.yaml by python -m codegen — do not edit
// Family 'runtime': Process-wide settings read by the kernel heuristics.
#include <torch/library.h>

#include "utils/schema_types.hpp"
#include "apis/runtime.hpp"

namespace {

// set_num_sms(int new_num_sms) -> ()
void wrap_set_num_sms(int64_t new_num_sms) {
  const deep_gemm::OpScope scope("set_num_sms");
  ::deep_gemm::runtime::set_num_sms(deep_gemm::torch_utils::to_int(new_num_sms, "new_num_sms"));
}

// get_num_sms() -> int
int64_t wrap_get_num_sms() {
  const deep_gemm::OpScope scope("get_num_sms");
  return ::deep_gemm::runtime::get_num_sms();
}

// set_tc_util(int new_tc_util) -> ()
void wrap_set_tc_util(int64_t new_tc_util) {
  const deep_gemm::OpScope scope("set_tc_util");
  ::deep_gemm::runtime::set_tc_util(deep_gemm::torch_utils::to_int(new_tc_util, "new_tc_util"));
}

// get_tc_util() -> int
int64_t wrap_get_tc_util() {
  const deep_gemm::OpScope scope("get_tc_util");
  return ::deep_gemm::runtime::get_tc_util();
}

// set_pdl(bool new_enable_pdl) -> ()
void wrap_set_pdl(bool new_enable_pdl) {
  const deep_gemm::OpScope scope("set_pdl");
  ::deep_gemm::runtime::set_pdl(new_enable_pdl);
}

// get_pdl() -> bool
bool wrap_get_pdl() {
  const deep_gemm::OpScope scope("get_pdl");
  return ::deep_gemm::runtime::get_pdl();
}

// set_ignore_compile_dims(bool new_value) -> ()
void wrap_set_ignore_compile_dims(bool new_value) {
  const deep_gemm::OpScope scope("set_ignore_compile_dims");
  ::deep_gemm::runtime::set_ignore_compile_dims(new_value);
}

// get_ignore_compile_dims() -> bool
bool wrap_get_ignore_compile_dims() {
  const deep_gemm::OpScope scope("get_ignore_compile_dims");
  return ::deep_gemm::runtime::get_ignore_compile_dims();
}

// set_block_size_multiple_of(int[] value) -> ()
void wrap_set_block_size_multiple_of(at::IntArrayRef value) {
  const deep_gemm::OpScope scope("set_block_size_multiple_of");
  ::deep_gemm::runtime::set_block_size_multiple_of(deep_gemm::torch_utils::to_int_list(value, "value"));
}

// get_block_size_multiple_of() -> int[]
std::vector<int64_t> wrap_get_block_size_multiple_of() {
  const deep_gemm::OpScope scope("get_block_size_multiple_of");
  return ::deep_gemm::runtime::get_block_size_multiple_of();
}

// init(str library_root_path, str cuda_home_path_by_python) -> ()
void wrap_init(c10::string_view library_root_path, c10::string_view cuda_home_path_by_python) {
  const deep_gemm::OpScope scope("init");
  ::deep_gemm::runtime::init(deep_gemm::torch_utils::to_string(library_root_path, "library_root_path"), deep_gemm::torch_utils::to_string(cuda_home_path_by_python, "cuda_home_path_by_python"));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(deep_gemm, m) {
  m.def("set_num_sms(int new_num_sms) -> ()");
  m.def("get_num_sms() -> int");
  m.def("set_tc_util(int new_tc_util) -> ()");
  m.def("get_tc_util() -> int");
  m.def("set_pdl(bool new_enable_pdl) -> ()");
  m.def("get_pdl() -> bool");
  m.def("set_ignore_compile_dims(bool new_value) -> ()");
  m.def("get_ignore_compile_dims() -> bool");
  m.def("set_block_size_multiple_of(int[] value) -> ()");
  m.def("get_block_size_multiple_of() -> int[]");
  m.def("init(str library_root_path, str cuda_home_path_by_python) -> ()");
}

TORCH_LIBRARY_IMPL(deep_gemm, CompositeExplicitAutograd, m) {
  m.impl("set_num_sms", TORCH_FN(wrap_set_num_sms));
  m.impl("get_num_sms", TORCH_FN(wrap_get_num_sms));
  m.impl("set_tc_util", TORCH_FN(wrap_set_tc_util));
  m.impl("get_tc_util", TORCH_FN(wrap_get_tc_util));
  m.impl("set_pdl", TORCH_FN(wrap_set_pdl));
  m.impl("get_pdl", TORCH_FN(wrap_get_pdl));
  m.impl("set_ignore_compile_dims", TORCH_FN(wrap_set_ignore_compile_dims));
  m.impl("get_ignore_compile_dims", TORCH_FN(wrap_get_ignore_compile_dims));
  m.impl("set_block_size_multiple_of", TORCH_FN(wrap_set_block_size_multiple_of));
  m.impl("get_block_size_multiple_of", TORCH_FN(wrap_get_block_size_multiple_of));
  m.impl("init", TORCH_FN(wrap_init));
}
