"""One writer for all outputs: render in memory, then write only what changed.

Writes are atomic (temporary file in the same directory, then ``os.replace``),
so an interrupted run never leaves half a file, and a path is never written
twice in one run.  ``diff`` is the same comparison, reported instead of written.

Note [The generator owns its outputs]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A family that is renamed or removed from the manifest must not leave its old
registration file behind: the build would still find it, and register ghost ops
or clash at load.  So the folders the generator owns (``OWNED_DIRS`` in
``outputs.py``) are swept on every run: a file there whose first line carries the
generator's marker but that this run does not render is *stale*.  ``regenerate``
deletes it and ``check`` fails naming it.  Files without the marker are never
touched.  The build compiles the list of sources the generator writes
(``csrc/generated/sources.txt``), never a glob, so even a stale file that is
still on disk is not built.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path


def _current(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def stale(root: Path, files: dict[str, str], owned_dirs: tuple[str, ...], marker: str) -> list[str]:
    """Generated files under ``owned_dirs`` that ``files`` no longer holds (Note [The generator owns its outputs])."""
    out: list[str] = []
    for folder in owned_dirs:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")):
            rel = path.relative_to(root).as_posix()
            if rel in files:
                continue
            try:
                with path.open(encoding="utf-8") as fh:
                    first = fh.readline()
            except (OSError, UnicodeDecodeError):
                continue
            if marker in first:
                out.append(rel)
    return out


def remove(root: Path, paths: list[str]) -> None:
    for rel in paths:
        (root / rel).unlink(missing_ok=True)


def write_changed(root: Path, files: dict[str, str]) -> list[str]:
    """Write every file whose bytes differ; returns the paths written."""
    written = []
    for rel, text in sorted(files.items()):
        path = root / rel
        if _current(path) == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        written.append(rel)
    return written


def diff(root: Path, files: dict[str, str]) -> str:
    """Unified diff from what is on disk to what would be written ('' when equal)."""
    chunks: list[str] = []
    for rel, text in sorted(files.items()):
        old = _current(root / rel)
        if old == text:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{rel}",
            )
        )
    return "".join(chunks)
