"""The ``python:`` field of an op: the legacy Python signature's rules, and their checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from .conversions import CONVERTERS
from .errors import Loc, did_you_mean, one_of
from .fields import Pack
from .reading import DTYPE, IDENT, PYTHON_KEYS, FieldReader
from .schema import Arg, Schema
from .yamlsrc import YNode, plain


@dataclass(frozen=True)
class PythonRules:
    defaults: dict[str, object] = field(default_factory=dict)
    positional_only: bool = False
    rename: dict[str, str] = field(default_factory=dict)
    convert: dict[str, str] = field(default_factory=dict)
    export: bool = True


def default_matches(arg: Arg, value: object) -> bool:
    t = arg.type
    if value is None:
        return t.optional
    if t.is_list:
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return False
        return t.size is None or len(value) == t.size
    if t.base == "ScalarType":
        return isinstance(value, str) and bool(DTYPE.match(value))
    if t.base == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if t.base == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t.base == "bool":
        return isinstance(value, bool)
    if t.base == "str":
        return isinstance(value, str)
    return False


def parse_python(node: YNode | None, schema: Schema, packs: tuple[Pack, ...], r: FieldReader) -> PythonRules | None:
    pm = r.mapping(node, "field 'python'", PYTHON_KEYS)
    if pm is None:
        return PythonRules() if node is None else None
    packed = {m for p in packs for m in p.members}
    py_names = {p.python_name for p in packs} | {a for a in schema.arg_names if a not in packed}

    defaults: dict[str, object] = {}
    dm = r.mapping(pm.get("defaults"), "field 'python.defaults'")
    for name, (loc, vnode) in dm.entries.items() if dm else []:
        arg = schema.arg(name)
        value = plain(vnode)
        if arg is None or name in packed:
            unpacked = [a for a in schema.arg_names if a not in packed]
            r.error(
                loc,
                f"python default for '{name}', which is not an unpacked argument of the schema"
                f"{did_you_mean(name, unpacked)}; expected one of {one_of(unpacked)}",
            )
        elif not default_matches(arg, value):
            r.error(
                vnode.loc,
                f"python default for '{name}' is {value!r}, which does not fit its type {arg.type}; expected a value of that type",
            )
        else:
            defaults[name] = value

    rename: dict[str, str] = {}
    rm = r.mapping(pm.get("rename"), "field 'python.rename'")
    for name, (loc, vnode) in rm.entries.items() if rm else []:
        new = r.string(vnode, f"python rename of '{name}'", IDENT)
        if name not in py_names:
            r.error(
                loc,
                f"python rename of '{name}', which is not a Python parameter of this op"
                f"{did_you_mean(name, py_names)}; expected one of {one_of(sorted(py_names))}",
            )
        elif new is not None:
            if new in py_names and new != name:
                r.error(
                    vnode.loc,
                    f"python rename of '{name}' to '{new}' clashes with another parameter; expected a fresh name",
                )
            rename[name] = new

    convert: dict[str, str] = {}
    cm = r.mapping(pm.get("convert"), "field 'python.convert'")
    for name, (loc, vnode) in cm.entries.items() if cm else []:
        conv = r.string(vnode, f"python converter of '{name}'")
        if name not in py_names:
            r.error(
                loc,
                f"python converter for '{name}', which is not a Python parameter of this op"
                f"{did_you_mean(name, py_names)}; expected one of {one_of(sorted(py_names))}",
            )
        elif conv is not None and conv not in CONVERTERS:
            r.error(
                vnode.loc,
                f"python converter '{conv}' is unknown{did_you_mean(conv, CONVERTERS)}; expected one of {one_of(CONVERTERS)}",
            )
        elif conv is not None:
            convert[name] = conv

    positional_only = r.boolean(pm.get("positional_only"), "field 'python.positional_only'")
    export = r.boolean(pm.get("export"), "field 'python.export'")
    return PythonRules(
        defaults=defaults,
        positional_only=bool(positional_only),
        rename=rename,
        convert=convert,
        export=True if export is None else export,
    )


def check_default_order(schema: Schema, packs: tuple[Pack, ...], rules: PythonRules, r: FieldReader, loc: Loc) -> None:
    """The legacy Python signature must be valid Python: no parameter without a default after one
    with a default (keyword-only parameters aside).  A pack has no default."""
    first = {p.members[0]: p for p in packs}
    later = {m for p in packs for m in p.members[1:]}
    with_default: str | None = None
    for arg in schema.args:
        if arg.name in later or arg.kwarg_only:
            continue
        pack = first.get(arg.name)
        name = pack.python_name if pack is not None else arg.name
        shown = rules.rename.get(name, name)
        if pack is None and (arg.has_default or name in rules.defaults):
            with_default = shown
        elif with_default is not None:
            r.error(
                loc,
                f"Python parameter '{shown}' has no default but follows '{with_default}', which has one; "
                "expected a default for it (python.defaults) or a keyword-only schema argument",
            )
            return
