"""The project's manifest, loaded once for the tests (ops are listed from it, never by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codegen.model import Manifest, Op
from codegen.pipeline import load_manifest
from codegen.schema import SCALAR_TYPE_NAMES, Arg
from codegen.spelling.python import params

ROOT = Path(__file__).resolve().parents[2]
MANIFEST: Manifest = load_manifest(ROOT / "ops.yaml", cache_root=ROOT)
OPS: dict[str, Op] = {op.name: op for op in MANIFEST.ops}


def _default(arg: Arg) -> Any:
    if arg.type.base == "ScalarType" and isinstance(arg.default, int):
        import torch

        return getattr(torch, SCALAR_TYPE_NAMES[arg.default])
    return arg.default


# The legacy spelling of a schema value, for converters that accept less than the schema does.
_LEGACY_FORM = {"int_or_pair": lambda v: v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v}


def legacy_call(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Turn schema-form arguments into the legacy deep_gemm._C call (packing pairs).

    An argument the schema-form call leaves out takes its schema default (what
    the schema-form call means), so no later parameter shifts into its place.
    """
    names = op.schema.arg_names
    bound = {a.name: _default(a) for a in op.schema.args if a.has_default}
    bound.update(zip(names, args))
    bound.update(kwargs)
    out_args: list[Any] = []
    out_kwargs: dict[str, Any] = {}
    gap = False  # once a parameter is left out, later ones must go by keyword
    for p in params(op):
        members = [m.name for m in p.members]
        if not all(m in bound for m in members):
            gap = True
            continue
        value = tuple(bound[m] for m in members) if p.is_pack else bound[members[0]]
        if p.converter in _LEGACY_FORM:
            value = _LEGACY_FORM[p.converter](value)
        if p.kind == "kwonly" or (gap and p.kind == "pos"):
            out_kwargs[p.name] = value
        else:
            out_args.append(value)
    return tuple(out_args), out_kwargs
