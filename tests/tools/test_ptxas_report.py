"""tools/ptxas_report.py reads ptxas's resource report: per kernel its registers, stack frame and
spills, the serialisation warnings that name it, and whether the report fails."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ptxas_report", ROOT / "tools" / "ptxas_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ptxas_report"] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


GENERAL = (
    "_ZN9deep_gemm4cuda11gemm_detail20sm90_fp8_gemm_kernelILi256ELi128ELb0EEEv14CUtensorMap_stS3_S3_NS1_10KernelArgsE"
)
DENSE = (
    "_ZN9deep_gemm4cuda11gemm_detail26sm90_fp8_gemm_dense_kernelILi256ELi128EEEv14CUtensorMap_stS3_S3_NS1_10KernelArgsE"
)
BF16 = (
    "_ZN9deep_gemm4cuda11gemm_detail21sm90_bf16_gemm_kernelILi128ELi256ELi0EEEv14CUtensorMap_stS3_S3_NS1_10KernelArgsE"
)
LOG = f"""\
ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function '{GENERAL}' for 'sm_90a'
ptxas info    : Function properties for {GENERAL}
    512 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers, 512 bytes cumulative stack size
ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to \
insufficient register resources for the function '{BF16}'
ptxas info    : Compiling entry function '{DENSE}' for 'sm_90a'
ptxas info    : Function properties for {DENSE}
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
ptxas info    : Compiling entry function '{BF16}' for 'sm_90a'
ptxas info    : Function properties for {BF16}
    456 bytes stack frame, 452 bytes spill stores, 448 bytes spill loads
ptxas info    : Used 160 registers, used 16 barriers, 456 bytes cumulative stack size
"""


def test_parse_reads_each_kernel_and_the_warnings_that_name_it() -> None:
    tool = _tool()
    general, dense, bf16 = tool.parse("gemm_fp8_bm256", LOG)
    assert (general.name, general.registers, general.stack, general.spill_stores) == (GENERAL, 168, 512, 0)
    assert general.warnings == []
    assert (dense.stack, dense.spill_loads, dense.warnings) == (0, 0, [])
    # The warning came before its kernel's entry line and names it: it is that kernel's.
    assert (bf16.registers, bf16.stack, bf16.spill_stores, bf16.spill_loads) == (160, 456, 452, 448)
    assert bf16.warnings == ["C7512"]


def test_short_names() -> None:
    tool = _tool()
    assert tool.short_name(GENERAL) == "sm90_fp8_gemm_kernel<256, 128, false>"
    assert tool.short_name(DENSE) == "sm90_fp8_gemm_dense_kernel<256, 128>"
    assert tool.short_name("plain_kernel") == "plain_kernel"


def test_unknown_unit_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    tool = _tool()
    assert tool.main(["gemm_fp8_bm256", "no_such_unit"]) == 2  # before any compiler runs
    assert "no_such_unit" in capsys.readouterr().err
