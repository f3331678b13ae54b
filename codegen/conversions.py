"""The one conversion table: schema type -> C++ wrapper type -> natural C++ type.

A generated wrapper receives the types TORCH_LIBRARY hands it for the schema
(``int64_t``, ``at::OptionalIntArrayRef``, ...) and passes the implementation
the types DeepGEMM's host code is written in (``int``, ``std::optional<int>``,
``std::tuple<int, int, int>``, ...).  Each row names the helper from
``csrc/utils/schema_types.hpp`` that does the conversion and checks it, so a
bad value is reported with the op and argument name.

``verify`` (see ``codegen/verify.py``) reads the same table to decide whether
an implementation parameter's C++ type is one the row can feed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Schema, SchemaType

# Python-side argument converters (implemented in <library>/_convert.py): name -> the Python type
# the user may pass, as written in the stub.  The model accepts exactly these names.
CONVERTERS = {
    "int_or_pair": "int | tuple[int, int]",
    "recipe_2_or_3": "tuple[int, int] | tuple[int, int, int]",
}


@dataclass(frozen=True)
class Conversion:
    wrapper_type: str  # parameter type of the generated wrapper (what the dispatcher passes)
    helper: str | None  # torch_utils:: helper turning it into the natural type, or None to pass as is
    natural: str  # the type the implementation receives
    python: str  # the type in the .pyi stub
    # Further types the helper's result converts to; the implementation's parameter picks one.
    also: tuple[str, ...] = ()

    @property
    def naturals(self) -> tuple[str, ...]:
        return (self.natural, *self.also)


def _tuple(n: int) -> str:
    return "std::tuple<" + ", ".join(["int"] * n) + ">"


def conversion(t: SchemaType) -> Conversion:
    """The row for schema type ``t``; ``KeyError`` if the generator cannot bind it."""
    if t.is_list:
        if t.base != "int":
            raise KeyError(str(t))
        if t.size is not None:
            py = "tuple[" + ", ".join(["int"] * t.size) + "]"
            if t.optional:
                return Conversion(
                    "at::OptionalIntArrayRef",
                    f"to_optional_tuple<{t.size}>",
                    f"std::optional<{_tuple(t.size)}>",
                    py + " | None",
                )
            return Conversion("at::IntArrayRef", f"to_tuple<{t.size}>", _tuple(t.size), py)
        if t.optional:
            return Conversion(
                "at::OptionalIntArrayRef",
                "to_optional_int_vector",
                "std::optional<std::vector<int>>",
                "Sequence[int] | None",
            )
        # A proxy: 32-bit ints (range-checked) for sizes, int64 for pointers (sym_buffer_ptrs).
        return Conversion(
            "at::IntArrayRef", "to_int_list", "std::vector<int>", "Sequence[int]", also=("std::vector<int64_t>",)
        )
    return _SCALARS[(t.base, t.optional)]


_SCALARS: dict[tuple[str, bool], Conversion] = {
    ("Tensor", False): Conversion("const at::Tensor&", None, "at::Tensor", "Tensor"),
    ("Tensor", True): Conversion(
        "const std::optional<at::Tensor>&", None, "std::optional<at::Tensor>", "Tensor | None"
    ),
    ("int", False): Conversion("int64_t", "to_int", "int", "int"),
    ("int", True): Conversion("std::optional<int64_t>", "to_optional_int", "std::optional<int>", "int | None"),
    ("float", False): Conversion("double", None, "double", "float"),
    ("float", True): Conversion("std::optional<double>", "to_optional_float", "std::optional<float>", "float | None"),
    ("bool", False): Conversion("bool", None, "bool", "bool"),
    ("bool", True): Conversion("std::optional<bool>", None, "std::optional<bool>", "bool | None"),
    ("str", False): Conversion("c10::string_view", "to_string", "std::string", "str"),
    ("str", True): Conversion(
        "std::optional<c10::string_view>", "to_optional_string", "std::optional<std::string>", "str | None"
    ),
    ("ScalarType", False): Conversion("at::ScalarType", None, "at::ScalarType", "torch.dtype"),
    ("ScalarType", True): Conversion(
        "std::optional<at::ScalarType>", None, "std::optional<at::ScalarType>", "torch.dtype | None"
    ),
}

# What a pack rule produces, keyed on whether its second member is optional (the first never is):
# the natural C++ type, and the stub type.
PACK_NATURAL = {
    False: "std::pair<at::Tensor, at::Tensor>",
    True: "std::pair<at::Tensor, std::optional<at::Tensor>>",
}
PACK_PYTHON = {
    False: "tuple[Tensor, Tensor]",
    True: "tuple[Tensor, Tensor | None]",
}


def return_cpp(t: SchemaType) -> str:
    """C++ type of one returned value, as the dispatcher expects it."""
    if t.optional:
        raise KeyError(f"optional return {t}")
    if t.is_list:
        if t.base == "int":
            return "std::vector<int64_t>"
        if t.base == "Tensor":
            return "std::vector<at::Tensor>"
        raise KeyError(str(t))
    return {
        "Tensor": "at::Tensor",
        "int": "int64_t",
        "float": "double",
        "bool": "bool",
        "str": "std::string",
        "ScalarType": "at::ScalarType",
    }[t.base]


def return_python(t: SchemaType) -> str:
    if t.is_list:
        return f"list[{'Tensor' if t.base == 'Tensor' else t.base}]"
    return {
        "Tensor": "Tensor",
        "int": "int",
        "float": "float",
        "bool": "bool",
        "str": "str",
        "ScalarType": "torch.dtype",
    }[t.base]


def returns_cpp(schema: Schema) -> str:
    """The C++ type a wrapper returns for ``schema``'s returns (``void`` for ``()``)."""
    rets = schema.returns
    if not rets:
        return "void"
    if len(rets) == 1 and not schema.returns_tuple:
        return return_cpp(rets[0])
    return "std::tuple<" + ", ".join(return_cpp(r) for r in rets) + ">"


def returns_python(schema: Schema) -> str:
    """The stub's return annotation for ``schema``'s returns (``None`` for ``()``)."""
    rets = schema.returns
    if not rets:
        return "None"
    if len(rets) == 1 and not schema.returns_tuple:
        return return_python(rets[0])
    return "tuple[" + ", ".join(return_python(r) for r in rets) + "]"
