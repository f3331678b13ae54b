"""How one op is spelled in the legacy ``<library>._C`` shim and in its stub.

Note [Shim call path]
~~~~~~~~~~~~~~~~~~~~~
Each shim function binds its ``OpOverload`` once at import.  In eager mode it
calls the overload's ``_op`` (the C++ callable behind ``OpOverload.__call__``,
one Python frame cheaper); while Dynamo traces it calls the ``OpOverload``
itself, which Dynamo understands and ``_op`` is not.  The test is
``torch.compiler.is_dynamo_compiling`` (Dynamo folds it to True; in eager it is
one frame, against two for ``is_compiling``).  Outside Dynamo both branches
make the very same call, so other tracers (make_fx, non-strict export) see the
op either way.

Trailing arguments still at their schema default are not forwarded: the
dispatcher fills them in from the schema faster than Python can pass them.
The shim tests the trailing parameters from the last one backwards and passes
everything up to the last one that differs from its default (a flat run of
``if``s, one per parameter, so the all-default call pays exactly one cheap test
per trailing parameter and any other call forwards no more than it must).

A ``(tensor, scale)`` pack must not be a Tensor (a two-row tensor unpacks
silently).  ``isinstance(x, Tensor)`` costs about 70 ns through Tensor's
metaclass, so it runs only when ``x`` is not a plain tuple, the usual case.
Every figure is in docs/performance.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..conversions import CONVERTERS, PACK_PYTHON, conversion, returns_python
from ..model import Op
from ..schema import SCALAR_TYPE_NAMES, Arg


def py_literal(value: object) -> str:
    """A Python expression for a default value read from a schema or YAML."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value if value.startswith("torch.") else json.dumps(value)
    if isinstance(value, (list, tuple)):
        items = [py_literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(f"cannot spell default {value!r}")


def _schema_default(arg: Arg) -> str:
    if arg.type.base == "ScalarType" and isinstance(arg.default, int):
        return f"torch.{SCALAR_TYPE_NAMES[arg.default]}"
    return py_literal(arg.default)


@dataclass(frozen=True)
class PyParam:
    """One parameter of the legacy Python function."""

    name: str
    members: tuple[Arg, ...]  # one schema argument, or the two of a pack
    default: str | None  # Python expression, or None when required
    schema_default: str | None  # the schema's own default, spelled in Python
    kind: str  # "pos" | "posonly" | "kwonly"
    converter: str | None

    @property
    def is_pack(self) -> bool:
        return len(self.members) == 2

    @property
    def forwards_default(self) -> bool:
        """True when the Python default equals the schema default (so it can be left out)."""
        return self.default is not None and self.default == self.schema_default

    def decl(self) -> str:
        return self.name if self.default is None else f"{self.name}={self.default}"

    def stub_type(self) -> str:
        if self.is_pack:
            return PACK_PYTHON[self.members[1].type.optional]
        if self.converter:
            return CONVERTERS[self.converter]
        return conversion(self.members[0].type).python

    def stub_decl(self) -> str:
        text = f"{self.name}: {self.stub_type()}"
        if self.default is None:
            return text
        simple = not self.default.startswith("torch.")
        return f"{text} = {self.default if simple else '...'}"

    def unpack_targets(self) -> list[str]:
        """Local names a pack is unpacked into.  The first member gets a private name so the
        parameter itself still holds the caller's value if a later unpack fails."""
        return [f"_{self.members[0].name}", *(m.name for m in self.members[1:])]

    def call(self) -> list[str]:
        """Expressions passed to the op for this parameter, in schema order."""
        return self.unpack_targets() if self.is_pack else [self.members[0].name]


def params(op: Op) -> list[PyParam]:
    """The legacy Python parameters of ``op`` (the model checked they make a valid signature)."""
    rules = op.python
    out: list[PyParam] = []
    for pack, members in op.call_groups():
        arg = members[0]
        if pack is not None:
            name = pack.python_name
            default = schema_default = None
        else:
            name = arg.name
            schema_default = _schema_default(arg) if arg.has_default else None
            default = py_literal(rules.defaults[name]) if name in rules.defaults else schema_default
        kind = "kwonly" if arg.kwarg_only else ("posonly" if rules.positional_only else "pos")
        out.append(
            PyParam(rules.rename.get(name, name), members, default, schema_default, kind, rules.convert.get(name))
        )
    return out


def signature(ps: list[PyParam], stub: bool) -> str:
    parts: list[str] = []
    star_done = False
    for i, p in enumerate(ps):
        if p.kind == "kwonly" and not star_done:
            parts.append("*")
            star_done = True
        parts.append(p.stub_decl() if stub else p.decl())
        nxt = ps[i + 1] if i + 1 < len(ps) else None
        if p.kind == "posonly" and (nxt is None or nxt.kind != "posonly"):
            parts.append("/")
    return ", ".join(parts)


def return_annotation(op: Op) -> str:
    return returns_python(op.schema)


def docstring(text: str, indent: str) -> list[str]:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').splitlines() or [""]
    if len(body) == 1:
        return [f'{indent}"""{body[0]}"""']
    return [f'{indent}"""{body[0]}', *[(indent + ln) if ln else "" for ln in body[1:]], f'{indent}"""']


@dataclass(frozen=True)
class ShimFunction:
    """The legacy ``<library>._C.<name>`` function for one op."""

    op: Op

    @property
    def overload(self) -> str:
        return f"_overload_{self.op.name}"

    @property
    def fast(self) -> str:
        return f"_call_{self.op.name}"

    def binding_lines(self) -> list[str]:
        return [
            f"{self.overload} = _ops.{self.op.name}.default",
            f"{self.fast} = {self.overload}._op",
        ]

    @staticmethod
    def differs(p: PyParam) -> str:
        """A cheap test that parameter ``p`` no longer holds its (schema) default.

        It may say "differs" for a value equal to the default (the value is then
        forwarded, which is always correct), never the reverse: ``1.0`` or
        ``True`` for an ``int`` default of 1 is forwarded, for the dispatcher to
        judge.
        """
        assert p.default is not None
        value = p.members[0].default
        if value is None or isinstance(value, bool) or p.default.startswith("torch."):
            return f"{p.name} is not {p.default}"  # singletons: None, True, False, dtypes
        if isinstance(value, (int, float)):
            return f"{p.name}.__class__ is not {type(value).__name__} or {p.name} != {p.default}"
        return f"{p.name} != {p.default}"

    def calls(self, ps: list[PyParam]) -> tuple[str, list[tuple[str, str]], str]:
        """(full argument list, [(test, argument list)] from the last parameter back, shortest argument list).

        When a test holds, the call forwards its argument list, which ends at the
        parameter tested; when none holds, the shortest list, which leaves out
        every trailing parameter whose Python default is the schema default
        (Note [Shim call path]).
        """

        def spell(chosen: list[PyParam]) -> str:
            pos = [e for p in chosen if p.kind != "kwonly" for e in p.call()]
            kw = [f"{m.name}={e}" for p in chosen if p.kind == "kwonly" for m, e in zip(p.members, p.call())]
            return ", ".join(pos + kw)

        cut = len(ps)
        while cut > 0 and ps[cut - 1].forwards_default and not ps[cut - 1].converter:
            cut -= 1
        steps = [(self.differs(ps[i]), spell(ps[: i + 1])) for i in range(len(ps) - 1, cut - 1, -1)]
        return spell(ps), steps, spell(ps[:cut])

    def lines(self) -> list[str]:
        ps = params(self.op)
        out = [f"def {self.op.name}({signature(ps, stub=False)}):"]
        out += docstring(self.op.doc, "    ")
        packs = [p for p in ps if p.is_pack]
        if packs:
            names = ", ".join(f'"{p.name}"' for p in packs)
            values = ", ".join(p.name for p in packs)
            tests = [f"({p.name}.__class__ is not tuple and isinstance({p.name}, _Tensor))" for p in packs]
            out.append(f"    if {' or '.join(tests)}:")
            out.append(f'        raise _pack_error("{self.op.name}", ({names},), ({values},))')
            out.append("    try:")
            for p in packs:
                out.append(f"        {', '.join(p.unpack_targets())} = {p.name}")
            out.append("    except (TypeError, ValueError):")
            out.append(f'        raise _pack_error("{self.op.name}", ({names},), ({values},)) from None')
        for p in ps:
            if p.converter:
                out.append(f'    {p.name} = _convert.{p.converter}({p.name}, "{self.op.name}", "{p.name}")')
        # A renamed parameter is passed under its schema name.
        for p in ps:
            if not p.is_pack and p.name != p.members[0].name:
                out.append(f"    {p.members[0].name} = {p.name}")
        full, steps, short = self.calls(ps)
        out.append("    if _compiling():")
        if self.op.schema.returns and not self.op.returns_tensors:
            # Note [Python values under Dynamo]: a traced int/list result would be frozen
            # into the graph; break the graph so every call runs the op.
            out.append("        _graph_break()")
        out.append(f"        return {self.overload}({full})")
        for test, args in steps:
            out.append(f"    if {test}:")
            out.append(f"        return {self.fast}({args})")
        out.append(f"    return {self.fast}({short})")
        return out

    def alias_lines(self) -> list[str]:
        return [f"{alias} = {self.op.name}" for alias in self.op.aliases]


@dataclass(frozen=True)
class StubFunction:
    op: Op

    def lines(self) -> list[str]:
        ps = params(self.op)
        out = [f"def {self.op.name}({signature(ps, stub=True)}) -> {return_annotation(self.op)}:"]
        out += docstring(self.op.doc, "    ")
        out += [f"{alias} = {self.op.name}" for alias in self.op.aliases]
        return out
