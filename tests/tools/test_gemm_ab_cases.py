"""benchmarks/gemm_ab_cases.py --compare: per case, a's anchor-relative time over b's (medians over
the rounds) and whether both builds' bits agree in every round."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gemm_ab_cases.py"


def write_round(tmp_path: Path, side: str, round_: int, cases: dict[str, tuple[float, str]]) -> None:
    lines = ["some log line the parser skips"]
    lines += [f"case {name} us 100.0 rel {rel:.5f} bits {bits}" for name, (rel, bits) in cases.items()]
    (tmp_path / f"gemm_ab_cases_{side}_{round_}.log").write_text("\n".join(lines) + "\n")


def compare(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--compare", str(tmp_path)], capture_output=True, text=True, check=False
    )


def test_ratios_are_medians_over_rounds_and_bits_are_checked(tmp_path: Path) -> None:
    # a: 1.0, 1.2, 1.1 (median 1.1); b: 1.0, 0.9, 5.0 (median 1.0) -> 1.100 for ids
    for r, (ra, rb) in enumerate([(1.0, 1.0), (1.2, 0.9), (1.1, 5.0)], start=1):
        write_round(tmp_path, "a", r, {"ids:1x2x3x4": (ra, "aaaa"), "dense:1x2x3": (0.5, "cccc")})
        bits = "bbbb" if r == 2 else "cccc"  # b's second round differs on the dense case
        write_round(tmp_path, "b", r, {"ids:1x2x3x4": (rb, "aaaa"), "dense:1x2x3": (0.4, bits)})
    out = compare(tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    ids = next(line for line in lines if line.startswith("ids:1x2x3x4"))
    dense = next(line for line in lines if line.startswith("dense:1x2x3"))
    assert "a/b 1.100" in ids and "bits same" in ids and "(3/3 rounds)" in ids
    assert "a/b 1.250" in dense and "bits DIFFER" in dense
    # geomean of 1.1 and 1.25
    assert lines[-1].startswith("geomean a/b 1.173 over 2 cases")


@pytest.mark.parametrize("sides", [("a",), ("b",), ()])
def test_a_missing_build_is_an_error(tmp_path: Path, sides: tuple[str, ...]) -> None:
    for side in sides:
        write_round(tmp_path, side, 1, {"ids:1x2x3x4": (1.0, "aaaa")})
    out = compare(tmp_path)
    assert out.returncode != 0
    assert "no rounds of both builds" in out.stderr
