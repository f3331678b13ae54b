"""Dense BF16 GEMMs on the native sm90a kernel (the `DG_BF16_GEMM_NATIVE=1` path; cuBLAS is the
default).  The switch is read once per process, so the checks run in a fresh one: every BF16 tile
with K-major operands forced in turn, split-K shapes included, on problems with ragged M and N
edges (multicast pairs whose second tile lies past the matrix), a K tail, more tiles than CTAs, and one K block per CTA of a split; bf16 D against float64
A B^T, float32 D accumulating C = D, bf16 D accumulating a bf16 C (D itself, or separate: bitwise
the same), repeated calls bitwise, and a pair's lean kernel bitwise against its plain one; then the
NN and TN forms on every MN-major tile.  The kernel's config printout
(DG_PRINT_CONFIGS=1) shows that each forced shape ran.  Skipped without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.kernels import compiled_gemm_shapes

pytestmark = pytest.mark.gpu

_SCRIPT = r"""
import os
import re
import sys

import torch

import deep_gemm
from deep_gemm.testing import calc_diff

torch.manual_seed(3)
for shape in sys.argv[1].split(","):
    os.environ["DG_SM90_GEMM_CONFIG"] = shape
    bm, bn = (int(v) for v in re.match(r"(\d+)x(\d+)", shape).groups())
    # The last problem gives each CTA of a split one K block: 64 values, or 128 for the 64x64
    # tile, whose stages hold two 64-value atoms (Note [merged K atoms]).
    k_block = 128 if (bm, bn) == (64, 64) else 64
    for m, n, k in [(3 * bm - 5, 5 * bn + 24, 1000), (20 * bm - 3, 9 * bn + 8, 7168 + 40), (bm + 1, bn, 2 * k_block)]:
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        ref = a.double() @ b.double().t()
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.bf16_gemm_nt(a, b, d)
        assert calc_diff(d, ref) < 1e-5, (shape, m, n, k, "bf16 d")
        first = d.clone()
        for _ in range(5):
            d.fill_(float("nan"))
            deep_gemm.bf16_gemm_nt(a, b, d)
            assert torch.equal(d.view(torch.int16), first.view(torch.int16)), (shape, m, n, k, "bitwise")
        if shape.endswith(("ma", "mb")):
            # A pair's lean twin (bf16 D, no C: on by default) against the plain multicast kernel.
            os.environ["DG_GEMM_LEAN"] = "0"
            d.fill_(float("nan"))
            deep_gemm.bf16_gemm_nt(a, b, d)
            del os.environ["DG_GEMM_LEAN"]
            assert torch.equal(d.view(torch.int16), first.view(torch.int16)), (shape, m, n, k, "lean")
        c = torch.randn(m, n, device="cuda")
        acc = c.clone()
        deep_gemm.bf16_gemm_nt(a, b, acc, c=acc)
        assert calc_diff(acc, ref + c.double()) < 1e-5, (shape, m, n, k, "c = d")
        # bf16 D accumulating a bf16 C: C is D, or a separate C (the same sums, bitwise).
        c16 = torch.randn(m, n, device="cuda").to(torch.bfloat16)
        acc16 = c16.clone()
        deep_gemm.bf16_gemm_nt(a, b, acc16, c=acc16)
        assert calc_diff(acc16, ref + c16.double()) < 1e-5, (shape, m, n, k, "bf16 c = d")
        d.fill_(float("nan"))
        deep_gemm.bf16_gemm_nt(a, b, d, c=c16)
        assert torch.equal(d.view(torch.int16), acc16.view(torch.int16)), (shape, m, n, k, "bf16 c")
    print("checked", shape, flush=True)
"""

# The NN form (B MN-major) and the TN form (both MN-major) on the native MN-major tiles; M and N
# multiples of 8 (16-byte rows of the MN-major operands).
_MN_SCRIPT = r"""
import os
import sys

import torch

import deep_gemm
from deep_gemm.testing import calc_diff

torch.manual_seed(4)
for shape in sys.argv[1].split(","):
    os.environ["DG_SM90_GEMM_CONFIG"] = shape
    bm, bn = (int(v) for v in shape.split("x"))
    for m, n, k in [(3 * bm - 8, 5 * bn + 24, 1000), (bm + 8, bn, 168)]:
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        c = torch.randn(m, n, device="cuda")
        ref = a.double() @ b.double().t()
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        deep_gemm.bf16_gemm_nn(a, b.t().contiguous(), d)
        assert calc_diff(d, ref) < 1e-5, (shape, m, n, k, "nn")
        d32 = c.clone()
        deep_gemm.bf16_gemm_tn(a.t().contiguous(), b.t().contiguous(), d32, c=d32)
        assert calc_diff(d32, ref + c.double()) < 1e-5, (shape, m, n, k, "tn, c = d")
    print("checked", shape, flush=True)
"""


def test_every_native_bf16_shape_forced() -> None:
    shapes = [s for s in compiled_gemm_shapes() if s.bf16 and s.majors == 0]
    assert any(s.split > 1 for s in shapes)  # the split-K shapes are among them
    assert any(s.cast for s in shapes)  # and the multicast pairs
    env = dict(os.environ, DG_BF16_GEMM_NATIVE="1", DG_PRINT_CONFIGS="1")
    env.pop("DG_SM90_GEMM_CONFIG", None)
    env.pop("DG_GEMM_LEAN", None)
    run = subprocess.run(
        [sys.executable, "-c", _SCRIPT, ",".join(s.config for s in shapes)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    for shape in shapes:
        assert f"checked {shape.config}\n" in run.stdout
        # Every problem of the shape ran on it (the printout names the tile and the split).
        assert run.stderr.count(shape.printed) >= 3, shape.config


def test_mn_major_forms_on_the_native_kernel() -> None:
    env = dict(os.environ, DG_BF16_GEMM_NATIVE="1", DG_PRINT_CONFIGS="1")
    env.pop("DG_SM90_GEMM_CONFIG", None)
    shapes = sorted({s.config for s in compiled_gemm_shapes() if s.bf16 and s.majors == 3})
    assert shapes == sorted({s.config for s in compiled_gemm_shapes() if s.bf16 and s.majors == 2})
    run = subprocess.run(
        [sys.executable, "-c", _MN_SCRIPT, ",".join(shapes)], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    for shape in shapes:
        assert f"checked {shape}\n" in run.stdout
        assert run.stderr.count(f"-> {shape} split=1 ") >= 4, shape
