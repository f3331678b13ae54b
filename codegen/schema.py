"""The TORCH_LIBRARY schema of one op, as parsed by torch itself.

``torch._C.parse_schema`` is the authority on what a schema means; this module
never parses schema text on its own.  It turns torch's answer into small frozen
types the rest of the generator can use without importing torch.

Note [Schema cache]
~~~~~~~~~~~~~~~~~~~
Importing torch costs about two seconds, which would dominate ``check``.  The
parse results are therefore cached in JSON, keyed by torch's version and the
exact schema text.  A cache hit is the very answer torch gave for that text
under that version; any miss imports torch and parses for real.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUPPORTED_BASES = ("Tensor", "int", "float", "bool", "str", "ScalarType")

# ScalarType codes as torch prints them in schema defaults (c10::ScalarType).
SCALAR_TYPE_NAMES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    11: "bool",
    15: "bfloat16",
    23: "float8_e5m2",
    24: "float8_e4m3fn",
}


@dataclass(frozen=True)
class SchemaType:
    """A schema type: ``base``, optionally a list (of fixed ``size``), optionally ``?``."""

    base: str
    is_list: bool = False
    size: int | None = None
    optional: bool = False

    def __str__(self) -> str:
        text = self.base
        if self.is_list:
            text += f"[{self.size}]" if self.size is not None else "[]"
        return text + ("?" if self.optional else "")

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list


@dataclass(frozen=True)
class Arg:
    name: str
    type: SchemaType
    has_default: bool
    default: object
    kwarg_only: bool
    is_write: bool
    alias_set: str | None


@dataclass(frozen=True)
class Schema:
    text: str
    name: str
    overload: str
    args: tuple[Arg, ...]
    returns: tuple[SchemaType, ...]
    returns_tuple: bool

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    @property
    def returns_spelling(self) -> str:
        if not self.returns_tuple and len(self.returns) == 1:
            return str(self.returns[0])
        return "(" + ", ".join(str(r) for r in self.returns) + ")"


class SchemaError(ValueError):
    """torch rejected the schema, or it uses a type the generator cannot bind.

    ``word`` is the schema text at fault when known, or ``arg`` the argument whose type is, so
    the error can point at it.
    """

    def __init__(self, message: str, word: str = "", arg: str = "") -> None:
        super().__init__(message)
        self.word = word
        self.arg = arg


_TYPE_RE = re.compile(r"^(Optional\[)?(List\[)?(\w+)\]?\]?$")


def _schema_type(real_type: str, size: int | None) -> SchemaType:
    m = _TYPE_RE.match(real_type)
    if not m or m.group(3) not in SUPPORTED_BASES:
        word = m.group(3) if m else re.sub(r"\W.*", "", real_type.split("[")[-1])
        raise SchemaError(
            f"type '{word}' is not supported by the generator; expected one of "
            + ", ".join(SUPPORTED_BASES)
            + " (optionally a list and/or optional)",
            word,
        )
    return SchemaType(base=m.group(3), is_list=bool(m.group(2)), size=size, optional=bool(m.group(1)))


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _marked_word(lines: list[str]) -> str:
    """The text torch underlines (``~~~ <--- HERE`` under the echoed schema), or ''."""
    for above, line in itertools.pairwise(lines):
        if "<--- HERE" in line and "~" in line:
            start = line.index("~")
            width = len(line) - len(line[start:].lstrip("~"))
            return above[start : start + width].strip()
    return ""


def _parse_with_torch(text: str) -> dict[str, object]:
    import torch  # deliberately lazy, see Note [Schema cache]

    try:
        parsed = torch._C.parse_schema(text)
    except RuntimeError as exc:
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        first = lines[0] if lines else "torch could not parse the schema"
        # torch words some schema rules as internal asserts; keep only the rule itself.
        first = first.split("please report a bug to PyTorch. ", 1)[-1]
        return {"error": first, "word": _marked_word(lines)}
    args = []
    for a in parsed.arguments:
        alias = a.alias_info
        args.append(
            {
                "name": a.name,
                "real_type": str(a.real_type),
                "size": a.N,  # type: ignore[attr-defined]  # torch stubs lack Argument.N
                "has_default": a.has_default_value(),
                "default": a.default_value,
                "kwarg_only": a.kwarg_only,
                "is_write": bool(alias and alias.is_write),
                "alias_set": sorted(alias.before_set)[0] if alias and alias.before_set else None,
            }
        )
    rets = [
        {"real_type": str(r.real_type), "size": r.N}  # type: ignore[attr-defined]  # as above
        for r in parsed.returns
    ]
    returns_tuple = not re.search(r"->\s*[A-Za-z]", text)
    return {
        "name": parsed.name,
        "overload": parsed.overload_name,
        "args": args,
        "returns": rets,
        "returns_tuple": returns_tuple,
    }


class SchemaParser:
    """Parses schema strings through torch, with the cache of Note [Schema cache]."""

    def __init__(self, cache_path: Path | None) -> None:
        self.cache_path = cache_path
        self.version = _torch_version()
        self.entries: dict[str, dict[str, object]] = {}
        self.dirty = False
        if cache_path and cache_path.is_file():
            try:
                data = json.loads(cache_path.read_text())
                if data.get("torch") == self.version:
                    self.entries = data["schemas"]
            except (ValueError, KeyError):
                self.entries = {}

    def parse(self, text: str) -> Schema:
        raw = self.entries.get(text)
        if raw is None:
            raw = _parse_with_torch(text)
            self.entries[text] = raw
            self.dirty = True
        if "error" in raw:
            raise SchemaError(f"torch rejected the schema: {raw['error']}", str(raw.get("word") or ""))
        return _build(text, raw)

    def save(self) -> None:
        if not (self.cache_path and self.dirty):
            return
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"torch": self.version, "schemas": self.entries}, sort_keys=True)
        fd, tmp = tempfile.mkstemp(dir=self.cache_path.parent, prefix=".schemas-")
        with os.fdopen(fd, "w") as fh:
            fh.write(payload)
        os.replace(tmp, self.cache_path)
        self.dirty = False


def _build(text: str, raw: dict[str, object]) -> Schema:
    raw_args = raw["args"]
    raw_rets = raw["returns"]
    assert isinstance(raw_args, list) and isinstance(raw_rets, list)
    args: list[Arg] = []
    for a in raw_args:
        try:
            arg_type = _schema_type(a["real_type"], a["size"])
        except SchemaError as exc:
            raise SchemaError(str(exc), exc.word, arg=a["name"]) from None
        args.append(
            Arg(
                name=a["name"],
                type=arg_type,
                has_default=a["has_default"],
                default=a["default"],
                kwarg_only=a["kwarg_only"],
                is_write=a["is_write"],
                alias_set=a["alias_set"],
            )
        )
    returns = tuple(_schema_type(r["real_type"], r["size"]) for r in raw_rets)
    return Schema(
        text=text,
        name=str(raw["name"]),
        overload=str(raw["overload"]),
        args=tuple(args),
        returns=returns,
        returns_tuple=bool(raw["returns_tuple"]),
    )
