"""How import-pybind finds a project's include folders, groups clang's errors, and reads #if guards.

No libclang here: these are the text-level readers (codegen/includes.py, codegen/importer/guards.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen import includes
from codegen.cxx import Problem
from codegen.importer.guards import Conditions, condition_of, guard_name

SETUP = """\
import os
from pathlib import Path
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))
common = [f"{CUDA_HOME}/include", "third-party/lib/include"]


def extensions():
    include_dirs = [f"{this_dir}/pkg/include", Path(this_dir) / "csrc" / "src"]
    return [
        CUDAExtension(name="mylib._C", sources=["csrc/api.cpp"], include_dirs=include_dirs + common),
        CUDAExtension("mylib.extra", sources=[], include_dirs=[os.path.join("csrc", "extra"), unknown_call()]),
    ]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cuda = tmp_path / "cuda"
    for d in ("cuda/include", "cuda/include/cccl", "pkg/include", "csrc/src", "csrc/extra", "third-party/lib/include"):
        (tmp_path / d).mkdir(parents=True)
    for d in ("cmake_inc", "build_inc", "gen/inc"):
        (tmp_path / d).mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(cuda))
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "CMakeLists.txt").write_text(
        "# include_directories(commented_out)\n"
        "include_directories(${CMAKE_CURRENT_SOURCE_DIR}/cmake_inc ${SOME_VAR}/skipped)\n"
        "target_include_directories(mylib PRIVATE build_inc)\n"
    )
    (tmp_path / "csrc" / "api.cpp").write_text("int x;\n")
    (tmp_path / "compile_commands.json").write_text(
        json.dumps(
            [
                {
                    "directory": str(tmp_path),
                    "file": "csrc/api.cpp",
                    "command": "c++ -Igen/inc -isystem missing/dir -DUSE_FAST=1 -c csrc/api.cpp",
                }
            ]
        )
    )
    return tmp_path


def test_include_folders_come_from_the_projects_build_files(project: Path) -> None:
    flags = includes.discover([project / "csrc" / "api.cpp"])
    assert flags.project == project
    found = [p.relative_to(project).as_posix() for p in flags.include_dirs]
    # compile_commands.json first, then setup.py (statically: f-strings, Path /, os.path.join, names), then CMake.
    assert found == [
        "gen/inc",
        "pkg/include",
        "csrc/src",
        "cuda/include",
        "third-party/lib/include",
        "csrc/extra",
        "cmake_inc",
        "build_inc",
    ]
    assert flags.defines == ["USE_FAST=1"]
    # CUDA_HOME's folders were already listed by setup.py; cccl comes from CUDA_HOME itself.
    assert [p.relative_to(project).as_posix() for p in flags.system_dirs] == ["cuda/include/cccl"]
    assert includes.extension_names(project / "setup.py") == ["mylib._C", "mylib.extra"]


def test_project_folder_prefers_setup_py(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "CMakeLists.txt").write_text("")
    assert includes.project_dir([tmp_path / "csrc" / "api.cpp"]) == tmp_path


def test_clang_errors_are_listed_once_grouped_with_a_likely_package() -> None:
    problems = [
        Problem("csrc/a.hpp", 3, 10, "'cute/tensor.hpp' file not found"),
        Problem("csrc/b.hpp", 5, 10, "'cute/tensor.hpp' file not found"),
        Problem("csrc/b.hpp", 6, 10, "'cusparse.h' file not found"),
        Problem("csrc/b.hpp", 6, 10, "'cusparse.h' file not found"),  # the same error twice
        *(Problem("csrc/c.hpp", n, 1, f"use of undeclared identifier 'cute' ({n})") for n in range(1, 6)),
    ]
    lines = includes.grouped_errors(problems)
    assert lines[0] == (
        "missing header <cute/tensor.hpp> (included at csrc/a.hpp:3, csrc/b.hpp:5): likely CuTe, part of CUTLASS "
        "(its include/ folder, often third-party/cutlass/include); add its folder with -I DIR"
    )
    assert lines[1].startswith(
        "missing header <cusparse.h> (included at csrc/b.hpp:6): likely the CUDA toolkit's cuSPARSE"
    )
    assert lines[2:] == [
        "csrc/c.hpp:1:1: use of undeclared identifier 'cute' (1)",
        "csrc/c.hpp:2:1: use of undeclared identifier 'cute' (2)",
        "csrc/c.hpp: 3 more error(s) in this file",
    ]
    assert includes.provider("c10/cuda/impl/cuda_cmake_macros.h").startswith("a CUDA build of torch")


def test_fallback_holds_the_cuda_torch_header_a_cpu_wheel_lacks() -> None:
    assert (includes.FALLBACK / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h").is_file()


def test_includes_are_followed_from_the_headers_text(tmp_path: Path) -> None:
    (tmp_path / "a.hpp").write_text('#pragma once\n#include "sub/b.hpp"\n#include <vector>\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.hpp").write_text('#include "../c.hpp"\n')
    (tmp_path / "c.hpp").write_text("")
    (tmp_path / "d.hpp").write_text("")
    found = {p.name for p in includes.reachable(tmp_path / "a.hpp", [], tmp_path)}
    assert found == {"a.hpp", "b.hpp", "c.hpp"}


BODY = """\
  m.def("plain", &plain);
#ifndef NO_FAST
  m.def("fast", &fast);
#if defined(BIG) && USE_X
  m.def("big", &big);
#endif
#else
  m.def("slow", &slow);
#endif
  m.def("lambda", []() {
#ifdef V2
    return 2;
#else
    return 1;
#endif
  });
"""


def test_conditions_around_each_binding() -> None:
    conds = Conditions(BODY)

    def at(name: str) -> str | None:
        return condition_of(conds.at(BODY.index(f'"{name}"')))

    assert at("plain") is None and at("lambda") is None
    assert at("fast") == "!defined(NO_FAST)"
    assert at("big") == "(!defined(NO_FAST)) && (defined(BIG) && USE_X)"
    assert at("slow") == "defined(NO_FAST)"
    taken: dict[str, str] = {}
    assert guard_name("!defined(NO_FAST)", taken) == "not_no_fast"
    assert guard_name("DG_FP8 and DG_TMA", taken) == "dg_fp8_and_dg_tma"  # C++ 'and' is no macro name
    assert guard_name("!defined(NO_FAST)", taken) == "not_no_fast"  # the same condition, the same guard
