"""Mega MoE test support: random problems, an unfused reference, and the multi-process workers.

Over 400 lines: the reference and the workers must agree on one problem builder, kept beside them.

The reference follows the definition of Mega MoE in fp8_fp4_mega_moe's doc (docs/ops.md) step by step, on the
raw operands: dispatch each used (token, slot) to its expert, L1 = x . W1^T,
SwiGLU with clamp and the top-k weight, FP8 requantisation with per-32 UE8M0
scales (amax floored at 1e-4, scale rounded up to a power of two), L2, and the
sum over the token's slots on its own rank.  Products are formed in float64
(exact for FP8 x FP4 with power-of-two scales) and every rounding that doc
names (float32 accumulate, bf16 outputs, FP8 activations) is applied where it
says, so the result is compared bitwise.  The reference calls nothing of
deep_gemm; deep_gemm.utils only builds quantised inputs.  A second expected
value, unfused(), runs the layer on a process group from deep_gemm's grouped
GEMM ops and torch.distributed's all-to-all, without the fused op.
"""

from __future__ import annotations

import math
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import torch

import deep_gemm.mega as mega
from deep_gemm.testing.dist import init_local_group
from deep_gemm.utils import per_token_cast_to_fp4, per_token_cast_to_fp8
from tests.support.reference import F64, dequant_f64

ALIGN = 384


@dataclass
class Problem:
    """One Mega MoE call on every rank: tokens and routing per rank, all experts' weights."""

    mma: str
    num_ranks: int
    num_experts: int
    num_max_tokens: int
    num_topk: int
    hidden: int
    inter: int
    x: list[Any] = field(default_factory=list)  # per rank: (fp8 [T, H], sf int32 [T, H/128]) or bf16 [T, H]
    topk_idx: list[torch.Tensor] = field(default_factory=list)  # per rank: int64 [T, K]
    topk_weights: list[torch.Tensor] = field(default_factory=list)  # per rank: float32 [T, K]
    w1: Any = None  # all experts, [gate | up] rows: (fp4 [E, 2I, H/2], sf [E, 2I, H/128]) or bf16 [E, 2I, H]
    w2: Any = None  # (fp4 [E, H, I/2], sf [E, H, I/128]) or bf16 [E, H, I]

    @property
    def fp8(self) -> bool:
        return self.mma == "fp8xfp4"

    @property
    def experts_per_rank(self) -> int:
        return self.num_experts // self.num_ranks

    def local_weights(self, rank: int) -> tuple[Any, Any]:
        """This rank's experts, in the layout the fused op reads (transform_weights_for_mega_moe)."""
        lo, hi = rank * self.experts_per_rank, (rank + 1) * self.experts_per_rank
        if self.fp8:
            return mega.transform_weights_for_mega_moe(
                (self.w1[0][lo:hi], self.w1[1][lo:hi]), (self.w2[0][lo:hi], self.w2[1][lo:hi])
            )
        return mega.transform_weights_for_mega_moe(self.w1[lo:hi], self.w2[lo:hi])


def make_problem(
    seed: int,
    mma: str,
    tokens: list[int],
    num_experts: int,
    num_topk: int,
    hidden: int,
    inter: int,
    num_max_tokens: int = ALIGN,
    mask: float = 0.2,
    skew: bool = False,
) -> Problem:
    """Random tokens, distinct top-k experts per token (some slots -1), random weights.

    skew=True sends every token to experts 0..K-1 (all on rank 0 when K <= experts per rank).
    """
    g = torch.Generator().manual_seed(seed)
    p = Problem(mma, len(tokens), num_experts, num_max_tokens, num_topk, hidden, inter)
    for t in tokens:
        x = torch.randn(t, hidden, generator=g)
        p.x.append(
            per_token_cast_to_fp8(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True) if p.fp8 else x.bfloat16()
        )
        if skew:
            idx = torch.arange(num_topk).repeat(t, 1)
        else:
            idx = torch.rand(t, num_experts, generator=g).argsort(dim=1)[:, :num_topk]
        idx = torch.where(torch.rand(t, num_topk, generator=g) < mask, -1, idx)
        p.topk_idx.append(idx)
        p.topk_weights.append(torch.rand(t, num_topk, generator=g) + 0.1)
    w1 = torch.randn(num_experts, 2 * inter, hidden, generator=g) * hidden**-0.5
    w2 = torch.randn(num_experts, hidden, inter, generator=g) * inter**-0.5
    if p.fp8:
        p.w1 = _fp4_experts(w1)
        p.w2 = _fp4_experts(w2)
    else:
        p.w1, p.w2 = w1.bfloat16(), w2.bfloat16()
    return p


def _fp4_experts(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    pairs = [per_token_cast_to_fp4(w[e], use_ue8m0=True, gran_k=32, use_packed_ue8m0=True) for e in range(w.shape[0])]
    return torch.stack([d for d, _ in pairs]), torch.stack([s for _, s in pairs])


def stage(buf: Any, p: Problem, rank: int) -> int:
    """Copy rank's inputs into the SymmBuffer's staging views; returns the token count."""
    t = p.topk_idx[rank].shape[0]
    if p.fp8:
        buf.x[:t] = p.x[rank][0]
        buf.x_sf[:t] = p.x[rank][1]
    else:
        buf.x[:t] = p.x[rank]
    buf.topk_idx[:t] = p.topk_idx[rank]
    buf.topk_weights[:t] = p.topk_weights[rank]
    return t


# ---- the reference ---------------------------------------------------------------------------


def pow2_ceil(v: torch.Tensor) -> torch.Tensor:
    """The smallest power of two >= v (v > 0, float32), from frexp: v = m * 2^e with m in [0.5, 1)."""
    mantissa, exponent = torch.frexp(v)
    return torch.ldexp(torch.ones_like(v), exponent - (mantissa == 0.5).to(exponent.dtype))


def _expert_rows(p: Problem, e: int, clamp: float | None, x: torch.Tensor, w: torch.Tensor) -> dict[str, torch.Tensor]:
    """Expert e on dequantised rows x (float64 [n, H]) with top-k weights w: L1, SwiGLU, requant, L2."""
    inter = p.inter
    if p.fp8:
        w1 = dequant_f64(p.w1[0][e], p.w1[1][e], 1, 32)
        w2 = dequant_f64(p.w2[0][e], p.w2[1][e], 1, 32)
    else:
        w1, w2 = p.w1[e].to(F64), p.w2[e].to(F64)
    l1 = (x @ w1.T).float().bfloat16().to(F64)
    gate, up = l1[:, :inter], l1[:, inter:]
    if clamp is not None:
        c = torch.tensor(clamp, dtype=torch.float32).item()  # the op receives a float32 clamp
        up, gate = up.clamp(-c, c), gate.clamp(max=c)
    h = (gate / (1 + torch.exp(-gate)) * up * w.to(F64)[:, None]).float()
    if p.fp8:
        groups = h.view(h.shape[0], inter // 32, 32)
        sf = pow2_ceil(groups.abs().amax(dim=2).clamp(min=1e-4) / 448)
        q = (groups / sf[:, :, None]).to(torch.float8_e4m3fn).view(h.shape)
        h_deq = q.to(F64) * sf.to(F64).repeat_interleave(32, dim=1)
    else:
        q = h.bfloat16()
        h_deq = q.to(F64)
    out = (h_deq @ w2.T).float().bfloat16()
    return {"q": q, "out": out}


def _dequant_x(p: Problem, rank: int) -> torch.Tensor:
    if p.fp8:
        data, sf = p.x[rank]
        return dequant_f64(data, sf, 1, 32) if data.shape[0] else torch.zeros(0, p.hidden, dtype=F64)
    return p.x[rank].to(F64)


def reference(p: Problem, clamp: float | None) -> tuple[list[torch.Tensor], torch.Tensor]:
    """(y per rank as bf16, rows received per expert), from the definition."""
    xs = [_dequant_x(p, r) for r in range(p.num_ranks)]
    outs = [torch.zeros(p.num_topk, idx.shape[0], p.hidden, dtype=torch.bfloat16) for idx in p.topk_idx]
    counts = torch.zeros(p.num_experts, dtype=torch.int64)
    for e in range(p.num_experts):
        # Rows in (source rank, token, slot) order, as the expert's owner receives them.
        where = [(r, *torch.nonzero(p.topk_idx[r] == e, as_tuple=True)) for r in range(p.num_ranks)]
        x = torch.cat([xs[r][t] for r, t, _ in where])
        w = torch.cat([p.topk_weights[r][t, k] for r, t, k in where])
        counts[e] = x.shape[0]
        if x.shape[0] == 0:
            continue
        out = _expert_rows(p, e, clamp, x, w)["out"]
        row = 0
        for r, t, k in where:
            outs[r][k, t] = out[row : row + t.numel()]
            row += t.numel()
    ys = []
    for r, idx in enumerate(p.topk_idx):
        acc = torch.zeros(idx.shape[0], p.hidden, dtype=torch.float32)
        for k in range(p.num_topk):
            acc = acc + torch.where((idx[:, k] >= 0)[:, None], outs[r][k].float(), 0.0)
        ys.append(acc.bfloat16())
    return ys, counts


# ---- multi-process runs ----------------------------------------------------------------------
# The workers live here, not in the test module, so a spawned process imports little.


def symm_buffer(p: Problem, group: Any = None, device: Any = None, symmetric: bool | None = None) -> Any:
    """A SymmBuffer for p (group None: one rank)."""
    return mega.get_symm_buffer_for_mega_moe(
        group,
        p.num_experts,
        p.num_max_tokens,
        p.num_topk,
        p.hidden,
        p.inter,
        mma_type=p.mma,
        device=device,
        symmetric=symmetric,
    )


def to_device(w: Any, device: Any) -> Any:
    return tuple(t.to(device) for t in w) if isinstance(w, tuple) else w.to(device)


def call_mega(p: Problem, y: torch.Tensor, w1: Any, w2: Any, buf: Any, stats: Any, clamp: float | None) -> None:
    """The deep_gemm.mega wrapper for p's mma type."""
    if p.fp8:
        mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats, activation_clamp=clamp)
    else:
        mega.bf16_mega_moe(y, w1, w2, buf, stats, activation_clamp=clamp)


def unfused(rank: int, world: int, group: Any, p: Problem, clamp: float | None) -> torch.Tensor:
    """Mega MoE without the fused op, on the CPU: y of this rank.

    Dispatch and combine go through torch.distributed's all-to-all, and both
    GEMMs through deep_gemm's m-grouped contiguous GEMMs on the experts' weights
    as given (no transform_weights_for_mega_moe); the activation and the FP8
    requantisation (deep_gemm.utils.per_token_cast_to_fp8) are applied in
    between, as that doc orders them.  Rows stay in (source rank, token, slot)
    order, so the fused op must give the same bits.
    """
    import torch.distributed as dist

    import deep_gemm

    per = p.experts_per_rank
    idx = p.topk_idx[rank]
    tokens, slots = (idx >= 0).nonzero(as_tuple=True)
    experts = idx[tokens, slots]
    order = torch.argsort(experts // per, stable=True)
    tokens, slots, experts = tokens[order], slots[order], experts[order]
    send = torch.bincount(experts // per, minlength=world)
    recv = torch.empty_like(send)
    dist.all_to_all_single(recv, send, group=group)
    send_splits, recv_splits = send.tolist(), recv.tolist()
    n = sum(recv_splits)

    def exchange(rows: torch.Tensor, out_splits: list[int], in_splits: list[int]) -> torch.Tensor:
        width = math.prod(rows.shape[1:]) * rows.element_size()
        raw = rows.contiguous().view(torch.uint8).reshape(rows.shape[0], width)  # gloo moves bytes of any dtype
        out = raw.new_empty((sum(out_splits), width))
        dist.all_to_all_single(out, raw, out_splits, in_splits, group=group)
        return out.view(rows.dtype).reshape(out.shape[0], *rows.shape[1:])

    local_expert = exchange((experts - (experts // per) * per).to(torch.int32), recv_splits, send_splits)
    weight = exchange(p.topk_weights[rank][tokens, slots], recv_splits, send_splits)
    lo, hi = rank * per, (rank + 1) * per
    inter = p.inter
    if p.fp8:
        x = (
            exchange(p.x[rank][0][tokens], recv_splits, send_splits),
            exchange(p.x[rank][1][tokens], recv_splits, send_splits),
        )
        w1, w2 = (p.w1[0][lo:hi], p.w1[1][lo:hi]), (p.w2[0][lo:hi], p.w2[1][lo:hi])
        l1 = torch.empty(n, 2 * inter, dtype=torch.bfloat16)
        deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous(x, w1, l1, local_expert, recipe=(1, 1, 32))
    else:
        x = exchange(p.x[rank][tokens], recv_splits, send_splits)
        w1, w2 = p.w1[lo:hi], p.w2[lo:hi]
        l1 = torch.empty(n, 2 * inter, dtype=torch.bfloat16)
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(x, w1, l1, local_expert)
    gate, up = l1[:, :inter].to(F64), l1[:, inter:].to(F64)
    if clamp is not None:
        c = torch.tensor(clamp, dtype=torch.float32).item()
        up, gate = up.clamp(-c, c), gate.clamp(max=c)
    h = (gate / (1 + torch.exp(-gate)) * up * weight.to(F64)[:, None]).float()
    out = torch.empty(n, p.hidden, dtype=torch.bfloat16)
    if p.fp8:
        q = per_token_cast_to_fp8(h, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
        deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous(q, w2, out, local_expert, recipe=(1, 1, 32))
    else:
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(h.bfloat16(), w2, out, local_expert)
    back = exchange(out, send_splits, recv_splits)
    combine = torch.zeros(p.num_topk, idx.shape[0], p.hidden, dtype=torch.bfloat16)
    combine[slots, tokens] = back
    y = torch.zeros(idx.shape[0], p.hidden, dtype=torch.float32)
    for k in range(p.num_topk):
        y = y + torch.where((idx[:, k] >= 0)[:, None], combine[k].float(), 0.0)
    return y.bfloat16()


def _check_valid_calls(
    rank: int,
    world: int,
    group: Any,
    seed: int,
    tokens: list[int],
    experts: int,
    topk: int,
    device: Any = "cpu",
    symmetric: bool | None = None,
) -> None:
    for n, (mma, hidden, inter, clamp, skew) in enumerate(
        [("fp8xfp4", 128, 128, None, False), ("bf16xbf16", 64, 24, 0.5, False), ("fp8xfp4", 128, 128, 1.0, True)]
    ):
        counts_tokens = [ALIGN] * world if skew else tokens
        p = make_problem(
            seed + n, mma, counts_tokens, experts, topk, hidden, inter, mask=0.0 if skew else 0.2, skew=skew
        )
        buf = symm_buffer(p, group, device, symmetric)
        assert buf.num_ranks == world and buf.rank == rank
        assert buf.symmetric == bool(symmetric) and (any(buf.handle.buffer_ptrs) == buf.symmetric)
        w1, w2 = (to_device(w, device) for w in p.local_weights(rank))
        ys, counts = reference(p, clamp)
        per_rank = experts // world
        stats = torch.arange(per_rank, dtype=torch.int32, device=device)
        stats0 = stats.to("cpu", copy=True)
        for _ in range(2):
            t = stage(buf, p, rank)
            y = torch.full((t, hidden), float("nan"), dtype=torch.bfloat16, device=device)
            call_mega(p, y, w1, w2, buf, stats, clamp)
            assert torch.equal(y.cpu(), ys[rank]), f"rank {rank}, case {n}: y differs from the reference"
        if y.device.type == "cpu":  # the grouped GEMMs compute exactly on the CPU only
            assert torch.equal(unfused(rank, world, group, p, clamp), y), f"rank {rank}, case {n}: y != unfused"
        want = stats0 + 2 * counts[rank * per_rank : (rank + 1) * per_rank].to(torch.int32)
        assert torch.equal(stats.cpu(), want), f"rank {rank}, case {n}: stats {stats.tolist()} != {want.tolist()}"
        received = buf.views["workspace"][0].item()
        assert received == counts[rank * per_rank : (rank + 1) * per_rank].sum().item()
        if skew:  # every token picked rank 0's experts first: its receive region is exactly full
            assert rank != 0 or received == buf.num_ring_tokens


def _expect(rank: int, exc: type, message: str, fn: Any) -> None:
    try:
        fn()
    except exc as e:
        assert message in str(e), f"rank {rank}: {e!r} lacks {message!r}"
        return
    raise AssertionError(f"rank {rank}: expected {exc.__name__}({message!r})")


def _check_errors(rank: int, world: int, group: Any, seed: int) -> None:
    p = make_problem(seed, "fp8xfp4", [10] * world, 2 * world, 2, 128, 128)
    # Configuration errors: every rank raises the same error before any collective.
    _expect(
        rank,
        ValueError,
        f"argument 'num_experts' must be divisible by the number of ranks ({world}), got 3",
        lambda: mega.get_symm_buffer_for_mega_moe(group, 3, ALIGN, 2, 128, 128),
    )
    _expect(
        rank,
        ValueError,
        "argument 'num_max_tokens_per_rank' must be a positive multiple of 384 (get_token_alignment_for_mega_moe()), got 100",
        lambda: mega.SymmBuffer(group, 2 * world, 100, 2, 128, 128),
    )
    _expect(
        rank,
        ValueError,
        "argument 'hidden' must be a multiple of 128 for mma_type 'fp8xfp4'",
        lambda: mega.get_symm_buffer_for_mega_moe(group, 2 * world, ALIGN, 2, 200, 128),
    )
    buf = symm_buffer(p, group)
    w1, w2 = p.local_weights(rank)
    stats = torch.zeros(2, dtype=torch.int32)
    # Too many tokens on rank 1 only: every rank raises rank 1's error, nobody writes y or stats.
    stage(buf, p, rank)
    t = ALIGN + 1 if rank == 1 else 10
    y = torch.zeros(t, 128, dtype=torch.bfloat16)
    _expect(
        rank,
        ValueError,
        f"fp8_fp4_mega_moe: argument 'y' has {ALIGN + 1} tokens, more than num_max_tokens_per_rank ({ALIGN}) [rank 1 of {world} rejected the call]",
        lambda: mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats),
    )
    assert not y.any() and not stats.any()
    # A routing error on the last rank.
    if rank == world - 1:
        buf.topk_idx[3, 0] = 2 * world
    y = torch.zeros(10, 128, dtype=torch.bfloat16)
    _expect(
        rank,
        ValueError,
        f"stages topk_idx[3, 0] = {2 * world}, outside [-1, num_experts = {2 * world}) [rank {world - 1} of {world}",
        lambda: mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats),
    )
    # Bad weights on rank 0 only: found by rank 0's op after dispatch; no rank keeps its stats update.
    stage(buf, p, rank)
    bad_w2 = (w2[0][:, :64], w2[1][:, :64]) if rank == 0 else w2
    _expect(
        rank,
        ValueError,
        f"fp8_fp4_mega_moe: argument 'l2_weights' must have shape [2, 128, 64], got [2, 64, 64] [rank 0 of {world}",
        lambda: mega.fp8_fp4_mega_moe(y, w1, bad_w2, buf, stats),
    )
    assert not y.any() and not stats.any()
    # The group is still in step: a valid call works afterwards.
    stage(buf, p, rank)
    mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats)
    ys, counts = reference(p, None)
    assert torch.equal(y, ys[rank]) and torch.equal(stats, counts[2 * rank : 2 * rank + 2].to(torch.int32))


def two_rank_worker(rank: int, world: int, group: Any, seed: int) -> None:
    _check_valid_calls(rank, world, group, seed, tokens=[ALIGN, 37], experts=4, topk=2)
    _check_errors(rank, world, group, seed + 100)


def four_rank_worker(rank: int, world: int, group: Any, seed: int) -> None:
    # Ragged token counts, one rank without tokens; top-3 of 8 experts is more than the 2 per rank.
    _check_valid_calls(rank, world, group, seed, tokens=[50, 0, 1, 200], experts=8, topk=3)


def nccl_worker(rank: int, world: int, group: Any, seed: int) -> None:
    """The gloo checks on CUDA, through symmetric memory and through NCCL collectives."""
    device = torch.device("cuda", torch.cuda.current_device())
    for symmetric in (True, False):
        _check_valid_calls(rank, world, group, seed, [ALIGN, 37], 4, 2, device, symmetric)
        _check_valid_calls(rank, world, group, seed + 1, [50, 0, 1, 200][:world], 4 * world, 3, device, symmetric)
    _check_symmetric_failure(rank, world, group, seed + 100, device)


def _check_symmetric_failure(rank: int, world: int, group: Any, seed: int, device: Any) -> None:
    """A call that fails on one rank ends every rank's wait at the barrier, and the buffer must be rebuilt."""
    p = make_problem(seed, "fp8xfp4", [10] * world, 2 * world, 2, 128, 128)
    buf = symm_buffer(p, group, device, True)
    w1, w2 = (to_device(w, device) for w in p.local_weights(rank))
    stats = torch.zeros(2, dtype=torch.int32, device=device)
    y = torch.zeros(10, 128, dtype=torch.bfloat16, device=device)
    stage(buf, p, rank)
    bad_w2 = (w2[0][:, :64], w2[1][:, :64]) if rank == 0 else w2
    started = time.monotonic()
    if rank == 0:
        message = "fp8_fp4_mega_moe: argument 'l2_weights' must have shape [2, 128, 64], got [2, 64, 64]"
        _expect(rank, ValueError, message, lambda: mega.fp8_fp4_mega_moe(y, w1, bad_w2, buf, stats))
    else:
        message = f"rank {rank} stopped waiting for rank 0 at the Mega MoE barrier"
        _expect(rank, RuntimeError, message, lambda: mega.fp8_fp4_mega_moe(y, w1, bad_w2, buf, stats))
    assert time.monotonic() - started < 30, "the peers waited for the barrier's timeout instead of stopping"
    _expect(
        rank,
        ValueError,
        "argument 'sym_buffer' is out of step with its peers",
        lambda: mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats),
    )
    buf.destroy()
    buf = symm_buffer(p, group, device, True)
    stage(buf, p, rank)
    mega.fp8_fp4_mega_moe(y, w1, w2, buf, stats)
    ys, counts = reference(p, None)
    assert torch.equal(y.cpu(), ys[rank])
    assert torch.equal(stats.cpu(), counts[2 * rank : 2 * rank + 2].to(torch.int32))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(fn: Any, world: int, args: tuple, timeout: float = 120.0, backend: str = "gloo") -> None:
    """Run fn(rank, world, group, *args) in `world` new processes sharing a group; fail on a timeout.

    backend "nccl" gives rank r the GPU r.
    """
    import multiprocessing

    import torch.multiprocessing as mp

    # A fork server imports torch and deep_gemm once; each worker is a fork of it (fresh,
    # single-threaded state), which starts far faster than spawning interpreters.
    multiprocessing.get_context("forkserver").set_forkserver_preload(["torch", "deep_gemm", __name__])
    ctx = mp.start_processes(
        _entry, args=(world, free_port(), fn, args, backend), nprocs=world, join=False, start_method="forkserver"
    )
    deadline = time.monotonic() + timeout
    while not ctx.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            for proc in ctx.processes:
                if proc.is_alive():
                    proc.kill()
            raise TimeoutError(f"Mega MoE workers did not finish within {timeout} s")


def _entry(rank: int, world: int, port: int, fn: Any, args: tuple, backend: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    init_local_group(backend, rank, world, port)
    try:
        fn(rank, world, dist.group.WORLD, *args)
    finally:
        dist.destroy_process_group()
