// Instantiates the FP8 GEMM kernel of DG_FP8_GEMM_SHAPES_NARROW (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_SHAPES_NARROW(DG_GEMM_INSTANTIATE)
