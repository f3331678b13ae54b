"""benchmarks/sass_hotspots.py: the hottest SASS lines of an Nsight Compute source page, each with
its share of the samples and, where the page has them, its largest stall-reason columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "sass_hotspots.py"

PAGE = """\
"Kernel Name","sm90_fp8_gemm_m_grouped_contiguous_kernel"
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","stall_math","stall_wait","stall_barrier"
"0x10","QGMMA.64x96x32.F32.E4M3.E4M3 R72, gdesc[UR32], RZ, !UPT","30","28","21","7","0"
"0x20","FFMA R184, R82, R206, R184","10","6","0","0","0"
"0x30","WARPGROUP.DEPBAR.LE gsb0, 0x1","60","60","0","55","5"
"""


def hotspots(tmp_path: Path, page: str, *args: str) -> list[str]:
    path = tmp_path / "page.csv"
    path.write_text(page)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(path), *args], capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def test_lines_by_samples_with_their_largest_reasons(tmp_path: Path) -> None:
    lines = hotspots(tmp_path, PAGE, "--reasons", "2")
    assert lines[0] == "3 SASS lines, 100 samples (Warp Stall Sampling (All Samples))"
    assert (
        lines[1].startswith(" 60.0%") and "DEPBAR" in lines[1] and lines[1].endswith("[stall_wait 55, stall_barrier 5]")
    )
    assert lines[2].startswith(" 30.0%") and "QGMMA" in lines[2] and lines[2].endswith("[stall_math 21, stall_wait 7]")
    assert lines[3].startswith(" 10.0%") and lines[3].endswith("FFMA R184, R82, R206, R184")  # no reason above zero


def test_columns_and_no_reasons(tmp_path: Path) -> None:
    lines = hotspots(tmp_path, PAGE, "--columns", "--reasons", "0", "--top", "1")
    assert lines[0].startswith("columns: Address | Source | Warp Stall Sampling (All Samples)")
    assert lines[0].endswith("stall_barrier")
    assert len(lines) == 3 and "[" not in lines[2].split("DEPBAR")[1]


def test_page_without_reason_columns(tmp_path: Path) -> None:
    page = '"Address","Source","Warp Stall Sampling (All Samples)"\n"0x10","NOP","4"\n"0x20","BRA 0x10","12"\n'
    lines = hotspots(tmp_path, page)
    assert lines == [
        "2 SASS lines, 16 samples (Warp Stall Sampling (All Samples))",
        " 75.0%      0x20  BRA 0x10",
        " 25.0%      0x10  NOP",
    ]


LOCAL_PAGE = """\
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"
"0x10","STL [R1+0x38], R3","0","132"
"0x20","LDL R197, [R1+0x38]","7","49536"
"0x30","LOP3.LUT P0, RZ, R197, 0xff, RZ, 0xc0, !PT","140","49536"
"0x40","@!P0  BRA 0x80","20","49536"
"0x50","@P1  LDL R2, [R1+0x3c]","0","0"
"0x60","BAR.SYNC.DEFER_BLOCKING R37, 0x80","50","49536"
"""


def test_local_accesses_that_ran_with_the_samples_after_them(tmp_path: Path) -> None:
    lines = hotspots(tmp_path, LOCAL_PAGE, "--top", "0", "--local", "2")
    assert lines[0] == "6 SASS lines, 217 samples (Warp Stall Sampling (All Samples))"
    assert lines[1] == "local accesses that ran: 2 (executions, samples on the line, on the 2 lines after it)"
    # The store: the load's 7 and the test's 140 after it; the load: the test's 140 and the branch's 20.
    # The predicated load that never ran (0x50) is left out.
    assert lines[2].split() == ["0x10", "132", "0", "147", "STL", "[R1+0x38],", "R3"]
    assert lines[3].split() == ["0x20", "49536", "7", "160", "LDL", "R197,", "[R1+0x38]"]
    assert len(lines) == 4


def test_local_accesses_need_the_executions_column(tmp_path: Path) -> None:
    lines = hotspots(tmp_path, PAGE, "--top", "0", "--local")
    assert lines[-1] == "local accesses: the page has no 'Instructions Executed' column"
