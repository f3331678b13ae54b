"""The sm90a kernels' resources as ptxas reports them, without a GPU.

Usage: python tools/ptxas_report.py [--jobs N] [--max-stack BYTES] [UNIT ...]      (`make ptxas`)

Compiles the CUDA units of csrc/cuda/ (every one by default, or the named ones, e.g.
``gemm_fp8_bm256``) for sm_90a with ``-Xptxas -v``, as the CUDA build does, and prints one line
per kernel: registers, stack frame, spill stores and loads, and ptxas's performance warnings
(C7510-C7514: wgmma instructions serialised).  It exits 1 when a kernel's stack frame reaches
--max-stack bytes (default 256: a register array, such as the accumulators, placed in local
memory; a few spilled scalars stay well under it) or when ptxas serialised a kernel's wgmmas.
Needs nvcc and the CuTe/CUTLASS headers ($CUTLASS_INCLUDE_DIR or the nvidia-cutlass wheel);
no GPU.  On the 2-core development machine all the units take about eight minutes.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUDA_DIR = ROOT / "csrc" / "cuda"

_ENTRY = re.compile(r"Compiling entry function '(\S+)' for 'sm_90a'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")
_WARNING = re.compile(r"\((C75\d\d)\) [^']*'(\S+)'")
# ptxas's codes for wgmma instructions serialised (C7510: across a function call, C7511: too few
# registers for the pipeline, ...): the tensor-core pipeline no longer overlaps.
SERIALISED = ("C7510", "C7511", "C7512", "C7513", "C7514")


@dataclass
class Kernel:
    """One entry function's report."""

    unit: str
    name: str
    registers: int = 0
    stack: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    warnings: list[str] = field(default_factory=list)


def parse(unit: str, log: str) -> list[Kernel]:
    """The kernels of one unit's `-Xptxas -v` output, in the order ptxas compiled them, each with
    the performance warnings that name it."""
    kernels: list[Kernel] = []
    warnings: dict[str, list[str]] = {}
    for line in log.splitlines():
        if entry := _ENTRY.search(line):
            kernels.append(Kernel(unit, entry.group(1)))
        elif warning := _WARNING.search(line):
            warnings.setdefault(warning.group(2), []).append(warning.group(1))
        elif (frame := _FRAME.search(line)) and kernels:
            kernels[-1].stack, kernels[-1].spill_stores, kernels[-1].spill_loads = map(int, frame.groups())
        elif (regs := _REGS.search(line)) and kernels:
            kernels[-1].registers = int(regs.group(1))
    for kernel in kernels:
        kernel.warnings = warnings.get(kernel.name, [])
    return kernels


def short_name(mangled: str) -> str:
    """`sm90_fp8_gemm_kernel<256, 128, false>` style from the mangled entry name."""
    match = re.search(r"(sm90_\w+?)I(.*?)EEEv", mangled) or re.search(r"(sm90_\w+?)I(.*?)EEv", mangled)
    if match is None:
        return mangled
    args = re.findall(r"Li(\d+)E|Lb([01])E", match.group(2) + "E")
    shown = [value or ("true" if flag == "1" else "false") for value, flag in args]
    return f"{match.group(1)}<{', '.join(shown)}>"


def compile_unit(unit: str, cutlass: str, out_dir: str) -> tuple[str, int, str]:
    command = [
        "nvcc",
        "-O3",
        "-std=c++17",
        "-gencode=arch=compute_90a,code=sm_90a",
        "--expt-relaxed-constexpr",
        "-DDG_WITH_CUDA",
        "-DDG_WITH_SM90_KERNELS",
        f"-I{ROOT / 'csrc'}",
        f"-I{cutlass}",
        "-Xptxas",
        "-v",
        "-c",
        str(CUDA_DIR / f"{unit}.cu"),
        "-o",
        os.path.join(out_dir, f"{unit}.o"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return unit, done.returncode, done.stdout + done.stderr


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("units", nargs="*", help="csrc/cuda/<unit>.cu (default: every unit)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--max-stack", type=int, default=256, help="stack frame bytes that fail the report")
    args = parser.parse_args(argv)
    units = args.units or sorted(p.stem for p in CUDA_DIR.glob("*.cu"))
    missing = [u for u in units if not (CUDA_DIR / f"{u}.cu").is_file()]
    if missing:
        print(f"ptxas_report: no such unit in csrc/cuda/: {', '.join(missing)}", file=sys.stderr)
        return 2
    if shutil.which("nvcc") is None:
        print("ptxas_report: nvcc is not on PATH", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    cutlass: str | None = importlib.import_module("setup").cutlass_include()  # the build's own lookup
    if cutlass is None:
        print(
            "ptxas_report: no CuTe/CUTLASS headers ($CUTLASS_INCLUDE_DIR or the nvidia-cutlass wheel)", file=sys.stderr
        )
        return 2
    failed = False
    with tempfile.TemporaryDirectory() as out_dir, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for unit, code, log in pool.map(lambda u: compile_unit(u, cutlass, out_dir), units):
            if code != 0:
                print(f"{unit}: nvcc failed ({code})\n{log}", file=sys.stderr)
                failed = True
                continue
            for k in parse(unit, log):
                bad = k.stack >= args.max_stack or any(w in SERIALISED for w in k.warnings)
                failed |= bad
                print(
                    f"{'FAIL' if bad else 'ok  '} {unit:20s} {short_name(k.name):58s} regs {k.registers:3d}  "
                    f"stack {k.stack:4d}  spill {k.spill_stores:4d}/{k.spill_loads:<4d} {' '.join(k.warnings)}",
                    flush=True,
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
