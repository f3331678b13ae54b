"""The draft manifest as YAML text, in the format of docs/manifest.md (with its TODO comments)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..model import UNDECIDED

if TYPE_CHECKING:
    from .draft import Draft

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_ .,()/+*=<>'\-]*$")


def _scalar_yaml(text: str) -> str:
    if _PLAIN.match(text) and ": " not in text and " #" not in text and not text.endswith((" ", ":")):
        return text
    return json.dumps(text)


def _schema_lines(schema: str, indent: str) -> list[str]:
    if len(schema) + len(indent) + 8 <= 110:
        return [f"{indent}schema: {_scalar_yaml(schema) if ':' in schema or '#' in schema else schema}"]
    head, rest = schema.split("(", 1)
    parts = rest.split(", ")
    lines: list[str] = []
    current = head + "("
    for i, part in enumerate(parts):
        piece = part + ("," if i < len(parts) - 1 else "")
        if len(current) + len(piece) + 1 > 100 and current.strip():
            lines.append(current.rstrip())
            current = ""
        current += piece + " "
    lines.append(current.rstrip())
    return [f"{indent}schema: >-", *(f"{indent}    {ln}" for ln in lines)]


def _py_value(value: object) -> str:
    return str(value) if isinstance(value, str) else json.dumps(value)


def render(draft: Draft) -> str:
    out = [
        "# Draft manifest written by `python -m codegen import-pybind` from:",
        *(f"#   {s}" for s in draft.sources),
        "# Before merging it into ops.yaml, a person must:",
        "#   - decide every `?name` in `writes`: keep the tensors the op writes (and mark them",
        "#     `Tensor(name!)` in the schema), drop the others; the validator rejects `?` entries;",
        "#   - write the docs, and settle each TODO and untranslated binding listed below;",
        "#   - run `python -m codegen verify` once the implementations exist.",
    ]
    if draft.untranslated:
        out += ["#", "# Not translated (left out of the draft):"]
        out += [f"#   {n}" for n in draft.untranslated]
    if draft.todo:
        out += ["#", "# To do (kept in the draft):"]
        out += [f"#   {n}" for n in draft.todo]
    if draft.remarks:
        out += ["#", "# Notes:"]
        out += [f"#   {n}" for n in draft.remarks]
    out += ["", f"library: {draft.library}", ""]
    if draft.guards:
        out.append("guards:")
        for name, cpp in draft.guards.items():
            out += [
                f"  {name}:",
                f"    cpp: {_scalar_yaml(cpp)}",
                f"    doc: {_scalar_yaml('TODO: say which builds define it')}",
                "",
            ]
    out.append("families:")
    for n, fam in enumerate(draft.families):
        if n:
            out.append("")
        out.append(f"  {fam.name}:")
        header = fam.header or f"csrc/apis/{fam.name}.hpp"
        out.append(f"    header: {header}" + ("" if fam.header else "  # TODO: no implementation was found; a guess"))
        out.append(f"    doc: {_scalar_yaml(fam.doc)}")
        if not fam.ops:
            out.append("    ops: []")
        else:
            out.append("    ops:")
        for i, op in enumerate(fam.ops):
            if i:
                out.append("")
            out += [f"      # TODO: {t}" for t in op.todos]
            first, *rest = _schema_lines(op.schema, "      ")
            out.append("      - " + first.lstrip())
            out += rest
            ind = "        "
            if op.impl:
                out.append(f"{ind}impl: {op.impl}")
            if op.packs:
                out.append(f"{ind}pack: {{" + ", ".join(f"{p}: [{a}, {s}]" for p, a, s in op.packs) + "}")
            if op.writes:
                out.append(f"{ind}writes: [" + ", ".join(json.dumps(UNDECIDED + w) for w in op.writes) + "]")
            if op.aliases:
                out.append(f"{ind}aliases: [{', '.join(op.aliases)}]")
            if op.guard:
                out.append(f"{ind}guard: {op.guard}")
            rules: list[str] = []
            if op.positional_only:
                rules.append("positional_only: true")
            if op.renames:
                rules.append("rename: {" + ", ".join(f"{k}: {v}" for k, v in op.renames.items()) + "}")
            if op.python_defaults:
                rules.append(
                    "defaults: {" + ", ".join(f"{k}: {_py_value(v)}" for k, v in op.python_defaults.items()) + "}"
                )
            if rules:
                out.append(f"{ind}python: {{{', '.join(rules)}}}")
            out.append(f"{ind}doc: {_scalar_yaml(op.doc)}")
        for dropped in fam.dropped:
            out.append(f"      # UNTRANSLATED {dropped}")
    return "\n".join(out) + "\n"
