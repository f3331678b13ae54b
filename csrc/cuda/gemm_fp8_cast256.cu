// Instantiates the multicast-pair FP8 GEMM kernels of 256-row tiles (DG_FP8_GEMM_SHAPES_CAST_BM256, gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_CAST_BM256(DG_GEMM_INSTANTIATE_FP8_CAST)
