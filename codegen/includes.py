"""Where a project's headers are, and what clang's errors say is missing (import-pybind, verify).

Note [Finding a module's includes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A kernel library's bindings include CUDA, CUTLASS/CuTe, CCCL and the project's
own folders, none of which the prelude knows.  Before parsing, import-pybind
(and ``verify --types-only``) collects include folders and macros, in this
order, from what the project already says about its build:

1. ``compile_commands.json`` (in the project folder or its ``build/``): the
   ``-I``/``-isystem``/``-D`` of the entry for the file being read (or of any
   entry when the file has none);
2. ``setup.py``: the ``include_dirs`` lists it passes to its extensions, read
   statically (string literals, f-strings naming ``CUDA_HOME``, ``os.path.join``
   of those, and module-level names bound to such lists); nothing is executed;
3. ``CMakeLists.txt``: ``include_directories(...)`` and
   ``target_include_directories(...)`` folders, with ``${CMAKE_CURRENT_SOURCE_DIR}``
   and ``${PROJECT_SOURCE_DIR}`` replaced and other variables skipped;
4. ``$CUDA_HOME/include`` and ``$CUDA_HOME/include/cccl`` (``CUDA_HOME``, else
   ``/usr/local/cuda``), when they exist.

Folders that do not exist are dropped.  The project folder is the nearest one
above the first FILE holding a ``setup.py`` or ``pyproject.toml`` (a
``CMakeLists.txt`` or ``.git`` when none does).  Last of all (``-idirafter``)
come the fallback headers of ``codegen/fallback/``: headers of a CUDA build of torch that a
CPU wheel lacks (``c10/cuda/impl/cuda_cmake_macros.h``), so a CPU machine can
read bindings that include ``c10/cuda``.

Note [Grouping clang's errors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
One missing header causes hundreds of follow-on errors.  Each distinct error is
listed once: missing headers first, one line each with every file that
includes it and the package that likely provides it; then the other errors by
file, the first few of each in full and a count of the rest.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .cxx import Problem

FALLBACK = Path(__file__).resolve().parent / "fallback"
_PROJECT_MARKERS = (("setup.py", "pyproject.toml"), ("CMakeLists.txt", ".git"))  # by preference
_ERRORS_PER_FILE = 2  # Note [Grouping clang's errors]: how many of a file's other errors are shown in full

# Header prefix -> what likely provides it (Note [Grouping clang's errors]).
_PROVIDERS = (
    ("c10/cuda/", "a CUDA build of torch (a CPU wheel lacks some c10/cuda headers)"),
    ("ATen/cuda/", "a CUDA build of torch"),
    ("cuda/std/", "CCCL ($CUDA_HOME/include/cccl)"),
    ("cuda/", "CCCL ($CUDA_HOME/include/cccl)"),
    ("cub/", "CCCL ($CUDA_HOME/include/cccl)"),
    ("thrust/", "CCCL ($CUDA_HOME/include/cccl)"),
    ("cusparse", "the CUDA toolkit's cuSPARSE (pip: nvidia-cusparse; or a full $CUDA_HOME)"),
    ("cublas", "the CUDA toolkit's cuBLAS (pip: nvidia-cublas; or a full $CUDA_HOME)"),
    ("curand", "the CUDA toolkit's cuRAND"),
    ("cusolver", "the CUDA toolkit's cuSOLVER (pip: nvidia-cusolver; or a full $CUDA_HOME)"),
    ("nvrtc", "the CUDA toolkit's NVRTC (pip: nvidia-cuda-nvrtc; or a full $CUDA_HOME)"),
    ("nccl", "NCCL (pip: nvidia-nccl)"),
    ("nvshmem", "NVSHMEM"),
    ("cuda", "the CUDA toolkit (set CUDA_HOME)"),
    ("cute/", "CuTe, part of CUTLASS (its include/ folder, often third-party/cutlass/include)"),
    ("cutlass/", "CUTLASS (its include/ folder, often third-party/cutlass/include)"),
    ("fmt/", "fmt (its include/ folder)"),
    ("pybind11/", "pybind11 (pip: pybind11)"),
)
_NOT_FOUND = re.compile(r"^'([^']+)' file not found")


@dataclass
class BuildFlags:
    """Include folders and macros found for a module (Note [Finding a module's includes])."""

    project: Path | None = None
    include_dirs: list[Path] = field(default_factory=list)
    system_dirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # where each group came from, for the notes

    def add_dirs(self, dirs: Iterable[Path], origin: str, system: bool = False) -> None:
        target = self.system_dirs if system else self.include_dirs
        added = 0
        for d in dirs:
            if d.is_dir() and d not in self.include_dirs and d not in self.system_dirs:
                target.append(d)
                added += 1
        if added:
            self.sources.append(f"{added} include folder(s) from {origin}")


def project_dir(files: Sequence[Path]) -> Path | None:
    if not files:
        return None
    here = files[0].resolve().parent
    for markers in _PROJECT_MARKERS:
        for folder in (here, *here.parents):
            if any((folder / marker).exists() for marker in markers):
                return folder
    return None


def cuda_home() -> Path:
    return Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda")


def discover(files: Sequence[Path]) -> BuildFlags:
    flags = BuildFlags(project=project_dir(files))
    if flags.project is not None:
        _from_compile_commands(flags, flags.project, files)
        setup = flags.project / "setup.py"
        if setup.is_file():
            flags.add_dirs(setup_include_dirs(setup), "setup.py")
        cmake = flags.project / "CMakeLists.txt"
        if cmake.is_file():
            flags.add_dirs(cmake_include_dirs(cmake), "CMakeLists.txt")
    home = cuda_home()
    flags.add_dirs([home / "include", home / "include" / "cccl"], f"CUDA_HOME ({home})", system=True)
    return flags


# --------------------------------------------------------------------------------------
# compile_commands.json
# --------------------------------------------------------------------------------------


def _from_compile_commands(flags: BuildFlags, project: Path, files: Sequence[Path]) -> None:
    for candidate in (project / "compile_commands.json", project / "build" / "compile_commands.json"):
        if candidate.is_file():
            break
    else:
        return
    try:
        entries = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    wanted = {f.resolve() for f in files}
    chosen = [e for e in entries if _entry_file(e) in wanted] or entries[:1]
    dirs: list[Path] = []
    for entry in chosen:
        base = Path(entry.get("directory", str(project)))
        words = entry.get("arguments") or shlex.split(entry.get("command", ""))
        for i, word in enumerate(words):
            following = words[i + 1] if i + 1 < len(words) else ""
            if word in ("-I", "-isystem") and following:
                dirs.append(base / following)
            elif word.startswith("-isystem") and len(word) > len("-isystem"):
                dirs.append(base / word[len("-isystem") :])
            elif word.startswith("-I") and len(word) > 2:
                dirs.append(base / word[2:])
            elif word.startswith("-D") and len(word) > 2 and word[2:] not in flags.defines:
                flags.defines.append(word[2:])
    flags.add_dirs(dirs, candidate.name)


def _entry_file(entry: dict[str, str]) -> Path:
    return (Path(entry.get("directory", ".")) / entry.get("file", "")).resolve()


# --------------------------------------------------------------------------------------
# setup.py and CMakeLists.txt, read without running them
# --------------------------------------------------------------------------------------


def setup_include_dirs(setup: Path) -> list[Path]:
    try:
        tree = ast.parse(setup.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    names = _assignments(tree)
    here = str(setup.parent)
    out: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "include_dirs":
            for text in _strings(node.value, names, depth=0, here=here):
                path = Path(text)
                out.append(path if path.is_absolute() else setup.parent / path)
    return list(dict.fromkeys(out))


def _assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Each simple name's first assignment anywhere in the file (``include_dirs = [...]`` in a function too)."""
    names: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names.setdefault(node.targets[0].id, node.value)
    return names


def extension_names(setup: Path) -> list[str]:
    """The ``name=`` of each ``*Extension(...)`` call in ``setup.py`` (string literals only)."""
    try:
        tree = ast.parse(setup.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("Extension"):
            values = [k.value for k in node.keywords if k.arg == "name"] + node.args[:1]
            out += [v.value for v in values[:1] if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return out


def _strings(node: ast.expr, names: dict[str, ast.expr], depth: int, here: str) -> list[str]:
    """The paths an include_dirs expression spells, as far as they can be read statically."""
    if depth > 6:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        text = _fstring(node, names, here)
        return [text] if text is not None else []
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for item in node.elts for s in _strings(item, names, depth + 1, here)]
    if isinstance(node, ast.Name) and node.id in names:
        return _strings(names[node.id], names, depth + 1, here)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left, names, depth + 1, here) + _strings(node.right, names, depth + 1, here)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(this_dir) / "csrc"
        left, right = _value(node.left, names, here), _value(node.right, names, here)
        return [os.path.join(left, right)] if left is not None and right is not None else []
    if isinstance(node, ast.Call) and _dotted(node.func) in ("os.path.join", "Path", "pathlib.Path"):
        parts = [[_value(a, names, here)] for a in node.args]
        if parts and all(p[0] is not None for p in parts):
            return [os.path.join(*(str(p[0]) for p in parts))]
    return []


def _value(node: ast.expr, names: dict[str, ast.expr], here: str) -> str | None:
    """One path component: a string, CUDA_HOME, or a name bound to the setup.py folder (``__file__``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    name = _dotted(node)
    if name in ("CUDA_HOME", "cuda_home"):
        return str(cuda_home())
    bound = names.get(name)
    if bound is not None and any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(bound)):
        return here
    if isinstance(node, ast.JoinedStr):
        return _fstring(node, names, here)
    if isinstance(node, ast.Call) and _dotted(node.func) in ("Path", "pathlib.Path", "os.path.join") and node.args:
        parts = [_value(a, names, here) for a in node.args]
        return os.path.join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        found = _strings(node, names, 0, here)
        return found[0] if found else None
    return None


def _fstring(node: ast.JoinedStr, names: dict[str, ast.expr], here: str) -> str | None:
    out: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.append(value.value)
        elif isinstance(value, ast.FormattedValue) and (part := _value(value.value, names, here)) is not None:
            out.append(part)
        else:
            return None
    return "".join(out)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


_CMAKE_CALL = re.compile(r"\b(?:target_)?include_directories\s*\(([^)]*)\)", re.IGNORECASE)
_CMAKE_KEYWORDS = {"SYSTEM", "BEFORE", "AFTER", "PUBLIC", "PRIVATE", "INTERFACE"}


def cmake_include_dirs(cmake: Path) -> list[Path]:
    try:
        text = re.sub(r"#[^\n]*", "", cmake.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    out: list[Path] = []
    for m in _CMAKE_CALL.finditer(text):
        words = shlex.split(m.group(1), posix=True)
        if m.group(0).lower().startswith("target_"):
            words = words[1:]  # the target's name
        for word in words:
            if word.upper() in _CMAKE_KEYWORDS:
                continue
            word = word.replace("${CMAKE_CURRENT_SOURCE_DIR}", str(cmake.parent))
            word = word.replace("${PROJECT_SOURCE_DIR}", str(cmake.parent))
            word = word.replace("${CUDA_HOME}", str(cuda_home()))
            if "${" in word or "$<" in word:
                continue  # a variable or generator expression this reader does not know
            path = Path(word)
            out.append(path if path.is_absolute() else cmake.parent / path)
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------------------
# what a header includes
# --------------------------------------------------------------------------------------

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


def reachable(header: Path, search: Sequence[Path], within: Path) -> set[Path]:
    """``header`` and the project files it includes, directly or not, from its source text.

    Read from the text rather than from clang, which records a file's includes only the first
    time the file is entered (a ``#pragma once`` header met again lists nothing).  Includes are
    resolved against the including file's folder, then ``search``; files outside ``within``
    (torch, CUDA) are not followed.
    """
    out: set[Path] = set()
    todo = [header.resolve()]
    while todo:
        path = todo.pop()
        if path in out:
            continue
        out.add(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for name in _INCLUDE.findall(text):
            for folder in (path.parent, *search):
                candidate = (folder / name).resolve()
                if candidate.is_file():
                    if candidate.is_relative_to(within):
                        todo.append(candidate)
                    break
    return out


# --------------------------------------------------------------------------------------
# grouping clang's errors (Note [Grouping clang's errors])
# --------------------------------------------------------------------------------------


def provider(header: str) -> str:
    name = header.lower()
    for prefix, what in _PROVIDERS:
        if name.startswith(prefix):
            return what
    return "a package or folder this parse does not know"


def grouped_errors(problems: Sequence[Problem]) -> list[str]:
    """One line per missing header, then each other distinct error once, by file."""
    missing: dict[str, list[str]] = {}
    others: dict[str, list[Problem]] = {}
    seen: set[tuple[str, int, int, str]] = set()
    for p in problems:
        key = (p.path, p.line, p.col, p.message)
        if key in seen:
            continue
        seen.add(key)
        m = _NOT_FOUND.match(p.message)
        if m:
            missing.setdefault(m.group(1), []).append(f"{p.path}:{p.line}" if p.path else "?")
        else:
            others.setdefault(p.path or "<command line>", []).append(p)
    lines: list[str] = []
    for header, where in missing.items():
        lines.append(
            f"missing header <{header}> (included at {', '.join(where)}): likely {provider(header)}; "
            "add its folder with -I DIR"
        )
    for path, items in others.items():
        for p in items[:_ERRORS_PER_FILE]:
            lines.append(f"{p}")
        if len(items) > _ERRORS_PER_FILE:
            lines.append(f"{path}: {len(items) - _ERRORS_PER_FILE} more error(s) in this file")
    return lines
