"""python -m codegen — generate every binding of deep_gemm from ops.yaml.

Usage
-----
    python -m codegen regenerate   write every generated file whose bytes changed
    python -m codegen check        exit 1 (printing a diff) if any generated file is stale
    python -m codegen list         print the ops, one per line, with family and guard

Options (all commands):
    --manifest PATH   the manifest (default: ./ops.yaml)
    --root DIR        where generated files live (default: the manifest's folder)

Exit status: 0 success, 1 generated files differ from the manifest (``check``),
2 the manifest is invalid (every problem is printed; nothing is written).

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
writes them.  ``pipeline.py`` strings the three together.

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
    parser.add_argument("command", choices=("regenerate", "check", "list"))
    parser.add_argument("--manifest", type=Path, default=Path("ops.yaml"))
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    started = time.perf_counter()
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
