"""The generated stub is a checked contract: mypy accepts the calls users make
(examples/typed_usage.py) and flags wrong ones, and the runtime rejects what mypy flags.

mypy runs once, in a subprocess, over the example and a small file of wrong calls; it
shares the repository's .mypy_cache with `make typecheck`, which warms it (cold, analysing
torch takes a while: hence the slow mark).  stubtest itself runs as `make stubtest`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import deep_gemm
from codegen.outputs import guard_var
from deep_gemm.utils import layout, math
from tests.support.manifest import MANIFEST

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "typed_usage.py"

# Each wrong call is tagged with `# expect: <mypy error code>` on the line mypy must flag.
WRONG_CALLS = textwrap.dedent(
    """\
    import torch

    import deep_gemm
    from deep_gemm import _C

    x = torch.empty(4, 128, dtype=torch.float8_e4m3fn)
    sf = torch.ones(4, 1)
    pair = (x, sf)
    d = torch.empty(4, 4, dtype=torch.bfloat16)

    deep_gemm.fp8_gemm_nt(x, pair, d)  # expect: arg-type
    _C.fp8_fp4_gemm_nt(pair, x, d)  # expect: arg-type
    deep_gemm.fp8_fp4_paged_mqa_logits(  # expect: call-arg
        (x, None),
        fused_kv_cache=x,
        weights=sf,
        context_lens=sf,
        block_table=sf,
        schedule_meta=sf,
        max_context_len=8,
    )
    deep_gemm.fp8_gemm_nt(pair, pair, d, recipe=(1, 128))  # expect: arg-type
    deep_gemm.set_num_sms(new_num_sms=4)  # expect: call-arg
    n: str = deep_gemm.get_num_sms()  # expect: assignment
    logits: int = deep_gemm.fp8_mqa_logits(x, pair, sf, sf, sf)  # expect: assignment
    deep_gemm.fp8_gemm_ntt(pair, pair, d)  # expect: attr-defined
    """
)


def _expected_errors(source: str) -> set[tuple[int, str]]:
    found = set()
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = re.search(r"# expect: ([a-z-]+)$", line)
        if m:
            found.add((lineno, m.group(1)))
    return found


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str, str]]]:
    """mypy --strict over the example and the wrong calls: {file name: [(line, code, message)]}."""
    # Without mypy, `python -m mypy` exits 1 as a run with errors does, and the clean example would
    # pass unchecked; the tests that read this fixture skip instead.
    pytest.importorskip("mypy", reason="mypy (pip package 'mypy') is not installed")
    wrong = tmp_path_factory.mktemp("typing") / "wrong_calls.py"
    wrong.write_text(WRONG_CALLS)
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".mypy_cache"), "--no-pretty"]
    files = [str(EXAMPLE), str(wrong)]
    proc = subprocess.run([*cmd, "--show-error-codes", *files], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2 would be a crash or a usage error
    # mypy checked both files: its closing line says so, with or without errors.
    checked = f"{len(files)} source files"
    closing = rf"^(Found \d+ errors? in \d+ files? \(checked {checked}\)|Success: no issues found in {checked})$"
    summary = re.search(closing, proc.stdout, re.M)
    assert summary is not None, proc.stdout + proc.stderr
    out: dict[str, list[tuple[int, str, str]]] = {EXAMPLE.name: [], wrong.name: []}
    for line in proc.stdout.splitlines():
        m = re.match(r"^(.*?):(\d+): error: (.*)  \[([a-z-]+)\]$", line)
        if m:
            out.setdefault(Path(m.group(1)).name, []).append((int(m.group(2)), m.group(4), m.group(3)))
    return out


@pytest.mark.slow
def test_typed_usage_passes_mypy_strict(mypy_output: dict[str, list[tuple[int, str, str]]]) -> None:
    assert mypy_output[EXAMPLE.name] == []


@pytest.mark.slow
def test_mypy_flags_each_wrong_call(mypy_output: dict[str, list[tuple[int, str, str]]]) -> None:
    got = {(line, code) for line, code, _ in mypy_output["wrong_calls.py"]}
    assert got == _expected_errors(WRONG_CALLS), mypy_output["wrong_calls.py"]
    messages = {line: text for line, _, text in mypy_output["wrong_calls.py"]}
    lines = WRONG_CALLS.splitlines()
    kwarg_line = next(i for i, ln in enumerate(lines, 1) if "fp8_fp4_paged_mqa_logits(" in ln)
    assert messages[kwarg_line] == 'Unexpected keyword argument "fused_kv_cache" for "fp8_fp4_paged_mqa_logits"'
    bare_line = next(i for i, ln in enumerate(lines, 1) if ln.startswith("deep_gemm.fp8_gemm_nt(x, pair"))
    assert messages[bare_line] == 'Argument 1 has incompatible type "Tensor"; expected "tuple[Tensor, Tensor]"'


def test_runtime_rejects_what_mypy_flags() -> None:
    x = torch.randn(4, 128).to(torch.float8_e4m3fn)
    sf = torch.ones(4, 1)
    d = torch.empty(4, 4, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"^fp8_fp4_gemm_nt: argument 'a' must be a \(tensor, scale\) pair"):
        deep_gemm.fp8_gemm_nt(x, (x, sf), d)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'fused_kv_cache'"):
        deep_gemm.fp8_fp4_paged_mqa_logits((x, None), fused_kv_cache=x)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        deep_gemm.set_num_sms(new_num_sms=4)  # type: ignore[call-arg]


def test_typed_usage_runs() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "decode logits: (2, 50)" in proc.stdout


def test_utils_all_lists_both_submodules() -> None:
    # deep_gemm.utils spells __all__ out literally (type checkers read no other form).
    assert sorted(deep_gemm.utils.__all__) == sorted([*layout.__all__, *math.__all__, "init_dist", "uneven_all_gather"])
    assert len(set(deep_gemm.utils.__all__)) == len(deep_gemm.utils.__all__)


def test_stub_states_guards_like_the_shim() -> None:
    stub = (ROOT / "deep_gemm" / "_C.pyi").read_text()
    flags = sorted(n for n in vars(deep_gemm._C) if n.startswith("_GUARD_"))
    # One flag per guard that some op uses (none when every op is in every build).
    assert flags == sorted({guard_var(op.guard) for op in MANIFEST.ops if op.guard})
    if not flags:
        assert "_GUARD_" not in stub
    for flag in flags:
        assert f"\n{flag}: bool\n" in stub
        assert f"\nif {flag}:\n    def " in stub
        assert f"\nif {flag}:\n    __all__ += [" in stub


def test_stubtest_allowlist_entries_carry_reasons() -> None:
    for line in (ROOT / "stubtest_allowlist.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry, sep, reason = line.partition("  # ")
            assert entry.strip() and sep and len(reason.split()) >= 3, f"allowlist entry without a reason: {line!r}"
