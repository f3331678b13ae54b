"""OUTPUTS: what each generated file contains.

Every string is computed here or in ``codegen/spelling``; the templates in
``templates/`` only place ready-made lines (see Note [Templates hold no logic]).

Note [Templates hold no logic]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A template receives lists of finished lines and loops over them.  It makes no
decision and computes no name, so reading one shows the shape of the file it
makes, and reading this module shows everything that varies.

Note [Guards in the stub]
~~~~~~~~~~~~~~~~~~~~~~~~~
An op under a guard exists only in builds where the guard holds: the shim
defines it inside ``if _GUARD_<NAME>:``, ``_GUARD_<NAME>`` being a bool the
shim computes at import.  The stub says the same thing in the same words: it
declares ``_GUARD_<NAME>: bool`` and puts the op's stub (and its ``__all__``
entries) under ``if _GUARD_<NAME>:``.  A type checker that knows nothing of
the build sees both branches, so the op is typed for users of any build;
``tools/stubtest.py`` tells mypy each flag's value in the build it checks
(``always_true`` / ``always_false``), so stubtest compares like with like.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from .model import DISPATCH_KEYS, Family, Manifest, Op
from .spelling import cpp
from .spelling.python import ShimFunction, StubFunction, params, return_annotation, signature

HEADER = "@generated from ops.yaml by python -m codegen — do not edit"
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


GENERATED_DIR = "csrc/generated"
# The registration sources the build compiles, written by the generator (setup.py reads it; no glob).
SOURCES_LIST = f"{GENERATED_DIR}/sources.txt"
# Folders whose generated files belong to the generator: one it no longer renders is stale
# (Note [The generator owns its outputs] in writer.py).
OWNED_DIRS = (GENERATED_DIR,)


def cpp_family_path(family: Family) -> str:
    return f"{GENERATED_DIR}/{family.name}.cpp"


def shim_path(manifest: Manifest) -> str:
    return f"{manifest.library}/_C.py"


def _family_cpp(manifest: Manifest, family: Family) -> dict[str, object]:
    lib = manifest.library
    wrappers: list[tuple[str | None, list[str]]] = []
    defs: list[tuple[str | None, list[str]]] = []
    for op in family.ops:
        body: list[str] = []
        for w in cpp.wrappers(op, lib):
            body += w.lines()
        wrappers.append((op.guard, body))
        defs.append((op.guard, [cpp.def_line(op)]))
    keys = [k for k in DISPATCH_KEYS if any(k in op.impl for op in family.ops)]
    impl_blocks: list[dict[str, object]] = []
    for key in keys:
        block_guard = manifest.dispatch_guards.get(key)
        items = [(op.guard, [cpp.impl_line(op, key, lib)]) for op in family.ops if key in op.impl]
        impl_blocks.append(
            {
                "key": key,
                "before": [cpp.guard_open(manifest, block_guard)] if block_guard else [],
                "lines": cpp.grouped(manifest, items, enclosing=block_guard),
                "after": [cpp.guard_close(manifest, block_guard)] if block_guard else [],
            }
        )
    return {
        "header_comment": HEADER,
        "family": family.name,
        "doc": family.doc.splitlines()[0] if family.doc else "",
        "impl_headers": [h.removeprefix("csrc/") for h in family.headers],
        "library": lib,
        "wrappers": cpp.grouped(manifest, wrappers, blank_between=True),
        "defs": cpp.grouped(manifest, defs),
        "impl_blocks": impl_blocks,
    }


def guard_var(guard: str) -> str:
    """The module-level bool of ``<library>._C`` (and its stub) saying whether ``guard``'s ops exist."""
    return f"_GUARD_{guard.upper()}"


def _guard_groups(manifest: Manifest) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for guard in manifest.guards.values():
        names = [op.name for op in manifest.ops if op.guard == guard.name]
        if names:
            out.append(
                {
                    "var": guard_var(guard.name),
                    "library": json.dumps(manifest.library),
                    "name": json.dumps(guard.name),
                    "ops": repr(tuple(names)),
                }
            )
    return out


def _indent(lines: list[str], guarded: bool) -> list[str]:
    return [("    " + ln if ln else ln) for ln in lines] if guarded else lines


def _shim(manifest: Manifest) -> dict[str, object]:
    families = []
    for fam in manifest.families:
        blocks = []
        for op in fam.ops:
            fn = ShimFunction(op)
            body = [*fn.binding_lines(), "", *fn.lines(), *fn.alias_lines()]
            if op.python.export:
                body.append(f"_export({fam.name!r}, {[op.name, *op.aliases]!r})")
            if op.fake is not None and op.fake.kind == "function":
                body.append(f"_register_fake({manifest.library + '::' + op.name!r}, {op.fake.function!r})")
            blocks.append(_block(op.guard, body))
        families.append({"name": fam.name, "doc": fam.doc.splitlines()[0], "blocks": blocks})
    lib = manifest.library
    imports = [
        f"from {lib}._shim import guard_enabled, load_extension"
        if manifest.guards
        else f"from {lib}._shim import load_extension"
    ]
    if any(op.packs for op in manifest.ops):
        imports.append(f"from {lib}._shim import pack_error as _pack_error")
    if any(op.fake is not None and op.fake.kind == "function" for op in manifest.ops):
        imports.append(f"from {lib}._shim import register_fake as _register_fake")
    if any(op.python.convert for op in manifest.ops):
        imports.insert(0, f"from {lib} import _convert")
    return {
        "header_comment": HEADER,
        "library": lib,
        "imports": imports,
        "extension": json.dumps(f"{lib}._C_extension"),
        "guards": _guard_groups(manifest),
        "families": families,
    }


def _block(guard: str | None, lines: list[str]) -> dict[str, list[str]]:
    """One op's lines for a template: under ``if _GUARD_<NAME>:`` (head) and indented when guarded."""
    return {"head": [f"if {guard_var(guard)}:"] if guard else [], "lines": _indent(lines, guard is not None)}


def _stub(manifest: Manifest) -> dict[str, object]:
    """The stub mirrors the shim: a guarded op sits under ``if _GUARD_<NAME>:`` in both
    (Note [Guards in the stub])."""
    blocks = []
    exported: list[str] = []
    guarded_exports: dict[str, list[str]] = {}
    for op in manifest.ops:
        names = [op.name, *op.aliases] if op.python.export else []
        if op.guard:
            guarded_exports.setdefault(op.guard, []).extend(names)
        else:
            exported += names
        blocks.append(_block(op.guard, StubFunction(op).lines()))
    used = {op.guard for op in manifest.ops if op.guard}
    guards = [
        {"var": guard_var(g.name), "name": g.name, "cpp": g.cpp} for g in manifest.guards.values() if g.name in used
    ]
    extend = [
        {"var": guard_var(name), "names": ", ".join(repr(n) for n in names)}
        for name, names in guarded_exports.items()
        if names
    ]
    return {
        "header_comment": HEADER,
        "guards": guards,
        "blocks": blocks,
        "all": [repr(n) for n in exported],
        "extend_all": extend,
    }


def _docs(manifest: Manifest) -> dict[str, object]:
    families = []
    for fam in manifest.families:
        ops = []
        for op in fam.ops:
            ps = params(op)
            facts = [f"- Schema: `{cpp.schema_text(op)}`"]
            if op.aliases:
                facts.append("- Aliases: " + ", ".join(f"`{a}`" for a in op.aliases))
            if op.writes:
                facts.append("- Writes: " + ", ".join(f"`{w}`" for w in op.writes))
            if op.guard:
                facts.append(f"- Guard: `{op.guard}` (`{manifest.guards[op.guard].cpp}`)")
            facts.append("- Dispatch: " + ", ".join(op.dispatch))
            if not op.python.export:
                facts.append(f"- Not re-exported: reach it as `{manifest.library}._C.{op.name}`")
            ops.append(
                {
                    "name": op.name,
                    "signature": f"{op.name}({signature(ps, stub=True)}) -> {return_annotation(op)}",
                    "doc": op.doc,
                    "facts": facts,
                }
            )
        families.append({"name": fam.name, "doc": fam.doc, "ops": ops})
    total = len(manifest.ops)
    aliases = sum(len(op.aliases) for op in manifest.ops)
    return {
        "header_comment": HEADER,
        "library": manifest.library,
        "families": families,
        "total": total,
        "aliases": aliases,
    }


def render_all(manifest: Manifest) -> dict[str, str]:
    """Every generated file, path (relative to the output root) -> text."""
    env = _env()
    files: dict[str, str] = {}
    fam_template = env.get_template("family.cpp.j2")
    for fam in manifest.families:
        files[cpp_family_path(fam)] = fam_template.render(**_family_cpp(manifest, fam))
    files[shim_path(manifest)] = env.get_template("_C.py.j2").render(**_shim(manifest))
    files[shim_path(manifest) + "i"] = env.get_template("_C.pyi.j2").render(**_stub(manifest))
    files["docs/ops.md"] = env.get_template("ops.md.j2").render(**_docs(manifest))
    sources = [cpp_family_path(fam) for fam in manifest.families]
    files[SOURCES_LIST] = env.get_template("sources.txt.j2").render(header_comment=HEADER, sources=sources)
    return files


__all__ = ["HEADER", "Op", "render_all"]
