"""``python -m codegen import-pybind``: draft ``ops.yaml`` entries from pybind11 bindings.

It reads the ``m.def(...)`` calls of ``PYBIND11_MODULE`` bodies and of the
registration functions they call (any function taking a ``pybind11::module_``,
like DeepGEMM's ``register_apis(m)``), resolves each bound callable with
libclang (a named function, or a lambda), and writes a draft manifest in the
format of ``docs/manifest.md``:

* one family per registration namespace (``mylib::gemm::register_apis``
  gives family ``gemm``), its header being the header that declares the bound
  functions (never a ``.cpp``; a family spread over several headers is noted);
* a schema per op from the C++ signature, ``guard:`` from the ``#if`` around
  its ``m.def``, ``python.rename`` where a ``py::arg`` renames a parameter;
* notes for what a person must settle: bound classes, static methods, tuple
  packs, renames, non-const references, unsigned types, guards.

The parse keeps going past clang's errors (a missing CUDA or CUTLASS header):
every binding whose signature resolved is drafted, and the errors are listed
once, grouped with the package that likely provides what is missing.  Include
folders come from the project's own build files (Note [Finding a module's
includes] in ``codegen/includes.py``).

Modules: ``reader.py`` finds the bindings (clang's AST of the registration
functions), ``guards.py`` the ``#if`` around them, ``translate.py`` turns C++
types and defaults into schema spelling (Note [C++ to schema]), ``draft.py``
builds the ops and writes the YAML; ``codegen/includes.py`` finds include
folders and groups clang's errors (verify uses it too).  The libclang plumbing is ``codegen/cxx.py``, shared
with ``verify``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import cxx, includes
from ..errors import Diagnostic
from ..schema import SchemaParser
from .draft import Builder, Draft
from .reader import Reader

__all__ = ["Draft", "import_pybind"]


# --------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------


def import_pybind(
    files: Sequence[Path],
    root: Path,
    include_dirs: Sequence[Path],
    library: str | None,
    pch_dir: Path | None = None,
    build_pch: cxx.PchMode = "now",
    defines: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> Draft:
    """Read the bindings in ``files`` and build the draft manifest.

    Clang's errors do not stop it: every binding whose signature resolved is drafted, and the
    errors are listed once, grouped (Note [Grouping clang's errors]).  ``library`` None takes
    the module's name (:func:`library_name`).
    """
    root = root.resolve()
    paths = [p.resolve() for p in files]
    for path in paths:
        if not path.is_file():
            raise cxx.CxxError(f"{path}: no such file")
    flags = includes.discover(paths)
    if progress is not None and flags.sources:
        progress("using " + "; ".join(flags.sources))
    parser = cxx.Parser(
        root,
        prelude=cxx.PYBIND_PRELUDE,
        include_dirs=[*include_dirs, *(p.parent for p in paths), root / "csrc", root, *flags.include_dirs],
        cache_dir=pch_dir,
        python=True,
        build_pch=build_pch,
        defines=[*flags.defines, *defines],
        system_dirs=flags.system_dirs,
        fallback_dirs=[includes.FALLBACK],
    )
    if progress is not None and not parser.pch_ready():
        later = "; a PCH is built in the background for the next runs" if pch_dir is not None else ""
        progress(
            "no cached prelude: parsing torch's and pybind11's headers inline, which takes 30-45 s on a 2-core "
            f"machine (a warm run takes 3-8 s){later}"
        )
    reader = Reader(root)
    sources: list[str] = []
    problems: list[cxx.Problem] = []
    for path in paths:
        rel = cxx.relative(str(path), root)
        sources.append(rel)
        tu, found = parser.parse_keep_going(rel, path.read_text(encoding="utf-8"), skip_bodies=False)
        if tu is None:
            raise cxx.CxxError("\n".join(str(p) for p in found) or f"{rel}: clang could not parse it")
        problems += found
        reader.read_tu(tu, path)

    lib = library or library_name(reader.module_names, flags.project)
    builder = Builder(root, lib, SchemaParser(None))
    builder.search = [*include_dirs, *(p.parent for p in paths), root / "csrc", root, *flags.include_dirs]
    for b in reader.bindings:
        builder.add(b)
    for a in reader.aliases:
        builder.add_alias(a)
    builder.finish()
    remarks = [*reader.notes, *builder.notes, *_class_notes(reader)]
    return Draft(
        library=lib,
        sources=sources,
        families=list(builder.families.values()),
        untranslated=builder.untranslated,
        todo=builder.todo,
        remarks=remarks,
        guards=dict(builder.guards),
        seen=len(reader.bindings),
        classes=len(reader.classes),
        methods=sum(c.methods for c in reader.classes.values()),
        clang=includes.grouped_errors(problems),
    )


def _class_notes(reader: Reader) -> list[Diagnostic]:
    return [
        Diagnostic(
            c.loc,
            None,
            f"class '{c.name or c.cpp}' ({c.cpp}) binds {c.methods} method(s) with py::class_: left out, since an op "
            "is a free function of tensors and values; bind what the methods do as functions (state in tensors), "
            "or keep the class in pybind11",
        )
        for c in reader.classes.values()
    ]


def library_name(module_names: Sequence[str], project: Path | None) -> str:
    """The draft's library: the PYBIND11_MODULE's name, or, when that is a macro the parse did not
    define (``TORCH_EXTENSION_NAME``) or a bare ``_C``, the extension's name in setup.py
    (``deep_ep._C`` gives ``deep_ep``), else the project folder's name."""
    candidates = [n for n in module_names if n and n != "TORCH_EXTENSION_NAME"]
    setup = project / "setup.py" if project is not None else None
    if setup is not None and setup.is_file():
        candidates += includes.extension_names(setup)
    for name in candidates:
        parts = [p for p in name.split(".") if p.strip("_") and p not in ("_C", "C")]
        if parts:
            return _identifier("_".join(parts))
    return _identifier(project.name if project is not None else "my_library")


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text).strip("_").lower() or "my_library"
    return f"lib_{name}" if name[0].isdigit() else name
