#pragma once
// Native sm90a kernels of the paged MQA indexer (decode): the work schedule
// (get_paged_mqa_logits_metadata) and the FP8 logits over a paged KV cache
// (fp8_fp4_paged_mqa_logits with an FP8 q).  Plain C++ interface: raw pointers, sizes,
// strides (in elements unless named *_bytes) and a stream.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace deep_gemm::cuda {

// schedule [num_sms + 1, 2] int32 (row stride 2) from context_lens [batch, next_n] int32.
// One CTA; reads context_lens on the device only.
cudaError_t launch_paged_mqa_logits_metadata(const int* context_lens, int64_t ctx_stride_b, int64_t ctx_stride_t,
                                             int batch, int next_n, int block_kv, int num_sms, int* schedule,
                                             cudaStream_t stream);

// Pipeline variants of the logits kernel (DG_PAGED_MQA_CONFIG selects one, see docs/gpu.md):
// the number of math warpgroups (2 or 4, each taking every 2nd / 4th KV block), the depth of the
// KV pipeline (96 KiB of stages, or as many stages as the shared memory holds), and one producer
// warp for all warpgroups or one per warpgroup (kPagedSplit, or-ed into the others).
enum PagedMqaVariant : int {
  kPagedWg2 = 0,
  kPagedDeep = 1,
  kPagedWg2Deep = 1,
  kPagedWg4 = 2,
  kPagedWg4Deep = 3,
  kPagedSplit = 4,
};

struct PagedMqaProblem {
  int batch = 0, next_n = 0, heads = 0, head_dim = 0, block_kv = 0;
  // q: FP8 e4m3 [batch, next_n, heads, head_dim], byte strides (multiples of 16), D contiguous.
  const void* q = nullptr;
  int64_t q_stride_b = 0, q_stride_t = 0, q_stride_h = 0;
  // kv_cache: num_blocks blocks of kv_block_bytes bytes (a multiple of 16); each holds block_kv
  // rows of head_dim FP8 values, then block_kv float32 scales.
  const void* kv = nullptr;
  int64_t num_blocks = 0, kv_block_bytes = 0;
  // weights [batch * next_n, heads], float32 or bf16, row stride in elements.
  const void* weights = nullptr;
  bool weights_bf16 = false;
  int64_t weights_stride = 0;
  const int* context_lens = nullptr;  // [batch, next_n]
  int64_t ctx_stride_b = 0, ctx_stride_t = 0;
  const int* block_table = nullptr;  // [table_rows, table_cols], stride(1) == 1
  int64_t table_rows = 0, table_cols = 0, table_stride = 0;
  const int* indices = nullptr;  // optional [batch]: the table row of each query group
  int64_t indices_stride = 0;
  const int* schedule = nullptr;  // [num_sms + 1, 2]
  int64_t schedule_stride = 0;
  int num_sms = 0;
  void* out = nullptr;  // [batch * next_n, >= max_context_len], float32 or bf16
  bool out_bf16 = false;
  int64_t out_stride = 0;
  int max_context_len = 0;
  int variant = kPagedWg2;  // a PagedMqaVariant
};

// True when the kernel serves this shape (heads 16/32/64, head_dim 32/64/128, next_n 1/2,
// block_kv 32/64) and the alignment the tensor maps need.
bool paged_mqa_logits_supported(const PagedMqaProblem& p);

// Launches num_sms persistent CTAs; cudaErrorNotSupported when not supported.
cudaError_t launch_paged_mqa_logits(const PagedMqaProblem& p, cudaStream_t stream);

}  // namespace deep_gemm::cuda
