"""Reading located YAML fields: the checks every manifest field parser shares.

A :class:`FieldReader` reads the fields of one YAML mapping and records each problem in a
:class:`Diagnostics` against the op it belongs to, never raising (Note [All errors at once] in
``codegen/__main__.py``).  The key lists and name patterns of the manifest format live here too.
"""

from __future__ import annotations

import re
from enum import Enum

from .errors import Diagnostics, Loc, did_you_mean, one_of
from .schema import SCALAR_TYPE_NAMES
from .yamlsrc import YMap, YNode, YScalar, YSeq


class DispatchKey(str, Enum):
    """Every dispatch key the generator registers, in the order the registration files list them."""

    COMPOSITE = "CompositeExplicitAutograd"
    CPU = "CPU"
    CUDA = "CUDA"
    META = "Meta"


# The keys' manifest spellings, in that order (what fields are checked against and outputs iterate).
DISPATCH_KEYS = tuple(key.value for key in DispatchKey)
MANIFEST_KEYS = ("library", "guards", "dispatch_guards", "families")
GUARD_KEYS = ("cpp", "doc")
FAMILY_KEYS = ("header", "doc", "ops")
OP_KEYS = ("schema", "doc", "impl", "dispatch", "guard", "pack", "python", "aliases", "writes", "fake")
PYTHON_KEYS = ("defaults", "positional_only", "rename", "convert", "export")
FAKE_FORMS = ("'meta'", "{function: module.name}")
UNDECIDED = "?"  # prefix of a `writes` entry nobody has decided yet (see docs/manifest.md)

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CPP_NAME = re.compile(r"^(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
# A dtype a python default may name: any of the schema's ScalarType names (one table, in schema.py).
DTYPE = re.compile(rf"^torch\.({'|'.join(SCALAR_TYPE_NAMES.values())})$")


class FieldReader:
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
            self.error(node.loc, f"{what} is a {kind_of(node)}; expected a mapping")
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
            self.error(node.loc, f"{what} is {describe(node)}; expected a string")
            return None
        if pattern is not None and not pattern.match(node.value):
            self.error(node.loc, f"{what} '{node.value}' is malformed; expected something like {_example(pattern)}")
            return None
        return node.value

    def boolean(self, node: YNode | None, what: str) -> bool | None:
        if node is None:
            return None
        if not isinstance(node, YScalar) or not isinstance(node.value, bool):
            self.error(node.loc, f"{what} is {describe(node)}; expected true or false")
            return None
        return node.value

    def strings(self, node: YNode | None, what: str) -> list[tuple[str, Loc]]:
        if node is None:
            return []
        if not isinstance(node, YSeq):
            self.error(node.loc, f"{what} is {describe(node)}; expected a list of names")
            return []
        out = []
        for item in node.items:
            text = self.string(item, f"an entry of {what}")
            if text is not None:
                out.append((text, item.loc))
        return out


def kind_of(node: YNode) -> str:
    return {YMap: "mapping", YSeq: "list", YScalar: "scalar"}[type(node)]


def describe(node: YNode) -> str:
    if isinstance(node, YScalar):
        return f"{type(node.value).__name__} {node.value!r}"
    return f"a {kind_of(node)}"


def _example(pattern: re.Pattern[str]) -> str:
    return {
        IDENT.pattern: "'fp8_gemm_nt'",
        CPP_NAME.pattern: "'my_library::family::op_name'",
        DOTTED.pattern: "'my_library._fakes.family.op_name'",
    }.get(pattern.pattern, repr(pattern.pattern))
