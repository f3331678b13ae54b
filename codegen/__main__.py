"""python -m codegen — generate every binding of deep_gemm from ops.yaml.

Usage
-----
    python -m codegen regenerate   write every generated file whose bytes changed
    python -m codegen check        exit 1 (printing a diff) if any generated file is stale
    python -m codegen list         print the ops, one per line, with family and guard
    python -m codegen verify       check every op's C++ implementation against its schema
    python -m codegen import-pybind FILE.cpp [...] -o draft.yaml
                                   draft a manifest from pybind11 registration code

Options:
    --manifest PATH   the manifest (default: ./ops.yaml)
    --root DIR        where generated files live (default: the manifest's folder); for
                      import-pybind, what the draft's header paths are relative to (default: .)
    --quiet           print only problems
  verify and import-pybind:
    -I DIR            one more include folder for libclang (repeatable)
    --no-pch          parse torch's headers inline instead of from the cached prelude PCH
                      (Note [Prelude PCH] in cxx.py)
    --pch-now         build a missing PCH before parsing, in this process (default: parse
                      inline this time and build it in the background for the next run)
    --pch-dir DIR     where that PCH is cached (default: this checkout's .cache/codegen-pch)
  import-pybind:
    -o PATH           where to write the draft (default: stdout)
    --library NAME    the draft's TORCH_LIBRARY namespace (default: deep_gemm)

Exit status: 0 success, 1 generated files differ from the manifest (``check``),
2 the manifest is invalid (every problem is printed; nothing is written), or
``verify`` found a mismatch, or ``import-pybind`` could not read its input.
``docs/tooling.md`` describes verify and import-pybind in full.

Generated files: ``csrc/generated/<family>.cpp`` (TORCH_LIBRARY registration),
``deep_gemm/_C.py`` (the legacy shim), ``deep_gemm/_C.pyi`` (its stub) and
``docs/ops.md`` (the op reference).  Each starts with an ``@generated`` line.

Internals
---------
Three layers, one module each.  The MODEL (``model.py``, ``schema.py``,
``yamlsrc.py``) says what ``ops.yaml`` says, with every value tied to its
``ops.yaml:LINE:COL``.  The SPELLING (``spelling/cpp.py``,
``spelling/python.py``, driven by the one table in ``conversions.py``) says how
an op is written in C++, in the shim and in the stub.  The OUTPUTS
(``outputs.py`` + ``templates/``) say what each file contains; ``writer.py``
writes them.  ``pipeline.py`` strings the three together.  Two tools read C++
through libclang (``cxx.py``): ``verify.py`` checks implementations against the
model, and ``pybind/`` drafts a manifest from pybind11 bindings.

Note [All errors at once]
~~~~~~~~~~~~~~~~~~~~~~~~~
Validation never stops at the first problem.  Every check appends to one
``Diagnostics`` and the command prints them all, sorted by location, before
exiting 2.  A manifest with any error writes no file at all: rendering only
starts after validation has passed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import ManifestError
from .pipeline import load_manifest, render
from .writer import diff, write_changed


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m codegen", description="Generate deep_gemm bindings from ops.yaml.")
    parser.add_argument("command", choices=("regenerate", "check", "list", "verify", "import-pybind"))
    parser.add_argument("files", nargs="*", type=Path, help="import-pybind: the C++ files holding the bindings")
    parser.add_argument("--manifest", type=Path, default=Path("ops.yaml"), help="the manifest (default: ops.yaml)")
    parser.add_argument("--root", type=Path, default=None, help="where generated files live")
    parser.add_argument("--quiet", action="store_true", help="print only problems")
    parser.add_argument("-I", dest="include", action="append", type=Path, default=[], help="an include folder")
    parser.add_argument("--no-pch", action="store_true", help="parse torch's headers without the cached PCH")
    parser.add_argument("--pch-now", action="store_true", help="build a missing PCH now, not in the background")
    parser.add_argument("--pch-dir", type=Path, default=None, help="where the prelude PCH is cached")
    parser.add_argument("-o", "--output", type=Path, default=None, help="import-pybind: where to write the draft")
    parser.add_argument("--library", default="deep_gemm", help="import-pybind: the draft's library namespace")
    args = parser.parse_args(argv)
    if args.files and args.command != "import-pybind":
        parser.error(f"'{args.command}' takes no file arguments")
    if args.command == "import-pybind" and not args.files:
        parser.error("import-pybind needs at least one C++ file")
    return args


def _verify(args: argparse.Namespace, root: Path, started: float) -> int:
    from .cxx import PCH_DIR, CxxError
    from .verify import verify

    try:
        manifest = load_manifest(args.manifest, display=str(args.manifest), cache_root=root)
        pch_dir = None if args.no_pch else (args.pch_dir or PCH_DIR)
        report = verify(manifest, root, args.include, pch_dir, "now" if args.pch_now else "background")
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 2
    except CxxError as exc:
        print(f"codegen verify: {exc}", file=sys.stderr)
        return 2
    for note in report.notes:
        print(f"note: {note}")
    if report.diags:
        for line in sorted(report.diags.items, key=lambda d: d.loc):  # stable: C++ order within an op
            print(line, file=sys.stderr)
        print(
            f"codegen verify: {len(report.diags.items)} problem(s) between {args.manifest} and its implementations",
            file=sys.stderr,
        )
        return 2
    if not args.quiet:
        pch = {"built": ", prelude PCH rebuilt", "building": ", prelude PCH building in the background"}.get(
            report.pch_state, ""
        )
        print(
            f"codegen verify: {report.checked} implementations match {len(manifest.ops)} ops "
            f"({time.perf_counter() - started:.2f} s{pch})"
        )
    return 0


def _import_pybind(args: argparse.Namespace, started: float) -> int:
    from .cxx import PCH_DIR, CxxError
    from .pybind import import_pybind

    root: Path = args.root or Path(".")
    try:
        pch_dir = None if args.no_pch else (args.pch_dir or PCH_DIR)
        draft = import_pybind(
            args.files, root, args.include, args.library, pch_dir, "now" if args.pch_now else "background"
        )
    except CxxError as exc:
        print(f"codegen import-pybind: {exc}", file=sys.stderr)
        return 2
    for line in draft.untranslated_lines():
        print(line, file=sys.stderr)
    if args.output is None:
        sys.stdout.write(draft.text)
    else:
        args.output.write_text(draft.text, encoding="utf-8")
        if not args.quiet:
            print(
                f"codegen import-pybind: wrote {args.output} ({draft.op_count} ops, "
                f"{len(draft.untranslated)} left for a person; {time.perf_counter() - started:.2f} s)",
                file=sys.stderr,
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    started = time.perf_counter()
    if args.command == "import-pybind":
        return _import_pybind(args, started)
    if args.command == "verify":
        return _verify(args, args.root or args.manifest.resolve().parent, started)
    root: Path = args.root or args.manifest.resolve().parent
    try:
        manifest = load_manifest(args.manifest, display=str(args.manifest), cache_root=root)
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.command == "list":
        for op in manifest.ops:
            print(f"{op.family}\t{op.name}\t{op.guard or '-'}\t{','.join(op.aliases)}")
        return 0
    files = render(manifest)
    if args.command == "check":
        text = diff(root, files)
        if text:
            sys.stdout.write(text)
            print("\ngenerated files are out of date with ops.yaml.\nrun: python -m codegen regenerate")
            return 1
        if not args.quiet:
            print(f"codegen check: {len(files)} generated files match ops.yaml ({time.perf_counter() - started:.2f} s)")
        return 0
    written = write_changed(root, files)
    if not args.quiet:
        for rel in written:
            print(f"wrote {rel}")
        print(
            f"codegen regenerate: {len(written)} of {len(files)} files changed ({time.perf_counter() - started:.2f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
