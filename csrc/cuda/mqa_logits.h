#pragma once
// Native sm90a kernels of the ragged MQA indexer logits (fp8_fp4_mqa_logits with FP8 q and kv):
// a persistent warp-specialised logits kernel and a cleaning kernel that writes -inf to every
// output entry outside the row's key range.  Raw device pointers only.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace deep_gemm::cuda {

struct MqaLogitsProblem {
  int seq = 0;  // S, queries
  int seq_kv = 0;  // Skv, keys
  int heads = 0;  // H: 8, 16, 32 or 64
  int head_dim = 0;  // D: 32, 64 or 128
  const void* q = nullptr;  // FP8 e4m3 [S, H, D], packed (row h of query i at (i * H + h) * D)
  const void* kv = nullptr;  // FP8 e4m3 [Skv, D], row stride ld_kv bytes (multiple of 16)
  int64_t ld_kv = 0;
  const float* kv_sf = nullptr;  // [Skv], contiguous
  const void* weights = nullptr;  // [S, H], float32 or bfloat16, row stride ld_w elements
  int64_t ld_w = 0;
  bool weights_bf16 = false;
  const int* ks = nullptr;  // int32 [S] on the device
  const int* ke = nullptr;  // int32 [S] on the device
  void* logits = nullptr;  // [S, cols], row stride ld_out elements
  int64_t ld_out = 0;
  bool out_bf16 = false;
  int cols = 0;  // Skv (full form) or max_seqlen_k (compressed form)
  bool compressed = false;  // column t of row i holds key ks[i] + t
  int num_sms = 0;
  int config = 0;  // tuning variant, from mqa_logits_config (0: the default)
};

// Index of the tuning configuration `name` (DG_MQA_LOGITS_CONFIG; "" = the default), -1 if unknown.
int mqa_logits_config(const std::string& name);

// The configuration names, comma-separated.
std::string mqa_logits_config_names();

// Empty when the kernels serve `p`, else why not.
std::string mqa_logits_unsupported(const MqaLogitsProblem& p);

cudaError_t mqa_logits(const MqaLogitsProblem& p, cudaStream_t stream);

}  // namespace deep_gemm::cuda
