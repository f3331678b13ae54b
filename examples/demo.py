"""A tour of deep_gemm: the toolchain's outputs and a few ops, called the way users call them.

Run with `make demo` (it regenerates from ops.yaml and builds first).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

import deep_gemm
from deep_gemm import _C
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

ROOT = Path(__file__).resolve().parent.parent


def section(title: str) -> None:
    print(f"\n== {title}")


section("toolchain")
check = subprocess.run([sys.executable, "-m", "codegen", "check"], cwd=ROOT, capture_output=True, text=True)
print(check.stdout.strip() or check.stderr.strip())
print("extension:", next(Path(deep_gemm.__file__).parent.glob("_C_extension*.so")).name)
ops = sorted(n for n in dir(torch.ops.deep_gemm) if not n.startswith("_") and n not in ("name", "_dir"))
print(f"{len(ops)} ops registered as torch.ops.deep_gemm.*; families: {', '.join(_C.FAMILIES)}")
print("CUDA initialised by import:", torch.cuda.is_initialized())

section("runtime")
print("get_num_sms() =", deep_gemm.get_num_sms(), "(CPU threads without a GPU)")
deep_gemm.set_block_size_multiple_of(64)
print("set_block_size_multiple_of(64) ->", deep_gemm._C.get_block_size_multiple_of())

section("fp8_gemm_nt, the legacy way: (tensor, scale) pairs")
m, n, k = 64, 2112, 7168 // 4
x, w = torch.randn(m, k), torch.randn(n, k)
a = per_token_cast_to_fp8(x, use_ue8m0=False)  # 1 x 128 scales
b = per_block_cast_to_fp8(w, use_ue8m0=False)  # 128 x 128 scales
d = torch.empty(m, n, dtype=torch.bfloat16)
deep_gemm.fp8_gemm_nt(a, b, d)
print(f"D[{m}, {n}] bf16, calc_diff vs the unquantised product: {calc_diff(d, x @ w.T):.2e}")

section("the same op through torch.ops (flat schema arguments) and torch.compile")
d2 = torch.empty_like(d)
torch.ops.deep_gemm.fp8_fp4_gemm_nt(*a, *b, d2)
print("torch.ops result identical:", torch.equal(d, d2))


@torch.compile(fullgraph=True, backend="aot_eager")
def compiled(a_pair, b_pair, out):
    _C.fp8_gemm_nt(a_pair, b_pair, out)  # tuple unpacking traced inside the graph
    return out * 2


d3 = torch.empty_like(d)
print("torch.compile(fullgraph=True) result identical:", torch.equal(compiled(a, b, d3), d * 2))

section("scale-factor layouts")
sf = a[1]
mn_major = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
print(f"get_mn_major_tma_aligned_tensor: shape {tuple(mn_major.shape)} strides {mn_major.stride()}")
packed = deep_gemm.transform_sf_into_required_layout(torch.ones(m, k // 128), m, k, (1, 128))
print(f"transform_sf_into_required_layout -> UE8M0 {packed.dtype}, shape {tuple(packed.shape)}")

section("bad input gets a clear error")
try:
    deep_gemm.fp8_gemm_nt(a, b, torch.empty(m, n, dtype=torch.half))
except ValueError as exc:
    print("ValueError:", exc)
