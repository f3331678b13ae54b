"""Locations and diagnostics.

Every value read from the manifest carries the place it came from, so an error
can point at ``ops.yaml:LINE:COL``.  Validation never stops at the first
problem: it appends to a :class:`Diagnostics` and the caller reports them all
at once (see Note [All errors at once] in ``codegen/__main__.py``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Loc:
    """A 1-based position in a source file."""

    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    loc: Loc
    op: str | None
    message: str

    def __str__(self) -> str:
        where = f"op '{self.op}': " if self.op else ""
        return f"{self.loc}: {where}{self.message}"


@dataclass
class Diagnostics:
    """Collects every problem found while reading and checking a manifest."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, loc: Loc, message: str, op: str | None = None) -> None:
        self.items.append(Diagnostic(loc, op, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def render(self) -> str:
        ordered = sorted(self.items, key=lambda d: (d.loc, d.message))
        lines = [str(d) for d in ordered]
        lines.append(f"{len(ordered)} error(s); no file was written.")
        return "\n".join(lines)


class ManifestError(Exception):
    """Raised once, after validation, when the manifest has any error."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        super().__init__(diagnostics.render())
        self.diagnostics = diagnostics


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a close match exists, else an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def one_of(choices: Iterable[str]) -> str:
    return ", ".join(f"'{c}'" for c in choices)
