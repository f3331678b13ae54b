"""``python -m codegen import-pybind``: draft ``ops.yaml`` entries from pybind11 bindings.

It reads the ``m.def(...)`` calls of ``PYBIND11_MODULE`` bodies and of the
registration functions they call (any function taking a ``pybind11::module_``,
like DeepGEMM's ``register_apis(m)``), resolves each bound callable with
libclang (a named function, or a lambda), and writes a draft manifest in the
format of ``docs/manifest.md``:

* one family per registration namespace (``deep_gemm::gemm::register_apis``
  gives family ``gemm``), its header being the file that declares the bound
  functions;
* a schema per op from the C++ signature (Modules: ``reader.py`` finds the bindings (clang's AST of the registration
functions), ``translate.py`` turns C++ types and defaults into schema spelling
(Note [C++ to schema]), ``draft.py`` builds the ops and writes the YAML.  The
libclang plumbing is ``codegen/cxx.py``, shared with ``verify``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .. import cxx
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
    library: str,
    pch_dir: Path | None = None,
    build_pch: cxx.PchMode = "now",
) -> Draft:
    """Read the bindings in ``files`` and build the draft manifest."""
    root = root.resolve()
    parser = cxx.Parser(
        root,
        prelude=cxx.PYBIND_PRELUDE,
        include_dirs=[*include_dirs, *(p.resolve().parent for p in files), root / "csrc", root],
        cache_dir=pch_dir,
        python=True,
        build_pch=build_pch,
    )
    reader = Reader(root)
    sources: list[str] = []
    for path in files:
        path = path.resolve()
        if not path.is_file():
            raise cxx.CxxError(f"{path}: no such file")
        rel = cxx.relative(str(path), root)
        sources.append(rel)
        tu = parser.parse(rel, path.read_text(encoding="utf-8"), skip_bodies=False)
        reader.read_tu(tu, path)
    builder = Builder(root, library, SchemaParser(None))
    for b in reader.bindings:
        builder.add(b)
    for a in reader.aliases:
        builder.add_alias(a)
    builder.finish()
    return Draft(
        library=library,
        sources=sources,
        families=list(builder.families.values()),
        untranslated=builder.untranslated,
        todo=builder.todo,
        remarks=reader.notes,
    )
