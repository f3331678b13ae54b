"""Broken manifests: every error is reported at once, pinned here, and no file is written."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen.__main__ import main

BASE = """\
library: deep_gemm
guards:
  cuda: {cpp: defined(DG_WITH_CUDA), doc: CUDA builds.}
families:
  gemm:
    header: csrc/apis/gemm.hpp
    doc: GEMMs.
    ops:
{ops}
"""

GOOD_OP = """\
      - schema: mm(Tensor a, Tensor sfa, Tensor b, Tensor sfb, Tensor(d!) d, int[3]? recipe=None) -> ()
        pack: {a: [a, sfa], b: [b, sfb]}
        writes: [d]
        doc: A product.
"""


def run(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(text)
    code = main(["regenerate", "--manifest", str(manifest), "--root", str(tmp_path)])
    err = capsys.readouterr().err
    # A broken manifest writes no file at all.
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and p != manifest)
    assert written == [] or code == 0, f"files written despite errors: {written}"
    return code, err.replace(str(tmp_path) + "/", "")


def ops(text: str) -> str:
    return BASE.replace("{ops}", textwrap.indent(textwrap.dedent(text), "      "))


CASES = {
    "yaml_syntax": (
        "library: [deep_gemm\n",
        "ops.yaml:2:1: YAML syntax error: expected ',' or ']', but got '<stream end>'",
    ),
    "schema_rejected_by_torch": (
        ops("- schema: mm(Tensor a, Tnsor b) -> ()\n  doc: x\n"),
        "ops.yaml:9:30: op 'mm': torch rejected the schema: unknown type specifier.",  # at 'Tnsor'
    ),
    "non_default_after_default": (
        ops("- schema: mm(Tensor a, int x=1, Tensor b) -> ()\n  doc: x\n"),
        "ops.yaml:9:17: op 'mm': torch rejected the schema: Non-default positional argument follows default argument.",
    ),
    "duplicate_argument": (
        ops("- schema: mm(Tensor a, Tensor a) -> ()\n  doc: x\n"),
        "ops.yaml:9:37: op 'mm': argument 'a' appears twice in the schema; expected unique argument names",
    ),
    "pack_unknown_argument": (
        ops("- schema: mm(Tensor a, Tensor sfa) -> ()\n  pack: {a: [a, sfaa]}\n  doc: x\n"),
        "ops.yaml:10:23: op 'mm': pack rule 'a' names 'sfaa', which is not an argument of the schema (did you mean 'sfa'?)",
    ),
    "pack_already_packed": (
        ops("- schema: mm(Tensor a, Tensor sfa, Tensor b) -> ()\n  pack: {a: [a, sfa], b: [sfa, b]}\n  doc: x\n"),
        "ops.yaml:10:33: op 'mm': pack rule 'b' names 'sfa', which pack rule 'a' already packs; expected each argument in at most one pack",
    ),
    "default_wrong_type": (
        ops("- schema: mm(Tensor a, int[3]? recipe=None) -> ()\n  python: {defaults: {recipe: [1, 128]}}\n  doc: x\n"),
        "ops.yaml:10:37: op 'mm': python default for 'recipe' is [1, 128], which does not fit its type int[3]?; expected a value of that type",
    ),
    "unknown_key": (
        ops("- schema: mm(Tensor a) -> ()\n  docs: x\n"),
        "ops.yaml:10:9: op 'mm': unknown key 'docs' (did you mean 'doc'?); allowed keys: 'schema', 'doc', 'impl', 'dispatch', 'guard', 'pack', 'python', 'aliases', 'writes', 'fake'",
    ),
    "duplicate_op_name": (
        ops("- schema: mm(Tensor a) -> ()\n  doc: x\n- schema: mm2(Tensor a) -> ()\n  aliases: [mm]\n  doc: y\n"),
        "ops.yaml:11:9: op 'mm2': name 'mm' is already used at ops.yaml:9:9; expected op names and aliases to be unique",
    ),
    "missing_bang": (
        ops("- schema: mm(Tensor a, Tensor d) -> ()\n  writes: [d]\n  doc: x\n"),
        "ops.yaml:10:18: op 'mm': 'writes' says 'd' is written, but the schema has no '!' on it; expected 'Tensor(d!) d'",
    ),
    "bang_not_listed": (
        ops("- schema: mm(Tensor a, Tensor(d!) d) -> ()\n  doc: x\n"),
        "ops.yaml:9:9: op 'mm': the schema marks 'd' written ('!'), but 'writes' does not list it; expected 'writes' to list every written tensor",
    ),
    "duplicate_yaml_key": (
        ops("- schema: mm(Tensor a) -> ()\n  doc: x\n  doc: y\n"),
        "ops.yaml:11:9: duplicate key 'doc' (first given at line 10); expected each key once",
    ),
    "unknown_guard": (
        ops("- schema: mm(Tensor a) -> ()\n  guard: cdua\n  doc: x\n"),
        "ops.yaml:9:9: op 'mm': guard 'cdua' is not defined (did you mean 'cuda'?); expected one of 'cuda'",
    ),
    "missing_fake": (
        ops("- schema: mm(Tensor a) -> Tensor\n  doc: x\n"),
        "ops.yaml:9:9: op 'mm': op returns Tensor but has no 'fake'; expected 'meta' or {function: module.name}",
    ),
    "fake_module_missing": (
        ops("- schema: mm(Tensor a) -> Tensor\n  fake: {function: fakes.gemm.mm}\n  doc: x\n"),
        "ops.yaml:10:26: op 'mm': fake function 'fakes.gemm.mm': no module 'fakes.gemm' (looked for fakes/gemm.py and fakes/gemm/__init__.py); expected the module that defines the fake",
    ),
    "undecided_write_marker": (
        ops("- schema: mm(Tensor a, Tensor(d!) d) -> ()\n  writes: ['?d']\n  doc: x\n"),
        "ops.yaml:10:18: op 'mm': 'writes' still holds the undecided marker '?d'; expected a person to decide whether 'd' is written, then list it or drop it",
    ),
    "python_default_order": (
        ops("- schema: mm(Tensor a, int x, Tensor b) -> ()\n  python: {defaults: {x: 1}}\n  doc: x\n"),
        "ops.yaml:9:9: op 'mm': Python parameter 'b' has no default but follows 'x', which has one; expected a default for it (python.defaults) or a keyword-only schema argument",
    ),
    "unknown_converter": (
        ops("- schema: mm(int[] v) -> ()\n  python: {convert: {v: int_or_par}}\n  doc: x\n"),
        "ops.yaml:10:31: op 'mm': python converter 'int_or_par' is unknown (did you mean 'int_or_pair'?); expected one of 'int_or_pair', 'recipe_2_or_3'",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pinned_error(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, expected = CASES[case]
    code, err = run(tmp_path, text, capsys)
    assert code == 2
    assert expected in err, err
    assert err.rstrip().endswith("no file was written.")


def test_all_errors_reported_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ops(
        "- schema: mm(Tensor a, Tensor a) -> ()\n  doc: x\n"
        "- schema: nn(Tensor a, Tensor sfa) -> ()\n  pack: {a: [a, sfaa]}\n  doc: y\n"
        "- schema: oo(Tensor a) -> ()\n  docs: z\n"
    )
    code, err = run(tmp_path, text, capsys)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("ops.yaml:")]
    assert len(lines) == 4, err  # duplicate arg, bad pack member, unknown key 'docs', missing 'doc'
    assert "3 error(s)" not in err and "4 error(s); no file was written." in err


def test_good_manifest_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(ops(GOOD_OP))
    assert main(["regenerate", "--manifest", str(manifest), "--root", str(tmp_path)]) == 0
    assert (tmp_path / "csrc/generated/gemm.cpp").is_file()
    # Idempotent: a second run writes nothing.
    assert main(["regenerate", "--manifest", str(manifest), "--root", str(tmp_path)]) == 0
    assert "0 of 5 files changed" in capsys.readouterr().out


def test_schema_error_does_not_hide_the_ops_other_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Note [Every error of an op]: the fields that do not need the schema are checked as well."""
    text = ops(
        "- schema: mm(Tensor a, Tnsor b) -> ()\n"
        "  dispatch: [CPU, Cuda]\n"
        "  guard: not-a-name\n"
        "  aliases: [bad-alias]\n"
        "  docs: x\n"
    )
    code, err = run(tmp_path, text, capsys)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("ops.yaml:")]
    assert any("torch rejected the schema" in ln for ln in lines), err
    assert any("unknown key 'docs'" in ln for ln in lines), err
    assert any("op has no 'doc'" in ln for ln in lines), err
    assert any("dispatch key 'Cuda' is unknown" in ln for ln in lines), err
    assert any("field 'guard' 'not-a-name' is malformed" in ln for ln in lines), err
    assert any("alias 'bad-alias' is not a valid Python name" in ln for ln in lines), err
    assert "6 error(s); no file was written." in err


def test_type_error_points_at_the_bad_word_in_a_folded_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ops("- schema: >-\n    mm(Tensor a,\n    Scalar alpha) -> ()\n  doc: x\n")
    code, err = run(tmp_path, text, capsys)
    assert code == 2
    # 'Scalar' starts line 11 (the schema's second line), column 11; not the schema's start.
    assert err.startswith("ops.yaml:11:11: op 'mm': type 'Scalar' of 'alpha' is not supported by the generator"), err


def test_unknown_python_default_lists_the_valid_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ops(
        "- schema: mm(Tensor a, Tensor sfa, float alpha=1.0, int n=1) -> ()\n"
        "  pack: {a: [a, sfa]}\n"
        "  python: {defaults: {beta: 2.0}}\n"
        "  doc: x\n"
    )
    code, err = run(tmp_path, text, capsys)
    assert code == 2
    assert (
        "python default for 'beta', which is not an unpacked argument of the schema; expected one of 'alpha', 'n'"
    ) in err, err


FAKE_OPS = """\
- schema: mm(Tensor a) -> Tensor
  fake: {function: fakes.gemm.mm_fake}
  doc: x
- schema: nn(Tensor a) -> Tensor
  fake: {function: fakes.nn_fake}
  doc: y
"""


def test_fake_functions_resolve_statically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """check and regenerate read the fakes' modules with ast: a name they do not define is an error at its line."""
    (tmp_path / "fakes").mkdir()
    # A module that imports torch (never imported by the check) and misses the name by one letter.
    (tmp_path / "fakes/gemm.py").write_text("import torch\n\n\ndef mm_fak(a):\n    return torch.empty_like(a)\n")
    # A package whose __init__ re-exports the name: that counts as defining it.
    (tmp_path / "fakes/__init__.py").write_text("from .impl import nn_fake as nn_fake\n")
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(ops(FAKE_OPS))
    for command in ("check", "regenerate"):
        code = main([command, "--manifest", str(manifest), "--root", str(tmp_path)])
        err = capsys.readouterr().err.replace(str(tmp_path) + "/", "")
        assert code == 2, err
        assert err.splitlines()[:-1] == [
            "ops.yaml:10:26: op 'mm': fake function 'fakes.gemm.mm_fake': fakes/gemm.py defines no 'mm_fake' "
            "(did you mean 'mm_fak'?); expected a function of that name at the module's top level"
        ]
    assert not (tmp_path / "csrc").exists()
    (tmp_path / "fakes/gemm.py").write_text("def mm_fake(a):\n    return a\n")
    assert main(["regenerate", "--manifest", str(manifest), "--root", str(tmp_path)]) == 0
    assert "_register_fake('deep_gemm::mm', 'fakes.gemm.mm_fake')" in (tmp_path / "deep_gemm/_C.py").read_text()
    (tmp_path / "fakes/gemm.py").write_text("def mm_fake(a:\n")
    assert main(["check", "--manifest", str(manifest), "--root", str(tmp_path)]) == 2
    assert "fake function 'fakes.gemm.mm_fake': fakes/gemm.py does not parse: " in capsys.readouterr().err


def test_family_with_several_headers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`header:` may list several files: the generated wrapper includes each, in order."""
    text = ops(GOOD_OP).replace(
        "header: csrc/apis/gemm.hpp", "header: [csrc/apis/gemm.hpp, csrc/apis/grouped_gemm.hpp, csrc/apis/more.hpp]"
    )
    code, err = run(tmp_path, text, capsys)
    assert code == 0, err
    generated = (tmp_path / "csrc/generated/gemm.cpp").read_text()
    includes = [line for line in generated.splitlines() if line.startswith('#include "apis/')]
    assert includes == ['#include "apis/gemm.hpp"', '#include "apis/grouped_gemm.hpp"', '#include "apis/more.hpp"']


@pytest.mark.parametrize(
    "header,message",
    [
        ("[]", "ops.yaml:6:13: family 'gemm' field 'header' is an empty list; expected at least one header path"),
        ("[csrc/apis/gemm.hpp, {a: 1}]", "family 'gemm' field 'header' entry"),
    ],
)
def test_family_header_list_errors(
    header: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ops(GOOD_OP).replace("header: csrc/apis/gemm.hpp", f"header: {header}")
    code, err = run(tmp_path, text, capsys)
    assert code != 0
    assert message in err, err
