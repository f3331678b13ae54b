// Instantiates the BF16 GEMM kernels with MN-major operands of DG_BF16_MN_GEMM_SHAPES (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_BF16_MN_GEMM_SHAPES(DG_GEMM_INSTANTIATE)
