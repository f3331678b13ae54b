#pragma once
// CHECK(call): a CUDA runtime call in the stand-alone tools (gemm_trace.cu, wgmma_probe.cu); on an
// error it prints the call and the error's text and exits with status 1.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                         \
  do {                                                                      \
    const cudaError_t status_ = (call);                                     \
    if (status_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)
