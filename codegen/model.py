"""DATA MODEL: what ``ops.yaml`` says, and nothing about how it is spelled.

Each manifest entry becomes a frozen dataclass with a ``parse`` classmethod
(which records problems in a :class:`Diagnostics` instead of raising).  The schema string is
the canonical form of an op; everything the schema cannot say (legacy Python
packing, Python-only defaults, aliases, guards, docs) sits beside it.

The format is documented field by field in ``docs/manifest.md``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from .conversions import CONVERTERS
from .errors import Diagnostics, Loc, did_you_mean, one_of
from .schema import Arg, Schema, SchemaError, SchemaParser
from .yamlsrc import YMap, YNode, YScalar, YSeq, plain

# Every dispatch key the generator registers, in the order the registration files list them.
DISPATCH_KEYS = ("CompositeExplicitAutograd", "CPU", "CUDA", "Meta")
MANIFEST_KEYS = ("library", "guards", "dispatch_guards", "families")
GUARD_KEYS = ("cpp", "doc")
FAMILY_KEYS = ("header", "doc", "ops")
OP_KEYS = ("schema", "doc", "impl", "dispatch", "guard", "pack", "python", "aliases", "writes", "fake")
PYTHON_KEYS = ("defaults", "positional_only", "rename", "convert", "export")
FAKE_FORMS = ("'meta'", "{function: module.name}")
UNDECIDED = "?"  # prefix of a `writes` entry nobody has decided yet (see docs/manifest.md)

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CPP_NAME = re.compile(r"^(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_DTYPE = re.compile(r"^torch\.(float32|float64|float16|bfloat16|int32|int64|int8|uint8|bool|float8_e4m3fn)$")


# --------------------------------------------------------------------------------------
# small helpers for reading located YAML
# --------------------------------------------------------------------------------------


class _Reader:
    """Reads fields of one YAML mapping, reporting problems against an op."""

    def __init__(self, diags: Diagnostics, op: str | None) -> None:
        self.diags = diags
        self.op = op

    def error(self, loc: Loc, message: str) -> None:
        self.diags.error(loc, message, self.op)

    def mapping(self, node: YNode | None, what: str, allowed: tuple[str, ...] | None = None) -> YMap | None:
        if node is None:
            return None
        if not isinstance(node, YMap):
            self.error(node.loc, f"{what} is a {_kind(node)}; expected a mapping")
            return None
        if allowed is not None:
            for key in node.entries:
                if key not in allowed:
                    self.error(
                        node.key_loc(key),
                        f"unknown key '{key}' in {what}{did_you_mean(key, allowed)}; allowed keys: {one_of(allowed)}",
                    )
        return node

    def string(self, node: YNode | None, what: str, pattern: re.Pattern[str] | None = None) -> str | None:
        if node is None:
            return None
        if not isinstance(node, YScalar) or not isinstance(node.value, str):
            self.error(node.loc, f"{what} is {_describe(node)}; expected a string")
            return None
        if pattern is not None and not pattern.match(node.value):
            self.error(node.loc, f"{what} '{node.value}' is malformed; expected something like {_example(pattern)}")
            return None
        return node.value

    def boolean(self, node: YNode | None, what: str) -> bool | None:
        if node is None:
            return None
        if not isinstance(node, YScalar) or not isinstance(node.value, bool):
            self.error(node.loc, f"{what} is {_describe(node)}; expected true or false")
            return None
        return node.value

    def strings(self, node: YNode | None, what: str) -> list[tuple[str, Loc]]:
        if node is None:
            return []
        if not isinstance(node, YSeq):
            self.error(node.loc, f"{what} is {_describe(node)}; expected a list of names")
            return []
        out = []
        for item in node.items:
            text = self.string(item, f"an entry of {what}")
            if text is not None:
                out.append((text, item.loc))
        return out


def default_impl(library: str, family: str, name: str) -> str:
    """The C++ function an op calls when its entry names no ``impl``."""
    return f"{library}::{family}::{name}"


def _kind(node: YNode) -> str:
    return {YMap: "mapping", YSeq: "list", YScalar: "scalar"}[type(node)]


def _describe(node: YNode) -> str:
    if isinstance(node, YScalar):
        return f"{type(node.value).__name__} {node.value!r}"
    return f"a {_kind(node)}"


def _example(pattern: re.Pattern[str]) -> str:
    return {
        _IDENT.pattern: "'fp8_gemm_nt'",
        _CPP_NAME.pattern: "'my_library::family::op_name'",
        _DOTTED.pattern: "'my_library._fakes.op_name'",
    }.get(pattern.pattern, repr(pattern.pattern))


# --------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Guard:
    """A build condition: ops under it exist only in builds where ``cpp`` holds."""

    name: str
    cpp: str
    doc: str
    loc: Loc

    @classmethod
    def parse(cls, name: str, node: YNode, diags: Diagnostics) -> Guard | None:
        r = _Reader(diags, None)
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
class PythonRules:
    defaults: dict[str, object] = field(default_factory=dict)
    positional_only: bool = False
    rename: dict[str, str] = field(default_factory=dict)
    convert: dict[str, str] = field(default_factory=dict)
    export: bool = True


@dataclass(frozen=True)
class Fake:
    """How the op's fake (meta) kernel is provided: ``meta`` or a Python function."""

    kind: str  # "meta" | "function"
    function: str | None = None


@dataclass(frozen=True)
class Op:
    family: str
    schema: Schema
    doc: str
    impl: dict[str, str]  # dispatch key -> C++ function
    guard: str | None
    packs: tuple[Pack, ...]
    python: PythonRules
    aliases: tuple[str, ...]
    writes: tuple[str, ...]
    fake: Fake | None
    loc: Loc

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def dispatch(self) -> tuple[str, ...]:
        return tuple(self.impl)

    @property
    def returns_tensors(self) -> bool:
        return any(r.base == "Tensor" for r in self.schema.returns)

    def call_groups(self) -> list[tuple[Pack | None, tuple[Arg, ...]]]:
        """The schema arguments as the implementation (and the legacy Python API) take them:
        in schema order, each pack's members together at its first member's place."""
        packs = {p.members[0]: p for p in self.packs}
        later = {m for p in self.packs for m in p.members[1:]}
        out: list[tuple[Pack | None, tuple[Arg, ...]]] = []
        for arg in self.schema.args:
            if arg.name in later:
                continue
            pack = packs.get(arg.name)
            if pack is None:
                out.append((None, (arg,)))
                continue
            members = tuple(self.schema.arg(m) for m in pack.members)
            assert all(m is not None for m in members)  # the model checked every member exists
            out.append((pack, tuple(m for m in members if m is not None)))
        return out

    @classmethod
    def parse(cls, family: str, node: YNode, parser: SchemaParser, diags: Diagnostics, ctx: ParseContext) -> Op | None:
        r = _Reader(diags, None)
        m = r.mapping(node, "an op entry", None)
        if m is None:
            return None
        schema_node = m.get("schema")
        text = r.string(schema_node, "field 'schema'")
        if schema_node is None:
            r.error(m.loc, "op entry has no 'schema'; expected a TORCH_LIBRARY schema string")
        r.op = (text.split("(", 1)[0].strip() or None) if text else None
        for key in m.entries:
            if key not in OP_KEYS:
                r.error(
                    m.key_loc(key), f"unknown key '{key}'{did_you_mean(key, OP_KEYS)}; allowed keys: {one_of(OP_KEYS)}"
                )
        doc = _parse_doc(m, r)
        guard = r.string(m.get("guard"), "field 'guard'", _IDENT)
        aliases = _parse_aliases(m, r)
        if text is None or not isinstance(schema_node, YScalar):
            _check_without_schema(m, r)
            return None
        try:
            schema = parser.parse(text)
        except SchemaError as exc:
            # Note [Every error of an op]: the fields that do not need the schema are still checked.
            if exc.arg:
                where, written = schema_node.type_of(exc.arg)
                message = str(exc).replace(f"type '{exc.word}'", f"type '{written or exc.word}' of '{exc.arg}'", 1)
                r.error(where, message)
            else:
                r.error(schema_node.loc_of(exc.word), str(exc))
            _check_without_schema(m, r)
            return None
        r.op = schema.name
        ok = _check_schema(schema, schema_node, r)
        impl = _parse_impl(m, family, schema, r, ctx.library)
        packs = _parse_packs(m.get("pack"), schema, r)
        python = _parse_python(m.get("python"), schema, packs, r)
        if python is not None:
            _check_default_order(schema, packs, python, r, m.loc)
        writes = _parse_writes(m.get("writes"), schema, r, m.loc, ctx.undecided_ok)
        fake = _parse_fake(m.get("fake"), schema, impl, r, m.loc, ctx.undecided_ok)
        if not ok or doc is None or impl is None or python is None or writes is None:
            return None
        return cls(
            family=family,
            schema=schema,
            doc=doc.strip(),
            impl=impl,
            guard=guard,
            packs=packs,
            python=python,
            aliases=aliases,
            writes=writes,
            fake=fake,
            loc=m.loc,
        )


@dataclass(frozen=True)
class Family:
    name: str
    header: str
    doc: str
    ops: tuple[Op, ...]
    loc: Loc


@dataclass(frozen=True)
class Manifest:
    path: str
    library: str
    guards: dict[str, Guard]
    dispatch_guards: dict[str, str]  # dispatch key -> guard name
    families: tuple[Family, ...]

    @property
    def ops(self) -> tuple[Op, ...]:
        return tuple(op for fam in self.families for op in fam.ops)

    @classmethod
    def parse(
        cls, root: YNode, path: str, parser: SchemaParser, diags: Diagnostics, undecided_ok: bool = False
    ) -> Manifest | None:
        r = _Reader(diags, None)
        m = r.mapping(root, "the manifest", MANIFEST_KEYS)
        if m is None:
            return None
        library = r.string(m.get("library"), "field 'library'", _IDENT)
        if m.get("library") is None:
            r.error(m.loc, "the manifest has no 'library'; expected the TORCH_LIBRARY namespace, e.g. 'my_library'")

        guards: dict[str, Guard] = {}
        gmap = r.mapping(m.get("guards"), "field 'guards'")
        for name, (loc, gnode) in gmap.entries.items() if gmap else []:
            if not _IDENT.match(name):
                r.error(loc, f"guard name '{name}' is not an identifier")
                continue
            guard = Guard.parse(name, gnode, diags)
            if guard:
                guards[name] = guard

        dispatch_guards: dict[str, str] = {}
        dmap = r.mapping(m.get("dispatch_guards"), "field 'dispatch_guards'")
        for key, (loc, gnode) in dmap.entries.items() if dmap else []:
            gname = r.string(gnode, f"dispatch guard of '{key}'")
            if key not in DISPATCH_KEYS:
                r.error(
                    loc,
                    f"dispatch key '{key}' is unknown{did_you_mean(key, DISPATCH_KEYS)}; expected one of {one_of(DISPATCH_KEYS)}",
                )
            elif gname is not None and gname not in guards:
                r.error(
                    gnode.loc,
                    f"dispatch key '{key}' names guard '{gname}', which is not defined{did_you_mean(gname, guards)}",
                )
            elif gname is not None:
                dispatch_guards[key] = gname

        families: list[Family] = []
        fmap = r.mapping(m.get("families"), "field 'families'")
        if m.get("families") is None:
            r.error(m.loc, "the manifest has no 'families'; expected a mapping of family name to its header and ops")
        for fname, (floc, fnode) in fmap.entries.items() if fmap else []:
            fam = _parse_family(fname, floc, fnode, parser, diags, ParseContext(library or "", undecided_ok))
            if fam:
                families.append(fam)

        manifest_ok = library is not None
        result = cls(path, library or "", guards, dispatch_guards, tuple(families))
        _check_cross_op(result, diags)
        return result if manifest_ok else None


# --------------------------------------------------------------------------------------
# field parsers
# --------------------------------------------------------------------------------------


def _parse_family(
    name: str, loc: Loc, node: YNode, parser: SchemaParser, diags: Diagnostics, ctx: ParseContext
) -> Family | None:
    r = _Reader(diags, None)
    if not _IDENT.match(name):
        r.error(loc, f"family name '{name}' is not an identifier; expected e.g. 'gemm'")
        return None
    m = r.mapping(node, f"family '{name}'", FAMILY_KEYS)
    if m is None:
        return None
    header = r.string(m.get("header"), f"family '{name}' field 'header'")
    doc = r.string(m.get("doc"), f"family '{name}' field 'doc'")
    for key in ("header", "doc", "ops"):
        if m.get(key) is None:
            r.error(m.loc, f"family '{name}' has no '{key}'; expected 'header', 'doc' and 'ops'")
    ops_node = m.get("ops")
    ops: list[Op] = []
    if isinstance(ops_node, YSeq):
        for item in ops_node.items:
            op = Op.parse(name, item, parser, diags, ctx)
            if op:
                ops.append(op)
    elif ops_node is not None:
        r.error(ops_node.loc, f"family '{name}' field 'ops' is {_describe(ops_node)}; expected a list of op entries")
    if header is None or doc is None:
        return None
    return Family(name, header, doc.strip(), tuple(ops), m.loc)


@dataclass(frozen=True)
class ParseContext:
    """What every op's parse needs from the manifest around it."""

    library: str  # the manifest's library: the default implementation is <library>::<family>::<name>
    # An import-pybind draft, read by verify --types-only: `?x` markers in `writes` and missing
    # fakes are accepted (a person decides them later); nothing is generated from such a manifest.
    undecided_ok: bool = False


def _parse_doc(m: YMap, r: _Reader) -> str | None:
    doc = r.string(m.get("doc"), "field 'doc'")
    if m.get("doc") is None:
        r.error(m.loc, "op has no 'doc'; expected a docstring (it becomes the Python docstring and docs/ops.md)")
    return doc


def _parse_aliases(m: YMap, r: _Reader) -> tuple[str, ...]:
    aliases = r.strings(m.get("aliases"), "field 'aliases'")
    for alias, loc in aliases:
        if not _IDENT.match(alias) or keyword.iskeyword(alias):
            r.error(loc, f"alias '{alias}' is not a valid Python name; expected an identifier")
    return tuple(a for a, _ in aliases)


def _check_without_schema(m: YMap, r: _Reader) -> None:
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
            r.string(impl.get(key), f"impl for '{key}'", _CPP_NAME)
    elif impl is not None:
        r.string(impl, "field 'impl'", _CPP_NAME)
    r.mapping(m.get("pack"), "field 'pack'")
    pm = r.mapping(m.get("python"), "field 'python'", PYTHON_KEYS)
    if pm is not None:
        for key in ("defaults", "rename", "convert"):
            r.mapping(pm.get(key), f"field 'python.{key}'")
    fake = m.get("fake")
    if isinstance(fake, YMap):
        r.mapping(fake, "field 'fake'", ("function",))
    elif fake is not None and not (isinstance(fake, YScalar) and fake.value == "meta"):
        r.error(fake.loc, f"field 'fake' is {_describe(fake)}; expected {' or '.join(FAKE_FORMS)}")


def _check_schema(schema: Schema, node: YScalar, r: _Reader) -> bool:
    loc = node.loc
    ok = True
    if schema.overload:
        r.error(
            loc,
            f"the schema declares overload '.{schema.overload}'; expected a plain op name (overloads are not generated)",
        )
        ok = False
    if not _IDENT.match(schema.name):
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


def _parse_impl(m: YMap, family: str, schema: Schema, r: _Reader, library: str) -> dict[str, str] | None:
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
            fn = r.string(impl_node.get(key), f"impl for '{key}'", _CPP_NAME)
            out[key] = fn or default_fn
        for key in impl_node.entries:
            if key not in keys:
                r.error(
                    impl_node.key_loc(key),
                    f"impl names dispatch key '{key}', which is not in 'dispatch' ({', '.join(keys)})",
                )
        return out
    fn = r.string(impl_node, "field 'impl'", _CPP_NAME)
    if fn is None:
        return None
    return {k: fn for k in keys}


def _parse_packs(node: YNode | None, schema: Schema, r: _Reader) -> tuple[Pack, ...]:
    pm = r.mapping(node, "field 'pack'")
    if pm is None:
        return ()
    packs: list[Pack] = []
    owner: dict[str, str] = {}
    for pname, (ploc, pnode) in pm.entries.items():
        members = r.strings(pnode, f"pack rule '{pname}'")
        if not _IDENT.match(pname) or keyword.iskeyword(pname):
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


def _default_matches(arg: Arg, value: object) -> bool:
    t = arg.type
    if value is None:
        return t.optional
    if t.is_list:
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return False
        return t.size is None or len(value) == t.size
    if t.base == "ScalarType":
        return isinstance(value, str) and bool(_DTYPE.match(value))
    if t.base == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if t.base == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t.base == "bool":
        return isinstance(value, bool)
    if t.base == "str":
        return isinstance(value, str)
    return False


def _parse_python(node: YNode | None, schema: Schema, packs: tuple[Pack, ...], r: _Reader) -> PythonRules | None:
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
        elif not _default_matches(arg, value):
            r.error(
                vnode.loc,
                f"python default for '{name}' is {value!r}, which does not fit its type {arg.type}; expected a value of that type",
            )
        else:
            defaults[name] = value

    rename: dict[str, str] = {}
    rm = r.mapping(pm.get("rename"), "field 'python.rename'")
    for name, (loc, vnode) in rm.entries.items() if rm else []:
        new = r.string(vnode, f"python rename of '{name}'", _IDENT)
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


def _check_default_order(schema: Schema, packs: tuple[Pack, ...], rules: PythonRules, r: _Reader, loc: Loc) -> None:
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


def _parse_writes(
    node: YNode | None, schema: Schema, r: _Reader, op_loc: Loc, undecided_ok: bool = False
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


def _parse_fake(
    node: YNode | None, schema: Schema, impl: dict[str, str] | None, r: _Reader, op_loc: Loc, draft: bool = False
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
        fn = r.string(fm.get("function") if fm else None, "fake function", _DOTTED)
        if fn is not None:
            fake = Fake("function", fn)
        elif fm is not None and fm.get("function") is None:
            r.error(node.loc, f"field 'fake' has no 'function'; expected {' or '.join(FAKE_FORMS)}")
    else:
        r.error(node.loc, f"field 'fake' is {_describe(node)}; expected {' or '.join(FAKE_FORMS)}")
    if fake is not None and not returns_tensor:
        r.error(
            node.loc,
            f"op returns {schema.returns_spelling}, which holds no Tensor; expected no 'fake' (torch derives one)",
        )
    return fake


def _check_cross_op(manifest: Manifest, diags: Diagnostics) -> None:
    """Checks that need the whole manifest: unique names, known guards."""
    taken: dict[str, Loc] = {}
    for fam in manifest.families:
        for op in fam.ops:
            for name in (op.name, *op.aliases):
                if name in taken:
                    first = taken[name]
                    diags.error(
                        op.loc,
                        f"name '{name}' is already used at {first}; expected op names and aliases to be unique",
                        op.name,
                    )
                else:
                    taken[name] = op.loc
            if op.guard is not None and op.guard not in manifest.guards:
                diags.error(
                    op.loc,
                    f"guard '{op.guard}' is not defined{did_you_mean(op.guard, manifest.guards)}; expected one of {one_of(manifest.guards)}",
                    op.name,
                )
