"""Load YAML into a tree whose every node knows its ``file:line:col``.

PyYAML's composer already keeps marks on nodes; this module turns its node
graph into three small types (:class:`YMap`, :class:`YSeq`, :class:`YScalar`)
and rejects what plain ``yaml.safe_load`` silently accepts: duplicate keys
(the later one would win) and non-string keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from .errors import Diagnostics, Loc


@dataclass(frozen=True)
class YScalar:
    value: object
    loc: Loc
    raw: str = ""  # the scalar's source text, as written (folded lines and all)

    def loc_of(self, word: str, nth: int = 1) -> Loc:
        """Where ``word`` (as a whole word) appears for the ``nth`` time in the scalar's source (the
        last time if fewer); the scalar's start if nowhere."""
        found = list(re.finditer(rf"(?<![\w]){re.escape(word)}(?![\w])", self.raw)) if word else []
        if not found:
            return self.loc
        return self._at(found[min(nth, len(found)) - 1].start())

    def type_of(self, arg: str) -> tuple[Loc, str]:
        """Where the type of schema argument ``arg`` is written (the word before its name), and the word."""
        m = re.search(rf"([A-Za-z_][\w\[\]?]*(?:\([^)]*\))?\??)\s+{re.escape(arg)}(?![\w])", self.raw)
        return (self._at(m.start(1)), m.group(1)) if m else (self.loc, "")

    def _at(self, at: int) -> Loc:
        newline = self.raw.rfind("\n", 0, at)
        line = self.loc.line + self.raw.count("\n", 0, at)
        col = self.loc.col + at if newline < 0 else at - newline
        return Loc(self.loc.path, line, col)


@dataclass(frozen=True)
class YSeq:
    items: tuple[YNode, ...]
    loc: Loc


@dataclass(frozen=True)
class YMap:
    entries: dict[str, tuple[Loc, YNode]]
    loc: Loc

    def get(self, key: str) -> YNode | None:
        hit = self.entries.get(key)
        return hit[1] if hit else None

    def key_loc(self, key: str) -> Loc:
        return self.entries[key][0]


YNode = YScalar | YSeq | YMap


def _loc(path: str, node: yaml.Node) -> Loc:
    mark = node.start_mark
    return Loc(path, mark.line + 1, mark.column + 1)


class _Constructor(yaml.SafeLoader):
    """Only used for its scalar resolution (int/float/bool/null/str)."""


def _scalar_value(node: yaml.ScalarNode) -> object:
    return _Constructor("").construct_object(node, deep=True)


def _convert(path: str, node: yaml.Node, diags: Diagnostics) -> YNode:
    loc = _loc(path, node)
    if isinstance(node, yaml.ScalarNode):
        start, end = node.start_mark, node.end_mark
        raw = start.buffer[start.index : end.index] if start.buffer is not None else ""
        return YScalar(_scalar_value(node), loc, raw)
    if isinstance(node, yaml.SequenceNode):
        return YSeq(tuple(_convert(path, item, diags) for item in node.value), loc)
    assert isinstance(node, yaml.MappingNode)
    entries: dict[str, tuple[Loc, YNode]] = {}
    for key_node, value_node in node.value:
        key_loc = _loc(path, key_node)
        key = _scalar_value(key_node) if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str):
            diags.error(key_loc, f"found a non-string key {key!r}; expected a plain name")
            continue
        if key in entries:
            first = entries[key][0]
            diags.error(key_loc, f"duplicate key '{key}' (first given at line {first.line}); expected each key once")
            continue
        entries[key] = (key_loc, _convert(path, value_node, diags))
    return YMap(entries, loc)


def load(text: str, path: str, diags: Diagnostics) -> YNode | None:
    """Parse ``text``; on a syntax error record it and return ``None``."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark else Loc(path, 1, 1)
        diags.error(loc, f"YAML syntax error: {exc.problem or exc.context}")
        return None
    if root is None:
        diags.error(Loc(path, 1, 1), "the manifest is empty; expected a mapping with 'library', 'families' and ops")
        return None
    return _convert(path, root, diags)


def plain(node: YNode) -> object:
    """The node as ordinary Python data, marks dropped."""
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [plain(item) for item in node.items]
    return {key: plain(value) for key, (_, value) in node.entries.items()}
