"""How one op is spelled in the generated C++ registration file.

The conversion helpers (``torch_utils::to_int`` ...) and ``OpScope`` are called in the
manifest's ``library`` namespace: a library adopting the generator provides them there
(``csrc/utils/schema_types.hpp``; ``examples/tiny_ext`` has its own, a few lines long).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..conversions import PACK_NATURAL, conversion, returns_cpp
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
    library: str

    def decl(self) -> str:
        return f"{conversion(self.arg.type).wrapper_type} {self.arg.name}"

    def call(self) -> str:
        helper = conversion(self.arg.type).helper
        if helper is None:
            return self.arg.name
        return f"{self.library}::torch_utils::{helper}({self.arg.name}, {cpp_string(self.arg.name)})"


@dataclass(frozen=True)
class CppPackArg:
    """Two schema arguments handed to the implementation as one ``std::pair``."""

    first: Arg
    second: Arg

    @property
    def natural(self) -> str:
        return PACK_NATURAL[self.second.type.optional]

    def call(self) -> str:
        return f"{self.natural}({self.first.name}, {self.second.name})"


@dataclass(frozen=True)
class CppWrapper:
    """The generated function that adapts schema types to the implementation."""

    op: Op
    impl: str
    suffix: str
    library: str

    @property
    def name(self) -> str:
        return f"wrap_{self.op.name}{self.suffix}"

    @property
    def return_type(self) -> str:
        return returns_cpp(self.op.schema)

    def params(self) -> list[CppParam]:
        return [CppParam(a, self.library) for a in self.op.schema.args]

    def call_args(self) -> list[str]:
        out: list[str] = []
        for pack, (arg, *rest) in self.op.call_groups():
            if pack is not None:
                (second,) = rest
                out.append(CppPackArg(arg, second).call())
            else:
                out.append(CppParam(arg, self.library).call())
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
            f"  const {self.library}::OpScope scope({cpp_string(self.op.name)});",
            f"  {ret}{call};",
            "}",
        ]


def _qualified(name: str) -> str:
    return name if name.startswith("::") else "::" + name


def wrappers(op: Op, library: str) -> list[CppWrapper]:
    """One wrapper per distinct implementation function of ``op``."""
    distinct = list(dict.fromkeys(op.impl.values()))
    if len(distinct) == 1:
        return [CppWrapper(op, distinct[0], "", library)]
    return [CppWrapper(op, fn, f"_{i}", library) for i, fn in enumerate(distinct)]


def wrapper_for(op: Op, key: str, library: str) -> CppWrapper:
    return next(w for w in wrappers(op, library) if w.impl == op.impl[key])


def guard_open(manifest: Manifest, guard: str) -> str:
    g = manifest.guards[guard]
    return f"#if {g.cpp}  // guard '{g.name}'"


def guard_close(manifest: Manifest, guard: str) -> str:
    return f"#endif  // guard '{manifest.guards[guard].name}'"


def guard_lines(manifest: Manifest, guard: str | None, body: list[str]) -> list[str]:
    """``body`` wrapped in ``#if``/``#endif`` when ``guard`` is set."""
    if guard is None:
        return body
    return [guard_open(manifest, guard), *body, guard_close(manifest, guard)]


def grouped(
    manifest: Manifest,
    items: Sequence[tuple[str | None, list[str]]],
    enclosing: str | None = None,
    blank_between: bool = False,
) -> list[str]:
    """The lines of ``items`` (each a guard, or None, and its lines) in order, guarded.

    Consecutive items under the same guard share one ``#if``/``#endif``, and a guard
    equal to ``enclosing`` (the guard the whole block already sits under) is not
    repeated.  With ``blank_between`` a blank line separates the items (inside a
    group as well as between groups), never before an ``#endif``.
    """
    out: list[str] = []
    runs = itertools.groupby(items, key=lambda item: None if item[0] == enclosing else item[0])
    for n, (guard, run) in enumerate(runs):
        body: list[str] = []
        for i, (_, lines) in enumerate(run):
            body += ([""] if blank_between and i else []) + lines
        out += ([""] if blank_between and n else []) + guard_lines(manifest, guard, body)
    return out


def def_line(op: Op) -> str:
    return f"  m.def({cpp_string(schema_text(op))});"


def impl_line(op: Op, key: str, library: str) -> str:
    return f"  m.impl({cpp_string(op.name)}, TORCH_FN({wrapper_for(op, key, library).name}));"
