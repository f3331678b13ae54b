// The compiled module deep_gemm._C_extension.
//
// Ops register themselves with the dispatcher through the static initialisers
// in csrc/generated/*.cpp when this shared object is loaded.  This file only
// gives the object a module init function, so it is also an importable
// (limited-API, abi3) Python extension; no binding goes through the C API.

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>

namespace {

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_C_extension",
    "deep_gemm kernels, registered as torch.ops.deep_gemm.* when loaded.",
    -1,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__C_extension(void) { return PyModule_Create(&module_def); }
