"""Samples for the attention family, and the input builders its tests share.

The builders make random, valid inputs in the layouts of the ops' docs (docs/ops.md: fp8_fp4_mqa_logits,
fp8_fp4_paged_mqa_logits):
FP8 queries without scales, FP4 queries/keys with UE8M0 scales of granularity
32 along D, and a paged KV cache whose blocks hold ``block_kv`` tokens' values
followed by their 4-byte scales.  Each builder also returns the quantized
tokens it encoded, so a reference can read the cache without decoding bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from deep_gemm.utils import per_custom_dims_cast_to_fp8, per_token_cast_to_fp4
from tests.support.operands import fp8_per_block, fp8_per_token

from . import Sample, samples

FP8 = torch.float8_e4m3fn


# ---- queries and keys ------------------------------------------------------


def quantize_rows(x: torch.Tensor, fp4: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """float [..., D] -> (FP8 [..., D], float32 [...]) one scale per row, or
    (FP4 int8 [..., D/2], packed UE8M0 int32 [...]) with scales per 32 values."""
    lead, d = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, d)
    if fp4 and flat.shape[0] == 0:  # per_token_cast_to_fp4 cannot reshape zero rows
        return x.new_empty((*lead, d // 2), dtype=torch.int8), x.new_empty(lead, dtype=torch.int32)
    if fp4:
        data, sf = per_token_cast_to_fp4(flat, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
        assert sf.shape[1] == 1  # D <= 128: one int32 word of exponent bytes per row
        return data.view(*lead, d // 2), sf.view(*lead)
    data, sf = per_custom_dims_cast_to_fp8(flat, (0,), use_ue8m0=False)
    return data.view(*lead, d), sf.view(*lead)


def make_query(shape: tuple[int, ...], fp4: bool, device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(FP8 q [..., H, D], None) or (FP4 q [..., H, D/2], int32 q_sf [..., H])."""
    x = torch.randn(*shape, device=device)
    if fp4:
        return quantize_rows(x, True)
    return x.to(FP8), None


@dataclass
class MqaInputs:
    q: torch.Tensor
    q_sf: torch.Tensor | None
    kv: torch.Tensor
    kv_sf: torch.Tensor
    weights: torch.Tensor
    ks: torch.Tensor
    ke: torch.Tensor

    def args(self) -> tuple:
        return (self.q, self.q_sf, self.kv, self.kv_sf, self.weights, self.ks, self.ke)


def key_ranges(s: int, s_kv: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Random [ks, ke) per query inside [0, s_kv], some of them empty."""
    ks = torch.randint(0, s_kv + 1, (s,))
    ke = ks + (torch.rand(s) * (s_kv + 1 - ks)).long()
    if s > 1:
        ke[0] = ks[0]  # one empty range
    return ks.to(torch.int32).to(device), ke.to(torch.int32).to(device)


def mqa_inputs(
    s: int, s_kv: int, h: int, d: int, fp4: bool, device: torch.device, weights_dtype: torch.dtype = torch.float32
) -> MqaInputs:
    q, q_sf = make_query((s, h, d), fp4, device)
    kv, kv_sf = quantize_rows(torch.randn(s_kv, d, device=device), fp4)
    weights = torch.randn(s, h, device=device).to(weights_dtype)
    ks, ke = key_ranges(s, s_kv, device)
    return MqaInputs(q, q_sf, kv, kv_sf, weights, ks, ke)


# ---- the paged KV cache ------------------------------------------------------


@dataclass
class PagedInputs:
    q: torch.Tensor
    q_sf: torch.Tensor | None
    kv_cache: torch.Tensor
    weights: torch.Tensor
    context_lens: torch.Tensor
    block_table: torch.Tensor
    indices: torch.Tensor | None
    tokens: torch.Tensor  # quantized values per physical block: [num_blocks, block_kv, D or D/2]
    token_sf: torch.Tensor  # their scales: [num_blocks, block_kv] (float32 or packed int32)
    max_context_len: int

    @property
    def block_kv(self) -> int:
        return self.kv_cache.shape[1]


def encode_kv_cache(tokens: torch.Tensor, token_sf: torch.Tensor, pad: int = 0) -> torch.Tensor:
    """Lay quantized tokens out as the paged cache of fp8_fp4_paged_mqa_logits's doc: per block, block_kv token rows of
    values, then block_kv 4-byte scales; ``pad`` extra bytes (a multiple of 4) between blocks."""
    nb, bk, vb = tokens.shape
    values = tokens.contiguous().view(torch.uint8).reshape(nb, bk * vb)
    scales = token_sf.contiguous().view(torch.uint8).reshape(nb, bk * 4)
    block_bytes = bk * (vb + 4)
    storage = torch.full((nb, block_bytes + pad), 0xA5, dtype=torch.uint8, device=tokens.device)
    storage[:, : bk * vb] = values
    storage[:, bk * vb : block_bytes] = scales
    return storage.as_strided((nb, bk, 1, vb + 4), (block_bytes + pad, vb + 4, vb + 4, 1))


def paged_inputs(
    batch: int,
    next_n: int,
    h: int,
    d: int,
    block_kv: int,
    fp4: bool,
    device: torch.device,
    max_context_len: int,
    *,
    num_seqs: int | None = None,
    logits_bf16_weights: bool = False,
    pad: int = 0,
) -> PagedInputs:
    """Decode inputs.  num_seqs set: the varlen form (next_n must be 1), query b reading sequence
    indices[b] of num_seqs.  Block-table entries past a sequence's blocks hold junk ids."""
    varlen = num_seqs is not None
    seqs = num_seqs if varlen else batch
    # Context length of every query row, and the longest per sequence.
    base = torch.randint(next_n, max_context_len + 1, (batch,))
    context_lens = (base.unsqueeze(1) - (next_n - 1) + torch.arange(next_n)).to(torch.int32)
    if batch > 1:
        context_lens[1, :] = torch.arange(next_n, dtype=torch.int32)  # short rows, one of length 0
    if varlen:
        indices = torch.randint(0, seqs, (batch,))
        seq_len = torch.zeros(seqs, dtype=torch.long)
        for b in range(batch):
            seq_len[indices[b]] = max(int(seq_len[indices[b]]), int(context_lens[b].max()))
    else:
        indices = None
        seq_len = context_lens.max(dim=1).values.long()
    blocks_per_seq = [(int(n) + block_kv - 1) // block_kv for n in seq_len]
    max_blocks = max([*blocks_per_seq, 1]) + 1
    num_blocks = sum(blocks_per_seq) + 3  # a few blocks nobody reads
    perm = torch.randperm(num_blocks)
    block_table = torch.randint(-5, 10**6, (seqs, max_blocks))  # junk past each sequence's blocks
    used = 0
    for s, n in enumerate(blocks_per_seq):
        block_table[s, :n] = perm[used : used + n]
        used += n
    tokens, token_sf = quantize_rows(torch.randn(num_blocks, block_kv, d, device=device), fp4)
    q, q_sf = make_query((batch, next_n, h, d), fp4, device)
    weights_dtype = torch.bfloat16 if logits_bf16_weights else torch.float32
    return PagedInputs(
        q=q,
        q_sf=q_sf,
        kv_cache=encode_kv_cache(tokens, token_sf, pad),
        weights=torch.randn(batch * next_n, h, device=device).to(weights_dtype),
        context_lens=context_lens.to(device),
        block_table=block_table.to(torch.int32).to(device),
        indices=None if indices is None else indices.to(torch.int32).to(device),
        tokens=tokens,
        token_sf=token_sf,
        max_context_len=max_context_len,
    )


def schedule_for(p: PagedInputs) -> torch.Tensor:
    """The schedule the paged op expects (an input builder, not a reference)."""
    ops = torch.ops.deep_gemm
    return ops.get_paged_mqa_logits_metadata(p.context_lens, p.block_kv, ops.get_num_sms(), p.indices)


def paged_args(p: PagedInputs) -> tuple:
    """Schema-form positional arguments of fp8_fp4_paged_mqa_logits up to max_context_len."""
    return (p.q, p.q_sf, p.kv_cache, p.weights, p.context_lens, p.block_table, schedule_for(p), p.max_context_len)


# ---- samples -----------------------------------------------------------------


@samples("fp8_gemm_nt_skip_head_mid")
def _skip_head_mid(device: torch.device) -> list[Sample]:
    out = []
    for m, heads, splits, k in [(1, 2, (16, 8, 16), 128), (33, 3, (32, 16, 8), 256), (5, 2, (8, 0, 24), 200)]:
        left, mid, right = splits
        a, b = fp8_per_token(m, k, device), fp8_per_block(heads * (left + right), k, device)
        d = torch.randn(m, heads * (left + mid + right), device=device).to(torch.bfloat16)
        out.append(Sample(f"m{m}_h{heads}_{left}-{mid}-{right}_k{k}", (*a, *b, d, list(splits))))
    a, b = fp8_per_token(4, 256, device, packed=True), fp8_per_token(2 * 48, 256, device, packed=True)
    d = torch.randn(4, 2 * 64, device=device).to(torch.bfloat16)
    out.append(Sample("packed_ue8m0", (*a, *b, d, [32, 16, 16]), {"recipe": [1, 1, 128]}))
    a, b = fp8_per_token(0, 128, device), fp8_per_block(32, 128, device)
    out.append(Sample("m0", (*a, *b, torch.empty(0, 64, device=device, dtype=torch.bfloat16), [8, 16, 8])))
    return out


@samples("fp8_fp4_mqa_logits")
def _mqa(device: torch.device) -> list[Sample]:
    out = []
    for s, s_kv, h, d, fp4 in [
        (1, 1, 8, 32, False),
        (5, 37, 16, 64, False),
        (9, 70, 32, 128, True),
        (3, 0, 8, 64, True),
    ]:
        x = mqa_inputs(s, s_kv, h, d, fp4, device)
        out.append(Sample(f"{'fp4' if fp4 else 'fp8'}_s{s}_kv{s_kv}_h{h}_d{d}", x.args()))
    x = mqa_inputs(6, 50, 8, 64, False, device, weights_dtype=torch.bfloat16)
    out.append(Sample("bf16_logits", x.args(), {"logits_dtype": torch.bfloat16}))
    x = mqa_inputs(7, 90, 16, 128, True, device)
    out.append(Sample("compressed", x.args(), {"clean_logits": False, "max_seqlen_k": 40}))
    x = mqa_inputs(0, 12, 64, 32, False, device)
    out.append(Sample("s0", x.args()))
    return out


@samples("fp8_mqa_logits")
def _fp8_mqa(device: torch.device) -> list[Sample]:
    out = []
    for s, s_kv, h, d in [(1, 3, 8, 32), (6, 41, 64, 128)]:
        x = mqa_inputs(s, s_kv, h, d, False, device)
        out.append(Sample(f"s{s}_kv{s_kv}_h{h}_d{d}", (x.q, x.kv, x.kv_sf, x.weights, x.ks, x.ke)))
    x = mqa_inputs(4, 33, 16, 64, False, device)
    out.append(
        Sample("compressed", (x.q, x.kv, x.kv_sf, x.weights, x.ks, x.ke), {"clean_logits": False, "max_seqlen_k": 9})
    )
    return out


@samples("get_paged_mqa_logits_metadata")
def _metadata(device: torch.device) -> list[Sample]:
    lens = torch.tensor([[100], [0], [33], [64]], dtype=torch.int32, device=device)
    lens2 = torch.randint(0, 500, (5, 2), dtype=torch.int32, device=device)
    return [
        Sample("next_n1", (lens, 32, 4)),
        Sample("next_n2_b64", (lens2, 64, 7)),
        Sample("one_unit", (lens2, 32, 1)),
        Sample("varlen", (lens, 64, 3, torch.tensor([0, 2, 1, 0], dtype=torch.int32, device=device))),
        Sample("empty_batch", (torch.zeros(0, 1, dtype=torch.int32, device=device), 32, 5)),
    ]


@samples("fp8_fp4_paged_mqa_logits")
def _paged(device: torch.device) -> list[Sample]:
    out = []
    for b, n, h, d, bk, fp4, ctx in [
        (3, 1, 8, 64, 32, False, 100),
        (2, 2, 16, 128, 64, False, 150),
        (3, 2, 8, 64, 32, True, 70),
    ]:
        p = paged_inputs(b, n, h, d, bk, fp4, device, ctx, pad=8)
        out.append(Sample(f"{'fp4' if fp4 else 'fp8'}_b{b}_n{n}_h{h}_d{d}_bk{bk}", paged_args(p)))
    p = paged_inputs(4, 1, 8, 32, 32, False, device, 80, num_seqs=2)
    out.append(Sample("varlen", paged_args(p), {"indices": p.indices}))
    p = paged_inputs(2, 1, 32, 128, 64, True, device, 64, logits_bf16_weights=True)
    out.append(Sample("bf16_logits", paged_args(p), {"logits_dtype": torch.bfloat16}))
    return out


@samples("fp8_paged_mqa_logits")
def _fp8_paged(device: torch.device) -> list[Sample]:
    out = []
    for b, n, bk in [(1, 1, 64), (2, 2, 32)]:
        p = paged_inputs(b, n, 16, 64, bk, False, device, 90)
        q, _, *rest = paged_args(p)
        out.append(Sample(f"b{b}_n{n}_bk{bk}", (q, *rest)))
    p = paged_inputs(3, 1, 8, 32, 32, False, device, 40, num_seqs=2)
    q, _, *rest = paged_args(p)
    out.append(Sample("varlen", (q, *rest), {"indices": p.indices}))
    return out
