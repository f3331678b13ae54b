"""One writer for all outputs: render in memory, then write only what changed.

Writes are atomic (temporary file in the same directory, then ``os.replace``),
so an interrupted run never leaves half a file, and a path is never written
twice in one run.  ``diff`` is the same comparison, reported instead of written.
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
