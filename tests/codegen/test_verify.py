"""`python -m codegen verify`: implementations checked against their schemas (libclang).

Each case writes a small project (ops.yaml + one implementation header) into a
tmp dir and runs the command; messages are pinned in full, locations included.
The prelude PCH is shared with every other run (this checkout's .cache).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex", reason="libclang (pip package 'libclang') is not installed")

from codegen.__main__ import main
from codegen.verify import receives

ROOT = Path(__file__).resolve().parents[2]

HEADER_TOP = """\
#pragma once
#include <ATen/ATen.h>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
namespace vtoy::toy {
"""


def project(tmp_path: Path, ops: str, body: str, extra_top: str = "") -> Path:
    """A project in ``tmp_path``: ops.yaml with family 'toy' and csrc/apis/toy.hpp holding ``body``."""
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(
        "library: vtoy\n"
        + extra_top
        + "families:\n  toy:\n    header: csrc/apis/toy.hpp\n    doc: Toy family.\n    ops:\n"
        + textwrap.indent(textwrap.dedent(ops), "      ")
    )
    header = tmp_path / "csrc" / "apis" / "toy.hpp"
    header.parent.mkdir(parents=True)
    header.write_text(HEADER_TOP + textwrap.dedent(body) + "}  // namespace vtoy::toy\n")
    return manifest


def run_verify(manifest: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    rc = main(["verify", "--manifest", str(manifest), "-I", str(ROOT / "csrc")])
    out = capsys.readouterr()
    return rc, out.err.splitlines(), out.out


GEMM_OP = """\
- schema: >-
    gemm(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, Tensor? c=None, int[3]? recipe=None,
    str compiled_dims="nk") -> ()
  pack: {a: [a, sfa], b: [b, sfb]}
  writes: [d]
  doc: A GEMM.
"""
GEMM_OK = """\
inline void gemm(const std::pair<at::Tensor, at::Tensor>& a, std::pair<at::Tensor, at::Tensor> b, const at::Tensor& d,
                 const std::optional<at::Tensor>& c, const std::optional<std::tuple<int, int, int>>& recipe,
                 const std::string& compiled_dims) {}
"""


def test_real_manifest_passes(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["verify", "--manifest", str(ROOT / "ops.yaml")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert out.out.startswith("codegen verify: ")
    assert "implementations match" in out.out


def test_matching_implementation_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = project(tmp_path, GEMM_OP, GEMM_OK)
    rc, err, out = run_verify(manifest, capsys)
    assert (rc, err) == (0, []), err
    assert "1 implementations match 1 ops" in out


CUDA_GUARDS = (
    "guards:\n  cuda:\n    cpp: defined(DG_WITH_CUDA)\n    doc: CUDA builds.\ndispatch_guards:\n  CUDA: cuda\n"
)


def test_missing_implementation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its CUDA kernel is guarded, but its CPU kernel is not: a missing function is an error, not a note.
    body = GEMM_OK.replace("inline void gemm(", "inline void gem(", 1)
    manifest = project(tmp_path, GEMM_OP, body, extra_top=CUDA_GUARDS)
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert err[0] == (
        f"{manifest}:13:9: op 'gemm': csrc/apis/toy.hpp: the implementation 'vtoy::toy::gemm' does not exist "
        "(did you mean 'gem'?); expected a function of that name (the op's 'impl', default vtoy::<family>::<name>)"
    )
    assert len(err) == 2 and err[1].startswith("codegen verify: 1 problem(s)")


def test_reordered_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = """\
    inline void gemm(const std::pair<at::Tensor, at::Tensor>& b, std::pair<at::Tensor, at::Tensor> a, const at::Tensor& d,
                     const std::optional<at::Tensor>& c, const std::optional<std::tuple<int, int, int>>& recipe,
                     const std::string& compiled_dims) {}
    """
    manifest = project(tmp_path, GEMM_OP, body)
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert err[:-1] == [
        f"{manifest}:7:9: op 'gemm': csrc/apis/toy.hpp:9:59: the parameters are in a different order than the "
        "schema: the implementation has (b, a, d, c, recipe, compiled_dims), the schema (after pack rules) "
        "(a, b, d, c, recipe, compiled_dims)"
    ]


def test_type_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = GEMM_OK.replace("const std::string& compiled_dims", "std::optional<std::tuple<int, int, int>> compiled_dims")
    manifest = project(tmp_path, GEMM_OP, body)
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert err[:-1] == [
        f"{manifest}:7:9: op 'gemm': csrc/apis/toy.hpp:11:59: parameter 6 'compiled_dims' is "
        "std::optional<std::tuple<int, int, int>>, but the schema gives 'str'; the wrapper passes std::string"
    ]


def test_arity_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = GEMM_OK.replace(",\n                 const std::string& compiled_dims", "")
    manifest = project(tmp_path, GEMM_OP, body)
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert err[:-1] == [
        f"{manifest}:7:9: op 'gemm': csrc/apis/toy.hpp:9:13: 'vtoy::toy::gemm' takes 5 parameters, but the "
        "schema gives 6 after pack rules: (a, b, d, c, recipe, compiled_dims)"
    ]


def test_trailing_cpp_defaults_are_fine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = GEMM_OK.replace("const std::string& compiled_dims)", "const std::string& compiled_dims, int extra = 3)")
    rc, err, _ = run_verify(project(tmp_path, GEMM_OP, body), capsys)
    assert (rc, err) == (0, [])


SCALARS_OP = """\
- schema: scalars(int x, float y, int? z, float? w, str s, int[] v, ScalarType t, bool f) -> (int, int[])
  doc: Scalars.
"""


def test_widening_and_optional_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = """\
    inline std::tuple<int, std::vector<int64_t>> scalars(int64_t x, float y, std::optional<long> z,
                                                         const std::optional<double>& w, std::string_view s,
                                                         const std::vector<int>& v, c10::ScalarType t, bool f) {
      return {};
    }
    """
    (tmp_path / "a").mkdir()
    rc, err, _ = run_verify(project(tmp_path / "a", SCALARS_OP, body), capsys)
    assert (rc, err) == (0, [])
    # int[] also feeds a list of 64-bit ints (addresses such as sym_buffer_ptrs), unchecked.
    body = body.replace("const std::vector<int>& v", "std::vector<int64_t> v")
    (tmp_path / "b").mkdir()
    rc, err, _ = run_verify(project(tmp_path / "b", SCALARS_OP, body), capsys)
    assert (rc, err) == (0, [])


def test_references_optionality_and_returns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = """\
    inline std::tuple<int, std::vector<int>> scalars(int& x, double&& y, int z, std::optional<float> w,
                                                     std::string s, std::vector<double> v, at::ScalarType t, bool f) {
      return {};
    }
    """
    manifest = project(tmp_path, SCALARS_OP, body)
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    prefix = f"{manifest}:7:9: op 'scalars': csrc/apis/toy.hpp"
    assert err[:-1] == [
        f"{prefix}:9:42: 'vtoy::toy::scalars' returns std::tuple<int, std::vector<int>>, but the schema returns "
        "'(int, int[])'; expected a type the wrapper can return as std::tuple<long, std::vector<long>>",
        f"{prefix}:9:55: parameter 1 'x' is int&: a non-const reference, which cannot bind what the wrapper passes; "
        "take it by value or const&",
        f"{prefix}:9:67: parameter 2 'y' is double&&: an rvalue reference, but the wrapper passes an lvalue; "
        "take it by value or const&",
        f"{prefix}:9:74: parameter 3 'z' is int, but the schema gives 'int?'; the wrapper passes std::optional<int>",
        f"{prefix}:10:85: parameter 6 'v' is std::vector<double>, but the schema gives 'int[]'; the wrapper passes "
        "std::vector<int> or std::vector<long>",
    ]


def test_guarded_missing_implementation_is_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ops = """\
    - schema: gpu_only(int x) -> int
      guard: cuda
      doc: Only with CUDA.
    """
    manifest = project(tmp_path, ops, "", extra_top=CUDA_GUARDS)
    rc, err, out = run_verify(manifest, capsys)
    assert (rc, err) == (0, [])
    assert out.splitlines()[0] == (
        f"note: {manifest}:13:9: op 'gpu_only': 'vtoy::toy::gpu_only' is not declared in this parse, "
        "where guard 'cuda' (defined(DG_WITH_CUDA)) may not hold; not checked"
    )


def test_header_that_does_not_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = project(tmp_path, GEMM_OP, "inline void gemm(Unknown x) {}\n")
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert err[:2] == [
        f"{manifest}:1:1: the implementation headers do not compile; fix these first:",
        "csrc/apis/toy.hpp:9:18: unknown type name 'Unknown'",
    ]


def test_invalid_manifest_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = project(tmp_path, "- schema: f(int x) -> ()\n", "")
    rc, err, _ = run_verify(manifest, capsys)
    assert rc == 2
    assert "op has no 'doc'" in err[0]


def test_receives_needs_matching_optionality() -> None:
    from codegen.cxx import CxxType

    def opt(t: CxxType) -> CxxType:
        return CxxType("std::optional", (t,))

    i, lng, f, d = CxxType("int"), CxxType("long"), CxxType("float"), CxxType("double")
    assert receives(lng, i) and not receives(i, lng)
    assert receives(f, d) and receives(d, f)
    assert receives(opt(lng), opt(i)) and not receives(opt(i), i) and not receives(i, opt(i))
    tup = CxxType("std::tuple", (i, i))
    assert receives(CxxType("std::tuple", (lng, i)), tup) and not receives(CxxType("std::tuple", (i,)), tup)
    assert not receives(CxxType("std::vector", (lng,)), CxxType("std::vector", (i,)))


def test_global_namespace_function_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """FlashMLA and DeepEP bind functions of the global namespace; an impl naming one must be found."""
    header = tmp_path / "csrc" / "apis" / "toy.hpp"
    header.parent.mkdir(parents=True)
    header.write_text(
        "#pragma once\n#include <Python.h>  // verify adds Python's include dir\n#include <ATen/ATen.h>\ninline void scale_(const at::Tensor& x, double f) { x.mul_(f); }\n"
    )
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(
        "library: vtoy\nfamilies:\n  toy:\n    header: csrc/apis/toy.hpp\n    doc: x\n    ops:\n"
        "      - schema: scale_(Tensor(x!) x, float f) -> ()\n        impl: scale_\n        writes: [x]\n        doc: y\n"
        "      - schema: gone(Tensor x) -> ()\n        impl: ::gone\n        doc: z\n"
    )
    rc = main(["verify", "--manifest", str(manifest), "--root", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "'scale_'" not in err  # found and matching
    assert "the implementation 'gone' does not exist" in err
