"""The draft manifest: ops built from bindings (``signature.py`` reads their parameters,
``yaml_draft.py`` writes the YAML)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import cxx, includes
from ..errors import Diagnostic, Loc
from ..model import default_impl
from ..schema import SchemaError, SchemaParser
from .guards import guard_name
from .reader import Alias, Binding, callees, target_result
from .signature import signature
from .translate import Untranslatable, return_type, unsigned_in
from .yaml_draft import render

# --------------------------------------------------------------------------------------
# the draft
# --------------------------------------------------------------------------------------


@dataclass
class DraftOp:
    name: str
    schema: str
    loc: Loc
    impl: str | None
    packs: list[tuple[str, str, str]]
    writes: list[str]
    aliases: list[str]
    positional_only: bool
    python_defaults: dict[str, object]
    doc: str
    todos: list[str]
    renames: dict[str, str] = field(default_factory=dict)  # schema argument -> py::arg name
    guard: str | None = None
    declared_in: str | None = ""  # the header declaring the implementation; None: no header; "": not yet


@dataclass
class DraftFamily:
    name: str
    namespace: str
    header: str | None
    doc: str
    ops: list[DraftOp] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # commented-out schemas of untranslated ops


@dataclass
class Draft:
    library: str
    sources: list[str]
    families: list[DraftFamily]
    untranslated: list[Diagnostic]
    todo: list[Diagnostic]
    remarks: list[Diagnostic]
    guards: dict[str, str] = field(default_factory=dict)  # guard name -> its C++ condition
    seen: int = 0  # m.def calls read (parsed ones; an inactive #if branch is a note)
    classes: int = 0  # py::class_ bindings, left out
    methods: int = 0  # their bound methods
    clang: list[str] = field(default_factory=list)  # clang's errors, grouped (includes.grouped_errors)

    @property
    def op_count(self) -> int:
        return sum(len(f.ops) for f in self.families)

    def untranslated_lines(self) -> list[str]:
        out = [f"clang: {line}" for line in self.clang]
        out += [f"untranslated: {n}" for n in self.untranslated]
        out += [f"todo: {n}" for n in self.todo]
        out += [f"note: {n}" for n in self.remarks]
        return out

    def summary(self) -> str:
        """The one line each run ends with."""
        parts = [
            f"{self.seen} bindings seen",
            f"{self.op_count} drafted",
            f"{len(self.untranslated)} untranslated",
            f"{self.classes} classes skipped ({self.methods} methods)",
            f"{len(self.clang)} clang error group(s)",
        ]
        return ", ".join(parts)

    @property
    def text(self) -> str:
        return render(self)


def _family_of(namespace: str, reg_file: str) -> str:
    last = namespace.rsplit("::", 1)[-1] if namespace else Path(reg_file).stem
    return re.sub(r"\W", "_", last)


class Builder:
    def __init__(self, root: Path, library: str, parser: SchemaParser) -> None:
        self.root = root
        self.library = library
        self.parser = parser
        self.families: dict[str, DraftFamily] = {}
        self.untranslated: list[Diagnostic] = []
        self.todo: list[Diagnostic] = []
        self.notes: list[Diagnostic] = []
        self.guards: dict[str, str] = {}  # name -> C++ condition
        self.search: list[Path] = []  # the include folders of the parse, to follow a header's includes
        self.votes: dict[str, dict[str, int]] = {}

    def family(self, b: Binding) -> DraftFamily:
        name = _family_of(b.namespace, b.reg_file)
        fam = self.families.get(name)
        if fam is None:
            doc = f"TODO: describe family '{name}' (registered at {b.reg_file})"
            fam = self.families[name] = DraftFamily(name, b.namespace, None, doc)
        return fam

    def vote(self, family: str, fn: Any) -> str | None:
        """Count ``fn``'s declaring header for the family (Note [The family header]); return it."""
        path = _declaring_header(fn, self.root)
        if path is None:
            return None
        self.votes.setdefault(family, {}).setdefault(path, 0)
        self.votes[family][path] += 1
        return path

    def add(self, b: Binding) -> None:
        fam = self.family(b)
        if b.problems or b.target is None:
            why = "; ".join(b.problems) or f"the bound callable '{b.target_text}' could not be resolved"
            self.untranslated.append(Diagnostic(b.loc, b.name or None, why))
            return
        try:
            op = self._op(b, fam)
        except Untranslatable as exc:
            self.untranslated.append(Diagnostic(b.loc, b.name, str(exc)))
            fam.dropped.append(f"{b.name}: {exc}")
            return
        if any(o.name == op.name for f in self.families.values() for o in f.ops):
            self.untranslated.append(
                Diagnostic(
                    b.loc, b.name, "a second m.def of the same name (a pybind11 overload); schemas have no overloads"
                )
            )
            return
        fam.ops.append(op)

    def _op(self, b: Binding, fam: DraftFamily) -> DraftOp:
        sig = signature(b)
        result = target_result(b.target)
        try:
            ret = return_type(result)
        except Untranslatable as exc:
            raise Untranslatable(f"returns {exc}") from None
        notes = list(sig.notes)
        unsigned = unsigned_in(result.value)
        if unsigned is not None:
            notes.append(
                f"returns {result.value}, an unsigned type: drafted as the schema's (signed 64-bit) int, and "
                "verify rejects the unsigned return; return int64_t"
            )
        if b.static_method:
            notes.append(
                f"bound to the static member function {cxx.qualified_name(b.target)}: impl names it; "
                "verify reads free functions only, so give it a free function to call"
            )
        guard = None
        if b.guard_cpp is not None:
            guard = guard_name(b.guard_cpp, self.guards)
            notes.append(f"bound under '#if {b.guard_cpp}': drafted with guard '{guard}'")
        for note in notes:
            self.notes.append(Diagnostic(b.loc, b.name, note))
        schema = f"{b.name}({', '.join(sig.args)}) -> {ret}"
        try:
            self.parser.parse(schema)
        except SchemaError as exc:
            raise Untranslatable(f"the schema '{schema}' is rejected: {exc}") from None
        todos: list[str] = []
        impl, declared_in = self._impl(b, fam, todos)
        if "Tensor" in ret:
            todos.append("returns a Tensor: add fake: {function: <module>.<name>} (or 'meta' with a Meta kernel)")
            self.todo.append(Diagnostic(b.loc, b.name, "returns a Tensor; the op needs a 'fake'"))
        return DraftOp(
            name=b.name,
            schema=schema,
            loc=b.loc,
            impl=None if impl == default_impl(self.library, fam.name, b.name) else impl,
            packs=sig.packs,
            writes=sig.tensors,
            aliases=[],
            positional_only=not b.py_args and bool(sig.args),
            python_defaults=sig.python_defaults,
            doc=b.doc or f"TODO: document (bound at {b.loc})",
            todos=todos,
            renames=sig.renames,
            guard=guard,
            declared_in=declared_in,
        )

    def _impl(self, b: Binding, fam: DraftFamily, todos: list[str]) -> tuple[str, str | None]:
        """The implementation the op will call, and the header declaring it ('' when none is needed
        yet: a lambda without a named function); votes for the family header on the way."""
        ci = cxx.cindex()
        if b.target.kind != ci.CursorKind.LAMBDA_EXPR:
            declared = self.vote(fam.name, b.target)
            if declared is None:
                self._source_only_note(b, b.target)
            return cxx.qualified_name(b.target), declared
        impl = f"{b.namespace}::{b.name}" if b.namespace else b.name
        named = _lookup(b.target.translation_unit, impl)
        header: str | None = ""
        if named is None:
            todos.append(f"bound to a lambda at {b.loc}: move its body into a function {impl} in the family header")
        else:
            header = self.vote(fam.name, named)
            if header is None:
                self._source_only_note(b, named)
        for callee in callees(b.target):
            self.vote(fam.name, callee)
        exists = "" if named is not None else ", which does not exist yet"
        self.todo.append(Diagnostic(b.loc, b.name, f"bound to a lambda; the op calls {impl}{exists}"))
        return impl, header

    def reachable(self, header: str) -> set[str]:
        """``header`` and every project file it includes, directly or not (root-relative paths)."""
        found = includes.reachable(self.root / header, self.search, self.root)
        return {cxx.relative(str(p), self.root) for p in found}

    def _source_only_note(self, b: Binding, fn: Any) -> None:
        where = cxx.loc(fn, self.root).path
        self.notes.append(
            Diagnostic(
                b.loc,
                b.name,
                f"{cxx.qualified_name(fn)} is declared only in {where}, a source file: declare it in the family "
                "header (verify and the generated file see headers only)",
            )
        )

    def add_alias(self, a: Alias) -> None:
        for fam in self.families.values():
            for op in fam.ops:
                if op.name == a.target:
                    op.aliases.append(a.alias)
                    return
        self.untranslated.append(Diagnostic(a.loc, a.alias, f"alias of '{a.target}', which is not a translated op"))

    def finish(self) -> None:
        """Pick each family's header (Note [The family header]), noting a split."""
        for fam in self.families.values():
            votes = self.votes.get(fam.name, {})
            if votes:
                fam.header = max(votes, key=lambda p: votes[p])
            seen = self.reachable(fam.header) if fam.header else set()
            for op in fam.ops:
                if op.declared_in and fam.header and op.declared_in not in seen:
                    self.notes.append(
                        Diagnostic(
                            op.loc,
                            op.name,
                            f"its implementation is declared in {op.declared_in}, not in the family header "
                            f"{fam.header}: verify (and the generated file) see it once the family header includes it",
                        )
                    )
            if len(votes) > 1 and not set(votes) <= seen:
                spread = ", ".join(f"{p} ({n})" for p, n in sorted(votes.items(), key=lambda kv: -kv[1]))
                self.notes.append(
                    Diagnostic(
                        Loc(fam.header or "?", 1, 1),
                        None,
                        f"family '{fam.name}': its functions are declared in several headers: {spread}; "
                        f"the draft names {fam.header}, and the generated file includes only it: "
                        "add an umbrella header or split the family",
                    )
                )


def _declaring_header(fn: Any, root: Path) -> str | None:
    """Note [The family header]: the header that declares ``fn``, never a source file.

    A function declared in a header and defined in a ``.cpp`` has the header; one that
    only a ``.cpp`` declares has none (the family gets a TODO).
    """
    decls = [fn.canonical, fn, *(d for d in (fn.get_definition(),) if d is not None)]
    for decl in decls:
        f = decl.location.file
        if f is not None and Path(str(f.name)).suffix.lower() in _HEADER_SUFFIXES:
            return cxx.loc(decl, root).path
    return None


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl")


def _lookup(tu: Any, qualified: str) -> Any:
    """The function declaration named ``qualified`` (``ns::inner::name``), or None."""
    return _lookup_in(tu.cursor, qualified.split("::"))


def _lookup_in(cursor: Any, parts: list[str]) -> Any:
    ci = cxx.cindex()
    if len(parts) == 1:
        for child in cxx.children(cursor):
            if child.kind == ci.CursorKind.FUNCTION_DECL and child.spelling == parts[0]:
                return child
        return None
    for child in cxx.children(cursor):
        if child.kind == ci.CursorKind.NAMESPACE and child.spelling == parts[0]:
            found = _lookup_in(child, parts[1:])
            if found is not None:
                return found
    return None


# --------------------------------------------------------------------------------------
