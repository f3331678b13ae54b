// Instantiates the FP8 GEMM kernels of DG_FP8_GEMM_SHAPES_ROW (fp8_gemm_launch.cuh).
#include "cuda/fp8_gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_ROW(DG_FP8_GEMM_INSTANTIATE)
