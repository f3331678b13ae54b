// Instantiates the FP8 GEMM kernels of DG_FP8_GEMM_SHAPES_ROW_WIDE (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_ROW_WIDE(DG_GEMM_INSTANTIATE)
