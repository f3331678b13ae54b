// Fallback for import-pybind (Note [Finding a module's includes] in codegen/includes.py).
// A CUDA build of torch ships this header (CMake writes it); a CPU wheel does not. It only has to
// let c10/cuda/CUDAMacros.h parse: searched last (-idirafter), so a real one always wins.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
