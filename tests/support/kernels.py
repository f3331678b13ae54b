"""The compiled shapes of the native GEMM kernel, read from the one list that defines them
(the X(...) lists of csrc/cuda/gemm_launch.cuh), for the tests and benchmarks that force each;
and the problem layouts' codes as DG_PRINT_CONFIGS prints them (GemmLayout, csrc/cuda/gemm.h)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

LAUNCH_HEADER = Path(__file__).resolve().parents[2] / "csrc" / "cuda" / "gemm_launch.cuh"
GEMM_HEADER = LAUNCH_HEADER.with_name("gemm.h")


class GemmShape(NamedTuple):
    block_m: int
    block_n: int
    sfb_per_row: bool
    bf16: bool
    majors: int = 0  # BF16 operands stored MN-major: bit 0 A, bit 1 B
    split: int = 1  # CTAs (a cluster) per tile, each summing a part of K: dense FP8 and BF16 only
    cast: int = 0  # BF16 (dense or masked) in multicast pairs of CTAs: 1 sharing A, 2 sharing B

    @property
    def config(self) -> str:
        """The DG_SM90_GEMM_CONFIG spelling that forces this shape."""
        base = f"{self.block_m}x{self.block_n}"
        if self.cast:
            return base + ("ma" if self.cast == 1 else "mb")
        return base if self.split == 1 else f"{base}s{self.split}"

    @property
    def printed(self) -> str:
        """How DG_PRINT_CONFIGS=1 names a call that ran this shape."""
        suffix = {0: "", 1: "ma", 2: "mb"}[self.cast]
        return f"-> {self.block_m}x{self.block_n}{suffix} split={self.split} "


def compiled_gemm_shapes() -> list[GemmShape]:
    text = LAUNCH_HEADER.read_text()
    found = re.findall(r"X\((\d+), (\d+), (true|false), (true|false), (\d)\)", text)
    shapes = {GemmShape(int(m), int(n), row == "true", bf16 == "true", int(maj)) for m, n, row, bf16, maj in found}
    # The split-K list: Y(BLOCK_M, BLOCK_N, CTAs per tile), FP8 with block SFB.
    split = re.findall(r"Y\((\d+), (\d+), (\d+)\)", text)
    shapes |= {GemmShape(int(m), int(n), False, False, 0, int(s)) for m, n, s in split}
    # The BF16 split-K list: Z(BLOCK_M, BLOCK_N, CTAs per tile), dense BF16 with K-major operands.
    bf16_split = re.findall(r"Z\((\d+), (\d+), (\d+)\)", text)
    shapes |= {GemmShape(int(m), int(n), False, True, 0, int(s)) for m, n, s in bf16_split}
    # The multicast pairs: W(BLOCK_M, BLOCK_N, 1 sharing A or 2 sharing B), dense or masked BF16.
    cast = re.findall(r"W\((\d+), (\d+), (\d+)\)", text)
    shapes |= {GemmShape(int(m), int(n), False, True, 0, 1, int(c)) for m, n, c in cast}
    return sorted(shapes)


@functools.cache
def layout_codes() -> dict[str, int]:
    """GemmLayout's members and their codes, read from csrc/cuda/gemm.h."""
    enum = re.search(r"enum class GemmLayout : int \{([^}]*)\}", GEMM_HEADER.read_text())
    assert enum is not None, f"GemmLayout not found in {GEMM_HEADER}"
    return {name: int(code) for name, code in re.findall(r"(k\w+) = (\d+)", enum.group(1))}


def printed_layout(name: str) -> str:
    """How DG_PRINT_CONFIGS=1 names a problem of GemmLayout `name` (e.g. "kKGrouped")."""
    return f"layout={layout_codes()[name]} "
