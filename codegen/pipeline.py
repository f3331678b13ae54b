"""From ``ops.yaml`` to a validated model (``outputs.render_all`` then renders it)."""

from __future__ import annotations

from pathlib import Path

from . import yamlsrc
from .errors import Diagnostics, Loc, ManifestError
from .fakes import check_fake_functions
from .model import Manifest
from .schema import SchemaParser

CACHE = Path(".cache") / "codegen-schemas.json"


def load_manifest(
    path: Path, display: str | None = None, cache_root: Path | None = None, allow_undecided: bool = False
) -> Manifest:
    """Read and fully validate a manifest; raise :class:`ManifestError` with every problem.

    ``allow_undecided`` accepts the ``?x`` markers of an import-pybind draft in ``writes``
    (``verify --types-only``); such a manifest is only ever checked, never rendered.
    """
    shown = display or path.name
    diags = Diagnostics()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        diags.error(Loc(shown, 1, 1), f"cannot read the manifest: {exc.strerror}")
        raise ManifestError(diags) from None
    parser = SchemaParser((cache_root / CACHE) if cache_root else None)
    root = yamlsrc.load(text, shown, diags)
    manifest = Manifest.parse(root, shown, parser, diags, allow_undecided) if root is not None else None
    if manifest is not None:
        check_fake_functions(manifest, cache_root or path.resolve().parent, diags)
    if diags or manifest is None:
        raise ManifestError(diags)  # nothing is written, not even the schema cache
    parser.save()
    return manifest
