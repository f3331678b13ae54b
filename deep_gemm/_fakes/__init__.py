"""Fake (meta) kernels for the ops whose output shape the C++ side cannot derive on meta tensors.

One module per family of ``csrc/apis/`` that has such ops (``layout``,
``attention``); ``checks`` holds what they share.  ``ops.yaml`` names each fake
by its dotted path (``fake: {function: deep_gemm._fakes.layout.<op>}``), and
``python -m codegen check`` makes sure every such path names a function here.

Each fake mirrors the shape, strides and dtype rules of its op (see ops.yaml)
without reading tensor values, so torch.compile and FakeTensor can trace the
op.  A fake also runs for plain meta tensors (a call with any argument on the
meta device dispatches to it), so it first checks what the C++ implementation
checks without reading values, and fails the same way: a ValueError
"<op>: argument '<arg>' ..." instead of an IndexError from deep inside.
"""
