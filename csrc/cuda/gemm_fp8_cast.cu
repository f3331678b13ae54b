// Instantiates the multicast-pair FP8 GEMM kernels of 128-row tiles (DG_FP8_GEMM_SHAPES_CAST_BM128, gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_CAST_BM128(DG_GEMM_INSTANTIATE_FP8_CAST)
