"""Mega MoE end to end: one rank in-process, 2 and 4 ranks over gloo, errors, opcheck.

Over 400 lines: the rank counts and both MMA types run the same cases, parametrised here.

Expected values come from mega_support.reference (the definition of fp8_fp4_mega_moe's doc, docs/ops.md, in
float64, mirroring its roundings), compared bitwise.  On several ranks the
fused result must also equal, bitwise, mega_support.unfused: the same layer
built from torch.distributed's all-to-all and deep_gemm's m-grouped GEMMs.
"""

from __future__ import annotations

import re

import pytest
import torch

import deep_gemm
import deep_gemm.mega as mega
from deep_gemm import _C
from deep_gemm.mega.layout import region_views
from tests.support.mega_support import (
    ALIGN,
    call_mega,
    four_rank_worker,
    make_problem,
    reference,
    spawn,
    stage,
    symm_buffer,
    two_rank_worker,
)


def _seed() -> int:
    return int(torch.randint(0, 2**31 - 1, ()).item())


def _call(entry: str, p, y, w1, w2, buf, stats, clamp) -> None:
    """One fused call through one of the three entry points."""
    if entry == "mega":
        call_mega(p, y, w1, w2, buf, stats, clamp)
        return
    common = (buf.buffer, buf.handle.buffer_ptrs, buf.rank, buf.num_max_tokens_per_rank, buf.num_experts, buf.num_topk)
    if entry == "legacy":  # deep_gemm._C, (data, sf) pairs
        if p.fp8:
            _C.fp8_fp4_mega_moe(y, w1, w2, None, None, None, None, stats, *common, (1, 1, 32), "swiglu", clamp, True)
        else:
            _C.bf16_mega_moe(y, w1, w2, None, None, stats, *common, "swiglu", clamp, True)
        return
    if p.fp8:
        torch.ops.deep_gemm.fp8_fp4_mega_moe(
            y, *w1, *w2, None, None, None, None, stats, *common, [1, 1, 32], "swiglu", clamp, True
        )
    else:
        torch.ops.deep_gemm.bf16_mega_moe(y, w1, w2, None, None, stats, *common, "swiglu", clamp, True)


# ---- one rank, no process group --------------------------------------------------------------

SINGLE = [
    # (mma, tokens, experts, topk, hidden, inter, clamp, entry)
    ("fp8xfp4", 7, 4, 2, 128, 128, None, "mega"),
    ("fp8xfp4", 1, 4, 3, 256, 128, 0.75, "legacy"),
    ("fp8xfp4", ALIGN, 3, 1, 128, 256, 2.0, "torch_ops"),  # T = num_max_tokens_per_rank, top-1
    ("fp8xfp4", 0, 2, 2, 128, 128, None, "mega"),  # no tokens
    ("bf16xbf16", 9, 4, 2, 64, 24, None, "mega"),
    ("bf16xbf16", 33, 5, 4, 96, 16, 0.5, "legacy"),
    ("bf16xbf16", 1, 1, 1, 32, 8, None, "torch_ops"),  # one expert
]


@pytest.mark.parametrize("mma,tokens,experts,topk,hidden,inter,clamp,entry", SINGLE)
def test_single_rank_matches_reference_bitwise(mma, tokens, experts, topk, hidden, inter, clamp, entry) -> None:
    p = make_problem(_seed(), mma, [tokens], experts, topk, hidden, inter)
    buf = symm_buffer(p)
    w1, w2 = p.local_weights(0)
    ys, counts = reference(p, clamp)
    stats = torch.randint(0, 100, (experts,), dtype=torch.int32)
    stats0 = stats.clone()
    for _ in range(2):  # the buffer is reused; stats accumulate
        stage(buf, p, 0)
        y = torch.full((tokens, hidden), float("nan"), dtype=torch.bfloat16)
        _call(entry, p, y, w1, w2, buf, stats, clamp)
        assert torch.equal(y, ys[0])
    assert torch.equal(stats, stats0 + 2 * counts.to(torch.int32))


def test_single_rank_all_slots_unused_gives_zero() -> None:
    p = make_problem(_seed(), "fp8xfp4", [5], 4, 2, 128, 128, mask=1.0)
    buf = symm_buffer(p)
    stage(buf, p, 0)
    y = torch.randn(5, 128).bfloat16()
    stats = torch.zeros(4, dtype=torch.int32)
    mega.fp8_fp4_mega_moe(y, *p.local_weights(0), buf, stats)
    assert torch.equal(y, torch.zeros_like(y)) and not stats.any()


def test_buffer_holds_the_dispatched_rows_and_fp8_activations() -> None:
    """The receive region and the L2 activations are where the layout says, with the reference's values."""
    from tests.support.mega_support import _dequant_x, _expert_rows

    p = make_problem(_seed(), "fp8xfp4", [6], 2, 2, 128, 128, mask=0.0)
    buf = symm_buffer(p)
    stage(buf, p, 0)
    y = torch.empty(6, 128, dtype=torch.bfloat16)
    mega.fp8_fp4_mega_moe(y, *p.local_weights(0), buf)
    views = buf.views
    assert views["workspace"][0].item() == 12
    info = views["recv_info"][:12]
    tokens, slots = torch.arange(6).repeat_interleave(2), torch.arange(2).repeat(6)
    assert torch.equal(info[:, 1].long(), tokens) and torch.equal(info[:, 2].long(), slots)
    assert torch.equal(info[:, 3].long(), p.topk_idx[0][tokens, slots]) and not info[:, 0].any()
    assert torch.equal(buf.l1_acts[:12].view(torch.uint8), p.x[0][0].view(torch.uint8)[tokens])
    assert torch.equal(buf.l1_acts_sf[:12], p.x[0][1][tokens])
    x = _dequant_x(p, 0)
    for e in range(2):
        rows = (info[:, 3] == e).nonzero().flatten()
        want = _expert_rows(p, e, None, x[tokens[rows]], p.topk_weights[0][tokens[rows], slots[rows]])
        assert torch.equal(buf.l2_acts.view(torch.uint8)[rows], want["q"].view(torch.uint8))
        assert torch.equal(buf.views["l2_out"][rows], want["out"])


@pytest.mark.parametrize("seed", [None, 1154365471])  # 1154365471 routes no token to expert 2
def test_more_ranks_mode_runs_local_experts_only(seed: int | None) -> None:
    """sym_buffer_ptrs with 2 entries: the op reads the rows a peer dispatched and leaves y alone."""
    from tests.support.mega_support import _dequant_x, _expert_rows

    p = make_problem(_seed() if seed is None else seed, "bf16xbf16", [5, 4], 4, 2, 64, 16, mask=0.0)
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(2, 4, ALIGN, 2, 64, 16, "bf16xbf16", "swiglu")
    buffer = torch.zeros(num_bytes, dtype=torch.int8)
    views = region_views("test", buffer, info)
    # Rank 1 owns experts 2 and 3: gather every (rank, token, slot) routed there.
    rows = [
        (r, t, k) for r in range(2) for t in range(p.topk_idx[r].shape[0]) for k in range(2) if p.topk_idx[r][t, k] >= 2
    ]
    n = len(rows)
    for i, (r, t, k) in enumerate(rows):
        views["l1_token"][i] = p.x[r][t]
        views["recv_info"][i] = torch.tensor([r, t, k, p.topk_idx[r][t, k] - 2])
        views["recv_weights"][i] = p.topk_weights[r][t, k]
    views["workspace"][0] = n
    y = torch.randn(3, 64).bfloat16()
    y0, stats = y.clone(), torch.zeros(2, dtype=torch.int32)
    w1, w2 = p.local_weights(1)
    torch.ops.deep_gemm.bf16_mega_moe(
        y, w1, w2, None, None, stats, buffer, [0, 0], 1, ALIGN, 4, 2, "swiglu", None, True
    )
    assert torch.equal(y, y0)
    xs = [_dequant_x(p, r) for r in range(2)]
    for e in (2, 3):
        picked = [i for i, (r, t, k) in enumerate(rows) if p.topk_idx[r][t, k] == e]
        assert stats[e - 2].item() == len(picked)
        if not picked:  # a draw can route no token to e (about 1 in 500 seeds): its count is all there is to check
            continue
        x = torch.stack([xs[rows[i][0]][rows[i][1]] for i in picked])
        w = torch.stack([p.topk_weights[rows[i][0]][rows[i][1], rows[i][2]] for i in picked])
        assert torch.equal(views["l2_out"][picked], _expert_rows(p, e, None, x, w)["out"])


@pytest.mark.parametrize(
    ("ptrs", "message"),
    [
        (
            [0, 4096],
            "argument 'sym_buffer_ptrs' must hold every rank's buffer address (symmetric memory) or only zeros",
        ),
        ([4096, 8192], "argument 'sym_buffer_ptrs' holds peer addresses, which needs CUDA symmetric memory; "),
    ],
)
def test_peer_addresses_need_cuda_symmetric_memory(ptrs: list[int], message: str) -> None:
    num_bytes, _ = _C.get_symm_buffer_size_for_mega_moe(2, 4, ALIGN, 2, 64, 16, "bf16xbf16", "swiglu")
    buffer = torch.zeros(num_bytes, dtype=torch.int8)
    w1, w2 = torch.zeros(2, 32, 64).bfloat16(), torch.zeros(2, 64, 16).bfloat16()
    y, stats = torch.ones(3, 64).bfloat16(), torch.zeros(2, dtype=torch.int32)
    with pytest.raises(ValueError, match="^bf16_mega_moe: " + re.escape(message)):
        torch.ops.deep_gemm.bf16_mega_moe(
            y, w1, w2, None, None, stats, buffer, ptrs, 1, ALIGN, 4, 2, "swiglu", None, True
        )
    assert torch.equal(y, torch.ones(3, 64).bfloat16()) and not stats.any()


def test_symmetric_buffer_needs_ranks_and_cuda() -> None:
    with pytest.raises(
        ValueError,
        match=r"^SymmBuffer: argument 'symmetric' is True, but symmetric memory cannot be used: it needs more than one rank$",
    ):
        mega.SymmBuffer(None, 4, ALIGN, 2, 128, 128, symmetric=True)
    buf = mega.SymmBuffer(None, 4, ALIGN, 2, 128, 128)
    assert not buf.symmetric and buf.handle.buffer_ptrs == [0]


# ---- errors on one rank ----------------------------------------------------------------------


def _fp8_setup(tokens: int = 4):
    p = make_problem(_seed(), "fp8xfp4", [tokens], 4, 2, 128, 128)
    buf = symm_buffer(p)
    stage(buf, p, 0)
    (w1, sf1), (w2, sf2) = p.local_weights(0)
    y = torch.randn(tokens, 128).bfloat16()
    stats = torch.randint(0, 9, (4,), dtype=torch.int32)
    args = [
        y,
        w1,
        sf1,
        w2,
        sf2,
        None,
        None,
        None,
        None,
        stats,
        buf.buffer,
        [0],
        0,
        ALIGN,
        4,
        2,
        [1, 1, 32],
        "swiglu",
        None,
        True,
    ]
    return p, buf, args


NAMES = [
    "y",
    "l1_weights",
    "l1_weights_sf",
    "l2_weights",
    "l2_weights_sf",
    "shared_l1_weights",
    "shared_l1_weights_sf",
    "shared_l2_weights",
    "shared_l2_weights_sf",
    "cumulative_local_expert_recv_stats",
    "sym_buffer",
    "sym_buffer_ptrs",
    "rank_idx",
    "num_max_tokens_per_rank",
    "num_experts",
    "num_topk",
    "recipe",
    "activation",
    "activation_clamp",
    "fast_math",
]
FP8_ERRORS = [
    ({"y": lambda a: a.float()}, ValueError, "argument 'y' must be BFloat16, got Float"),
    (
        {"y": lambda a: torch.zeros(4, 256, dtype=torch.bfloat16)},
        ValueError,
        "argument 'l1_weights' must have shape [4, 256, 128]",
    ),
    (
        {"y": lambda a: torch.zeros(ALIGN + 1, 128, dtype=torch.bfloat16)},
        ValueError,
        "argument 'y' has 385 tokens, more than num_max_tokens_per_rank (384)",
    ),
    (
        {"y": lambda a: torch.zeros(4, 100, dtype=torch.bfloat16)},
        ValueError,
        "argument 'y' must have a hidden size (size(1)) that is a positive multiple of 128",
    ),
    (
        {"l1_weights": lambda a: a[:, :128]},
        ValueError,
        "argument 'l1_weights' must have shape [4, 256, 64], got [4, 128, 64]",
    ),
    ({"l1_weights": lambda a: a.view(torch.uint8)}, ValueError, "argument 'l1_weights' must be Char, got Byte"),
    (
        {"l2_weights": lambda a: a.transpose(1, 2).contiguous().transpose(1, 2)},
        ValueError,
        "argument 'l2_weights' must be K-major",
    ),
    ({"l2_weights_sf": lambda a: a.float()}, ValueError, "argument 'l2_weights_sf' must be Int, got Float"),
    (
        {"l2_weights": lambda a: a[:, :, :32]},
        ValueError,
        "argument 'l2_weights' must have an intermediate size (2 * size(2), FP4 packs two per byte) that is a positive multiple of 128, got 64",
    ),
    ({"shared_l1_weights": lambda a: torch.zeros(1)}, RuntimeError, "shared experts are not implemented"),
    (
        {"cumulative_local_expert_recv_stats": lambda a: a.long()},
        ValueError,
        "argument 'cumulative_local_expert_recv_stats' must be Int, got Long",
    ),
    (
        {"cumulative_local_expert_recv_stats": lambda a: a[:3]},
        ValueError,
        "argument 'cumulative_local_expert_recv_stats' must have shape [4]",
    ),
    ({"sym_buffer": lambda a: a[:-1]}, ValueError, "argument 'sym_buffer' has"),
    (
        {"sym_buffer": lambda a: a.view(torch.int16)},
        ValueError,
        "argument 'sym_buffer' must be Char or Byte, got Short",
    ),
    (
        {"sym_buffer_ptrs": lambda a: []},
        ValueError,
        "argument 'sym_buffer_ptrs' must hold one entry per rank, got none",
    ),
    (
        {"sym_buffer_ptrs": lambda a: [0, 0, 0]},
        ValueError,
        "argument 'num_experts' must be divisible by the number of ranks (3), got 4",
    ),
    ({"rank_idx": lambda a: 1}, ValueError, "argument 'rank_idx' must lie in [0, 1)"),
    (
        {"num_max_tokens_per_rank": lambda a: 100},
        ValueError,
        "argument 'num_max_tokens_per_rank' must be a positive multiple of 384",
    ),
    ({"num_experts": lambda a: 8}, ValueError, "argument 'l1_weights' must have shape [8, 256, 64]"),
    ({"num_topk": lambda a: 3}, ValueError, "argument 'sym_buffer' has"),
    ({"recipe": lambda a: [1, 1, 128]}, ValueError, "argument 'recipe' must be (1, 1, 32)"),
    ({"recipe": lambda a: [1, 32]}, ValueError, "argument 'recipe' must have 3 entries"),
    ({"activation": lambda a: "situ"}, ValueError, "argument 'activation' must be 'swiglu', got 'situ'"),
    ({"activation_clamp": lambda a: -1.0}, ValueError, "argument 'activation_clamp' must be non-negative"),
]


def _mutable(buf, args):
    return [args[0].clone(), args[9].clone(), buf.buffer.clone()]


@pytest.mark.parametrize(
    "change,exc,message", FP8_ERRORS, ids=[f"{next(iter(c))}-{i}" for i, (c, _, _) in enumerate(FP8_ERRORS)]
)
def test_fp8_errors_name_the_argument_and_write_nothing(change, exc, message) -> None:
    _, buf, args = _fp8_setup()
    ((name, make),) = change.items()
    i = NAMES.index(name)
    args[i] = make(args[i])
    before = _mutable(buf, args)
    with pytest.raises(exc, match="^fp8_fp4_mega_moe: " + re.escape(message)):
        torch.ops.deep_gemm.fp8_fp4_mega_moe(*args)
    for b, a in zip(before, [args[0], args[9], buf.buffer]):
        assert torch.equal(b, a)


@pytest.mark.parametrize(
    "slot_value,message",
    [
        (4, "argument 'sym_buffer' stages topk_idx[2, 1] = 4, outside [-1, num_experts = 4)"),
        (-2, "argument 'sym_buffer' stages topk_idx[2, 1] = -2, outside [-1, num_experts = 4)"),
        ("dup", "argument 'sym_buffer' stages token 2 with expert 3 twice in topk_idx; a token picks distinct experts"),
    ],
)
def test_bad_staged_routing_is_rejected(slot_value, message) -> None:
    _, buf, args = _fp8_setup()
    buf.topk_idx[:4] = torch.tensor([[0, 1], [1, -1], [3, 2], [2, 0]])
    buf.topk_idx[2, 1] = 3 if slot_value == "dup" else slot_value
    before = _mutable(buf, args)
    for call in (
        lambda: torch.ops.deep_gemm.fp8_fp4_mega_moe(*args),
        lambda: mega.fp8_fp4_mega_moe(args[0], (args[1], args[2]), (args[3], args[4]), buf, args[9]),
    ):
        with pytest.raises(ValueError, match="^fp8_fp4_mega_moe: " + re.escape(message)):
            call()
    assert torch.equal(before[0], args[0]) and torch.equal(before[1], args[9]) and torch.equal(before[2], buf.buffer)


def test_bad_received_rows_are_rejected() -> None:
    p = make_problem(_seed(), "bf16xbf16", [2, 2], 4, 2, 64, 16)
    num_bytes, info = _C.get_symm_buffer_size_for_mega_moe(2, 4, ALIGN, 2, 64, 16, "bf16xbf16", "swiglu")
    buffer = torch.zeros(num_bytes, dtype=torch.int8)
    views = region_views("test", buffer, info)
    w1, w2 = p.local_weights(0)
    args = (
        torch.zeros(2, 64, dtype=torch.bfloat16),
        w1,
        w2,
        None,
        None,
        None,
        buffer,
        [0, 0],
        0,
        ALIGN,
        4,
        2,
        "swiglu",
        None,
        True,
    )
    views["workspace"][0] = 10**6
    with pytest.raises(
        ValueError,
        match=re.escape(
            "argument 'sym_buffer' holds 1000000 received rows in workspace[0]; expected 0 to the receive capacity 1536"
        ),
    ):
        torch.ops.deep_gemm.bf16_mega_moe(*args)
    views["workspace"][0] = 3
    views["recv_info"][1] = torch.tensor([0, 1, 0, 2])
    with pytest.raises(
        ValueError, match=re.escape("argument 'sym_buffer' holds received row 1 with local expert 2, outside [0, 2)")
    ):
        torch.ops.deep_gemm.bf16_mega_moe(*args)
    views["recv_info"][1] = torch.tensor([2, 1, 0, 1])
    with pytest.raises(ValueError, match=re.escape("received row 1 with source rank 2, outside [0, 2)")):
        torch.ops.deep_gemm.bf16_mega_moe(*args)


def test_bf16_and_wrapper_errors() -> None:
    p = make_problem(_seed(), "bf16xbf16", [3], 2, 1, 64, 16)
    buf = symm_buffer(p)
    stage(buf, p, 0)
    w1, w2 = p.local_weights(0)
    y = torch.zeros(3, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=re.escape("bf16_mega_moe: argument 'l1_weights' must be BFloat16, got Float")):
        mega.bf16_mega_moe(y, w1.float(), w2, buf)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "bf16_mega_moe: argument 'l2_weights' must have an intermediate size (size(2)) that is a positive multiple of 8, got 12"
        ),
    ):
        mega.bf16_mega_moe(y, w1, w2[:, :, :12], buf)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "fp8_fp4_mega_moe: argument 'sym_buffer' was built for mma_type 'bf16xbf16'; fp8_fp4_mega_moe needs 'fp8xfp4'"
        ),
    ):
        mega.fp8_fp4_mega_moe(y, (w1, w1), (w2, w2), buf)
    with pytest.raises(
        TypeError, match=re.escape("fp8_fp4_mega_moe: argument 'l1_weights' must be a (data, sf) pair, got Tensor")
    ):
        mega.fp8_fp4_mega_moe(y, w1, (w2, w2), buf)
    with pytest.raises(
        TypeError, match=re.escape("bf16_mega_moe: argument 'sym_buffer' must be a SymmBuffer, got Tensor")
    ):
        mega.bf16_mega_moe(y, w1, w2, buf.buffer)
    buf.destroy()
    with pytest.raises(ValueError, match=re.escape("bf16_mega_moe: argument 'sym_buffer' was destroyed")):
        mega.bf16_mega_moe(y, w1, w2, buf)


def test_situ_parameters_are_rejected() -> None:
    args = _fp8_setup()[2]
    with pytest.raises(
        ValueError, match=re.escape("fp8_fp4_mega_moe: argument 'situ_beta' only applies to activation 'situ'")
    ):
        torch.ops.deep_gemm.fp8_fp4_mega_moe(*args, situ_beta=1.0)


def test_sum_combined() -> None:
    combine = torch.randn(3, ALIGN, 16).bfloat16()
    idx = torch.randint(-1, 4, (ALIGN, 3))
    y = torch.empty(5, 16, dtype=torch.bfloat16)
    torch.ops.deep_gemm._sum_combined_for_mega_moe(y, combine, idx)
    want = torch.zeros(5, 16)
    for k in range(3):
        want = want + torch.where(idx[:5, k, None] >= 0, combine[k, :5].float(), 0.0)
    assert torch.equal(y, want.bfloat16())
    with pytest.raises(
        ValueError,
        match=re.escape("_sum_combined_for_mega_moe: argument 'topk_idx' must be [T_max >= 5, 3], got [384, 2]"),
    ):
        _C._sum_combined_for_mega_moe(y, combine, idx[:, :2])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "_sum_combined_for_mega_moe: argument 'combine' must be [num_topk, T_max >= 5, 16] to cover 'y'"
        ),
    ):
        _C._sum_combined_for_mega_moe(y, combine[:, :4], idx)


def test_fused_ops_stay_on_C_only() -> None:
    for name in ("fp8_fp4_mega_moe", "bf16_mega_moe", "_sum_combined_for_mega_moe"):
        assert hasattr(_C, name) and name not in _C.__all__
        assert getattr(deep_gemm, name, None) is not getattr(_C, name)  # deep_gemm may carry the mega wrapper


# ---- several ranks over gloo -----------------------------------------------------------------


def test_two_ranks_gloo() -> None:
    spawn(two_rank_worker, 2, (_seed(),))


def test_four_ranks_gloo() -> None:
    spawn(four_rank_worker, 4, (_seed(),))


# ---- opcheck ----------------------------------------------------------------------------------

OPS = ("fp8_fp4_mega_moe", "bf16_mega_moe", "_sum_combined_for_mega_moe")
