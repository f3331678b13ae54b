"""`python -m codegen import-pybind`: a pybind11 module in DeepGEMM's style -> a draft manifest.

The fixture (tests/codegen/fixtures/pybind/) has a PYBIND11_MODULE calling two
register_apis functions: (tensor, scale) pairs, optional tuples, defaults, a
ScalarType default, an m.attr alias, positional-only lambdas, a bound function
without py::arg, a std::variant argument and a std::function return.  Its draft
is compared with a golden file; the slow test decides the draft's `?` markers
the way a person would, regenerates it, checks it with `verify`, builds it into
an extension and calls the ops.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("clang.cindex", reason="libclang (pip package 'libclang') is not installed")
import torch
import yaml

from codegen.__main__ import main
from codegen.cxx import CxxType
from codegen.importer.translate import Untranslatable, param_type, return_type, translate_default

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "codegen" / "fixtures" / "pybind"
GOLDEN = FIXTURE / "draft.golden.yaml"
LIBRARY = "dg_import_fixture"
IMPORT_ARGS = [
    "import-pybind",
    str(FIXTURE.relative_to(ROOT) / "csrc" / "python_api.cpp"),
    "--root",
    str(FIXTURE.relative_to(ROOT)),
    "-I",
    "csrc",
    "--library",
    LIBRARY,
]
UPDATE = f"python -m codegen {' '.join(IMPORT_ARGS)} -o {GOLDEN.relative_to(ROOT)}"


def run_import(out: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.chdir(ROOT)
    rc = main([*IMPORT_ARGS, "-o", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return out.read_text(), captured.err


def test_draft_matches_golden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    draft, _ = run_import(tmp_path / "draft.yaml", capsys, monkeypatch)
    golden = GOLDEN.read_text()
    if draft != golden:
        diff = "".join(
            difflib.unified_diff(
                golden.splitlines(keepends=True), draft.splitlines(keepends=True), str(GOLDEN), "import-pybind output"
            )
        )
        pytest.fail(
            f"the draft differs from the golden file:\n{diff}\nReview the diff; if it is right, update with:\n  {UPDATE}"
        )


def test_untranslated_bindings_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    draft, err = run_import(tmp_path / "draft.yaml", capsys, monkeypatch)
    untranslated = [line for line in err.splitlines() if line.startswith("untranslated: ")]
    assert untranslated == [
        "untranslated: csrc/bindings/toy.hpp:35:3: op 'get_buffer_size_and_slicer': returns "
        "std::tuple<long, std::function<std::vector<at::Tensor> (const at::Tensor &)>>: a std::function (a closure) "
        "cannot cross the dispatcher; return data (e.g. int[]) and add an op that uses it",
        "untranslated: csrc/bindings/settings.hpp:22:3: op 'set_block_multiple': parameter 1 'value' is "
        "std::variant<int, std::tuple<int, int>>: a std::variant has no schema type; take the widest form (e.g. int[]) "
        "and normalise in Python (python.convert)",
    ]
    assert [line for line in err.splitlines() if line.startswith("note: ")] == [
        "note: csrc/bindings/toy.hpp:31:3: 'm.def(...)' here was not parsed: it is under '#if "
        "defined(TOY_WITH_EXTRAS)', which does not hold in this parse; translate it by hand, or parse with the "
        "macros that enable it (-D)",
    ]
    for line in untranslated:  # the same list heads the draft, as comments
        assert f"#   {line.removeprefix('untranslated: ')}\n" in draft
    ops = {op["schema"].split("(")[0] for fam in yaml.safe_load(draft)["families"].values() for op in fam["ops"]}
    assert "get_buffer_size_and_slicer" not in ops and "set_block_multiple" not in ops


def test_draft_is_rejected_until_markers_are_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_import(tmp_path / "ops.yaml", capsys, monkeypatch)
    rc = main(["check", "--manifest", str(tmp_path / "ops.yaml")])
    err = capsys.readouterr().err
    assert rc == 2
    problems = {re.sub(r"^\S+:\d+:\d+: ", "", line).split(";")[0] for line in err.splitlines()[:-1]}
    markers = {p for p in problems if "undecided marker" in p}
    assert "op 'fp8_fp4_gemm_nt': 'writes' still holds the undecided marker '?d'" in markers
    assert problems - markers == {
        "op 'scale_rows': op returns Tensor but has no 'fake'",
        "op 'grouped_row_sums': op returns Tensor but has no 'fake'",
    }


# --------------------------------------------------------------------------------------
# translation rules, without libclang
# --------------------------------------------------------------------------------------

INT, LONG, DOUBLE, BOOL = CxxType("int"), CxxType("long"), CxxType("double"), CxxType("bool")
TENSOR = CxxType("at::Tensor")


def opt(t: CxxType) -> CxxType:
    return CxxType("std::optional", (t,))


def tup(*ts: CxxType) -> CxxType:
    return CxxType("std::tuple", ts)


@pytest.mark.parametrize(
    ("cpp", "schema"),
    [
        (CxxType("long", const=True, ref="&"), ("int",)),
        (CxxType("float"), ("float",)),
        (CxxType("std::basic_string", (CxxType("char"),)), ("str",)),
        (CxxType("c10::ScalarType"), ("ScalarType",)),
        (opt(TENSOR), ("Tensor?",)),
        (opt(tup(INT, INT, INT)), ("int[3]?",)),
        (CxxType("std::vector", (INT,)), ("int[]",)),
        (CxxType("std::pair", (TENSOR, TENSOR)), ("Tensor", "Tensor")),
        (CxxType("std::pair", (TENSOR, opt(TENSOR))), ("Tensor", "Tensor?")),
    ],
)
def test_param_types(cpp: CxxType, schema: tuple[str, ...]) -> None:
    assert param_type(cpp).types == schema


def test_untranslatable_param_types() -> None:
    variant = CxxType("std::variant", (INT, tup(INT, INT)), text="std::variant<int, std::tuple<int, int>>")
    with pytest.raises(Untranslatable, match="a std::variant has no schema type"):
        param_type(variant)
    with pytest.raises(Untranslatable, match="has no schema type"):
        param_type(CxxType("std::vector", (TENSOR,), text="std::vector<at::Tensor>"))


def test_return_types() -> None:
    assert return_type(CxxType("void")) == "()"
    assert return_type(tup(INT, CxxType("std::vector", (LONG,)))) == "(int, int[])"
    assert return_type(CxxType("std::vector", (TENSOR,))) == "Tensor[]"
    fn = CxxType("std::function", text="std::function<void ()>")
    with pytest.raises(Untranslatable, match="closure"):
        return_type(tup(LONG, fn))


@pytest.mark.parametrize(
    ("text", "stype", "schema", "python"),
    [
        ("std::nullopt", "int[3]?", "None", None),
        ("false", "bool", "False", None),
        ("1e-6", "float", "1e-06", None),
        ("2", "float", "2.0", None),
        ('"nk"', "str", '"nk"', None),
        ("std::make_tuple(1, 1, 128)", "int[3]", "[1, 1, 128]", None),
        ("std::tuple<int, int>{1, 32}", "int[2]?", "[1, 32]", None),
        ("torch::kFloat", "ScalarType", "float32", None),
        ("at::ScalarType::BFloat16", "ScalarType", "bfloat16", None),
        ("torch::kFloat8_e4m3fn", "ScalarType", None, "torch.float8_e4m3fn"),
    ],
)
def test_defaults(text: str, stype: str, schema: str | None, python: object) -> None:
    d = translate_default(text, stype)
    assert (d.schema, d.python) == (schema, python)


def test_untranslatable_defaults() -> None:
    with pytest.raises(Untranslatable, match="default 'std::nullopt' is None, but the parameter is not optional"):
        translate_default("std::nullopt", "int")
    with pytest.raises(Untranslatable, match="default 'get_default\\(\\)' has no schema spelling for a int"):
        translate_default("get_default()", "int")
    with pytest.raises(Untranslatable):
        translate_default("std::make_tuple(1, 2)", "int[3]")


# --------------------------------------------------------------------------------------
# the draft, decided, regenerated, verified, built and called
# --------------------------------------------------------------------------------------

WRITTEN = {"fp8_fp4_gemm_nt": ["d"]}  # what a person decides: only fp8_fp4_gemm_nt writes (d)


def decide(draft: dict[str, Any]) -> dict[str, Any]:
    """Settle the draft the way a person would: writes, fakes and docs."""
    for family, fam in draft["families"].items():
        fam["doc"] = f"Fixture family {family}."
        for op in fam["ops"]:
            name = op["schema"].split("(")[0]
            op.pop("writes", None)
            for arg in WRITTEN.get(name, []):
                op["schema"] = re.sub(rf"\bTensor {arg}\b", f"Tensor({arg}!) {arg}", op["schema"])
                op.setdefault("writes", []).append(arg)
            if re.search(r"-> .*Tensor", op["schema"]):
                op["fake"] = "meta"
                op["dispatch"] = ["CompositeExplicitAutograd"]
            op["doc"] = f"Fixture op {name}."
    return draft


def adopt_runtime(project: Path) -> None:
    """What a library adopting the generator provides: the conversion helpers and OpScope in its own
    namespace (C++), and ``<library>._shim`` (Python); here both are deep_gemm's, aliased."""
    (project / "csrc" / "utils").mkdir(parents=True, exist_ok=True)
    (project / "csrc" / "utils" / "schema_types.hpp").write_text(
        "#pragma once\n"
        f'#include "{ROOT / "csrc" / "utils" / "schema_types.hpp"}"\n'
        f"namespace {LIBRARY} {{\nnamespace torch_utils = ::deep_gemm::torch_utils;\nusing ::deep_gemm::OpScope;\n}}\n"
    )
    package = project / LIBRARY
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "_shim.py").write_text(
        "from deep_gemm._shim import guard_enabled, pack_error, register_fake  # noqa: F401\n\n\n"
        "def load_extension(name: str) -> None:\n"
        "    pass  # the test loads the library itself (torch.utils.cpp_extension.load)\n"
    )


def load_shim(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"{LIBRARY}_shim", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_decided_draft_builds_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torch.utils.cpp_extension import load

    project = tmp_path / "project"
    shutil.copytree(FIXTURE / "csrc" / "apis", project / "csrc" / "apis")
    adopt_runtime(project)
    draft_text, _ = run_import(tmp_path / "draft.yaml", capsys, monkeypatch)
    manifest = project / "ops.yaml"
    manifest.write_text(yaml.safe_dump(decide(yaml.safe_load(draft_text)), sort_keys=False))

    assert main(["regenerate", "--manifest", str(manifest), "--root", str(project), "--quiet"]) == 0
    rc = main(["verify", "--manifest", str(manifest), "--root", str(project), "-I", str(ROOT / "csrc")])
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()

    monkeypatch.setenv("CXX", "g++")
    monkeypatch.setenv("CC", "gcc")
    build = tmp_path / "build"
    build.mkdir()
    load(
        name=f"{LIBRARY}_ext",
        sources=sorted(str(p) for p in (project / "csrc" / "generated").glob("*.cpp")),
        extra_include_paths=[str(project / "csrc"), str(ROOT / "csrc")],
        build_directory=str(build),
        is_python_module=False,
        verbose=False,
    )
    ops = getattr(torch.ops, LIBRARY)
    monkeypatch.syspath_prepend(str(project))
    shim = load_shim(project / LIBRARY / "_C.py")

    # fp8_fp4_gemm_nt: (a, sfa) (b, sfb) pairs, written d, optional c, an alias.
    for m, n, k in [(1, 3, 5), (7, 4, 16), (33, 17, 9)]:
        a, b = torch.randn(m, k), torch.randn(n, k)
        sfa, sfb = torch.rand(m) + 0.5, torch.rand(n) + 0.5
        c = torch.randn(m, n)
        expected = (a.double() * sfa.double()[:, None]) @ (b.double() * sfb.double()[:, None]).T
        d = torch.empty(m, n, dtype=torch.float64)
        shim.fp8_gemm_nt((a, sfa), (b, sfb), d)
        torch.testing.assert_close(d, expected)
        ops.fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, [1, 128, 128], "mn")
        torch.testing.assert_close(d, expected + c.double())
    assert shim.fp8_gemm_nt is shim.fp8_fp4_gemm_nt
    before = d.clone()
    with pytest.raises(ValueError, match="fp8_fp4_gemm_nt: argument 'recipe' must start with 1"):
        shim.fp8_fp4_gemm_nt((a, sfa), (b, sfb), d, recipe=(2, 128, 128))
    assert torch.equal(d, before)

    # scale_rows: ScalarType default (float32), float default, Tensor return with a meta fake.
    x, bias = torch.randn(5, 3), torch.randn(5, 3)
    out = shim.scale_rows(x)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, (x.double() * 1.5).float())
    out = shim.scale_rows(x, bias, factor=-2.0, out_dtype=torch.float64)
    torch.testing.assert_close(out, x.double() * -2.0 + bias.double())
    assert ops.scale_rows(x.to("meta")).dtype == torch.float32

    # block_shape: int[3] default, optional int, tuple return.
    assert shim.block_shape(100) == (64, 128)
    assert shim.block_shape(3, 50, (2, 32, 128)) == (3, 32)

    # grouped_row_sums: (q, optional scale) pack, int[]? and int[].
    q, sfq = torch.randn(6, 4), torch.rand(6) + 0.5
    sums = shim.grouped_row_sums((q, sfq), [2, 0, 4], [1, 5, -1])
    scaled = q.double() * sfq.double()[:, None]
    expected = torch.stack([scaled[:2].sum(0), scaled[2:2].sum(0) * 5, scaled[2:].sum(0) * -1])
    torch.testing.assert_close(sums, expected)
    torch.testing.assert_close(shim.grouped_row_sums((q, None), None, [2]), q.double().sum(0, keepdim=True) * 2)

    # Positional-only bindings (no py::arg): a bound function and the settings lambdas.
    assert shim.get_tma_aligned_size(5, 4) == 8
    with pytest.raises(TypeError):
        shim.get_tma_aligned_size(x=5, element_size=4)
    shim.set_num_widgets(17)
    assert shim.get_num_widgets() == 17 == ops.get_num_widgets()
    with pytest.raises(ValueError, match="set_num_widgets: argument 'new_num_widgets' must lie in \\[0, 128\\]"):
        shim.set_num_widgets(-1)
    shim.set_fast_mode(True)
    assert shim.get_fast_mode() is True
    assert shim.get_block_multiple() == [1, 1]
    sys.modules.pop(f"{LIBRARY}_shim", None)
