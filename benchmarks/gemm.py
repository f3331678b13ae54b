"""FP8 GEMM on the GPU: deep_gemm.fp8_gemm_nt against torch's blockwise _scaled_mm and bf16 matmul.

The 18 DeepSeek-V3 shapes, m in {64, 128, 4096} x (n, k) in six weight shapes.
Method: random inputs; A quantised per 1x128 block, B per 128x128 block; L2
flushed (a 256 MB write) before every timed call; CUDA events around the call;
median of the repeats.  Correctness is checked in the same run (calc_diff
against the bf16 product, and against torch's blockwise result).  Host cost:
wall time of 200 back-to-back calls without synchronising, per call.

    python benchmarks/gemm.py [--repeats 60] [--markdown out.md]
"""

from __future__ import annotations

import argparse

import torch
from gpu_gemm import time_gpu, time_host  # one timing method for every GPU benchmark

import deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8

SHAPES = [
    (m, n, k)
    for m in (64, 128, 4096)
    for n, k in [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    rows = []
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        a, sfa = per_token_cast_to_fp8(x.float(), use_ue8m0=False)
        b, sfb = per_block_cast_to_fp8(w.float(), use_ue8m0=False)
        sfa_mn = deep_gemm.get_mn_major_tma_aligned_tensor(sfa)  # prepared once, as users do
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        d_torch = torch.empty_like(d)
        scale_a = sfa.t().contiguous().t()
        scale_b = sfb.t()

        def ours() -> None:
            deep_gemm.fp8_gemm_nt((a, sfa_mn), (b, sfb), d)

        def theirs() -> None:
            torch._scaled_mm(a, b.t(), scale_a, scale_b, out_dtype=torch.bfloat16, out=d_torch)

        def bf16() -> torch.Tensor:
            return x @ w.t()

        ours()
        theirs()
        ref = bf16()
        diff_ref, diff_torch = calc_diff(d, ref), calc_diff(d, d_torch)
        assert diff_ref < 1e-3, f"{m}x{n}x{k}: calc_diff vs bf16 {diff_ref}"
        t_ours, t_torch, t_bf16 = time_gpu([ours, theirs, bf16], args.repeats, flush)
        flops = 2 * m * n * k
        rows.append(
            {
                "m": m,
                "n": n,
                "k": k,
                "ours_us": t_ours,
                "torch_us": t_torch,
                "bf16_us": t_bf16,
                "ours_tf": flops / t_ours / 1e6,
                "torch_tf": flops / t_torch / 1e6,
                "bf16_tf": flops / t_bf16 / 1e6,
                "ratio": t_torch / t_ours,
                "host_ours": time_host(ours),
                "host_torch": time_host(theirs),
                "diff_ref": diff_ref,
                "diff_torch": diff_torch,
            }
        )
        r = rows[-1]
        print(
            f"{m:5d} {n:6d} {k:6d} | ours {r['ours_us']:8.1f} us {r['ours_tf']:7.0f} TF | torch blockwise "
            f"{r['torch_us']:8.1f} us {r['torch_tf']:7.0f} TF | bf16 {r['bf16_us']:8.1f} us | ratio {r['ratio']:.3f} "
            f"| host {r['host_ours']:.1f}/{r['host_torch']:.1f} us",
            flush=True,
        )
    header = (
        "| m | n | k | fp8_gemm_nt µs | TFLOP/s | torch blockwise µs | TFLOP/s | bf16 matmul µs | TFLOP/s "
        "| speed vs blockwise | host µs/call (ours / torch) | calc_diff vs bf16 |"
    )
    lines = [header, "|" + "---|" * 12]
    for r in rows:
        lines.append(
            f"| {r['m']} | {r['n']} | {r['k']} | {r['ours_us']:.1f} | {r['ours_tf']:.0f} | {r['torch_us']:.1f} | "
            f"{r['torch_tf']:.0f} | {r['bf16_us']:.1f} | {r['bf16_tf']:.0f} | {r['ratio']:.3f}x | "
            f"{r['host_ours']:.1f} / {r['host_torch']:.1f} | {r['diff_ref']:.1e} |"
        )
    worst = min(r["ratio"] for r in rows)
    lines.append("")
    lines.append(
        f"Worst ratio (torch time / ours): {worst:.3f}; shapes at >= 0.97: "
        f"{sum(r['ratio'] >= 0.97 for r in rows)} of {len(rows)}. GPU: {torch.cuda.get_device_name()}, "
        f"torch {torch.__version__}."
    )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
