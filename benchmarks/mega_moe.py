"""Mega MoE across GPUs: time per call, symmetric memory against NCCL collectives.

A DeepSeek-V3-like layer scaled to the GPUs at hand: hidden 7168, expert
intermediate 2048, top-8 routing, and 32 experts per rank (V3's 256 routed
experts over 8 ranks, so 64 experts on 2 GPUs).  FP8 tokens, FP4 experts.
Each rank runs one process on its own GPU (NCCL, NVLink multicast off).

For every token count, each rank stages fresh random tokens and routing
(distinct experts per token, about 5% of slots unused), then runs
deep_gemm.mega.fp8_fp4_mega_moe through two SymmBuffers of the same shape:

* symmetric  the buffer lives in torch symmetric memory; the op writes rows
             into the peer's buffer and synchronises with its device barrier;
* nccl       an ordinary buffer; rows travel through all_to_all_single.

Both must give the same y bitwise on every rank (checked each run).  Time per
call: CUDA events around one call after a group barrier, median of --iters
calls after --warmup, the slowest rank's median reported.

    python benchmarks/mega_moe.py [--tokens 128,1024,4096] [--iters 5] [--ranks 2]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
from typing import Any

import torch

HIDDEN, INTER, TOPK, EXPERTS_PER_RANK = 7168, 2048, 8, 32


def _weights(rank: int, experts: int, device: torch.device, seed: int) -> tuple[Any, Any]:
    from deep_gemm.mega import transform_weights_for_mega_moe
    from deep_gemm.utils import per_token_cast_to_fp4

    g = torch.Generator(device=device).manual_seed(seed + rank)
    w1, sf1, w2, sf2 = [], [], [], []
    for _ in range(experts):
        a = torch.randn(2 * INTER, HIDDEN, device=device, generator=g) * HIDDEN**-0.5
        d, s = per_token_cast_to_fp4(a, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
        w1.append(d), sf1.append(s)
        b = torch.randn(HIDDEN, INTER, device=device, generator=g) * INTER**-0.5
        d, s = per_token_cast_to_fp4(b, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
        w2.append(d), sf2.append(s)
    return transform_weights_for_mega_moe((torch.stack(w1), torch.stack(sf1)), (torch.stack(w2), torch.stack(sf2)))


def _stage(bufs: list[Any], tokens: int, num_experts: int, device: torch.device, g: torch.Generator) -> None:
    from deep_gemm.utils import per_token_cast_to_fp8

    x = torch.randn(tokens, HIDDEN, device=device, generator=g)
    q, sf = per_token_cast_to_fp8(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
    idx = torch.rand(tokens, num_experts, device=device, generator=g).argsort(dim=1)[:, :TOPK]
    idx = torch.where(torch.rand(tokens, TOPK, device=device, generator=g) < 0.05, -1, idx)
    w = torch.rand(tokens, TOPK, device=device, generator=g) + 0.1
    for buf in bufs:
        buf.x[:tokens], buf.x_sf[:tokens] = q, sf
        buf.topk_idx[:tokens], buf.topk_weights[:tokens] = idx, w


def _time(fn: Any, iters: int, warmup: int) -> float:
    import torch.distributed as dist

    for _ in range(warmup):
        fn()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _worker(rank: int, world: int, port: int, args: argparse.Namespace) -> None:
    import torch.distributed as dist

    import deep_gemm.mega as mega
    from deep_gemm.testing.dist import init_local_group

    device = init_local_group("nccl", rank, world, port, timeout_s=300.0)
    assert device is not None
    group = dist.group.WORLD
    num_experts = EXPERTS_PER_RANK * world
    l1, l2 = _weights(rank, EXPERTS_PER_RANK, device, args.seed)
    max_tokens = max(args.tokens)
    bufs = [
        mega.get_symm_buffer_for_mega_moe(
            group, num_experts, max_tokens, TOPK, HIDDEN, INTER, device=device, symmetric=symmetric
        )
        for symmetric in (True, False)
    ]
    g = torch.Generator(device=device).manual_seed(args.seed + 1000 + rank)
    rows = []
    for tokens in args.tokens:
        _stage(bufs, tokens, num_experts, device, g)
        ys = [torch.empty(tokens, HIDDEN, dtype=torch.bfloat16, device=device) for _ in bufs]
        stats = torch.zeros(EXPERTS_PER_RANK, dtype=torch.int32, device=device)
        ms = [
            _time(lambda b=b, y=y: mega.fp8_fp4_mega_moe(y, l1, l2, b, stats), args.iters, args.warmup)
            for b, y in zip(bufs, ys)
        ]
        same = torch.equal(ys[0], ys[1])
        received = int(bufs[0].views["workspace"][0].item())
        report = torch.tensor([*ms, float(same), float(received)], dtype=torch.float64, device=device)
        gathered = [torch.empty_like(report) for _ in range(world)]
        dist.all_gather(gathered, report)
        if rank == 0:
            g_all = torch.stack(gathered).cpu()
            rows.append(
                (
                    tokens,
                    int(g_all[:, 3].sum()),
                    g_all[:, 0].max().item(),
                    g_all[:, 1].max().item(),
                    bool(g_all[:, 2].all()),
                )
            )
    for buf in bufs:
        buf.destroy()
    if rank == 0:
        name = torch.cuda.get_device_name(device)
        print(f"# Mega MoE, {world} x {name}: hidden {HIDDEN}, intermediate {INTER}, top-{TOPK}, ")
        print(f"# {num_experts} experts ({EXPERTS_PER_RANK} per rank), FP8 x FP4, torch {torch.__version__}\n")
        print(
            "| tokens per rank | rows received (all ranks) | symmetric memory ms/call | NCCL collectives ms/call "
            "| y identical |"
        )
        print("|---:|---:|---:|---:|---|")
        for tokens, received, sym, coll, same in rows:
            print(f"| {tokens} | {received} | {sym:.2f} | {coll:.2f} | {'yes' if same else 'NO'} |")
        if not all(r[4] for r in rows):
            raise SystemExit("symmetric-memory and collective results differ")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=lambda s: [int(v) for v in s.split(",")], default=[128, 1024, 4096])
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=torch.cuda.device_count())
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    args = parser.parse_args()
    if args.ranks < 2:
        raise SystemExit(f"needs at least 2 GPUs, found {args.ranks}")
    print(f"seed={args.seed}")
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(args.ranks, port, args), nprocs=args.ranks)


if __name__ == "__main__":
    main()
