"""Every ``fake: {function: module.name}`` of a manifest, resolved without importing anything.

The dotted path names a module under the project root (the folder the
generated files go to; by default the manifest's) and a name it defines at
top level.  Both are checked
by reading the module's source with ``ast``: ``check`` and ``regenerate``
catch a typo in the path, a moved module or a renamed function, and still
need neither torch nor an importable package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from .errors import Diagnostics, did_you_mean
from .model import Manifest


def check_fake_functions(manifest: Manifest, root: Path, diags: Diagnostics) -> None:
    """Report, at its ``ops.yaml:LINE:COL``, every fake function that does not resolve under ``root``."""
    names_by_file: dict[Path, set[str] | str] = {}  # parsed once per file; a str is why it could not be
    for op in manifest.ops:
        if op.fake is None or op.fake.function is None:
            continue
        dotted, loc = op.fake.function, op.fake.loc or op.loc
        module, _, name = dotted.rpartition(".")
        candidates = [Path(*module.split(".")).with_suffix(".py"), Path(*module.split("."), "__init__.py")]
        found = next((rel for rel in candidates if (root / rel).is_file()), None)
        if found is None:
            looked = " and ".join(rel.as_posix() for rel in candidates)
            diags.error(
                loc,
                f"fake function '{dotted}': no module '{module}' (looked for {looked}); "
                "expected the module that defines the fake",
                op.name,
            )
            continue
        if found not in names_by_file:
            names_by_file[found] = _top_level_names(root / found)
        names = names_by_file[found]
        if isinstance(names, str):
            diags.error(loc, f"fake function '{dotted}': {found.as_posix()} {names}", op.name)
        elif name not in names:
            diags.error(
                loc,
                f"fake function '{dotted}': {found.as_posix()} defines no '{name}'{did_you_mean(name, names)}; "
                "expected a function of that name at the module's top level",
                op.name,
            )


def _top_level_names(path: Path) -> set[str] | str:
    """The names a module binds at its top level, or why it cannot be read."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read: {exc}"
    except SyntaxError as exc:
        return f"does not parse: {exc.msg} (line {exc.lineno})"
    return set(_bound(tree.body))


def _bound(body: list[ast.stmt]) -> Iterator[str]:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt.name
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    yield target.id
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                yield alias.asname or alias.name.split(".")[0]
        elif isinstance(stmt, (ast.If, ast.Try)):  # definitions under a version check or an import guard
            yield from _bound(stmt.body + stmt.orelse)
            if isinstance(stmt, ast.Try):
                yield from _bound([s for handler in stmt.handlers for s in handler.body] + stmt.finalbody)
