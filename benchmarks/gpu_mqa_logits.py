"""Ragged MQA indexer logits on one GPU: deep_gemm.fp8_fp4_mqa_logits (FP8 q and kv, float32 logits,
clean_logits=True) on the S x Skv x H x D shapes of gpu-targets.md.

Ranges follow the no-context-parallelism rule of those figures: ks[i] = 0, ke[i] = i + Skv - S.
Method as benchmarks/gpu_gemm.py: L2 flushed before every timed call, CUDA events, median.  Each
shape is first checked on sampled rows against a float64 evaluation of the definition.  Printed:
ours, upstream's figure (the target), upstream/ours, an in-run anchor (torch's row-scaled FP8
`_scaled_mm` of the whole Q.K^T product, [S*H, Skv] bf16, smallest shape only), the peak extra
device memory of one call next to upstream's.

    python benchmarks/gpu_mqa_logits.py [--repeats 20] [--markdown out.md]
    python benchmarks/gpu_mqa_logits.py --sweep [--markdown sweep.md] [--only 2048x65536x32x128]

--sweep times every tuning variant of the native kernel (DG_MQA_LOGITS_CONFIG, see docs/gpu.md) on
the three shapes, each checked on sampled rows first, and prints a config x shape table of µs with
upstream's figures, so that the best default can be picked.
"""

from __future__ import annotations

import argparse
import os

import torch

import deep_gemm
from benchmarks.gpu_gemm import emit, environment, time_gpu, time_host

# (S, Skv, H, D) -> (upstream µs, upstream peak GiB) on one H200, from gpu-targets.md.
UPSTREAM = {
    (2048, 8192, 64, 128): (355.6, 0.06),
    (2048, 65536, 32, 128): (1236.0, 0.50),
    (8192, 65536, 64, 128): (None, None),
}


def inputs(s: int, s_kv: int, h: int, d: int):
    q = torch.randn(s, h, d, device="cuda").to(torch.float8_e4m3fn)
    x = torch.randn(s_kv, d, device="cuda")
    sf = x.abs().amax(1).clamp_min(1e-4) / 448.0
    kv = (x / sf.unsqueeze(1)).to(torch.float8_e4m3fn)
    w = torch.randn(s, h, device="cuda")
    ks = torch.zeros(s, dtype=torch.int32, device="cuda")
    ke = torch.arange(s, dtype=torch.int32, device="cuda") + (s_kv - s)
    return q, kv, sf, w, ks, ke


def check_rows(out, q, kv, sf, w, ks, ke, rows: int = 8) -> float:
    """Largest |ours - float64| / magnitude over sampled rows (in-range entries); asserts the -inf mask."""
    s, s_kv = out.shape
    worst = 0.0
    kv64 = kv.double() * sf.double().unsqueeze(1)
    for i in [*torch.randint(0, s, (rows,)).tolist(), s - 1]:
        scores = (q[i].double() @ kv64.t()).clamp_min(0)  # [H, Skv]
        want = w[i].double() @ scores
        mag = (w[i].double().abs() @ q[i].double().abs()) @ kv64.abs().t()
        j = torch.arange(s_kv, device="cuda")
        ok = (j >= int(ks[i])) & (j < int(ke[i]))
        got = out[i].double()
        assert torch.equal(got == float("-inf"), ~ok), f"row {i}: -inf mask differs"
        if ok.any():
            worst = max(worst, float(((got[ok] - want[ok]).abs() / mag[ok].clamp_min(1e-30)).max()))
    return worst


# The tuning variants of the native kernel (csrc/cuda/mqa_logits.cu, kConfigs).
CONFIGS = [
    "default", "default+fuse", "default+lin", "st16", "wsmem", "wg3", "n256", "n256+fuse", "n256+lin",
    "n256s16", "s128", "s128+fuse", "n256s128", "n256s128+fuse", "wg4", "wg4s256",
    "wg4s256r", "n256s128r", "n256s128r+fuse",
]  # fmt: skip


def sweep(args, flush) -> None:
    only = args.only.split(",") if args.only else None
    shapes = [sh for sh in UPSTREAM if not only or "x".join(map(str, sh)) in only]
    table: dict[str, list[float]] = {c: [] for c in CONFIGS}
    old = os.environ.get("DG_MQA_LOGITS_CONFIG")
    try:
        for s, s_kv, h, d in shapes:
            q, kv, sf, w, ks, ke = inputs(s, s_kv, h, d)

            def ours(q=q, kv=kv, sf=sf, w=w, ks=ks, ke=ke):
                return deep_gemm.fp8_fp4_mqa_logits((q, None), (kv, sf), w, ks, ke, clean_logits=True)

            repeats = args.repeats if s * s_kv * h <= 2**33 else max(3, args.repeats // 4)
            for config in CONFIGS:
                os.environ["DG_MQA_LOGITS_CONFIG"] = config
                out = ours()
                err = check_rows(out, q, kv, sf, w, ks, ke, rows=4)
                del out
                assert err < 2**-10, f"{config} {s}x{s_kv}x{h}x{d}: error {err} relative to the term magnitude"
                t = time_gpu([ours], repeats, flush)[0]
                table[config].append(t)
                print(f"{config:10s} {s}x{s_kv}x{h}x{d}: {t:9.1f} us (max rel err {err:.1e})", flush=True)
            del q, kv, sf, w, ks, ke
            torch.cuda.empty_cache()
    finally:
        if old is None:
            os.environ.pop("DG_MQA_LOGITS_CONFIG", None)
        else:
            os.environ["DG_MQA_LOGITS_CONFIG"] = old
    names = [f"{s}x{s_kv}x{h}x{d}" for s, s_kv, h, d in shapes]
    lines = ["| DG_MQA_LOGITS_CONFIG | " + " | ".join(f"{n} µs" for n in names) + " |", "|" + "---|" * (1 + len(names))]
    ups = [UPSTREAM[sh][0] for sh in shapes]
    lines.append("| upstream (target) | " + " | ".join("–" if u is None else f"{u:.1f}" for u in ups) + " |")
    for config in CONFIGS:
        cells = []
        for t, u in zip(table[config], ups):
            cells.append(f"{t:.1f}" + ("" if u is None else f" ({u / t:.3f}×)"))
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    best = [min(CONFIGS, key=lambda c, i=i: table[c][i]) for i in range(len(shapes))]
    lines += [
        "",
        "best per shape: " + ", ".join(f"{n}: {b}" for n, b in zip(names, best)),
        f"float32 logits, clean_logits=True, ks = 0, ke = i + Skv - S; (×) = upstream/ours. {environment()}",
    ]
    emit(lines, args.markdown)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--sweep", action="store_true", help="time every DG_MQA_LOGITS_CONFIG variant")
    parser.add_argument("--only", default=None, help="comma-separated SxSKVxHxD shapes of the table (--sweep)")
    args = parser.parse_args()
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    if args.sweep:
        sweep(args, flush)
        return
    rows = []
    for idx, (shape, (up_us, up_gib)) in enumerate(UPSTREAM.items()):
        s, s_kv, h, d = shape
        q, kv, sf, w, ks, ke = inputs(s, s_kv, h, d)

        def ours(q=q, kv=kv, sf=sf, w=w, ks=ks, ke=ke):
            return deep_gemm.fp8_fp4_mqa_logits((q, None), (kv, sf), w, ks, ke, clean_logits=True)

        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = ours()
        torch.cuda.synchronize()
        peak_gib = (torch.cuda.max_memory_allocated() - before) / 2**30
        err = check_rows(out, q, kv, sf, w, ks, ke)
        del out
        fns = [ours]
        anchor = None
        if idx == 0:
            q2, kv_t = q.view(s * h, d), kv.t()
            scale_a = torch.ones(s * h, 1, device="cuda")
            scale_b = sf.view(1, s_kv)
            anchor_out = torch.empty(s * h, s_kv, device="cuda", dtype=torch.bfloat16)

            def anchor(a=q2, b=kv_t, sa=scale_a, sb=scale_b, out=anchor_out) -> None:
                torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, out=out)

            fns.append(anchor)
        repeats = args.repeats if s * s_kv * h <= 2**33 else max(3, args.repeats // 4)
        times = time_gpu(fns, repeats, flush)
        t_ours = times[0]
        t_anchor = times[1] if anchor is not None else None
        pairs = int((ke.long().clamp(0, s_kv) - ks.long()).clamp_min(0).sum())
        tflops = 2 * pairs * h * d / t_ours / 1e6
        row = {
            "shape": f"{s}x{s_kv}x{h}x{d}", "ours": t_ours, "upstream": up_us, "anchor": t_anchor,
            "peak": peak_gib, "up_peak": up_gib, "tflops": tflops, "err": err, "host": time_host(ours, 20),
        }  # fmt: skip
        rows.append(row)
        fmt = lambda v, p=1: "–" if v is None else f"{v:.{p}f}"  # noqa: E731
        ratio = "–" if up_us is None else f"{up_us / t_ours:.3f}"
        print(
            f"{row['shape']:22s} | ours {t_ours:9.1f} us {tflops:5.0f} TF | upstream {fmt(up_us)} ({ratio}) | "
            f"anchor _scaled_mm QK {fmt(t_anchor)} | peak {peak_gib:.2f} GiB (upstream {fmt(up_gib, 2)}) | "
            f"max rel err {err:.1e} | host {row['host']:.1f} us",
            flush=True,
        )
        assert err < 2**-10, f"{row['shape']}: error {err} relative to the term magnitude"
        del q, kv, sf, w, ks, ke
        torch.cuda.empty_cache()
    lines = [
        "| S x Skv x H x D | ours µs | TFLOP/s (in-range) | upstream µs (target) | upstream/ours "
        "| torch _scaled_mm QK^T µs (anchor) | peak GiB | upstream peak GiB | max rel err |",
        "|" + "---|" * 9,
    ]
    for r in rows:
        cell = lambda v, p=1: "–" if v is None else f"{v:.{p}f}"  # noqa: E731
        rat = "–" if r["upstream"] is None else f"{r['upstream'] / r['ours']:.3f}"
        lines.append(
            f"| {r['shape']} | {r['ours']:.1f} | {r['tflops']:.0f} | {cell(r['upstream'])} | {rat} "
            f"| {cell(r['anchor'])} | {r['peak']:.2f} | {cell(r['up_peak'], 2)} | {r['err']:.1e} |"
        )
    lines += [
        "",
        f"float32 logits, clean_logits=True, ks = 0, ke = i + Skv - S. {environment()}",
    ]
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
