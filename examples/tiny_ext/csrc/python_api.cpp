// The compiled module tiny_ops._C_extension: loading it runs the static TORCH_LIBRARY initialisers
// of csrc/generated/*.cpp.  It binds nothing through the C API (limited API, abi3).

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>

namespace {

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_C_extension",
    "tiny_ops, registered as torch.ops.tiny_ops.* when loaded.",
    -1,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__C_extension(void) { return PyModule_Create(&module_def); }
