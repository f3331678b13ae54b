"""DATA MODEL: what ``ops.yaml`` says, and nothing about how it is spelled.

Each manifest entry becomes a frozen dataclass with a ``parse`` classmethod
(which records problems in a :class:`Diagnostics` instead of raising).  The schema string is
the canonical form of an op; everything the schema cannot say (legacy Python
packing, Python-only defaults, aliases, guards, docs) sits beside it.

The format is documented field by field in ``docs/manifest.md``.  The field
parsers live beside it: ``reading.py`` (located-YAML reading, key lists and
name patterns), ``fields.py`` (guards, packs, fakes, impl, writes, the schema's
own checks) and ``python_rules.py`` (the ``python:`` field).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Diagnostics, Loc, did_you_mean, one_of
from .fields import (
    Fake,
    Guard,
    Pack,
    ParseContext,
    check_schema,
    check_without_schema,
    default_impl,
    parse_aliases,
    parse_doc,
    parse_fake,
    parse_impl,
    parse_packs,
    parse_writes,
)
from .python_rules import PythonRules, check_default_order, parse_python
from .reading import DISPATCH_KEYS, FAMILY_KEYS, IDENT, MANIFEST_KEYS, OP_KEYS, UNDECIDED, FieldReader, describe
from .schema import Arg, Schema, SchemaError, SchemaParser
from .yamlsrc import YNode, YScalar, YSeq

__all__ = [
    "DISPATCH_KEYS",
    "UNDECIDED",
    "Fake",
    "Family",
    "Guard",
    "Manifest",
    "Op",
    "Pack",
    "PythonRules",
    "default_impl",
]


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
        r = FieldReader(diags, None)
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
        doc = parse_doc(m, r)
        guard = r.string(m.get("guard"), "field 'guard'", IDENT)
        aliases = parse_aliases(m, r)
        if text is None or not isinstance(schema_node, YScalar):
            check_without_schema(m, r)
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
            check_without_schema(m, r)
            return None
        r.op = schema.name
        ok = check_schema(schema, schema_node, r)
        impl = parse_impl(m, family, schema, r, ctx.library)
        packs = parse_packs(m.get("pack"), schema, r)
        python = parse_python(m.get("python"), schema, packs, r)
        if python is not None:
            check_default_order(schema, packs, python, r, m.loc)
        writes = parse_writes(m.get("writes"), schema, r, m.loc, ctx.undecided_ok)
        fake = parse_fake(m.get("fake"), schema, impl, r, m.loc, ctx.undecided_ok)
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
    headers: tuple[str, ...]  # the implementation headers, in include order
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
        r = FieldReader(diags, None)
        m = r.mapping(root, "the manifest", MANIFEST_KEYS)
        if m is None:
            return None
        library = r.string(m.get("library"), "field 'library'", IDENT)
        if m.get("library") is None:
            r.error(m.loc, "the manifest has no 'library'; expected the TORCH_LIBRARY namespace, e.g. 'my_library'")

        guards: dict[str, Guard] = {}
        gmap = r.mapping(m.get("guards"), "field 'guards'")
        for name, (loc, gnode) in gmap.entries.items() if gmap else []:
            if not IDENT.match(name):
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


def _parse_family(
    name: str, loc: Loc, node: YNode, parser: SchemaParser, diags: Diagnostics, ctx: ParseContext
) -> Family | None:
    r = FieldReader(diags, None)
    if not IDENT.match(name):
        r.error(loc, f"family name '{name}' is not an identifier; expected e.g. 'gemm'")
        return None
    m = r.mapping(node, f"family '{name}'", FAMILY_KEYS)
    if m is None:
        return None
    headers = _family_headers(r, m.get("header"), name)
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
        r.error(ops_node.loc, f"family '{name}' field 'ops' is {describe(ops_node)}; expected a list of op entries")
    if headers is None or doc is None:
        return None
    return Family(name, headers, doc.strip(), tuple(ops), m.loc)


def _family_headers(r: FieldReader, node: YNode | None, family: str) -> tuple[str, ...] | None:
    """`header:` names one implementation header, or a list of them (a family spread over files)."""
    what = f"family '{family}' field 'header'"
    if not isinstance(node, YSeq):
        one = r.string(node, what)
        return None if one is None else (one,)
    items = [r.string(item, f"{what} entry") for item in node.items]
    if not items:
        r.error(node.loc, f"{what} is an empty list; expected at least one header path")
        return None
    if any(item is None for item in items):
        return None
    return tuple(item for item in items if item is not None)


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
