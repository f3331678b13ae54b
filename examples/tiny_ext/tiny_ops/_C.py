# @generated from ops.yaml by python -m codegen — do not edit
"""The legacy ``tiny_ops._C`` module, as a thin layer over ``torch.ops.tiny_ops``.

Loading this module loads the compiled extension (which registers every op
with the dispatcher) and defines one function per op with the historical
pybind11 signature: ``(tensor, scale)`` pairs, defaults and aliases.  Ops that
this build does not contain (their guard is off) are simply absent.
"""

import torch

from tiny_ops._shim import load_extension

load_extension("tiny_ops._C_extension")

_ops = torch.ops.tiny_ops
_Tensor = torch.Tensor
# Dynamo folds this to True; eager calls go straight to the op (Note [Shim call path] in codegen/spelling/python.py).
_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)


def _graph_break() -> None:
    """Note [Python values under Dynamo]: an op returning ints or int lists cannot sit in a graph.
    Dynamo would run it once while tracing and freeze the result; a graph break makes every call
    run the op (with fullgraph=True, compilation fails with a clear message instead)."""
    torch._dynamo.graph_break()


__all__: list[str] = []
FAMILIES: dict[str, list[str]] = {}


def _export(family: str, names: list[str]) -> None:
    FAMILIES.setdefault(family, []).extend(names)
    __all__.extend(names)




# ---- family 'blas': One level-1 BLAS routine.

_overload_axpy = _ops.axpy.default
_call_axpy = _overload_axpy._op

def axpy(y, x, alpha=1.0):
    """y += alpha * x, in place (same shape and dtype)."""
    if _compiling():
        return _overload_axpy(y, x, alpha)
    if alpha.__class__ is not float or alpha != 1.0:
        return _call_axpy(y, x, alpha)
    return _call_axpy(y, x)
_export('blas', ['axpy'])
