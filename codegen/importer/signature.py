"""A binding's parameters in schema form: names (C++ or py::arg), types, packs, defaults, notes."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Any

from .. import cxx
from .reader import Binding, target_params
from .translate import Untranslatable, param_type, translate_default, unsigned_in


def pack_second(name: str) -> str:
    """The schema name of a pack's second member (the scale): ``sfa`` for ``a``, ``q_sf`` for ``q_x``."""
    return f"sf{name}" if len(name) == 1 else f"{name}_sf"


@dataclass
class Signature:
    """A binding's parameters in schema form."""

    args: list[str] = field(default_factory=list)  # "Tensor a", "int? n=None", "*", ...
    packs: list[tuple[str, str, str]] = field(default_factory=list)  # (python name, first, second)
    tensors: list[str] = field(default_factory=list)  # every Tensor argument (for `writes`)
    python_defaults: dict[str, object] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)  # schema name -> py::arg name
    notes: list[str] = field(default_factory=list)


def _usable(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _names(b: Binding, params: list[Any]) -> list[tuple[str, str]]:
    """(schema name, Python name) per parameter: the C++ name where it has one, the py::arg name in Python."""
    out: list[tuple[str, str]] = []
    for i, p in enumerate(params):
        cpp_name = str(p.spelling)
        py_name = b.py_args[i].name if b.py_args else cpp_name
        py_name = py_name or cpp_name or f"arg{i}"
        schema_name = cpp_name if _usable(cpp_name) else py_name
        if not _usable(py_name):
            raise Untranslatable(f"parameter name '{py_name}' is not usable in a schema")
        out.append((schema_name, py_name))
    return out


def signature(b: Binding) -> Signature:
    params = target_params(b.target)
    if b.py_args and len(b.py_args) != len(params):
        raise Untranslatable(f"has {len(b.py_args)} py::arg for {len(params)} parameters")
    sig = Signature()
    for i, (p, (name, py_name)) in enumerate(zip(params, _names(b, params))):
        ctype = cxx.cxx_type(p.type)
        try:
            st = param_type(ctype)
        except Untranslatable as exc:
            raise Untranslatable(f"parameter {i + 1} '{name}' is {exc}") from None
        if ctype.ref == "&" and not ctype.const:
            sig.notes.append(
                f"parameter '{name}' is a non-const {ctype.value}&: the wrapper passes a const value, so verify "
                "rejects it; take it by value or const&, and mark it written (Tensor(x!)) if the op writes it"
            )
        unsigned = unsigned_in(ctype.value)
        if unsigned is not None:
            sig.notes.append(
                f"parameter '{name}' is {ctype.value}, an unsigned type: drafted as the schema's (signed) int, "
                "and verify rejects it; take int or int64_t"
            )
        if py_name != name:
            sig.renames[name] = py_name
            sig.notes.append(
                f"py::arg '{py_name}' names the C++ parameter '{name}': the schema uses '{name}' and "
                f"python.rename keeps '{py_name}' in Python"
            )
        if b.kw_only_at == i:
            sig.args.append("*")
        default = b.py_args[i].default if b.py_args else None
        if st.is_pack:
            if default is not None:
                raise Untranslatable(
                    f"parameter '{name}' is a (tensor, scale) pair with a default, which a pack cannot have"
                )
            if st.tuple_pack:
                sig.notes.append(
                    f"parameter '{name}' is a {ctype.value}: drafted as a pack; the wrapper passes a std::pair, "
                    "which the std::tuple parameter accepts"
                )
            second = pack_second(name)
            sig.args += [f"{st.types[0]} {name}", f"{st.types[1]} {second}"]
            sig.packs.append((name, name, second))
            sig.tensors += [name, second]
            continue
        text = f"{st.types[0]} {name}"
        if default is not None:
            try:
                d = translate_default(default, st.types[0])
            except Untranslatable as exc:
                raise Untranslatable(f"parameter '{name}': {exc}") from None
            if d.schema is not None:
                text += f"={d.schema}"
            else:
                sig.python_defaults[name] = d.python
        sig.args.append(text)
        if st.types[0].startswith("Tensor"):
            sig.tensors.append(name)
    return sig
