"""``#if`` blocks around bindings: which condition each ``m.def`` sits under.

Note [Guards of bindings]
~~~~~~~~~~~~~~~~~~~~~~~~~
clang sees only the active branch of each ``#if`` and keeps no record of the
conditions around a call, so the registration body's source text is scanned:
a stack of the open conditional blocks (``#if``/``#ifdef``/``#ifndef``, with
``#elif``/``#else`` replacing the top one) gives the condition at every offset.
An ``m.def`` under a block is drafted with a guard spelling that condition; the
conditions of nested blocks are joined with ``&&``.  A block that holds no
``m.def`` (an ``#if`` inside a lambda body, say) is no guard of any binding, and
is not reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPERATOR_WORDS = {"defined", "and", "or", "not", "bitand", "bitor", "xor", "compl", "not_eq", "and_eq", "or_eq"}
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", re.M)


@dataclass(frozen=True)
class Block:
    """One branch of a conditional: its condition as a C++ expression, and where it starts."""

    cpp: str
    start: int


def _condition(kind: str, rest: str) -> str:
    rest = re.sub(r"//.*$", "", rest).strip()
    if kind == "ifdef":
        return f"defined({rest})"
    if kind == "ifndef":
        return f"!defined({rest})"
    return rest


def _negate(cpp: str) -> str:
    m = re.fullmatch(r"!\s*defined\s*\(\s*(\w+)\s*\)", cpp)
    if m:
        return f"defined({m.group(1)})"
    m = re.fullmatch(r"defined\s*\(\s*(\w+)\s*\)", cpp)
    if m:
        return f"!defined({m.group(1)})"
    return f"!({cpp})"


class Conditions:
    """The conditional blocks of one text, queried by offset (Note [Guards of bindings])."""

    def __init__(self, text: str) -> None:
        self.spans: list[tuple[int, int, tuple[Block, ...]]] = []  # [start, end) -> open blocks
        stack: list[tuple[Block, list[str]]] = []  # the open branch, and the earlier branches' conditions
        last = 0
        for m in _DIRECTIVE.finditer(text):
            self.spans.append((last, m.start(), tuple(b for b, _ in stack)))
            kind, rest = m.group(1), m.group(2)
            if kind in ("if", "ifdef", "ifndef"):
                stack.append((Block(_condition(kind, rest), m.start()), []))
            elif kind in ("elif", "else") and stack:
                block, earlier = stack.pop()
                earlier = [*earlier, block.cpp]
                negated = " && ".join(_negate(c) for c in earlier)
                cpp = negated if kind == "else" else f"{negated} && ({_condition('if', rest)})"
                stack.append((Block(cpp, m.start()), earlier))
            elif kind == "endif" and stack:
                stack.pop()
            last = m.end()
        self.spans.append((last, len(text) + 1, tuple(b for b, _ in stack)))

    def at(self, offset: int) -> tuple[Block, ...]:
        for start, end, blocks in self.spans:
            if start <= offset < end:
                return blocks
        return ()


def condition_of(blocks: tuple[Block, ...]) -> str | None:
    """The guard condition for a binding under ``blocks``, or None outside any."""
    if not blocks:
        return None
    parts = [b.cpp for b in blocks]
    return parts[0] if len(parts) == 1 else " && ".join(f"({p})" for p in parts)


def guard_name(cpp: str, taken: dict[str, str]) -> str:
    """A guard name for condition ``cpp``: from its macro names, unique within ``taken`` (name -> cpp)."""
    for name, known in taken.items():
        if known == cpp:
            return name
    words = re.findall(r"(!?)\s*defined\s*\(\s*(\w+)\s*\)", cpp) or [
        ("", w) for w in re.findall(r"[A-Za-z_]\w*", cpp) if w not in _OPERATOR_WORDS
    ]
    stem = "_and_".join(("not_" if neg else "") + word.lower() for neg, word in words)
    stem = re.sub(r"\W", "_", stem)[:60] or "guard"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}_{n}", n + 1
    taken[name] = cpp
    return name
