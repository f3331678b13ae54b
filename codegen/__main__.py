"""python -m codegen — generate every binding of a TORCH_LIBRARY extension from its ops.yaml.

Usage
-----
    python -m codegen regenerate   write every generated file whose bytes changed, delete stale ones
    python -m codegen check        exit 1 (printing a diff) if any generated file is stale or missing
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
    -D NAME[=VALUE]   one more macro for the parse (repeatable)
    --no-pch          parse torch's headers inline instead of from the cached prelude PCH
                      (Note [Prelude PCH] in cxx.py)
    --pch-now         build a missing PCH before parsing, in this process (default: parse
                      inline this time and build it in the background for the next run)
    --pch-dir DIR     where that PCH is cached (default: this checkout's .cache/codegen-pch)
  verify:
    --types-only      check a draft whose 'writes' still hold undecided '?' markers; the headers
                      are read with the project's include folders, past clang's errors
  import-pybind:
    -o PATH           where to write the draft (default: stdout)
    --library NAME    the draft's TORCH_LIBRARY namespace (default: the PYBIND11_MODULE's name)

Exit status: 0 success, 1 generated files differ from the manifest (``check``),
2 the manifest is invalid (every problem is printed; nothing is written), or
``verify`` found a mismatch, or ``import-pybind`` could not read its input.
``docs/tooling.md`` describes verify and import-pybind in full.

Generated files: ``csrc/generated/<family>.cpp`` (TORCH_LIBRARY registration),
``csrc/generated/sources.txt`` (the list of them the build compiles),
``<library>/_C.py`` (the legacy shim), ``<library>/_C.pyi`` (its stub) and
``docs/ops.md`` (the op reference).  Each starts with an ``@generated`` line.
A generated file under ``csrc/generated/`` that the manifest no longer renders
is deleted by ``regenerate`` and named by ``check`` (Note [The generator owns
its outputs] in ``writer.py``).

Internals
---------
Three layers, one module each.  The MODEL (``model.py``, ``schema.py``,
``yamlsrc.py``) says what ``ops.yaml`` says, with every value tied to its
``ops.yaml:LINE:COL``.  The SPELLING (``spelling/cpp.py``,
``spelling/python.py``, driven by the one table in ``conversions.py``) says how
an op is written in C++, in the shim and in the stub.  The OUTPUTS
(``outputs.py`` + ``templates/``) say what each file contains; ``writer.py``
writes them.  ``pipeline.py`` loads and validates.  Two tools read C++ through
libclang (``cxx.py``, with ``includes.py`` for a project's include folders):
``verify.py`` checks implementations against the model, and ``importer/``
(``import-pybind``) drafts a manifest from pybind11 bindings.

Note [All errors at once]
~~~~~~~~~~~~~~~~~~~~~~~~~
Validation never stops at the first problem.  Every check appends to one
``Diagnostics`` and the command prints them all, sorted by location, before
exiting 2.  A manifest with any error writes no file at all: rendering only
starts after validation has passed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Manifest

# What each subcommand does, for ``--help`` (the module docstring has the full manual).
COMMANDS = {
    "regenerate": "write every file generated from the manifest whose bytes changed, and delete stale ones",
    "check": "exit 1 with a diff when a generated file is stale, missing or no longer rendered (what CI runs)",
    "list": "print every op: family, name, guard and aliases, tab-separated",
    "verify": "check each op's C++ implementation against its schema (libclang; see docs/tooling.md)",
    "import-pybind": "draft manifest entries from pybind11 bindings (libclang; see docs/tooling.md)",
}
_REQUIREMENTS = "requirements-dev.txt"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description="Generate TORCH_LIBRARY bindings, a legacy Python shim and its stub from one ops.yaml.",
        epilog="Exit status: 0 success, 1 stale generated files (check), 2 an invalid manifest or a failed "
        "verify/import. `python -m codegen COMMAND --help` lists a command's options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--manifest", type=Path, default=Path("ops.yaml"), help="the manifest (default: ./ops.yaml)")
    common.add_argument(
        "--root", type=Path, default=None, help="where generated files live (default: the manifest's folder)"
    )
    common.add_argument("--quiet", action="store_true", help="print only problems")
    clang = argparse.ArgumentParser(add_help=False)
    clang.add_argument(
        "-I", dest="include", action="append", type=Path, default=[], help="one more include folder (repeatable)"
    )
    clang.add_argument(
        "-D", dest="define", action="append", default=[], help="a macro for the parse, NAME or NAME=VALUE (repeatable)"
    )
    clang.add_argument("--no-pch", action="store_true", help="parse torch's headers without the cached PCH")
    clang.add_argument("--pch-now", action="store_true", help="build a missing PCH now, not in the background")
    clang.add_argument("--pch-dir", type=Path, default=None, help="where the prelude PCH is cached")
    for name in ("regenerate", "check", "list"):
        sub.add_parser(name, parents=[common], help=COMMANDS[name], description=COMMANDS[name])
    verify = sub.add_parser("verify", parents=[common, clang], help=COMMANDS["verify"], description=COMMANDS["verify"])
    verify.add_argument(
        "--types-only",
        action="store_true",
        help="check a draft whose 'writes' still hold undecided '?' markers (types, names and order only)",
    )
    imp = sub.add_parser(
        "import-pybind", parents=[common, clang], help=COMMANDS["import-pybind"], description=COMMANDS["import-pybind"]
    )
    imp.add_argument("files", nargs="+", type=Path, help="the C++ files holding the bindings (PYBIND11_MODULE)")
    imp.add_argument("-o", "--output", type=Path, default=None, help="where to write the draft (default: stdout)")
    imp.add_argument(
        "--library", default=None, help="the draft's library namespace (default: the PYBIND11_MODULE's name)"
    )
    return parser


def regenerate_hint(args: argparse.Namespace) -> str:
    """The command that regenerates, spelled with the interpreter that is running now."""
    cmd = [sys.executable, "-m", "codegen", "regenerate"]
    if args.manifest != Path("ops.yaml"):
        cmd += ["--manifest", str(args.manifest)]
    if args.root is not None:
        cmd += ["--root", str(args.root)]
    hint = shlex.join(cmd)
    if args.manifest == Path("ops.yaml") and args.root is None and Path("Makefile").is_file():
        hint += "   (or: make regenerate)"
    return hint


def _verify(args: argparse.Namespace, root: Path, started: float) -> int:
    from .cxx import PCH_DIR, CxxError
    from .errors import ManifestError
    from .pipeline import load_manifest
    from .verify import verify

    try:
        manifest = load_manifest(
            args.manifest, display=str(args.manifest), cache_root=root, allow_undecided=args.types_only
        )
        pch_dir = None if args.no_pch else (args.pch_dir or PCH_DIR)
        report = verify(
            manifest,
            root,
            args.include,
            pch_dir,
            "now" if args.pch_now else "background",
            defines=args.define,
            types_only=args.types_only,
        )
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
    from .importer import import_pybind

    root: Path = args.root or Path(".")
    try:
        pch_dir = None if args.no_pch else (args.pch_dir or PCH_DIR)
        draft = import_pybind(
            args.files,
            root,
            args.include,
            args.library,
            pch_dir,
            "now" if args.pch_now else "background",
            defines=args.define,
            progress=None if args.quiet else lambda text: print(f"codegen import-pybind: {text}", file=sys.stderr),
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
        where = f"wrote {args.output}" if args.output is not None else "draft on stdout"
        print(
            f"codegen import-pybind: {where}: {draft.summary()} ({time.perf_counter() - started:.2f} s)",
            file=sys.stderr,
        )
    return 0


def _generate(args: argparse.Namespace, started: float) -> int:
    from .errors import ManifestError
    from .outputs import HEADER, OWNED_DIRS, render_all
    from .pipeline import load_manifest
    from .writer import diff, remove, stale, write_changed

    root: Path = args.root or args.manifest.resolve().parent
    try:
        manifest: Manifest = load_manifest(args.manifest, display=str(args.manifest), cache_root=root)
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.command == "list":
        for op in manifest.ops:
            print(f"{op.family}\t{op.name}\t{op.guard or '-'}\t{','.join(op.aliases)}")
        return 0
    files = render_all(manifest)
    ghosts = stale(root, files, OWNED_DIRS, HEADER)
    if args.command == "check":
        text = diff(root, files)
        if text or ghosts:
            sys.stdout.write(text)
            for rel in ghosts:
                print(f"stale generated file: {rel} (the manifest no longer renders it; regenerate deletes it)")
            print(f"\ngenerated files are out of date with {args.manifest}.\nrun: {regenerate_hint(args)}")
            return 1
        if not args.quiet:
            print(
                f"codegen check: {len(files)} generated files match {args.manifest} "
                f"({time.perf_counter() - started:.2f} s)"
            )
        return 0
    written = write_changed(root, files)
    remove(root, ghosts)
    if not args.quiet:
        for rel in written:
            print(f"wrote {rel}")
        for rel in ghosts:
            print(f"deleted {rel} (no longer rendered)")
        print(
            f"codegen regenerate: {len(written)} of {len(files)} files changed"
            + (f", {len(ghosts)} stale deleted" if ghosts else "")
            + f" ({time.perf_counter() - started:.2f} s)"
        )
    return 0


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if args.command == "import-pybind":
        return _import_pybind(args, started)
    if args.command == "verify":
        return _verify(args, args.root or args.manifest.resolve().parent, started)
    return _generate(args, started)


def missing_package(exc: ModuleNotFoundError) -> str:
    """One line for a dependency this interpreter lacks: what to install, or which interpreter to use."""
    name = (exc.name or "?").split(".")[0]
    venv = Path(".venv") / "bin" / "python"
    use = f" or run it with the project's {venv} (`make setup` creates it)" if Path("Makefile").is_file() else ""
    install = "pip install torch" if name == "torch" else f"pip install -r {_REQUIREMENTS}"
    return f"codegen: the Python package '{name}' is not installed for {sys.executable}; {install}{use}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("torch", "yaml", "jinja2"):
            print(missing_package(exc), file=sys.stderr)
            return 2
        raise


def _quiet_broken_pipe() -> None:
    """``codegen list | head``: the reader left; stop without a traceback (and without a second one at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
        status = 141  # 128 + SIGPIPE, as a shell reports a command a closed pipe stopped
    sys.exit(status)
