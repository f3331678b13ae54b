// Instantiates the BF16 GEMM kernel of DG_BF16_GEMM_SHAPES_NARROW (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_BF16_GEMM_SHAPES_NARROW(DG_GEMM_INSTANTIATE)
