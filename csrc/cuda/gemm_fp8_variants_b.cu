// Instantiates the FP8 main-loop variants of DG_FP8_GEMM_VARIANTS_B (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_FP8_GEMM_VARIANTS_B(DG_GEMM_INSTANTIATE_VARIANT)
