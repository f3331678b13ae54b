"""Reading pybind11 registration code: ``m.def`` calls, aliases, registration calls.

A *registration function* is any function whose one parameter is a
``pybind11::module_`` (``PYBIND11_MODULE`` bodies are such functions after
macro expansion; DeepGEMM's ``register_apis(m)`` is another).  The reader walks
their bodies in the AST, so argument boundaries, lambdas and the bound
functions come from clang; the source text is scanned as well, for
``m.attr`` aliases and for ``m.def`` calls clang did not see (inactive ``#if``
branches), which are reported rather than lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import cxx
from ..errors import Diagnostic, Loc
from .guards import Conditions, condition_of
from .translate import Untranslatable

_PY_MODULE_TYPES = ("pybind11::module_", "pybind11::module")
_CLASS_TYPE = "pybind11::class_"


# --------------------------------------------------------------------------------------
# reading the bindings
# --------------------------------------------------------------------------------------


@dataclass
class PyArg:
    name: str
    default: str | None  # C++ source text of the default
    loc: Loc


@dataclass
class Binding:
    """One ``m.def(...)`` call."""

    name: str
    loc: Loc
    namespace: str  # of the registration function holding it
    reg_file: str
    target: Any  # FUNCTION_DECL or LAMBDA_EXPR cursor, or None
    target_text: str
    py_args: list[PyArg]
    doc: str | None
    kw_only_at: int | None = None
    problems: list[str] = field(default_factory=list)
    guard_cpp: str | None = None  # the #if condition around the m.def (Note [Guards of bindings])
    static_method: bool = False  # the callable is a static member function


@dataclass
class BoundClass:
    """A ``py::class_<T>``: its methods are not drafted, but counted for a note."""

    cpp: str
    name: str | None
    loc: Loc
    methods: int = 0


@dataclass
class Alias:
    alias: str
    target: str
    loc: Loc


def _tokens(cursor: Any) -> list[str]:
    return [str(t.spelling) for t in cursor.get_tokens()]


def _is_module_param(p: Any) -> bool:
    t = cxx.cxx_type(p.type).value
    return t.name in _PY_MODULE_TYPES or bool(re.search(r"\b(py|pybind11)::module_?\b", cxx.source_text(p)))


def module_param(fn: Any) -> str | None:
    """The name of ``fn``'s module parameter when ``fn`` registers bindings, else None."""
    args = list(fn.get_arguments())
    if len(args) == 1 and _is_module_param(args[0]):
        return str(args[0].spelling) or None
    return None


def _scope(fn: Any) -> str:
    name = cxx.qualified_name(fn)
    return name.rsplit("::", 1)[0] if "::" in name else ""


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)


class Reader:
    """Collects the bindings of one or more translation units, following registration calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bindings: list[Binding] = []
        self.aliases: list[Alias] = []
        self.notes: list[Diagnostic] = []
        self.seen: set[tuple[str, int]] = set()
        self.classes: dict[str, BoundClass] = {}
        self.module_names: list[str] = []  # of PYBIND11_MODULE bodies (pybind11_init_<name>)

    def read_tu(self, tu: Any, main: Path) -> None:
        for fn in self._definitions(tu.cursor):
            if cxx.in_file(fn, main) and module_param(fn):
                name = str(fn.spelling)
                if name.startswith("pybind11_init_"):
                    self.module_names.append(name.removeprefix("pybind11_init_"))
                self.read_registration(fn)

    def _definitions(self, cursor: Any) -> Iterator[Any]:
        ci = cxx.cindex()
        for child in cxx.children(cursor):
            if child.location.is_in_system_header:
                continue
            if child.kind == ci.CursorKind.NAMESPACE:
                yield from self._definitions(child)
            elif child.kind == ci.CursorKind.FUNCTION_DECL and child.is_definition():
                yield child

    def read_registration(self, fn: Any) -> None:
        ci = cxx.cindex()
        key = (str(fn.location.file.name), int(fn.location.line))
        if key in self.seen:
            return
        self.seen.add(key)
        module = module_param(fn)
        assert module is not None
        scope = _scope(fn)
        reg_file = cxx.loc(fn, self.root).path
        body = next((c for c in cxx.children(fn) if c.kind == ci.CursorKind.COMPOUND_STMT), None)
        if body is None:
            return
        found_defs: set[int] = set()
        for node in body.walk_preorder():
            if node.kind != ci.CursorKind.CALL_EXPR:
                continue
            ref = node.referenced
            if node.spelling == "def" and ref is not None and _scope(ref) in _PY_MODULE_TYPES:
                found_defs.add(int(node.location.line))
                self.bindings.append(self._binding(node, scope, reg_file))
            elif ref is not None and _scope(ref).startswith(_CLASS_TYPE):
                self._class_call(node, ref)
            elif ref is not None and ref.kind == ci.CursorKind.FUNCTION_DECL and module_param(ref):
                target = ref.get_definition()
                if target is None:
                    self.notes.append(
                        Diagnostic(
                            cxx.loc(node, self.root),
                            None,
                            f"calls {cxx.qualified_name(ref)}(), whose body was not parsed",
                        )
                    )
                else:
                    self.read_registration(target)
        self._scan_text(fn, body, module, found_defs)

    def _class_call(self, call: Any, ref: Any) -> None:
        """A call on a ``py::class_``: its constructor names the class, each ``def*`` is a method."""
        owner = cxx.cxx_type(call.type).value
        if not owner.name.startswith(_CLASS_TYPE) or not owner.args:
            return
        cpp = owner.args[0].value.name
        bound = self.classes.get(cpp)
        if bound is None:
            bound = self.classes[cpp] = BoundClass(cpp, None, cxx.loc(call, self.root))
        spelling = str(ref.spelling)
        if spelling.startswith("class_"):
            args = list(call.get_arguments())
            toks = _tokens(args[1]) if len(args) > 1 else []
            if len(toks) == 1 and toks[0].startswith('"'):
                bound.name = json.loads(toks[0])
            bound.loc = cxx.loc(call, self.root)
        elif spelling.startswith("def"):
            bound.methods += 1

    def _scan_text(self, fn: Any, body: Any, module: str, found_defs: set[int]) -> None:
        """Aliases, and ``m.def`` calls clang did not see (inactive #if branches), from the source text."""
        path = Path(str(fn.location.file.name))
        raw = path.read_bytes()[int(body.extent.start.offset) : int(body.extent.end.offset)].decode("utf-8", "replace")
        text = _strip_comments(raw)
        rel = cxx.relative(str(path), self.root)
        body_lines = (int(body.extent.start.line), int(body.extent.end.line))
        m_ = re.escape(module)
        notes: list[Diagnostic] = []
        attr = re.compile(rf'\b{m_}\s*\.\s*attr\s*\(\s*"(\w+)"\s*\)\s*=\s*([^;]*);')
        for m in attr.finditer(text):
            loc = self._text_loc(rel, body, text, m.start())
            target = re.fullmatch(rf'{m_}\s*\.\s*attr\s*\(\s*"(\w+)"\s*\)', m.group(2).strip())
            if target:
                self.aliases.append(Alias(m.group(1), target.group(1), loc))
            else:
                notes.append(
                    Diagnostic(
                        loc,
                        None,
                        f"'{module}.attr(\"{m.group(1)}\")' is set to '{m.group(2).strip()}', not to an op; left out",
                    )
                )
        conditions = Conditions(text)
        for b in self.bindings:
            if b.reg_file == rel and body_lines[0] <= b.loc.line <= body_lines[1]:
                b.guard_cpp = condition_of(conditions.at(self._text_offset(body, text, b.loc)))
        for m in re.finditer(rf"\b{m_}\s*\.\s*def\s*\(", text):
            loc = self._text_loc(rel, body, text, m.start())
            if loc.line not in found_defs:
                cond = condition_of(conditions.at(m.start()))
                why = f"it is under '#if {cond}', which does not hold in this parse" if cond else "clang rejected it"
                notes.append(
                    Diagnostic(
                        loc,
                        None,
                        f"'{module}.def(...)' here was not parsed: {why}; translate it by hand, "
                        "or parse with the macros that enable it (-D)",
                    )
                )
        self.notes += sorted(notes, key=lambda n: n.loc)

    @staticmethod
    def _text_offset(body: Any, text: str, loc: Loc) -> int:
        """The offset in ``text`` (the source of ``body``) of ``loc``; the reverse of :meth:`_text_loc`."""
        offset = 0
        for _ in range(loc.line - int(body.extent.start.line)):
            offset = text.index("\n", offset) + 1
        col = loc.col - (int(body.extent.start.column) if loc.line == int(body.extent.start.line) else 1)
        return offset + max(col, 0)

    @staticmethod
    def _text_loc(rel: str, body: Any, text: str, offset: int) -> Loc:
        """The location of ``text[offset]``, ``text`` being the source of ``body``."""
        line = int(body.extent.start.line) + text.count("\n", 0, offset)
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        if line == int(body.extent.start.line):
            col += int(body.extent.start.column) - 1
        return Loc(rel, line, col)

    def _binding(self, call: Any, scope: str, reg_file: str) -> Binding:
        ci = cxx.cindex()
        args = list(call.get_arguments())
        loc = cxx.loc(call, self.root)
        toks0 = _tokens(args[0]) if args else []
        if len(toks0) != 1 or not toks0[0].startswith('"'):
            b = Binding("", loc, scope, reg_file, None, "", [], None)
            b.problems.append(f"the op name '{cxx.source_text(args[0]) if args else ''}' is not a string literal")
            return b
        name = json.loads(toks0[0])
        target_cursor = args[1] if len(args) > 1 else None
        target: Any = None
        method: Any = None
        if target_cursor is not None:
            for node in target_cursor.walk_preorder():
                if node.kind == ci.CursorKind.LAMBDA_EXPR:
                    target = node
                    break
                ref = node.referenced if node.kind == ci.CursorKind.DECL_REF_EXPR else None
                if ref is not None and ref.kind == ci.CursorKind.FUNCTION_DECL:
                    target = ref
                    break
                if ref is not None and ref.kind == ci.CursorKind.CXX_METHOD:
                    method = ref
                    break
        b = Binding(
            name, loc, scope, reg_file, target, cxx.source_text(target_cursor) if target_cursor else "", [], None
        )
        if method is not None and method.is_static_method():
            b.target, b.static_method = method, True
        elif method is not None:
            b.problems.append(
                f"binds the member function {cxx.qualified_name(method)}, which needs an object; "
                "an op is a free function (or a static member): bind a function that takes the object's state"
            )
        for extra in args[2:]:
            toks = _tokens(extra)
            text = cxx.source_text(extra)
            if toks and all(t.startswith('"') for t in toks):
                b.doc = "".join(json.loads(t) for t in toks)
            elif _py_arg_name(toks) is not None:
                default = text.split("=", 1)[1].strip() if "=" in toks else None
                b.py_args.append(PyArg(_py_arg_name(toks) or "", default, cxx.loc(extra, self.root)))
            elif re.fullmatch(r"(py|pybind11)::kw_only\(\)", text):
                b.kw_only_at = len(b.py_args)
            elif re.fullmatch(r"(py|pybind11)::pos_only\(\)", text):
                if len(b.py_args) != _arity(target):
                    b.problems.append(
                        "py::pos_only() before the last parameter has no manifest spelling (positional_only is all or nothing)"
                    )
            else:
                self.notes.append(Diagnostic(cxx.loc(extra, self.root), name, f"ignored the binding option '{text}'"))
        return b


def _py_arg_name(toks: list[str]) -> str | None:
    """The name of a ``py::arg("x")`` (or ``"x"_a``) argument, or None when ``toks`` is no such thing."""
    if len(toks) >= 5 and toks[0] in ("py", "pybind11") and toks[1:4] == ["::", "arg", "("]:
        return str(json.loads(toks[4])) if toks[4].startswith('"') else ""
    m = re.fullmatch(r'"(\w+)"_a', toks[0]) if toks else None
    return m.group(1) if m else None


def _arity(target: Any) -> int:
    return len(target_params(target)) if target is not None else -1


def target_params(target: Any) -> list[Any]:
    ci = cxx.cindex()
    if target.kind == ci.CursorKind.LAMBDA_EXPR:
        return [c for c in cxx.children(target) if c.kind == ci.CursorKind.PARM_DECL]
    return list(target.get_arguments())


def target_result(target: Any) -> cxx.CxxType:
    ci = cxx.cindex()
    if target.kind == ci.CursorKind.LAMBDA_EXPR:
        closure = target.type.get_declaration()
        call = next((c for c in cxx.children(closure) if c.spelling == "operator()"), None)
        if call is None:
            raise Untranslatable("the lambda's return type could not be read")
        return cxx.cxx_type(call.result_type)
    return cxx.cxx_type(target.result_type)


def callees(target: Any) -> Iterator[Any]:
    """Functions a lambda's body calls, declared in project files."""
    ci = cxx.cindex()
    for node in target.walk_preorder():
        if node.kind == ci.CursorKind.CALL_EXPR and node.referenced is not None:
            ref = node.referenced
            if ref.kind == ci.CursorKind.FUNCTION_DECL and not ref.location.is_in_system_header:
                yield ref
