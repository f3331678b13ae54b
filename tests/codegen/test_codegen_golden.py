"""Golden-file tests of the generator on a small fixture manifest.

A mismatch prints a unified diff and the command that updates the goldens;
review that diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from codegen.outputs import render_all as render
from codegen.pipeline import load_manifest

FIXTURE = Path(__file__).parent / "fixtures" / "golden"
EXPECTED = FIXTURE / "expected"
UPDATE = "DG_UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/codegen/test_codegen_golden.py"


def _rendered() -> dict[str, str]:
    return render(load_manifest(FIXTURE / "ops.yaml", cache_root=None))


def _golden_name(rel: str) -> str:
    return rel.replace("/", "__")


def test_fixture_outputs_match_goldens() -> None:
    files = _rendered()
    if os.environ.get("DG_UPDATE_GOLDENS") == "1":
        for rel, text in files.items():
            (EXPECTED / _golden_name(rel)).write_text(text)
    problems = []
    for rel, text in sorted(files.items()):
        golden = EXPECTED / _golden_name(rel)
        want = golden.read_text() if golden.exists() else ""
        if want != text:
            diff = difflib.unified_diff(
                want.splitlines(keepends=True), text.splitlines(keepends=True), f"golden/{rel}", f"rendered/{rel}"
            )
            problems.append("".join(diff))
    if problems:
        pytest.fail("generated output differs from the goldens:\n" + "\n".join(problems) + f"\nTo accept: {UPDATE}")
    assert sorted(_golden_name(r) for r in files) == sorted(p.name for p in EXPECTED.iterdir())


def test_every_output_is_marked_generated() -> None:
    for rel, text in _rendered().items():
        first = text.splitlines()[0]
        assert "@generated from ops.yaml by python -m codegen — do not edit" in first, rel


def test_shim_spelling() -> None:
    shim = _rendered()["fixture/_C.py"]
    # Pack rules unpack, aliases are the same object, positional-only ops use '/'.
    assert 'def scaled_mm(a, b, d, c=None, recipe=None, mode="nk", fast=False):' in shim
    assert "_a, sfa = a" in shim and "scaled_mm_alias = scaled_mm" in shim
    assert "def set_level(level, /):" in shim
    # The python default of a ScalarType is a dtype; the fixed list default a tuple.
    assert "window=(1, 2), out_dtype=torch.float32" in shim
    # Guarded ops are bound only when their guard group is present.
    assert "if _GUARD_GPU:" in shim
    # The fake kernel named in the manifest is registered.
    assert "_register_fake('fixture::logits', 'fixture_fakes.logits')" in shim


def test_cpp_spelling() -> None:
    files = _rendered()
    core = files["csrc/generated/core.cpp"]
    assert 'm.def("scaled_mm(Tensor a, Tensor sfa' in core
    assert "std::pair<at::Tensor, at::Tensor>(a, sfa)" in core
    assert 'fixture::torch_utils::to_optional_tuple<3>(recipe, "recipe")' in core
    extra = files["csrc/generated/extra.cpp"]
    # One wrapper per distinct implementation, the CUDA block under its guard, the guarded op too.
    assert "::fixture::extra::logits_cpu(" in extra and "::fixture::extra::logits_cuda(" in extra
    assert "#if defined(FIXTURE_WITH_GPU)  // guard 'gpu'\nTORCH_LIBRARY_IMPL(fixture, CUDA, m)" in extra
    assert "std::pair<at::Tensor, std::optional<at::Tensor>>(q, q_sf)" in extra


GUARDED = """\
library: grouping
guards:
  gpu: {cpp: defined(GPU), doc: GPU builds.}
  big: {cpp: defined(BIG), doc: Big builds.}
dispatch_guards:
  CUDA: gpu
families:
  fam:
    header: csrc/apis/fam.hpp
    doc: Guard grouping.
    ops:
      - {schema: "a(Tensor x) -> ()", doc: a}
      - {schema: "b(Tensor x) -> ()", guard: gpu, doc: b}
      - {schema: "c(Tensor x) -> ()", guard: gpu, doc: c}
      - {schema: "d(Tensor x) -> ()", guard: big, doc: d}
      - {schema: "e(Tensor x) -> ()", guard: gpu, doc: e}
"""


def test_guards_are_grouped(tmp_path: Path) -> None:
    """Consecutive lines under one guard share one #if; a guard equal to the enclosing one is not repeated."""
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(GUARDED)
    text = render(load_manifest(manifest, cache_root=None))["csrc/generated/fam.cpp"]
    fragment = text[text.index("TORCH_LIBRARY_FRAGMENT") :].split("}\n", 1)[0]
    assert fragment.count("#if defined(GPU)") == 2  # b+c together, then e (d's guard breaks the run)
    assert fragment.count("#if defined(BIG)") == 1
    assert (
        '#if defined(GPU)  // guard \'gpu\'\n  m.def("b(Tensor x) -> ()");\n  m.def("c(Tensor x) -> ()");\n#endif'
        in (fragment)
    )
    cuda = text[text.index("TORCH_LIBRARY_IMPL(grouping, CUDA, m)") :]
    assert "#if defined(GPU)" not in cuda.split("}\n", 1)[0]  # the block itself sits under gpu
    assert "#if defined(BIG)  // guard 'big'\n  m.impl(\"d\"" in cuda
    wrappers = text[text.index("namespace {") : text.index("}  // namespace")]
    assert wrappers.count("#if defined(GPU)") == 2 and "\n\n#endif" not in wrappers
