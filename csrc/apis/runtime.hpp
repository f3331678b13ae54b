#pragma once
// Process-wide settings read by the kernel heuristics.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "utils/error.hpp"

#ifdef DG_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace deep_gemm::runtime {

struct Settings {
  std::atomic<int> num_sms{0};  // 0: use every compute unit of the device
  std::atomic<int> tc_util{0};  // 0: unset, read back as 100
  std::atomic<bool> pdl{false};
  std::atomic<bool> ignore_compile_dims{false};
  std::atomic<int> block_m_multiple{1};
  std::atomic<int> block_n_multiple{1};
  std::atomic<int> mk_alignment{128};
  std::mutex paths_mutex;
  std::string library_root_path;
  std::string cuda_home_path;
};

inline Settings& settings() {
  static Settings instance;
  return instance;
}

// Compute units kernels may spread over: the current GPU's SM count when this
// build has CUDA and a GPU is present, otherwise the CPU threads ATen uses.
inline int device_compute_units() {
#ifdef DG_WITH_CUDA
  if (at::cuda::is_available()) {
    return at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  }
#endif
  return at::get_num_threads();
}

// Architecture the layout and alignment rules follow: the current GPU's
// compute capability major (9 = SM90, 10 = SM100), or 0 without a GPU.
inline int device_arch_major() {
#ifdef DG_WITH_CUDA
  if (at::cuda::is_available()) {
    return at::cuda::getCurrentDeviceProperties()->major;
  }
#endif
  return 0;
}

inline void set_num_sms(int new_num_sms) {
  const int available = device_compute_units();
  DG_CHECK_ARG(new_num_sms >= 0 && new_num_sms <= available, "new_num_sms", "must be between 0 and ", available,
               " (the device's compute units), got ", new_num_sms);
  settings().num_sms = new_num_sms;
}

inline int get_num_sms() {
  const int value = settings().num_sms;
  return value == 0 ? device_compute_units() : value;
}

inline void set_tc_util(int new_tc_util) {
  DG_CHECK_ARG(new_tc_util >= 0 && new_tc_util <= 100, "new_tc_util", "must be a percentage in [0, 100], got ",
               new_tc_util);
  settings().tc_util = new_tc_util;
}

inline int get_tc_util() {
  const int value = settings().tc_util;
  return value == 0 ? 100 : value;
}

inline void set_pdl(bool new_enable_pdl) { settings().pdl = new_enable_pdl; }
inline bool get_pdl() { return settings().pdl; }

inline void set_ignore_compile_dims(bool new_value) { settings().ignore_compile_dims = new_value; }
inline bool get_ignore_compile_dims() { return settings().ignore_compile_dims; }

inline void set_block_size_multiple_of(const std::vector<int>& value) {
  DG_CHECK_ARG(value.size() == 1 || value.size() == 2, "value", "must hold 1 or 2 block sizes, got ", value.size());
  for (const int v : value) {
    DG_CHECK_ARG(v >= 1 && v <= 256, "value", "entries must be block sizes in [1, 256], got ", v);
  }
  settings().block_m_multiple = value[0];
  settings().block_n_multiple = value.size() == 2 ? value[1] : value[0];
}

inline std::vector<int64_t> get_block_size_multiple_of() {
  return {settings().block_m_multiple.load(), settings().block_n_multiple.load()};
}

inline void init(const std::string& library_root_path, const std::string& cuda_home_path_by_python) {
  // The error_code overload: the throwing one raises std::filesystem_error (a name too long, a NUL
  // byte), which would reach Python without the op's name.
  std::error_code error;
  const bool is_directory = std::filesystem::is_directory(library_root_path, error);
  DG_CHECK_ARG(is_directory && !error, "library_root_path", "must be an existing directory, got '",
               library_root_path.size() > 256 ? library_root_path.substr(0, 256) + "..." : library_root_path, "'",
               error ? " (" + error.message() + ")" : std::string());
  std::lock_guard<std::mutex> lock(settings().paths_mutex);
  settings().library_root_path = library_root_path;
  settings().cuda_home_path = cuda_home_path_by_python;
}

}  // namespace deep_gemm::runtime
