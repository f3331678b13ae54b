// Instantiates the multicast-pair BF16 GEMM kernels of DG_BF16_GEMM_SHAPES_CAST (gemm_launch.cuh).
#include "cuda/gemm_instantiate.cuh"

DG_BF16_GEMM_SHAPES_CAST(DG_GEMM_INSTANTIATE_BF16_CAST)
