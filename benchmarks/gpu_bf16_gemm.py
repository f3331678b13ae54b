"""Dense BF16 GEMM on one GPU: deep_gemm.bf16_gemm_nt against torch.matmul (cuBLAS, the in-run
anchor) and upstream's figures (gpu-targets.md).

`bf16_gemm_*` runs cuBLAS by default; `DG_BF16_GEMM_NATIVE=1` (read once per process) sends it to
the native sm90a kernel, so compare the two in two runs, each against its own torch column.
Method as in gpu-targets.md: fresh random inputs, L2 flushed before every timed call, CUDA events,
median, calls interleaved; every shape is first checked against a float64 product.

    python benchmarks/gpu_bf16_gemm.py [--repeats 30] [--markdown out.md]
    DG_BF16_GEMM_NATIVE=1 python benchmarks/gpu_bf16_gemm.py [--tiles 64x64s2,128x64s2,128x128]

`--tiles` (native path only) also times those forced tiles (DG_SM90_GEMM_CONFIG), each checked
against the float64 product first, interleaved call by call with the heuristic's pick.
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch
from gpu_gemm import emit, environment, time_gpu, time_host
from variants import under, variants_from_args

import deep_gemm
from deep_gemm.testing import calc_diff

# Upstream DeepGEMM 54e2261 on one H200, cold L2, from gpu-targets.md (µs).
UPSTREAM_US = {
    (128, 2112, 7168): 19.2, (128, 4096, 7168): 26.5, (128, 7168, 2048): 16.0,
    (4096, 2112, 7168): 161.6, (4096, 4096, 7168): 298.3, (4096, 7168, 2048): 164.7,
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--tiles", default=None, help="BMxBN[sS],...: forced native tiles timed next to the pick")
    args = parser.parse_args()
    tile_variants = variants_from_args(None, args.tiles)
    tiles = [v.name for v in tile_variants]
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    path = "native" if os.environ.get("DG_BF16_GEMM_NATIVE") == "1" else "cuBLAS"
    if tiles and path != "native":
        parser.error("--tiles forces native tiles: run with DG_BF16_GEMM_NATIVE=1")
    lines = [
        f"bf16_gemm_nt on {path}.",
        "",
        "| shape | ours µs | torch µs | torch/ours | upstream µs | upstream/ours | host µs |"
        + "".join(f" {t} µs |" for t in tiles),
        "|" + "---|" * (7 + len(tiles)),
    ]
    ratios = []
    for (m, n, k), upstream in UPSTREAM_US.items():
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def ours(a: torch.Tensor = a, b: torch.Tensor = b, d: torch.Tensor = d) -> None:
            deep_gemm.bf16_gemm_nt(a, b, d)

        def anchor(a: torch.Tensor = a, b: torch.Tensor = b) -> None:
            torch.matmul(a, b.t())

        ref = a.double() @ b.double().t()
        runs = [ours, *(under(ours, v) for v in tile_variants)]
        for name, run in zip(["pick", *tiles], runs, strict=True):
            d.fill_(float("nan"))
            run()
            diff = calc_diff(d, ref)
            assert diff < 1e-5, f"{m}x{n}x{k} ({name}): calc_diff {diff}"
        t_ours, t_torch, *t_tiles = time_gpu([ours, anchor, *runs[1:]], args.repeats, flush)
        ratios.append(upstream / t_ours)
        line = (
            f"| {m}x{n}x{k} | {t_ours:.1f} | {t_torch:.1f} | {t_torch / t_ours:.3f} | {upstream} "
            f"| {upstream / t_ours:.3f} | {time_host(ours, 50):.1f} |" + "".join(f" {t:.1f} |" for t in t_tiles)
        )
        print(line, flush=True)
        lines.append(line)
    lines.append(f"\nbf16_gemm_nt ({path}): geomean upstream/ours {statistics.geometric_mean(ratios):.3f}.")
    lines.append(environment())
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
