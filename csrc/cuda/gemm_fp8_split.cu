// Instantiates the split-K FP8 GEMM kernels of DG_FP8_GEMM_SHAPES_SPLIT (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_SPLIT(DG_GEMM_INSTANTIATE_SPLIT)
