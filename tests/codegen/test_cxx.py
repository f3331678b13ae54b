"""codegen/cxx.py: the libclang plumbing shared by verify and import-pybind.

These use a tiny prelude (standard headers only), so each PCH they build costs
well under a second.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("clang.cindex", reason="libclang (pip package 'libclang') is not installed")

from codegen import cxx

SMALL_PRELUDE = ("cstdint", "optional", "string", "tuple", "utility", "vector")

SOURCE = """\
namespace demo {
using Recipe = std::tuple<int, int, int>;
void f(const std::optional<Recipe>& recipe, std::string s, int64_t& x, std::pair<int, double>&& p);
}  // namespace demo
"""


def function(tu: Any, name: str) -> Any:
    ci = cxx.cindex()
    for ns in cxx.children(tu.cursor):
        if ns.kind == ci.CursorKind.NAMESPACE and ns.spelling == "demo":
            for fn in cxx.children(ns):
                if fn.spelling == name:
                    return fn
    raise AssertionError(f"{name} not found")


def test_torch_includes_match_cpp_extension() -> None:
    from torch.utils.cpp_extension import include_paths

    assert list(cxx.torch_includes()) == include_paths()


def test_builtin_headers_come_from_gcc() -> None:
    assert os.path.isfile(os.path.join(cxx.gxx_include(), "stddef.h"))


def test_types_are_canonical_trees(tmp_path: Path) -> None:
    parser = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=tmp_path / "pch")
    tu = parser.parse("demo.cpp", SOURCE, skip_bodies=True)
    assert parser.pch_state == "built"
    r, s, x, p = (cxx.cxx_type(a.type) for a in function(tu, "f").get_arguments())
    assert (r.name, r.const, r.ref, str(r)) == ("std::optional", True, "&", "std::optional<std::tuple<int, int, int>>")
    assert [a.name for a in r.args[0].args] == ["int", "int", "int"]
    assert (s.name, str(s), s.ref) == ("std::basic_string", "std::string", "")
    assert (x.name, x.const, x.ref) == ("long", False, "&")
    assert (p.name, p.ref, [a.name for a in p.args]) == ("std::pair", "&&", ["int", "double"])
    assert cxx.qualified_name(function(tu, "f")) == "demo::f"
    assert cxx.loc(function(tu, "f"), tmp_path) == cxx.Loc("demo.cpp", 3, 6)


def test_errors_are_raised_with_locations(tmp_path: Path) -> None:
    parser = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=None)
    with pytest.raises(cxx.CxxError) as info:
        parser.parse("bad.cpp", "void f(Undeclared x);\n", skip_bodies=True)
    assert str(info.value) == "bad.cpp:1:8: unknown type name 'Undeclared'"


def test_corrupt_pch_is_rebuilt(tmp_path: Path) -> None:
    first = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=tmp_path / "pch")
    first.parse("demo.cpp", SOURCE, skip_bodies=True)
    (pch,) = (tmp_path / "pch").glob("*.pch")
    pch.write_bytes(b"not a precompiled header")
    older = pch.with_name(pch.name.rsplit("-", 1)[0] + "-0123456789abcdef.pch")  # same prelude, other toolchain
    older.write_bytes(b"stale")
    second = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=tmp_path / "pch")
    tu = second.parse("demo.cpp", SOURCE, skip_bodies=True)
    assert second.pch_state == "built"
    assert function(tu, "f") is not None
    assert sorted((tmp_path / "pch").glob("*.pch")) == [pch]  # rebuilt in place; the older one pruned
    third = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=tmp_path / "pch")
    third.parse("demo.cpp", SOURCE, skip_bodies=True)
    assert third.pch_state == "used"


def test_missing_pch_is_built_in_the_background(tmp_path: Path) -> None:
    cache = tmp_path / "pch"
    first = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=cache, build_pch="background")
    tu = first.parse("demo.cpp", SOURCE, skip_bodies=True)
    assert first.pch_state == "building"  # this parse read the prelude inline ...
    assert cxx.qualified_name(function(tu, "f")) == "demo::f"
    assert first.pch_process is not None
    assert first.pch_process.wait(timeout=300) == 0  # ... while a child built the PCH
    assert len(list(cache.glob("*.pch"))) == 1
    second = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=cache, build_pch="background")
    tu = second.parse("demo.cpp", SOURCE, skip_bodies=True)
    assert (second.pch_state, second.pch_process) == ("used", None)
    assert cxx.qualified_name(function(tu, "f")) == "demo::f"


def test_background_build_yields_to_one_in_progress(tmp_path: Path) -> None:
    parser = cxx.Parser(tmp_path, prelude=SMALL_PRELUDE, cache_dir=tmp_path / "pch")
    pch = parser._pch_path()
    assert pch is not None
    pch.parent.mkdir(parents=True)
    request = json.dumps(
        {"root": str(tmp_path), "prelude": SMALL_PRELUDE, "args": parser.system_args, "path": str(pch)}
    )
    with open(pch.parent / (pch.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run holds the build
        cxx.build_pch_request(request)
        assert not pch.exists()
    cxx.build_pch_request(request)
    assert pch.is_file()
