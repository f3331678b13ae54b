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

from pathlib import Path

import jinja2

from .model import Family, Manifest, Op
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


def cpp_family_path(family: Family) -> str:
    return f"csrc/generated/{family.name}.cpp"


def _family_cpp(manifest: Manifest, family: Family) -> dict[str, object]:
    wrappers: list[list[str]] = []
    defs: list[str] = []
    for op in family.ops:
        body: list[str] = []
        for w in cpp.wrappers(op):
            body += w.lines()
        wrappers.append(cpp.guard_lines(manifest, op.guard, body))
        defs += cpp.guard_lines(manifest, op.guard, [cpp.def_line(op)])
    keys = [k for k in ("CompositeExplicitAutograd", "CPU", "CUDA", "Meta") if any(k in op.impl for op in family.ops)]
    impl_blocks: list[list[str]] = []
    for key in keys:
        lines: list[str] = []
        for op in family.ops:
            if key in op.impl:
                lines += cpp.guard_lines(manifest, op.guard, [cpp.impl_line(op, key)])
        block = [f"TORCH_LIBRARY_IMPL({manifest.library}, {key}, m) {{", *lines, "}"]
        impl_blocks.append(cpp.guard_lines(manifest, manifest.dispatch_guards.get(key), block))
    return {
        "header_comment": HEADER,
        "family": family.name,
        "doc": family.doc.splitlines()[0] if family.doc else "",
        "impl_header": family.header.removeprefix("csrc/"),
        "library": manifest.library,
        "wrappers": wrappers,
        "defs": defs,
        "impl_blocks": impl_blocks,
    }


def guard_var(guard: str) -> str:
    """The module-level bool of ``deep_gemm._C`` (and its stub) saying whether ``guard``'s ops exist."""
    return f"_GUARD_{guard.upper()}"


def _guard_groups(manifest: Manifest) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for guard in manifest.guards.values():
        names = [op.name for op in manifest.ops if op.guard == guard.name]
        if names:
            out.append({"var": guard_var(guard.name), "name": guard.name, "ops": repr(tuple(names))})
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
            names = [op.name, *op.aliases]
            export = f"_export({fam.name!r}, {names!r})" if op.python.export else f"_present({names!r})"
            body.append(export)
            if op.fake is not None and op.fake.kind == "function":
                body.append(f"_register_fake({manifest.library + '::' + op.name!r}, {op.fake.function!r})")
            if op.guard:
                blocks.append([f"if {guard_var(op.guard)}:", *_indent(body, True)])
            else:
                blocks.append(body)
        families.append({"name": fam.name, "doc": fam.doc.splitlines()[0], "blocks": blocks})
    return {
        "header_comment": HEADER,
        "library": manifest.library,
        "guards": _guard_groups(manifest),
        "families": families,
    }


def _stub(manifest: Manifest) -> dict[str, object]:
    """The stub mirrors the shim: a guarded op sits under ``if _GUARD_<NAME>:`` in both
    (Note [Guards in the stub])."""
    blocks = []
    exported: list[str] = []
    guarded_exports: dict[str, list[str]] = {}
    for op in manifest.ops:
        lines = StubFunction(op).lines()
        names = [op.name, *op.aliases] if op.python.export else []
        if op.guard:
            lines = [f"if {guard_var(op.guard)}:", *_indent(lines, True)]
            guarded_exports.setdefault(op.guard, []).extend(names)
        else:
            exported += names
        blocks.append(lines)
    guards = []
    for guard in manifest.guards.values():
        if any(op.guard == guard.name for op in manifest.ops):
            guards.append(
                f"# Whether this build has the ops of guard '{guard.name}' ({guard.cpp}); they sit under it below."
            )
            guards += [f"{guard_var(guard.name)}: bool", ""]
    extend = []
    for name, guarded in guarded_exports.items():
        if guarded:
            extend += [f"if {guard_var(name)}:", f"    __all__ += [{', '.join(repr(n) for n in guarded)}]"]
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
                facts.append(f"- Not re-exported: reach it as `deep_gemm._C.{op.name}`")
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
    return {"header_comment": HEADER, "families": families, "total": total, "aliases": aliases}


def render_all(manifest: Manifest) -> dict[str, str]:
    """Every generated file, path (relative to the output root) -> text."""
    env = _env()
    files: dict[str, str] = {}
    fam_template = env.get_template("family.cpp.j2")
    for fam in manifest.families:
        files[cpp_family_path(fam)] = fam_template.render(**_family_cpp(manifest, fam))
    files["deep_gemm/_C.py"] = env.get_template("_C.py.j2").render(**_shim(manifest))
    files["deep_gemm/_C.pyi"] = env.get_template("_C.pyi.j2").render(**_stub(manifest))
    files["docs/ops.md"] = env.get_template("ops.md.j2").render(**_docs(manifest))
    return files


__all__ = ["HEADER", "Op", "render_all"]
