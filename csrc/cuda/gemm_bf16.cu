// Instantiates the BF16 GEMM kernels of DG_BF16_GEMM_SHAPES (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_BF16_GEMM_SHAPES(DG_GEMM_INSTANTIATE)
