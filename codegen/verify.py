"""``python -m codegen verify``: does each op's C++ implementation fit its schema?

The generated wrapper of an op converts every schema argument with the table
in ``codegen/conversions.py`` (after pack rules) and calls the implementation
with the results, in schema order.  ``verify`` reads the implementation headers
with libclang (one translation unit holding every family header, function
bodies skipped, see ``codegen/cxx.py``) and checks, for each implementation
function the manifest names:

* that it exists;
* its parameter count (C++ parameters with defaults may follow);
* the order and names of its parameters (a pack's parameter carries the pack's
  name);
* that each parameter can receive what the wrapper passes (Note [What a
  parameter can receive]);
* that its return type fits the schema's returns.

Every problem is reported against both places, ``ops.yaml:L:C`` and the C++
``file:L:C``.  An op whose guard (or whose dispatch key's guard) does not hold
in this parse and whose implementation is missing is noted, not failed: its
header may declare it only in builds where the guard holds.

One module (a little over 400 lines): the type rules, the index of
implementations and the command share the expected-argument model above and
read as one check.

Note [What a parameter can receive]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The wrapper passes prvalues of the natural types (``to_int(...)`` is an
``int``, a pack is a ``std::pair`` temporary), except that ``Tensor``,
``Tensor?``, ``float``, ``bool`` and ``ScalarType`` arguments are passed as the
wrapper's own parameters (lvalues).  A parameter taken by value or by
``const&`` receives them; a non-const ``&`` never does; ``&&`` does not bind an
lvalue.  Beyond identical types, a parameter may widen: a signed integer at
least as wide (``int64_t`` takes ``int``), ``float`` or ``double`` for either,
``std::string_view`` for ``std::string``, and the same rules inside
``std::optional``, ``std::tuple`` and ``std::pair``.  Optionality must agree:
``std::optional<int>`` for ``int`` would compile, but says the schema is wrong.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import cxx, includes
from .conversions import PACK_NATURAL, conversion, returns_cpp
from .errors import Diagnostics, Loc, did_you_mean
from .model import Manifest, Op
from .schema import Arg

MAIN_FILE = "codegen_verify.cpp"  # the synthetic translation unit (never written to disk)
_ALIASES = "codegen_verify"  # namespace of the type aliases that let clang spell the natural types


@dataclass(frozen=True)
class Expected:
    """One argument of the implementation call, as the wrapper makes it."""

    names: tuple[str, ...]  # names the C++ parameter may have
    naturals: tuple[str, ...]  # the C++ types the wrapper's argument converts to (the first is its own)
    lvalue: bool  # passed as the wrapper's own parameter rather than a temporary
    schema: str  # how the schema spells it, for messages

    @property
    def name(self) -> str:
        return self.names[0]


def expected_params(op: Op) -> list[Expected]:
    """The implementation's arguments in call order: the schema after pack rules."""
    out: list[Expected] = []
    for pack, (arg, *rest) in op.call_groups():
        if pack is not None:
            (second,) = rest
            names = tuple(dict.fromkeys((pack.python_name, arg.name)))
            spelled = f"{_arg_text(arg)}, {_arg_text(second)}"
            out.append(Expected(names, (PACK_NATURAL[second.type.optional],), False, spelled))
        else:
            row = conversion(arg.type)
            out.append(Expected((arg.name,), row.naturals, row.helper is None, str(arg.type)))
    return out


def _arg_text(arg: Arg) -> str:
    return f"{arg.type} {arg.name}"


def expected_return(op: Op) -> str:
    return returns_cpp(op.schema)


# --------------------------------------------------------------------------------------
# type compatibility (Note [What a parameter can receive])
# --------------------------------------------------------------------------------------


def same(a: cxx.CxxType, b: cxx.CxxType) -> bool:
    return a.name == b.name and len(a.args) == len(b.args) and all(same(x, y) for x, y in zip(a.args, b.args))


def receives(param: cxx.CxxType, given: cxx.CxxType) -> bool:
    """Whether a value of type ``param`` (unqualified) can be initialised from ``given`` by the rules above."""
    if same(param, given):
        return True
    if param.name in cxx.SIGNED_INTS and given.name in cxx.SIGNED_INTS:
        return cxx.SIGNED_INTS.index(param.name) >= cxx.SIGNED_INTS.index(given.name)
    if param.name in cxx.FLOATS and given.name in cxx.FLOATS:
        return True
    if param.is_("std::optional", 1) and given.is_("std::optional", 1):
        return receives(param.args[0].value, given.args[0].value)
    if param.is_("std::tuple") and given.name in ("std::tuple", "std::pair"):
        return len(param.args) == len(given.args) and all(receives(p, g) for p, g in zip(param.args, given.args))
    if param.is_("std::pair", 2) and given.is_("std::pair", 2):
        return all(receives(p, g) for p, g in zip(param.args, given.args))
    return param.is_("std::basic_string_view") and given.is_("std::basic_string")


def binding_problem(param: cxx.CxxType, given: cxx.CxxType, lvalue: bool) -> str | None:
    """Why ``param`` cannot receive ``given``, or None when it can."""
    if param.ref == "&" and not param.const:
        return "a non-const reference, which cannot bind what the wrapper passes; take it by value or const&"
    if param.ref == "&&" and lvalue:
        return "an rvalue reference, but the wrapper passes an lvalue; take it by value or const&"
    if not receives(param.value, given):
        return ""
    return None


# --------------------------------------------------------------------------------------
# finding the implementations
# --------------------------------------------------------------------------------------


@dataclass
class FunctionIndex:
    """Every function declared in the namespaces the manifest's implementations live in."""

    functions: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, tu: Any, wanted: Iterable[str]) -> FunctionIndex:
        ci = cxx.cindex()
        prefixes: set[str] = set()
        top_level: set[str] = set()  # functions of the global namespace (FlashMLA's, DeepEP's)
        for name in wanted:
            parts = name.split("::")
            prefixes.update("::".join(parts[:i]) for i in range(1, len(parts)))
            if len(parts) == 1:
                top_level.add(name)
        index = cls()
        kinds = (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE)

        def walk(cursor: Any, scope: str) -> None:
            for child in cxx.children(cursor):
                if child.kind == ci.CursorKind.NAMESPACE:
                    inner = f"{scope}::{child.spelling}" if scope else str(child.spelling)
                    if inner in prefixes:
                        walk(child, inner)
                elif child.kind in kinds and (scope or str(child.spelling) in top_level):
                    qual = f"{scope}::{child.spelling}" if scope else str(child.spelling)
                    seen = index.functions.setdefault(qual, [])
                    if not any(child.canonical == other.canonical for other in seen):
                        seen.append(child)

        walk(tu.cursor, "")
        return index

    def near(self, name: str) -> list[str]:
        scope = name.rsplit("::", 1)[0] if "::" in name else ""
        return [n.rsplit("::", 1)[-1] for n in self.functions if (n.rsplit("::", 1)[0] if "::" in n else "") == scope]


def _unqualified(name: str) -> str:
    return name[2:] if name.startswith("::") else name


# --------------------------------------------------------------------------------------
# checking one implementation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    type: cxx.CxxType
    has_default: bool
    loc: Loc


def _params(fn: Any, root: Path) -> list[Param]:
    out: list[Param] = []
    for p in fn.get_arguments():
        tokens = [str(t.spelling) for t in p.get_tokens()]
        out.append(Param(str(p.spelling), cxx.cxx_type(p.type), "=" in tokens, cxx.loc(p, root)))
    return out


class Checker:
    def __init__(self, root: Path, naturals: dict[str, cxx.CxxType]) -> None:
        self.root = root
        self.naturals = naturals

    def check(self, op: Op, fn: Any) -> list[tuple[Loc, str]]:
        """Every mismatch between ``op`` and the function ``fn``, each with its C++ location."""
        ci = cxx.cindex()
        name = cxx.qualified_name(fn)
        fn_loc = cxx.loc(fn, self.root)
        if fn.kind == ci.CursorKind.FUNCTION_TEMPLATE:
            return [
                (fn_loc, f"'{name}' is a function template; expected a plain function (verify cannot check templates)")
            ]
        problems: list[tuple[Loc, str]] = []
        expected = expected_params(op)
        params = _params(fn, self.root)
        required = sum(1 for p in params if not p.has_default)
        if not required <= len(expected) <= len(params):
            takes = f"{len(params)} parameter{'s' if len(params) != 1 else ''}"
            if required != len(params):
                takes += f" ({len(params) - required} with defaults)"
            problems.append(
                (
                    fn_loc,
                    f"'{name}' takes {takes}, but the schema gives {len(expected)} after pack rules: "
                    f"({', '.join(e.name for e in expected)})",
                )
            )
        else:
            problems += self._check_params(expected, params[: len(expected)])
        problems += self._check_return(op, fn, name, fn_loc)
        return problems

    def _check_params(self, expected: list[Expected], params: list[Param]) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        have = [p.name for p in params]
        want = [e.name for e in expected]
        matched = all(not p.name or p.name in e.names for p, e in zip(params, expected))
        by_name = {n: e for e in expected for n in e.names}
        if (
            not matched
            and all(p.name in by_name for p in params)
            and len({id(by_name[p.name]) for p in params}) == len(params)
        ):
            problems.append(
                (
                    params[0].loc,
                    f"the parameters are in a different order than the schema: the implementation has "
                    f"({', '.join(have)}), the schema (after pack rules) ({', '.join(want)})",
                )
            )
            pairs = [(p, by_name[p.name]) for p in params]
        else:
            pairs = list(zip(params, expected))
            for i, (p, e) in enumerate(pairs, 1):
                if p.name and p.name not in e.names:
                    problems.append(
                        (
                            p.loc,
                            f"parameter {i} is named '{p.name}', but the schema gives '{e.name}' ({e.schema}) there",
                        )
                    )
        for p, e in pairs:
            i = params.index(p) + 1
            whys = [binding_problem(p.type, self.naturals[n], e.lvalue) for n in e.naturals]
            if None in whys:
                continue
            why = whys[0]  # reported against the wrapper's own type, the first
            passes = " or ".join(str(self.naturals[n]) for n in e.naturals)
            shown = p.type.value if not why else p.type
            text = f"{'const ' if shown.const else ''}{shown}{shown.ref}"
            label = f"parameter {i} '{p.name}'" if p.name else f"parameter {i}"
            if why:
                problems.append((p.loc, f"{label} is {text}: {why}"))
            else:
                problems.append(
                    (p.loc, f"{label} is {text}, but the schema gives '{e.schema}'; the wrapper passes {passes}")
                )
        return problems

    def _check_return(self, op: Op, fn: Any, name: str, fn_loc: Loc) -> list[tuple[Loc, str]]:
        want = expected_return(op)
        got = cxx.cxx_type(fn.result_type)
        schema_rets = op.schema.returns_spelling
        if want == "void":
            if got.name != "void":
                return [(fn_loc, f"'{name}' returns {got.value}, but the schema returns (); expected void")]
            return []
        given = self.naturals[want]
        if got.name == "void" or not receives(given, got.value):
            return [
                (
                    fn_loc,
                    f"'{name}' returns {got.value}, but the schema returns '{schema_rets}'; "
                    f"expected a type the wrapper can return as {given}",
                )
            ]
        return []


# --------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------


@dataclass
class Report:
    diags: Diagnostics
    notes: list[str]
    checked: int
    seconds: float
    pch_state: cxx.PchState


def _naturals(manifest: Manifest) -> list[str]:
    types: dict[str, None] = {}
    for op in manifest.ops:
        for e in expected_params(op):
            types.update(dict.fromkeys(e.naturals))
        ret = expected_return(op)
        if ret != "void":
            types[ret] = None
    return list(types)


def _guard_note(manifest: Manifest, op: Op, keys: list[str]) -> str | None:
    """The guard under which every use of an implementation lies, spelled for a note; None if one use is unguarded."""
    guards = {op.guard or manifest.dispatch_guards.get(key) for key in keys}
    if None in guards:
        return None
    return " and ".join(f"guard '{g}' ({manifest.guards[g].cpp})" for g in sorted(g for g in guards if g))


def verify(
    manifest: Manifest,
    root: Path,
    include_dirs: list[Path],
    pch_dir: Path | None,
    build_pch: cxx.PchMode = "now",
    defines: Sequence[str] = (),
    types_only: bool = False,
) -> Report:
    """Check every op of ``manifest`` against its implementation; problems go into the report.

    ``pch_dir`` holds the cached prelude PCH and ``build_pch`` says when a missing one is built
    (Note [Prelude PCH]); a ``pch_dir`` of None parses torch's headers inline.
    """
    started = time.perf_counter()
    root = root.resolve()
    diags = Diagnostics()
    notes: list[str] = []
    headers: list[str] = []
    for fam in manifest.families:
        for header in fam.headers:
            if not (root / header).is_file():
                diags.error(fam.loc, f"family '{fam.name}': header '{header}' does not exist under {root}")
            elif header not in headers:
                headers.append(header)
    naturals = _naturals(manifest)
    text = "".join(f'#include "{root / h}"\n' for h in headers)
    text += f"namespace {_ALIASES} {{\n" + "".join(f"using t{i} = {t};\n" for i, t in enumerate(naturals)) + "}\n"
    # A draft (--types-only) is read as import-pybind reads its module: with the project's include
    # folders, past clang's errors (Note [Finding a module's includes] in codegen/includes.py).
    flags = includes.discover([root / h for h in headers]) if types_only else includes.BuildFlags()
    parser = cxx.Parser(
        root,
        include_dirs=[*include_dirs, root / "csrc", root, *flags.include_dirs],
        cache_dir=pch_dir,
        python=True,  # as import-pybind parses: headers of pybind11 modules include <Python.h>
        build_pch=build_pch,
        defines=[*flags.defines, *defines],
        system_dirs=flags.system_dirs,
        fallback_dirs=[includes.FALLBACK] if types_only else [],
    )
    if types_only:
        tu, problems = parser.parse_keep_going(MAIN_FILE, text, skip_bodies=True)
        notes += [f"clang: {line}" for line in includes.grouped_errors(problems)]
    else:
        try:
            tu = parser.parse(MAIN_FILE, text, skip_bodies=True)
        except cxx.CxxError as exc:
            diags.error(
                Loc(manifest.path, 1, 1),
                f"the implementation headers do not compile; fix these first:\n{exc}",
            )
            return Report(diags, notes, 0, time.perf_counter() - started, parser.pch_state)

    try:
        natural_types = _alias_types(tu, naturals)
    except cxx.CxxError as exc:
        diags.error(Loc(manifest.path, 1, 1), str(exc))
        return Report(diags, notes, 0, time.perf_counter() - started, parser.pch_state)
    wanted = {_unqualified(fn) for op in manifest.ops for fn in op.impl.values()}
    index = FunctionIndex.build(tu, wanted)
    checker = Checker(root, natural_types)
    family_header = {f.name: ", ".join(f.headers) for f in manifest.families}
    checked = 0
    for op in manifest.ops:
        for fn_name in dict.fromkeys(op.impl.values()):
            keys = [k for k, v in op.impl.items() if v == fn_name]
            qual = _unqualified(fn_name)
            found = index.functions.get(qual, [])
            if not found:
                guard = _guard_note(manifest, op, keys)
                where = family_header[op.family]
                if guard is not None:
                    notes.append(
                        f"{op.loc}: op '{op.name}': '{qual}' is not declared in this parse, where {guard} may not hold; not checked"
                    )
                    continue
                short = qual.rsplit("::", 1)[-1]
                diags.error(
                    op.loc,
                    f"{where}: the implementation '{qual}' does not exist{did_you_mean(short, index.near(qual))}; "
                    f"expected a function of that name (the op's 'impl', default {manifest.library}::<family>::<name>)",
                    op.name,
                )
                continue
            checked += 1
            results = [checker.check(op, fn) for fn in found]
            best = min(results, key=len)
            for cloc, message in sorted(best, key=lambda problem: problem[0]):
                if len(found) > 1:
                    message += f" (of {len(found)} overloads, the closest)"
                diags.error(op.loc, f"{cloc}: {message}", op.name)
    return Report(diags, notes, checked, time.perf_counter() - started, parser.pch_state)


def _alias_types(tu: Any, naturals: list[str]) -> dict[str, cxx.CxxType]:
    ci = cxx.cindex()
    out: dict[str, cxx.CxxType] = {}
    for child in cxx.children(tu.cursor):
        if child.kind == ci.CursorKind.NAMESPACE and child.spelling == _ALIASES:
            for alias in cxx.children(child):
                if alias.kind in (ci.CursorKind.TYPE_ALIAS_DECL, ci.CursorKind.TYPEDEF_DECL):
                    out[naturals[int(str(alias.spelling)[1:])]] = cxx.cxx_type(alias.underlying_typedef_type)
    missing = [t for t in naturals if t not in out]
    if missing:
        raise cxx.CxxError(f"clang did not resolve the conversion types {missing}")
    return out
