"""C++ types and default values -> schema spelling, for ``import-pybind``.

Note [C++ to schema]
~~~~~~~~~~~~~~~~~~~~
The reverse of ``codegen/conversions.py``: integers -> ``int``, ``float`` and
``double`` -> ``float``, ``bool``, ``std::string`` -> ``str``,
``at::ScalarType`` -> ``ScalarType``, ``at::Tensor`` -> ``Tensor``,
``std::optional<T>`` -> ``T?``, ``std::tuple<int, ...>`` -> ``int[N]``,
``std::vector<int>`` -> ``int[]``, ``std::pair<Tensor, Tensor>`` or
``std::tuple<Tensor, Tensor>`` (second possibly optional) -> two Tensors and a
pack rule (the wrapper passes a ``std::pair``, which a two-element
``std::tuple`` parameter accepts).  Returns: ``void`` -> ``()``,
the scalars above, ``std::vector<int64_t>`` -> ``int[]``,
``std::vector<at::Tensor>`` -> ``Tensor[]``, and ``std::tuple`` / ``std::pair``
of those -> ``(...)``.  Types are read from clang's canonical types, so aliases
(``Recipe``, ``torch::Tensor``) translate like what they name.

Defaults: ``std::nullopt`` -> ``None``, ``true``/``false``, number and string
literals, ``std::make_tuple(1, 2, 3)`` (or a tuple/vector constructed in place)
-> ``[1, 2, 3]``, and ScalarType constants (``torch::kFloat``,
``at::ScalarType::BFloat16``) -> the dtype name; a dtype the schema cannot
spell becomes a Python default (``python.defaults``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import cxx
from ..schema import SCALAR_TYPE_NAMES

UNSIGNED_INTS = ("unsigned int", "unsigned long", "unsigned short", "unsigned long long")
INT_TYPES = (*cxx.SIGNED_INTS, *UNSIGNED_INTS)


def unsigned_in(t: cxx.CxxType) -> str | None:
    """The unsigned integer type ``t`` holds (at any depth), which a schema's signed int only approximates."""
    if t.name in UNSIGNED_INTS:
        return t.name
    return next((u for a in t.args if (u := unsigned_in(a)) is not None), None)


# C++ ScalarType constants (last identifier, without a leading 'k') -> torch dtype name.
DTYPES = {
    "Float": "float32",
    "Float32": "float32",
    "Double": "float64",
    "Float64": "float64",
    "Half": "float16",
    "Float16": "float16",
    "BFloat16": "bfloat16",
    "Int": "int32",
    "Int32": "int32",
    "Long": "int64",
    "Int64": "int64",
    "Char": "int8",
    "Int8": "int8",
    "Byte": "uint8",
    "UInt8": "uint8",
    "Short": "int16",
    "Bool": "bool",
    "Float8_e4m3fn": "float8_e4m3fn",
}
_PY_MODULE_TYPES = ("pybind11::module_", "pybind11::module")


class Untranslatable(Exception):
    """A part of a binding with no manifest spelling; the message says what and why."""


# --------------------------------------------------------------------------------------
# C++ types -> schema types (Note [C++ to schema])
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SchemaParam:
    """What one C++ parameter becomes: one schema type, or two for a pack."""

    types: tuple[str, ...]
    tuple_pack: bool = False  # a pack read from a std::tuple rather than a std::pair

    @property
    def is_pack(self) -> bool:
        return len(self.types) == 2


def _scalar(t: cxx.CxxType) -> str | None:
    if t.name in INT_TYPES:
        return "int"
    if t.name in cxx.FLOATS:
        return "float"
    if t.name == "bool":
        return "bool"
    if t.is_("std::basic_string") or t.is_("std::basic_string_view"):
        return "str"
    if t.name == "c10::ScalarType":
        return "ScalarType"
    if t.name == "at::Tensor":
        return "Tensor"
    if t.is_("std::tuple") and t.args and all(a.value.name in INT_TYPES for a in t.args):
        return f"int[{len(t.args)}]"
    if t.is_("std::vector", 1) and t.args[0].value.name in INT_TYPES:
        return "int[]"
    return None


def _why_not(t: cxx.CxxType) -> str:
    text = str(t)
    if t.mentions("std::function"):
        return (
            f"{text}: a std::function (a closure) cannot cross the dispatcher; "
            "return data (e.g. int[]) and add an op that uses it"
        )
    if t.mentions("std::variant"):
        return (
            f"{text}: a std::variant has no schema type; take the widest form (e.g. int[]) "
            "and normalise in Python (python.convert)"
        )
    if not t.valid:
        return f"{text}, which clang could not resolve (is its header included?)"
    return f"{text}, which has no schema type"


def param_type(t: cxx.CxxType) -> SchemaParam:
    """The schema type(s) a C++ parameter type becomes; :class:`Untranslatable` if none."""
    v = t.value
    two = v.is_("std::pair", 2) or (v.is_("std::tuple") and len(v.args) == 2)
    if two and v.args[0].value.name == "at::Tensor":
        second = v.args[1].value
        is_tuple = v.name == "std::tuple"
        if second.name == "at::Tensor":
            return SchemaParam(("Tensor", "Tensor"), is_tuple)
        if second.is_("std::optional", 1) and second.args[0].value.name == "at::Tensor":
            return SchemaParam(("Tensor", "Tensor?"), is_tuple)
    if v.is_("std::optional", 1):
        inner = _scalar(v.args[0].value)
        if inner is not None:
            return SchemaParam((inner + "?",))
        raise Untranslatable(_why_not(v))
    scalar = _scalar(v)
    if scalar is None:
        raise Untranslatable(_why_not(v))
    return SchemaParam((scalar,))


def _return_one(t: cxx.CxxType) -> str:
    v = t.value
    if v.is_("std::optional", 1):
        raise Untranslatable(
            f"{v}: the generator returns no optional values (Tensor, int, bool, int[], Tensor[] and tuples of "
            "them); return an empty tensor, or a flag beside the value"
        )
    if v.is_("std::vector", 1) and v.args[0].value.name == "at::Tensor":
        return "Tensor[]"
    scalar = _scalar(v)
    if scalar is None or (scalar.startswith("int[") and scalar != "int[]"):
        raise Untranslatable(_why_not(v))
    return scalar


def return_type(t: cxx.CxxType) -> str:
    v = t.value
    if v.name == "void":
        return "()"
    if v.name in ("std::tuple", "std::pair"):
        parts = []
        for a in v.args:
            try:
                parts.append(_return_one(a))
            except Untranslatable as exc:
                if a.value.is_("std::optional", 1):
                    raise Untranslatable(f"{v}, whose element {exc}") from None
                raise Untranslatable(_why_not(v)) from None
        return "(" + ", ".join(parts) + ")"
    return _return_one(v)


# --------------------------------------------------------------------------------------
# default values
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Default:
    schema: str | None  # spelled in schema syntax, or None when only Python can say it
    python: object  # the value for python.defaults when schema is None


_INT = re.compile(r"^[+-]?(0x[0-9a-fA-F]+|\d+)[uUlL]*$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fFlL]?$")
_NONE = ("std::nullopt", "c10::nullopt", "py::none()", "pybind11::none()", "std::optional<>()")
_TUPLE = re.compile(r"^(std::make_optional\()?(std::make_tuple|std::tuple<[^>]*>)\s*[({](?P<items>[^(){}]*)[)}]\)?$")
_VECTOR = re.compile(r"^std::vector<[^>]*>\s*[({](?P<items>[^(){}]*)[)}]$")


def _ints(items: str) -> list[int]:
    parts = [p.strip() for p in items.split(",") if p.strip()]
    if not all(_INT.match(p) for p in parts):
        raise ValueError(items)
    return [int(p.rstrip("uUlL"), 0) for p in parts]


def translate_default(text: str, schema_type: str) -> Default:
    """A C++ default expression as a schema default; :class:`Untranslatable` when it has none."""
    base = schema_type.rstrip("?")
    optional = schema_type.endswith("?")
    compact = text.strip()
    if compact in _NONE:
        if optional:
            return Default("None", None)
        raise Untranslatable(f"default '{text}' is None, but the parameter is not optional")
    try:
        if base == "bool" and compact in ("true", "false"):
            return Default(compact.capitalize(), None)
        if base == "int" and _INT.match(compact):
            return Default(str(int(compact.rstrip("uUlL"), 0)), None)
        if base == "float" and (_FLOAT.match(compact) or _INT.match(compact)):
            return Default(repr(float(compact.rstrip("fFlL"))), None)
        if base == "str" and compact.startswith('"') and compact.endswith('"'):
            return Default(json.dumps(json.loads(compact)), None)
        if base.startswith("int["):
            m = _TUPLE.match(compact) or _VECTOR.match(compact)
            if m:
                values = _ints(m.group("items"))
                size = base[4:-1]
                if not size or int(size) == len(values):
                    return Default("[" + ", ".join(map(str, values)) + "]", None)
        if base == "ScalarType":
            last = re.split(r"::|\.", compact)[-1]
            name = DTYPES.get(last[1:] if last.startswith("k") and last[1:] in DTYPES else last)
            if name is not None:
                if name in SCALAR_TYPE_NAMES.values() and name != "float8_e4m3fn":
                    return Default(name, None)
                return Default(None, f"torch.{name}")
    except ValueError:
        pass
    raise Untranslatable(f"default '{text}' has no schema spelling for a {schema_type}; write it by hand")
