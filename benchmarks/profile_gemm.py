"""A driver for the profiler: a few calls of one op, each after an L2 flush, as the benchmarks
time it, so that `ncu --launch-skip 2 --launch-count 1` sees a cold-L2 call after warm-up.

    python benchmarks/profile_gemm.py dense 4096x2112x7168 [--config 128x192]
    python benchmarks/profile_gemm.py dense 4096x2112x7168 --module other_pkg  # a second DeepGEMM-compatible package
    python benchmarks/profile_gemm.py wgrad 2112x4096x7168            # per-row B scales, float32 D += A B^T
    python benchmarks/profile_gemm.py contiguous 8x33024x6144x7168    # groups x rows x n x k, per-row ids
    python benchmarks/profile_gemm.py contiguous 8x33024x6144x7168 --module other_pkg
    python benchmarks/profile_gemm.py psum 4x33024x6144x7168          # the same sizes as psum ends
    python benchmarks/profile_gemm.py contiguous 4x33024x6144x7168 --sfa-mn-major   # SFA M-major
    python benchmarks/profile_gemm.py bf16 4096x4096x7168
    python benchmarks/profile_gemm.py bf16masked 6x1024x4096x2048  # groups x expected m x n x k
    python benchmarks/profile_gemm.py mqa 2048x65536x32x128 [--config n256s128]  # S x Skv x H x D
    python benchmarks/profile_gemm.py hc 8192x24x7168x0 [--config m64c2w:p0]      # m x n x k x splits

`benchmarks/h200_profile.sh` runs it under ncu and prints each kernel's hottest SASS lines.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random

import torch
from gpu_gemm import Case
from gpu_grouped_gemm import BF16MaskedOperands, ContiguousOperands
from gpu_hc_prenorm import HcOperands
from gpu_mqa_logits import inputs as mqa_inputs

import deep_gemm

CONFIG_ENV = {"mqa": "DG_MQA_LOGITS_CONFIG", "hc": "DG_HC_PRENORM_CONFIG"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["dense", "wgrad", "contiguous", "psum", "bf16", "bf16masked", "mqa", "hc"])
    parser.add_argument(
        "shape", help="MxNxK (dense, wgrad, bf16), GxROWSxNxK (contiguous, psum), SxSKVxHxD (mqa), MxNxKxSPLITS (hc)"
    )
    parser.add_argument("--config", default=None, help="a tuning to force (the kind's DG_*_CONFIG variable)")
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument(
        "--module",
        default=None,
        help="dense, wgrad, contiguous and psum only: call this DeepGEMM-compatible package instead",
    )
    parser.add_argument(
        "--sfa-mn-major", action="store_true", help="contiguous and psum: SFA M-major, as the engines pass it"
    )
    args = parser.parse_args()
    if args.module and args.kind not in ("dense", "wgrad", "contiguous", "psum"):
        parser.error("--module takes the dense, wgrad, contiguous and psum kinds only")
    mod = importlib.import_module(args.module) if args.module else deep_gemm
    if args.config:
        os.environ[CONFIG_ENV.get(args.kind, "DG_SM90_GEMM_CONFIG")] = args.config
    dims = [int(v) for v in args.shape.split("x")]
    torch.manual_seed(0)
    if args.kind == "dense":
        run = Case("fwd", *dims).call(mod)
    elif args.kind == "wgrad":
        run = Case("wgrad_f32_acc", *dims).call(mod)  # D accumulates call after call, as C = D
    elif args.kind == "bf16":
        m, n, k = dims
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def run() -> None:
            deep_gemm.bf16_gemm_nt(a, b, d)
    elif args.kind == "bf16masked":
        random.seed(0)
        run = BF16MaskedOperands(*dims)
    elif args.kind == "mqa":
        q, kv, sf, w, ks, ke = mqa_inputs(*dims)

        def run() -> None:
            deep_gemm.fp8_fp4_mqa_logits((q, None), (kv, sf), w, ks, ke, clean_logits=True)
    elif args.kind == "hc":
        run = HcOperands(*dims)
    else:
        # The same groups for both layouts.
        operands = ContiguousOperands(*dims, use_psum=args.kind == "psum", sfa_mn_major=args.sfa_mn_major)

        def run() -> None:
            operands(mod)

    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    for _ in range(args.calls):
        flush.zero_()
        run()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
