// Instantiates the split-K BF16 GEMM kernels of DG_BF16_GEMM_SHAPES_SPLIT (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_BF16_GEMM_SHAPES_SPLIT(DG_GEMM_INSTANTIATE_BF16_SPLIT)
