"""Paged MQA indexer logits (decode) on one GPU: deep_gemm's fp8_fp4_paged_mqa_logits (FP8 q and
KV cache, block 64, 2-D context lens, float32 logits) next to the upstream figures of
gpu-targets.md (measured side by side on an H200; the target), with an in-run anchor: a torch copy
of the same KV-cache bytes, so the effective bandwidth of the logits call (KV bytes / time) reads
against what a plain copy reaches.

Shapes: batch x next_n x heads x head_dim x average context.  Inputs follow the upstream test's
rule: per sequence a context length drawn in [0.7, 1.3) x the average, blocks ceil(len / 64), a
block table holding a random permutation of all blocks, max_context_len = the most blocks x 64;
for next_n > 1 the last query has the full length and earlier ones (len + 1) x U(0, 1).  The KV
cache holds random values cast to FP8 per token with float32 scales.  Method: L2 flushed before
every timed call, CUDA events, median, calls interleaved (gpu_gemm.py).  A few rows are checked
against a float64 evaluation first.  Peak GiB is the extra memory one call allocates.

    python benchmarks/gpu_paged_mqa_logits.py [--repeats 20] [--markdown out.md]
    python benchmarks/gpu_paged_mqa_logits.py --sweep [--repeats 10] [--markdown out.md]

--sweep times every pipeline variant of the native kernel (DG_PAGED_MQA_CONFIG: wg2, wg2_deep, wg4,
wg4_deep, each also with _split; docs/gpu.md)
on the same inputs of each shape, checks that every variant's logits are bitwise those of the
default, and prints a variant x shape table of µs (with upstream/ours ratios).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import torch
from gpu_gemm import emit, time_gpu, time_host

import deep_gemm
from deep_gemm.testing import calc_diff

BLOCK_KV = 64
# (batch, next_n, heads, head_dim, average context): (upstream µs, upstream peak GiB), from gpu-targets.md.
SHAPES = {
    (256, 1, 64, 128, 8192): (150.9, 0.01),
    (256, 2, 32, 128, 65536): (744.8, 0.16),
    (4096, 1, 64, 128, 8192): (1225.8, 0.16),
}


def make_inputs(batch: int, next_n: int, heads: int, dim: int, avg: int) -> dict:
    dev = "cuda"
    lens = torch.randint(int(0.7 * avg), int(1.3 * avg), (batch,), device=dev, dtype=torch.int32)
    blocks = (lens + BLOCK_KV - 1) // BLOCK_KV
    max_blocks = int(blocks.max())
    num_blocks = int(blocks.sum())
    # Block table: row b holds the next blocks[b] entries of a random permutation.
    perm = torch.randperm(num_blocks, device=dev, dtype=torch.int32)
    starts = torch.cumsum(blocks, 0) - blocks
    cols = torch.arange(max_blocks, device=dev, dtype=torch.int32)
    table = perm[(starts.unsqueeze(1) + cols).clamp_max(num_blocks - 1).long()]
    table = torch.where(cols < blocks.unsqueeze(1), table, torch.zeros_like(table))
    # KV cache: per block, 64 FP8 token rows then 64 float32 scales; filled in slices.
    cache = torch.empty(num_blocks, BLOCK_KV * (dim + 4), dtype=torch.uint8, device=dev)
    step = 1 << 16
    for b0 in range(0, num_blocks, step):
        b1 = min(num_blocks, b0 + step)
        x = torch.randn(b1 - b0, BLOCK_KV, dim, device=dev)
        sf = x.abs().amax(-1).clamp_min(1e-4) / 448.0
        cache[b0:b1, : BLOCK_KV * dim] = (x / sf.unsqueeze(-1)).to(torch.float8_e4m3fn).view(torch.uint8).flatten(1)
        cache[b0:b1, BLOCK_KV * dim :] = sf.view(torch.uint8).flatten(1)
    del x
    if next_n > 1:
        lens2 = ((lens.unsqueeze(1) + 1) * torch.rand(batch, next_n, device=dev)).to(torch.int32)
        lens2[:, -1] = lens
    else:
        lens2 = lens.unsqueeze(1).contiguous()
    q = torch.randn(batch, next_n, heads, dim, device=dev).to(torch.float8_e4m3fn)
    weights = torch.randn(batch * next_n, heads, device=dev)
    return {
        "q": q,
        "kv_cache": cache.view(num_blocks, BLOCK_KV, 1, dim + 4),
        "weights": weights,
        "context_lens": lens2,
        "block_table": table,
        "max_context_len": max_blocks * BLOCK_KV,
    }


def reference_rows(inp: dict, rows: list[int]) -> torch.Tensor:
    """float64 logits of the given rows (-inf past each row's length)."""
    q, cache, w = inp["q"], inp["kv_cache"], inp["weights"]
    next_n, dim = q.shape[1], q.shape[3]
    nb = cache.shape[0]
    flat = cache.view(nb, -1)
    cols = inp["max_context_len"]
    out = torch.full((len(rows), cols), float("-inf"), dtype=torch.float64, device="cuda")
    for i, r in enumerate(rows):
        b, t = divmod(r, next_n)
        n = int(inp["context_lens"][b, t])
        ids = inp["block_table"][b, : (n + BLOCK_KV - 1) // BLOCK_KV].long()
        blk = flat[ids]
        vals = blk[:, : BLOCK_KV * dim].contiguous().view(torch.float8_e4m3fn).double().view(-1, BLOCK_KV, dim)
        sf = blk[:, BLOCK_KV * dim :].contiguous().view(torch.float32).double().view(-1, BLOCK_KV, 1)
        kv = (vals * sf).reshape(-1, dim)[:n]
        scores = (q[b, t].double() @ kv.t()).relu()  # [H, n]
        out[i, :n] = (w[r].double().unsqueeze(1) * scores).sum(0)
    return out


def logits_call(inp: dict, num_sms: int) -> Callable[[], torch.Tensor]:
    """The timed call: float32 logits over the paged cache, its schedule computed once here."""
    schedule = deep_gemm.get_paged_mqa_logits_metadata(inp["context_lens"], BLOCK_KV, num_sms)

    def ours() -> torch.Tensor:
        return deep_gemm.fp8_fp4_paged_mqa_logits(
            (inp["q"], None),
            inp["kv_cache"],
            inp["weights"],
            inp["context_lens"],
            inp["block_table"],
            schedule,
            inp["max_context_len"],
            False,
            torch.float32,
        )

    return ours


def run_case(key: tuple[int, int, int, int, int], repeats: int, flush: torch.Tensor) -> dict:
    batch, next_n, heads, dim, avg = key
    inp = make_inputs(batch, next_n, heads, dim, avg)
    num_sms = deep_gemm.get_num_sms()
    ours = logits_call(inp, num_sms)

    def metadata() -> torch.Tensor:
        return deep_gemm.get_paged_mqa_logits_metadata(inp["context_lens"], BLOCK_KV, num_sms)

    out = ours()
    rows = [0, batch * next_n // 2, batch * next_n - 1]
    want = reference_rows(inp, rows)
    got = out[rows].double()
    fin = torch.isfinite(want)
    assert torch.equal(got == float("-inf"), want == float("-inf")), "-inf tails differ"
    diff = calc_diff(got[fin], want[fin])
    del out

    # Anchor: copy the same KV bytes (read + write).
    src = inp["kv_cache"].view(-1)
    dst = torch.empty_like(src)

    def anchor() -> None:
        dst.copy_(src)

    t_ours, t_copy, t_meta = time_gpu([ours, anchor, metadata], repeats, flush)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = ours()
    torch.cuda.synchronize()
    peak = (torch.cuda.max_memory_allocated() - before) / 2**30
    del out
    kv_bytes = sum(
        ((int(n) + BLOCK_KV - 1) // BLOCK_KV) * BLOCK_KV * (dim + 4) for n in inp["context_lens"].max(1).values.tolist()
    )
    result = {
        "ours": t_ours,
        "copy": t_copy,
        "meta": t_meta,
        "diff": diff,
        "peak": peak,
        "kv_bytes": kv_bytes,
        "host": time_host(ours, 50),
    }
    torch.cuda.empty_cache()
    return result


VARIANTS = [f"{v}{s}" for s in ("", "_split") for v in ("wg2", "wg2_deep", "wg4", "wg4_deep")]


def sweep(repeats: int, flush: torch.Tensor, markdown: str | None) -> None:
    saved = os.environ.get("DG_PAGED_MQA_CONFIG")
    table: dict[str, dict[str, float]] = {v: {} for v in VARIANTS}
    names = []
    try:
        for key, (up_us, _) in SHAPES.items():
            batch, next_n = key[0], key[1]
            shape = "x".join(map(str, key))
            names.append(shape)
            inp = make_inputs(*key)
            ours = logits_call(inp, deep_gemm.get_num_sms())

            rows = [0, batch * next_n // 2, batch * next_n - 1]
            want = reference_rows(inp, rows)
            fin = torch.isfinite(want)
            first = None
            for v in VARIANTS:
                os.environ["DG_PAGED_MQA_CONFIG"] = v
                out = ours()
                got = out[rows].double()
                assert torch.equal(got == float("-inf"), want == float("-inf")), f"{v} {shape}: -inf tails differ"
                diff = calc_diff(got[fin], want[fin])
                assert diff < 1e-6, f"{v} {shape}: calc_diff {diff}"
                if first is None:
                    first = out
                else:
                    assert torch.equal(out.view(torch.int32), first.view(torch.int32)), f"{v} {shape}: not bitwise"
                    del out
                (t,) = time_gpu([ours], repeats, flush)
                table[v][shape] = t
                print(f"sweep {v:9s} {shape:22s} {t:8.1f} us ({up_us / t:.3f}x upstream)", flush=True)
            del first
            inp.clear()  # release the cache before the next shape
            torch.cuda.empty_cache()
    finally:
        if saved is None:
            os.environ.pop("DG_PAGED_MQA_CONFIG", None)
        else:
            os.environ["DG_PAGED_MQA_CONFIG"] = saved
    ups = [up for up, _ in SHAPES.values()]
    lines = [
        "| DG_PAGED_MQA_CONFIG | " + " | ".join(f"{n} µs (upstream/ours)" for n in names) + " |",
        "|" + "---|" * (len(names) + 1),
        "| upstream | " + " | ".join(f"{u}" for u in ups) + " |",
    ]
    for v in VARIANTS:
        cells = [f"{table[v][n]:.1f} ({u / table[v][n]:.3f})" for n, u in zip(names, ups)]
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    emit(lines, markdown)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--sweep", action="store_true", help="time every DG_PAGED_MQA_CONFIG variant")
    args = parser.parse_args()
    torch.manual_seed(0)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    if args.sweep:
        sweep(args.repeats, flush, args.markdown)
        return
    lines = [
        "| shape | ours µs | upstream µs | upstream/ours | KV TB/s | copy TB/s (read+write) | schedule µs "
        "| peak GiB (ours / upstream) | host µs |",
        "|" + "---|" * 9,
    ]
    for key, (up_us, up_gib) in SHAPES.items():
        r = run_case(key, args.repeats, flush)
        shape = "x".join(map(str, key))
        bw = r["kv_bytes"] / (r["ours"] * 1e-6) / 1e12
        copy_bw = 2 * r["kv_bytes"] / (r["copy"] * 1e-6) / 1e12
        print(
            f"paged {shape:22s} | ours {r['ours']:8.1f} us | upstream {up_us:7.1f} ({up_us / r['ours']:.3f}x) | "
            f"KV {bw:.2f} TB/s, copy {copy_bw:.2f} TB/s ({r['copy']:.1f} us) | schedule {r['meta']:.1f} us | "
            f"peak {r['peak']:.3f} / {up_gib} GiB | diff {r['diff']:.1e} | host {r['host']:.1f} us",
            flush=True,
        )
        assert r["diff"] < 1e-6, f"{shape}: calc_diff {r['diff']}"
        lines.append(
            f"| {shape} | {r['ours']:.1f} | {up_us} | {up_us / r['ours']:.3f} | {bw:.2f} | {copy_bw:.2f} "
            f"| {r['meta']:.1f} | {r['peak']:.3f} / {up_gib} | {r['host']:.1f} |"
        )
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
