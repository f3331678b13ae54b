"""Reading C++ with libclang: one parse, structural types, cached preludes.

``verify`` and ``import-pybind`` both read C++ through this module; neither
touches ``clang.cindex`` directly.  What it provides:

* :class:`Parser` builds the compiler arguments (clang's builtin headers, the
  torch include directories, ``csrc/``) and parses one translation unit,
  raising :class:`CxxError` with clang's own messages when the code has errors
  (libclang itself never raises for them).
* :class:`CxxType` is a C++ type as a small tree (name, template arguments,
  ``const``, reference), built from clang's canonical type so that aliases
  (``Recipe``, ``int64_t``, ``torch::Tensor``) compare equal to what they name.
* :func:`qualified_name`, :func:`source_text`, :func:`loc` turn cursors into
  names, text and ``file:line:col`` locations relative to the project root.

Note [Prelude PCH]
~~~~~~~~~~~~~~~~~~
Parsing anything that includes ``<ATen/ATen.h>`` costs seconds, nearly all of
it in torch's headers, which do not change between runs.  A :class:`Parser`
therefore compiles a fixed *prelude* (the torch and standard headers the
project includes) once into a precompiled header under this checkout's
``.cache/codegen-pch/`` and parses each translation unit with
``-include-pch``; the project's own headers are always parsed afresh.  The file
name hashes everything the PCH depends on (libclang, the arguments, the
prelude), and clang itself refuses a PCH whose input headers changed since it
was built: any such complaint discards it (and a rebuild deletes the older
PCHs of the same prelude).  ``--no-pch`` parses the prelude inline instead
(also what happens when no cache folder is given).  Prelude function bodies
are always skipped (``PARSE_SKIP_FUNCTION_BODIES``): only declarations are
read from torch.

Building the PCH costs more than one inline parse (it parses the same
headers, then writes ~100 MB), so a command must not pay for it on the run
that finds it missing.  With ``build_pch="background"`` (what the commands
use) a missing or stale PCH makes this run parse inline and starts a detached
child process that builds the PCH for the next run; a lock file next to the
PCH keeps concurrent runs from building it twice, and the PCH appears by an
atomic rename, so a reader sees either no PCH or a whole one.  With
``build_pch="now"`` the PCH is built before the parse, in this process.

Why one module (about 500 lines): it is the only place that touches
``clang.cindex``.  The toolchain lookup, the parser with its PCH cache and the
cursor/type helpers share ``cindex()`` and the PCH key, and splitting them
would spread that boundary over three modules.

Note [Builtin headers]
~~~~~~~~~~~~~~~~~~~~~~
The ``libclang`` wheel ships no clang resource directory, so ``<stddef.h>``
and friends are missing.  GCC's are compatible for parsing; their folder comes
from ``g++ -print-file-name=include`` and is added with ``-isystem``.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from .errors import Loc

# The prelude every parse of project headers starts from (Note [Prelude PCH]).
ATEN_PRELUDE = (
    "ATen/ATen.h",
    "c10/util/OptionalArrayRef.h",
    "cstdint",
    "functional",
    "optional",
    "string",
    "string_view",
    "tuple",
    "utility",
    "variant",
    "vector",
)
# import-pybind also reads pybind11 registration code.
PYBIND_PRELUDE = ("torch/extension.h", "pybind11/pybind11.h", "pybind11/stl.h", *ATEN_PRELUDE)

# The prelude PCH lives in this checkout's (git-ignored) cache, whatever root a command works on.
PCH_DIR = Path(__file__).resolve().parent.parent / ".cache" / "codegen-pch"
STD = "c++20"  # torch 2.13 builds extensions as C++20

_SKIP_BODIES = 0x40  # CXTranslationUnit_SkipFunctionBodies
_KEEP_GOING = 0x200  # CXTranslationUnit_KeepGoing: a missing #include does not end the parse
_INCOMPLETE = 0x02  # CXTranslationUnit_Incomplete: a header, for a PCH
_FOR_SERIALIZATION = 0x10  # CXTranslationUnit_ForSerialization
PchMode = Literal["now", "background"]
# What a Parser did about its PCH: none asked for, used as found, built in this process,
# or being built by a background child (this run parsed the prelude inline).
PchState = Literal["off", "used", "built", "building"]
_STALE_PCH = re.compile(r"precompiled header|PCH file|AST file|has been modified since", re.IGNORECASE)


class CxxError(Exception):
    """libclang is unusable, or the C++ does not parse.  The message is ready to print."""


# --------------------------------------------------------------------------------------
# libclang and the toolchain
# --------------------------------------------------------------------------------------


@functools.cache
def cindex() -> Any:
    """``clang.cindex``, imported on first use (it is only needed by these two commands)."""
    try:
        import clang.cindex as ci  # type: ignore[import-untyped]  # the libclang wheel ships no type hints
    except ImportError as exc:
        raise CxxError(
            f"cannot import clang.cindex ({exc}); install the 'libclang' package (pip install libclang)"
        ) from None
    try:
        ci.conf.lib  # noqa: B018  # loads libclang.so now, so a broken install is reported here
    except Exception as exc:
        raise CxxError(f"libclang is installed but cannot be loaded: {exc}") from None
    return ci


@functools.cache
def gxx_include() -> str:
    """GCC's builtin header folder (Note [Builtin headers])."""
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        compiler = "g++"
    try:
        out = subprocess.run([compiler, "-print-file-name=include"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise CxxError(
            f"cannot ask {compiler} for its builtin headers ({exc}); libclang needs them (stddef.h)"
        ) from None
    path = out.stdout.strip()
    if not os.path.isdir(path):
        raise CxxError(f"{compiler} -print-file-name=include gave '{path}', which is not a folder")
    return path


@functools.cache
def torch_includes() -> tuple[str, ...]:
    """torch's C++ include folders, as ``torch.utils.cpp_extension.include_paths()`` lists them for the CPU.

    Computed from torch's install location without importing torch (which costs
    seconds); ``tests/codegen/test_cxx.py`` checks that the two lists agree.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise CxxError("torch is not installed; its headers are needed to read the implementations")
    root = Path(next(iter(spec.submodule_search_locations))) / "include"
    return (str(root), str(root / "torch" / "csrc" / "api" / "include"))


def python_include() -> str:
    return sysconfig.get_paths()["include"]


# --------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One error clang reported."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}" if self.path else self.message


class Parser:
    """Parses translation units against one prelude, with the cached PCH of Note [Prelude PCH]."""

    def __init__(
        self,
        root: Path,
        prelude: Sequence[str] = ATEN_PRELUDE,
        include_dirs: Sequence[Path] = (),
        cache_dir: Path | None = None,
        python: bool = False,
        build_pch: PchMode = "now",
        defines: Sequence[str] = (),
        system_dirs: Sequence[Path] = (),
        fallback_dirs: Sequence[Path] = (),
    ) -> None:
        self.root = root.resolve()
        self.prelude = tuple(prelude)
        self.cache_dir = cache_dir
        system = [gxx_include(), *torch_includes()]
        if python:
            system.append(python_include())
        # The PCH depends on the system arguments only, so one PCH serves every project root;
        # clang accepts a PCH built with other user include folders.
        self.system_args = ["-std=" + STD, "-DNDEBUG", *(f"-isystem{p}" for p in system)]
        # ``system_dirs`` (CUDA's) come after the project's folders; ``fallback_dirs`` are searched
        # last of all (-idirafter), so a real header always wins over a fallback.  Macros (-D) are
        # not part of the PCH's key: clang accepts a PCH with macros added on the command line.
        self.args = [
            *(f"-D{d}" for d in defines),
            *(f"-I{p.resolve()}" for p in include_dirs),
            *(f"-isystem{p}" for p in system_dirs),
            *self.system_args,
            *(f"-idirafter{p}" for p in fallback_dirs),
        ]
        self.index = cindex().Index.create()
        self.build_pch = build_pch
        self.pch_state: PchState = "off" if cache_dir is None else "used"
        self.pch_process: subprocess.Popen[bytes] | None = None  # the background build, if this parser started one

    # -- the prelude -----------------------------------------------------------------

    def pch_ready(self) -> bool:
        """Whether a parse now would use a cached PCH (False: the prelude is parsed inline, slowly)."""
        pch = self._pch_path()
        return pch is not None and pch.is_file()

    def _pch_path(self) -> Path | None:
        if self.cache_dir is None:
            return None
        ci = cindex()
        lib = Path(ci.conf.lib._name)
        key = json.dumps(
            {
                "lib": str(lib),
                "lib_size": lib.stat().st_size if lib.exists() else 0,
                "args": self.system_args,
                "prelude": self.prelude,
            },
            sort_keys=True,
        )
        kind = hashlib.sha256("\n".join(self.prelude).encode()).hexdigest()[:8]
        return self.cache_dir / f"prelude-{kind}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.pch"

    def _usable_pch(self) -> Path | None:
        """The PCH to parse with now (built first in "now" mode), or None to parse the prelude inline."""
        pch = self._pch_path()
        if pch is None or pch.is_file():
            return pch
        if self.build_pch == "now":
            build_pch(self.index, self.root, self.prelude, self.system_args, pch)
            self.pch_state = "built"
            return pch
        self._start_background_build(pch)
        return None

    def _start_background_build(self, pch: Path) -> None:
        if self.pch_process is not None:
            return
        request = json.dumps(
            {"root": str(self.root), "prelude": self.prelude, "args": self.system_args, "path": str(pch)}
        )
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        try:
            self.pch_process = subprocess.Popen(
                [sys.executable, "-c", "import sys, codegen.cxx as c; c.build_pch_request(sys.argv[1])", request],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # outlives this command, and its Ctrl-C
            )
        except OSError:
            return  # no PCH this time; the inline parse below is complete without it
        self.pch_state = "building"

    # -- one translation unit --------------------------------------------------------

    def _parse_with_pch(
        self, name: str, text: str, options: int, pch: Path, extra: Sequence[str] = ()
    ) -> tuple[Any, list[Problem]]:
        try:
            tu = self.index.parse(
                name,
                args=["-x", "c++", *self.args, *extra, "-include-pch", str(pch)],
                unsaved_files=[(name, text)],
                options=options,
            )
        except cindex().TranslationUnitLoadError:
            return None, [Problem("", 0, 0, "PCH file unusable")]
        return tu, errors(tu, self.root)

    def parse(self, main: str, text: str, skip_bodies: bool) -> Any:
        """Parse ``text`` as the file ``main`` (a path under the root); return the TranslationUnit.

        Raises :class:`CxxError` listing clang's errors when there are any.
        """
        tu, problems = self.parse_keep_going(main, text, skip_bodies, keep_going=False)
        if problems:
            raise CxxError("\n".join(str(p) for p in problems))
        return tu

    def parse_keep_going(
        self, main: str, text: str, skip_bodies: bool, keep_going: bool = True
    ) -> tuple[Any, list[Problem]]:
        """Parse as :meth:`parse` does, but return clang's errors with the TranslationUnit.

        With ``keep_going`` clang carries on past a missing ``#include`` and reports every error
        (no error limit), so a caller can use whatever did resolve (import-pybind does).
        """
        name = str(self.root / main)
        options = (_SKIP_BODIES if skip_bodies else 0) | (_KEEP_GOING if keep_going else 0)
        extra = ["-ferror-limit=0"] if keep_going else []
        pch = self._usable_pch()
        tu: Any = None
        problems: list[Problem] = []
        if pch is not None:
            tu, problems = self._parse_with_pch(name, text, options, pch, extra)
            if any(_STALE_PCH.search(p.message) for p in problems):
                pch.unlink(missing_ok=True)  # stale or corrupt: replace it (once)
                pch = self._usable_pch()
                if pch is not None:
                    tu, problems = self._parse_with_pch(name, text, options, pch, extra)
        if pch is None:
            # The prelude as a forced include keeps the main file's line numbers intact.
            prelude = str(self.root / "codegen_prelude.hpp")
            tu = self.index.parse(
                name,
                args=["-x", "c++", *self.args, *extra, "-include", prelude],
                unsaved_files=[(name, text), (prelude, _prelude_text(self.prelude))],
                options=options,
            )
            problems = errors(tu, self.root)
        return tu, problems


def _prelude_text(prelude: Sequence[str]) -> str:
    return "".join(f"#include <{h}>\n" for h in prelude)


def build_pch(index: Any, root: Path, prelude: Sequence[str], system_args: Sequence[str], path: Path) -> None:
    """Compile ``prelude`` into the PCH ``path`` (atomically), then delete older PCHs of the same prelude."""
    ci = cindex()
    name = str(root / "codegen_prelude.hpp")
    tu = index.parse(
        name,
        args=["-x", "c++-header", *system_args],
        unsaved_files=[(name, _prelude_text(prelude))],
        options=_SKIP_BODIES | _INCOMPLETE | _FOR_SERIALIZATION,
    )
    problems = errors(tu, root)
    if problems:
        raise CxxError("the prelude of torch and standard headers does not parse:\n" + "\n".join(map(str, problems)))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".prelude-", suffix=".pch")
    os.close(fd)
    try:
        tu.save(tmp)
        os.replace(tmp, path)
    except ci.TranslationUnitSaveError as exc:
        raise CxxError(f"cannot save the prelude PCH to {path}: {exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    # Older PCHs of the same prelude (another torch, libclang or compiler) are dead weight.
    kind = path.name.split("-")[1]
    for old in path.parent.glob(f"prelude-{kind}-*.pch"):
        if old != path:
            old.unlink(missing_ok=True)


def build_pch_request(request: str) -> None:
    """The background child of Note [Prelude PCH]: build the PCH a JSON request names, unless another process is."""
    req = json.loads(request)
    path = Path(req["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / (path.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another run is building it
        if not path.is_file():
            build_pch(cindex().Index.create(), Path(req["root"]), req["prelude"], req["args"], path)


def errors(tu: Any, root: Path) -> list[Problem]:
    """clang's errors and fatal errors for ``tu`` (warnings are ignored)."""
    out: list[Problem] = []
    for d in tu.diagnostics:
        if d.severity < 3:  # Ignored, Note, Warning
            continue
        f = d.location.file
        out.append(Problem(relative(str(f.name), root) if f else "", d.location.line, d.location.column, d.spelling))
    return out


# --------------------------------------------------------------------------------------
# cursors
# --------------------------------------------------------------------------------------


def relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return path


def loc(cursor: Any, root: Path) -> Loc:
    """Where ``cursor`` is, as ``path:line:col`` with the path relative to ``root``."""
    location = cursor.location
    f = location.file
    return Loc(relative(str(f.name), root) if f else "<unknown>", int(location.line), int(location.column))


def qualified_name(cursor: Any) -> str:
    """``mylib::gemm::fp8_gemm_nt`` for a declaration (inline namespaces like ``std::__cxx11`` left out)."""
    ci = cindex()
    parts = [str(cursor.spelling)]
    parent = cursor.semantic_parent
    scopes = {
        ci.CursorKind.NAMESPACE,
        ci.CursorKind.STRUCT_DECL,
        ci.CursorKind.CLASS_DECL,
        ci.CursorKind.CLASS_TEMPLATE,
    }
    while parent is not None and parent.kind in scopes:
        name = str(parent.spelling)
        if name and not name.startswith("__") and name not in ("_V2",):
            parts.append(name)
        parent = parent.semantic_parent
    return "::".join(reversed(parts))


def source_text(cursor: Any) -> str:
    """The source text of ``cursor``, token by token (one space where the source had any)."""
    return join_tokens(list(cursor.get_tokens()))


def join_tokens(tokens: Sequence[Any]) -> str:
    out: list[str] = []
    prev_end: tuple[int, int] | None = None
    for tok in tokens:
        start = (int(tok.extent.start.line), int(tok.extent.start.column))
        if prev_end is not None and start != prev_end:
            out.append(" ")
        out.append(str(tok.spelling))
        prev_end = (int(tok.extent.end.line), int(tok.extent.end.column))
    return "".join(out)


def children(cursor: Any) -> Iterator[Any]:
    return cast(Iterator[Any], cursor.get_children())


def in_file(cursor: Any, path: Path) -> bool:
    f = cursor.location.file
    return f is not None and Path(str(f.name)).resolve() == path


# --------------------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------------------

SIGNED_INTS = ("short", "int", "long", "long long")
FLOATS = ("float", "double")
_PRETTY = {"std::basic_string<char>": "std::string", "std::basic_string_view<char>": "std::string_view"}


@dataclass(frozen=True)
class CxxType:
    """A canonical C++ type as a tree.

    ``name`` is the qualified name of a class or enum (``std::optional``,
    ``at::Tensor``, ``c10::ScalarType``) or a builtin (``int``, ``long``,
    ``bool``); ``args`` its template type arguments; ``const`` and ``ref``
    (``""``, ``"&"``, ``"&&"``) the top-level qualifiers.  ``text`` is clang's
    spelling of the unqualified type, for messages.
    """

    name: str
    args: tuple[CxxType, ...] = ()
    const: bool = False
    ref: str = ""
    text: str = ""
    valid: bool = True

    @property
    def value(self) -> CxxType:
        """The same type without top-level ``const`` and reference."""
        return CxxType(self.name, self.args, False, "", self.text, self.valid)

    def is_(self, name: str, nargs: int | None = None) -> bool:
        return self.name == name and (nargs is None or len(self.args) >= nargs)

    def mentions(self, name: str) -> bool:
        """Whether ``name`` occurs anywhere in this type (itself or a template argument, at any depth)."""
        return self.name == name or any(a.mentions(name) for a in self.args)

    def __str__(self) -> str:
        text = self.text or (self.name + (f"<{', '.join(map(str, self.args))}>" if self.args else ""))
        for long, short in _PRETTY.items():
            text = text.replace(long, short)
        return text


def cxx_type(t: Any) -> CxxType:
    """The :class:`CxxType` of a clang ``Type`` (aliases resolved)."""
    ci = cindex()
    K = ci.TypeKind
    ref = ""
    if t.kind == K.LVALUEREFERENCE:
        ref, t = "&", t.get_pointee()
    elif t.kind == K.RVALUEREFERENCE:
        ref, t = "&&", t.get_pointee()
    canon = t.get_canonical()
    const = bool(canon.is_const_qualified())
    text = re.sub(r"^const\s+", "", str(canon.spelling))
    if canon.kind == K.INVALID:
        return CxxType(str(t.spelling), (), const, ref, str(t.spelling), valid=False)
    if canon.kind in (K.RECORD, K.ENUM):
        decl = canon.get_declaration()
        args = tuple(
            cxx_type(canon.get_template_argument_type(i))
            for i in range(max(0, canon.get_num_template_arguments()))
            if canon.get_template_argument_type(i).kind != K.INVALID
        )
        return CxxType(qualified_name(decl), args, const, ref, text)
    name = re.sub(r"^const\s+", "", str(canon.spelling))
    return CxxType(name, (), const, ref, text)
