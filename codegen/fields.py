"""The manifest's field parsers: guards, packs, fakes, impl, writes and the schema's own checks.

Each takes the located YAML of one field and a :class:`FieldReader`, records every problem and
returns the parsed value, or None when the field is unusable.  ``codegen/python_rules.py`` holds
the ``python:`` field; ``codegen/model.py`` assembles ops, families and the manifest.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from .errors import Diagnostics, Loc, did_you_mean, one_of
from .reading import (
    CPP_NAME,
    DISPATCH_KEYS,
    DOTTED,
    FAKE_FORMS,
    GUARD_KEYS,
    IDENT,
    PYTHON_KEYS,
    UNDECIDED,
    FieldReader,
    describe,
)
from .schema import Schema
from .yamlsrc import YMap, YNode, YScalar


@dataclass(frozen=True)
class Guard:
    """A build condition: ops under it exist only in builds where ``cpp`` holds."""

    name: str
    cpp: str
    doc: str
    loc: Loc

    @classmethod
    def parse(cls, name: str, node: YNode, diags: Diagnostics) -> Guard | None:
        r = FieldReader(diags, None)
        m = r.mapping(node, f"guard '{name}'", GUARD_KEYS)
        if m is None:
            return None
        cpp = r.string(m.get("cpp"), f"guard '{name}' field 'cpp'")
        doc = r.string(m.get("doc"), f"guard '{name}' field 'doc'")
        if cpp is None or doc is None:
            if m.get("cpp") is None or m.get("doc") is None:
                r.error(
                    m.loc,
                    f"guard '{name}' lacks {'cpp' if m.get('cpp') is None else 'doc'}; expected both 'cpp' and 'doc'",
                )
            return None
        return cls(name, cpp, doc, m.loc)


@dataclass(frozen=True)
class Pack:
    """One legacy Python parameter that carries several schema arguments, e.g. ``a = (a, sfa)``."""

    python_name: str
    members: tuple[str, ...]
    loc: Loc


@dataclass(frozen=True)
class Fake:
    """How the op's fake (meta) kernel is provided: ``meta`` or a Python function."""

    kind: str  # "meta" | "function"
    function: str | None = None
    loc: Loc | None = None  # where the function is named (codegen/fakes.py resolves it)


@dataclass(frozen=True)
class ParseContext:
    """What every op's parse needs from the manifest around it."""

    library: str  # the manifest's library: the default implementation is <library>::<family>::<name>
    # An import-pybind draft, read by verify --types-only: `?x` markers in `writes` and missing
    # fakes are accepted (a person decides them later); nothing is generated from such a manifest.
    undecided_ok: bool = False


def default_impl(library: str, family: str, name: str) -> str:
    """The C++ function an op calls when its entry names no ``impl``."""
    return f"{library}::{family}::{name}"


def parse_doc(m: YMap, r: FieldReader) -> str | None:
    doc = r.string(m.get("doc"), "field 'doc'")
    if m.get("doc") is None:
        r.error(m.loc, "op has no 'doc'; expected a docstring (it becomes the Python docstring and docs/ops.md)")
    return doc


def parse_aliases(m: YMap, r: FieldReader) -> tuple[str, ...]:
    aliases = r.strings(m.get("aliases"), "field 'aliases'")
    for alias, loc in aliases:
        if not IDENT.match(alias) or keyword.iskeyword(alias):
            r.error(loc, f"alias '{alias}' is not a valid Python name; expected an identifier")
    return tuple(a for a, _ in aliases)


def check_without_schema(m: YMap, r: FieldReader) -> None:
    """Note [Every error of an op]: when the schema cannot be read, the fields whose checks do not
    depend on it are still checked, so one run shows every error of the op."""
    for key, loc in r.strings(m.get("dispatch"), "field 'dispatch'"):
        if key not in DISPATCH_KEYS:
            r.error(
                loc,
                f"dispatch key '{key}' is unknown{did_you_mean(key, DISPATCH_KEYS)}; expected one of {one_of(DISPATCH_KEYS)}",
            )
    impl = m.get("impl")
    if isinstance(impl, YMap):
        for key in impl.entries:
            r.string(impl.get(key), f"impl for '{key}'", CPP_NAME)
    elif impl is not None:
        r.string(impl, "field 'impl'", CPP_NAME)
    r.mapping(m.get("pack"), "field 'pack'")
    pm = r.mapping(m.get("python"), "field 'python'", PYTHON_KEYS)
    if pm is not None:
        for key in ("defaults", "rename", "convert"):
            r.mapping(pm.get(key), f"field 'python.{key}'")
    fake = m.get("fake")
    if isinstance(fake, YMap):
        r.mapping(fake, "field 'fake'", ("function",))
    elif fake is not None and not (isinstance(fake, YScalar) and fake.value == "meta"):
        r.error(fake.loc, f"field 'fake' is {describe(fake)}; expected {' or '.join(FAKE_FORMS)}")


def check_schema(schema: Schema, node: YScalar, r: FieldReader) -> bool:
    loc = node.loc
    ok = True
    if schema.overload:
        r.error(
            loc,
            f"the schema declares overload '.{schema.overload}'; expected a plain op name (overloads are not generated)",
        )
        ok = False
    if not IDENT.match(schema.name):
        r.error(loc, f"op name '{schema.name}' is not a plain identifier; expected no namespace (the library adds it)")
        ok = False
    seen: set[str] = set()
    for arg in schema.args:
        if arg.name in seen:
            r.error(
                node.loc_of(arg.name, nth=2),
                f"argument '{arg.name}' appears twice in the schema; expected unique argument names",
            )
            ok = False
        seen.add(arg.name)
        if keyword.iskeyword(arg.name):
            r.error(
                node.loc_of(arg.name),
                f"argument '{arg.name}' is a Python keyword; expected a name usable as a Python parameter",
            )
            ok = False
        if arg.is_write and not arg.type.is_tensor:
            r.error(
                node.loc_of(arg.name),
                f"argument '{arg.name}' is marked written but is a {arg.type}; expected only Tensors to be written",
            )
            ok = False
    return ok


def parse_impl(m: YMap, family: str, schema: Schema, r: FieldReader, library: str) -> dict[str, str] | None:
    has_tensor = any(a.type.base == "Tensor" for a in schema.args)
    default_keys = ["CPU", "CUDA"] if has_tensor else ["CompositeExplicitAutograd"]
    dispatch_node = m.get("dispatch")
    keys: list[str] = []
    if dispatch_node is None:
        keys = default_keys
    else:
        for key, loc in r.strings(dispatch_node, "field 'dispatch'"):
            if key not in DISPATCH_KEYS:
                r.error(
                    loc,
                    f"dispatch key '{key}' is unknown{did_you_mean(key, DISPATCH_KEYS)}; expected one of {one_of(DISPATCH_KEYS)}",
                )
            elif key in keys:
                r.error(loc, f"dispatch key '{key}' is listed twice; expected each key once")
            else:
                keys.append(key)
        if not keys:
            r.error(dispatch_node.loc, "field 'dispatch' lists no valid key; expected at least one")
            return None
    default_fn = default_impl(library, family, schema.name)
    impl_node = m.get("impl")
    if impl_node is None:
        return {k: default_fn for k in keys}
    if isinstance(impl_node, YMap):
        out: dict[str, str] = {}
        for key in keys:
            fn = r.string(impl_node.get(key), f"impl for '{key}'", CPP_NAME)
            out[key] = fn or default_fn
        for key in impl_node.entries:
            if key not in keys:
                r.error(
                    impl_node.key_loc(key),
                    f"impl names dispatch key '{key}', which is not in 'dispatch' ({', '.join(keys)})",
                )
        return out
    fn = r.string(impl_node, "field 'impl'", CPP_NAME)
    if fn is None:
        return None
    return {k: fn for k in keys}


def parse_packs(node: YNode | None, schema: Schema, r: FieldReader) -> tuple[Pack, ...]:
    pm = r.mapping(node, "field 'pack'")
    if pm is None:
        return ()
    packs: list[Pack] = []
    owner: dict[str, str] = {}
    for pname, (ploc, pnode) in pm.entries.items():
        members = r.strings(pnode, f"pack rule '{pname}'")
        if not IDENT.match(pname) or keyword.iskeyword(pname):
            r.error(ploc, f"pack rule name '{pname}' is not a valid Python parameter name")
            continue
        if len(members) != 2:
            r.error(pnode.loc, f"pack rule '{pname}' has {len(members)} member(s); expected exactly 2, e.g. [a, sfa]")
            continue
        good = True
        for i, (member, mloc) in enumerate(members):
            arg = schema.arg(member)
            if arg is None:
                r.error(
                    mloc,
                    f"pack rule '{pname}' names '{member}', which is not an argument of the schema{did_you_mean(member, schema.arg_names)}",
                )
                good = False
            elif member in owner:
                r.error(
                    mloc,
                    f"pack rule '{pname}' names '{member}', which pack rule '{owner[member]}' already packs; expected each argument in at most one pack",
                )
                good = False
            elif arg.type.base != "Tensor" or arg.type.is_list or (i == 0 and arg.type.optional):
                r.error(
                    mloc,
                    f"pack rule '{pname}' member '{member}' is a {arg.type}; expected {'Tensor' if i == 0 else 'Tensor or Tensor?'}",
                )
                good = False
            elif arg.has_default or arg.kwarg_only:
                r.error(
                    mloc,
                    f"pack rule '{pname}' member '{member}' has a default or is keyword-only; expected a plain positional argument",
                )
                good = False
        if not good:
            continue
        names = [mb for mb, _ in members]
        idx = [schema.arg_names.index(n) for n in names]
        if idx[1] != idx[0] + 1:
            r.error(
                pnode.loc,
                f"pack rule '{pname}' members {names} are not adjacent in the schema; expected them side by side",
            )
            continue
        if pname in schema.arg_names and pname not in names:
            r.error(
                ploc,
                f"pack rule name '{pname}' clashes with schema argument '{pname}'; expected a fresh name or the first member's name",
            )
            continue
        for n in names:
            owner[n] = pname
        packs.append(Pack(pname, tuple(names), ploc))
    return tuple(packs)


def parse_writes(
    node: YNode | None, schema: Schema, r: FieldReader, op_loc: Loc, undecided_ok: bool = False
) -> tuple[str, ...] | None:
    listed = r.strings(node, "field 'writes'")
    names: list[str] = []
    undecided: set[str] = set()
    ok = True
    for name, loc in listed:
        if name.startswith(UNDECIDED):
            undecided.add(name[len(UNDECIDED) :])
            if undecided_ok:
                continue
            r.error(
                loc,
                f"'writes' still holds the undecided marker '{name}'; expected a person to decide whether '{name[1:]}' is written, then list it or drop it",
            )
            ok = False
            continue
        arg = schema.arg(name)
        if arg is None:
            r.error(
                loc,
                f"'writes' names '{name}', which is not an argument of the schema{did_you_mean(name, schema.arg_names)}",
            )
            ok = False
        elif not arg.type.is_tensor:
            r.error(loc, f"'writes' names '{name}', a {arg.type}; expected a Tensor argument")
            ok = False
        elif not arg.is_write:
            tag = arg.alias_set or name
            r.error(
                loc,
                f"'writes' says '{name}' is written, but the schema has no '!' on it; expected 'Tensor({tag}!) {name}'",
            )
            ok = False
        names.append(name)
    for arg in schema.args:
        if arg.is_write and arg.name not in names and arg.name not in undecided:
            r.error(
                node.loc if node else op_loc,
                f"the schema marks '{arg.name}' written ('!'), but 'writes' does not list it; expected 'writes' to list every written tensor",
            )
            ok = False
    return tuple(names) if ok else None


def parse_fake(
    node: YNode | None, schema: Schema, impl: dict[str, str] | None, r: FieldReader, op_loc: Loc, draft: bool = False
) -> Fake | None:
    returns_tensor = any(t.base == "Tensor" for t in schema.returns)
    if node is None:
        if returns_tensor and not draft:
            r.error(
                op_loc, f"op returns {schema.returns_spelling} but has no 'fake'; expected {' or '.join(FAKE_FORMS)}"
            )
        return None
    fake: Fake | None = None
    if isinstance(node, YScalar) and node.value == "meta":
        keys = set(impl or ())
        if not keys & {"Meta", "CompositeExplicitAutograd"}:
            r.error(
                node.loc,
                "fake 'meta' needs the op registered for Meta or CompositeExplicitAutograd; add one of them to 'dispatch'",
            )
        fake = Fake("meta")
    elif isinstance(node, YMap):
        fm = r.mapping(node, "field 'fake'", ("function",))
        fn_node = fm.get("function") if fm else None
        fn = r.string(fn_node, "fake function", DOTTED)
        if fn is not None and fn_node is not None:
            fake = Fake("function", fn, fn_node.loc)
        elif fm is not None and fm.get("function") is None:
            r.error(node.loc, f"field 'fake' has no 'function'; expected {' or '.join(FAKE_FORMS)}")
    else:
        r.error(node.loc, f"field 'fake' is {describe(node)}; expected {' or '.join(FAKE_FORMS)}")
    if fake is not None and not returns_tensor:
        r.error(
            node.loc,
            f"op returns {schema.returns_spelling}, which holds no Tensor; expected no 'fake' (torch derives one)",
        )
    return fake
