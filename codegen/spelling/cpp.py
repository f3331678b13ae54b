"""How one op is spelled in the generated C++ registration file."""

from __future__ import annotations

from dataclasses import dataclass

from ..conversions import PACK_NATURAL, conversion, return_cpp
from ..model import Manifest, Op
from ..schema import Arg


def cpp_string(text: str) -> str:
    """A C++ string literal holding ``text``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def schema_text(op: Op) -> str:
    """The schema as registered: the manifest text with line breaks folded."""
    return " ".join(op.schema.text.split())


@dataclass(frozen=True)
class CppParam:
    """One wrapper parameter, as the dispatcher passes it."""

    arg: Arg

    def decl(self) -> str:
        return f"{conversion(self.arg.type).wrapper_type} {self.arg.name}"

    def call(self) -> str:
        helper = conversion(self.arg.type).helper
        if helper is None:
            return self.arg.name
        return f"deep_gemm::torch_utils::{helper}({self.arg.name}, {cpp_string(self.arg.name)})"


@dataclass(frozen=True)
class CppPackArg:
    """Two schema arguments handed to the implementation as one ``std::pair``."""

    first: Arg
    second: Arg

    @property
    def natural(self) -> str:
        return PACK_NATURAL[(False, self.second.type.optional)]

    def call(self) -> str:
        return f"{self.natural}({self.first.name}, {self.second.name})"


@dataclass(frozen=True)
class CppWrapper:
    """The generated function that adapts schema types to the implementation."""

    op: Op
    impl: str
    suffix: str

    @property
    def name(self) -> str:
        return f"wrap_{self.op.name}{self.suffix}"

    @property
    def return_type(self) -> str:
        rets = self.op.schema.returns
        if not rets:
            return "void"
        if len(rets) == 1 and not self.op.schema.returns_tuple:
            return return_cpp(rets[0])
        return "std::tuple<" + ", ".join(return_cpp(r) for r in rets) + ">"

    def params(self) -> list[CppParam]:
        return [CppParam(a) for a in self.op.schema.args]

    def call_args(self) -> list[str]:
        out: list[str] = []
        for pack, (arg, *rest) in self.op.call_groups():
            if pack is not None:
                (second,) = rest
                out.append(CppPackArg(arg, second).call())
            else:
                out.append(CppParam(arg).call())
        return out

    def decl(self) -> str:
        params = ", ".join(p.decl() for p in self.params())
        return f"{self.return_type} {self.name}({params})"

    def lines(self) -> list[str]:
        call = f"{_qualified(self.impl)}(" + ", ".join(self.call_args()) + ")"
        ret = "" if self.return_type == "void" else "return "
        return [
            f"// {schema_text(self.op)}",
            self.decl() + " {",
            f"  const deep_gemm::OpScope scope({cpp_string(self.op.name)});",
            f"  {ret}{call};",
            "}",
        ]


def _qualified(name: str) -> str:
    return name if name.startswith("::") else "::" + name


def wrappers(op: Op) -> list[CppWrapper]:
    """One wrapper per distinct implementation function of ``op``."""
    distinct = list(dict.fromkeys(op.impl.values()))
    if len(distinct) == 1:
        return [CppWrapper(op, distinct[0], "")]
    return [CppWrapper(op, fn, f"_{i}") for i, fn in enumerate(distinct)]


def wrapper_for(op: Op, key: str) -> CppWrapper:
    return next(w for w in wrappers(op) if w.impl == op.impl[key])


def guard_lines(manifest: Manifest, guard: str | None, body: list[str]) -> list[str]:
    """``body`` wrapped in ``#if``/``#endif`` when ``guard`` is set."""
    if guard is None:
        return body
    g = manifest.guards[guard]
    return [f"#if {g.cpp}  // guard '{g.name}'", *body, f"#endif  // guard '{g.name}'"]


def def_line(op: Op) -> str:
    return f"  m.def({cpp_string(schema_text(op))});"


def impl_line(op: Op, key: str) -> str:
    return f"  m.impl({cpp_string(op.name)}, TORCH_FN({wrapper_for(op, key).name}));"
