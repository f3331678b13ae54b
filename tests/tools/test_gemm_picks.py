"""The FP8 tile heuristic (csrc/cuda/gemm.cu), on the host: tools/gemm_picks.cu prints the tile that
gemm_config() chooses for every benchmark problem (132 SMs), with the compiled shapes' launchers
stubbed out, so nvcc builds it without CUTLASS and runs it without a GPU.  Skipped where nvcc is
missing.

The rules checked here are the ones the heuristic states, each with the in-run measurement behind it
(docs/performance.md, forty-fifth session)."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMS = 132
LINE = re.compile(r"^(?P<family>.+?)\s+groups=(?P<g>\d+) (?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+) -> (?P<bm>\d+)x(?P<bn>\d+)")


@pytest.fixture(scope="module")
def picks_tool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc (the heuristic is CUDA-build code)")
    out = tmp_path_factory.mktemp("gemm_picks") / "gemm_picks"
    subprocess.run(
        [nvcc, "-std=c++17", "-Icsrc", "tools/gemm_picks.cu", "csrc/cuda/gemm.cu", "-o", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out


def _picks(tool: Path, **env: str) -> list[dict[str, object]]:
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("DG_")}
    run_env.update(env)
    text = subprocess.run([str(tool)], check=True, capture_output=True, text=True, env=run_env).stdout
    rows = []
    for line in text.splitlines():
        match = LINE.match(line)
        assert match is not None, line
        row: dict[str, object] = {"family": match["family"].strip()}
        row.update({key: int(match[key]) for key in ("g", "m", "n", "k", "bm", "bn")})
        rows.append(row)
    return rows


def _waves(m: int, n: int, bm: int, bn: int) -> int:
    return math.ceil(math.ceil(m / bm) * math.ceil(n / bn) / SMS)


def _wide_pays(m: int, n: int, bn: int) -> bool:
    """The rule for a per-row tile wider than 128 columns: its waves times its width within 90% of
    128x128's."""
    return _waves(m, n, 128, bn) * bn * 10 <= _waves(m, n, 128, 128) * 128 * 9


@pytest.mark.parametrize("route", ["1", "0"], ids=["one_k_group", "general_kernel"])
def test_wide_per_row_tiles_only_where_they_save_waves(picks_tool: Path, route: str) -> None:
    """Wgrad (B scaled per row, one group): a tile wider than 128 columns (128x136, 128x160) only
    where it saves enough waves, whichever kernel runs it (the general one, or the K-grouped one as
    one group); 128x128 elsewhere."""
    rows = [r for r in _picks(picks_tool, DG_GEMM_ROW_AS_K_GROUP=route) if str(r["family"]).startswith("fp8 wgrad")]
    assert len(rows) == 14  # seven problems, float32 D with C and bf16 D
    widths = set()
    for r in rows:
        m, n = int(r["m"]), int(r["n"])
        paying = {bn for bn in (136, 160) if _wide_pays(m, n, bn)}
        assert int(r["bm"]) == 128, r
        assert int(r["bn"]) in (paying or {128}), (r, paying)
        widths.add(int(r["bn"]))
    # 576 x 4096: one wave of 128x160 against two; 2112 x 4096: four of 128x136 against five.
    assert widths == {128, 136, 160}, widths


def test_several_k_groups_keep_the_wide_tile(picks_tool: Path) -> None:
    rows = [r for r in _picks(picks_tool) if str(r["family"]).startswith("fp8 k-grouped")]
    assert rows and all(int(r["g"]) > 1 and (r["bm"], r["bn"]) == (128, 160) for r in rows), rows


def test_narrow_output_boxes_are_charged(picks_tool: Path) -> None:
    """A tile whose bf16 output leaves in 16-column boxes (BLOCK_N not a multiple of 32) is not the
    pick at five K blocks (Dgrad 4096x7168x576: 128x176 ran 56.8 us, 128x160 44.3 on the H100), and
    still is at 56 K blocks, where its 3 waves beat 128x128's 5 (4096x2112x7168)."""
    rows = {(r["family"], r["m"], r["n"], r["k"]): r for r in _picks(picks_tool)}
    short_k = rows[("fp8 dgrad", 4096, 7168, 576)]
    assert int(short_k["bn"]) % 32 == 0, short_k
    long_k = rows[("fp8 dense", 4096, 2112, 7168)]
    assert (long_k["bm"], long_k["bn"]) == (128, 176), long_k


def test_large_contiguous_problems_take_the_lean_256x128_tile(picks_tool: Path) -> None:
    """M-grouped contiguous FP8 problems with bf16 D and no C run the lean contiguous 256x128
    kernel where SFA is M-major, K spans more than 16 K blocks and its tiles fill at least four waves
    (Note [lean contiguous 256x128], contiguous_pick in gemm.cu); a K-major SFA or K = 2048 keeps
    the model's pick, and so do the lean kernels off (DG_GEMM_LEAN=0).  The model never picks a
    256-row tile for them."""
    for lean in ("", "0"):
        env = {"DG_GEMM_LEAN": lean} if lean else {}
        rows = [r for r in _picks(picks_tool, **env) if str(r["family"]).startswith("fp8 contiguous")]
        assert len(rows) == 16, rows
        for r in rows:
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            assert math.ceil(m / 256) * math.ceil(n / 128) >= 4 * SMS, r  # the benchmark's problems are large
            lean_256 = lean == "" and str(r["family"]).endswith("sfa-m") and k > 16 * 128
            assert ((int(r["bm"]), int(r["bn"])) == (256, 128)) == lean_256, (lean, r)
    picked = [r for r in _picks(picks_tool) if (r["bm"], r["bn"]) == (256, 128) and "contiguous" in str(r["family"])]
    assert len(picked) == 6, picked  # the M-major problems of K 3072, 4096 and 7168
