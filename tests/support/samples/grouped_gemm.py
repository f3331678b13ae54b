"""Samples for the grouped GEMMs and the cuBLASLt GEMMs of the gemm family.

The input builders here are shared with tests/ops/test_grouped_gemm.py, which
checks the same inputs against float64 references.
"""

from __future__ import annotations

import torch

from deep_gemm.utils import align, pack_ue8m0_to_int, per_channel_cast_to_fp8
from tests.support.operands import fp4_per_token, fp8_per_block, fp8_per_token, randn

from . import Sample, samples

ALIGNMENT = 128  # get_mk_alignment_for_contiguous_layout() by default

# ---- builders ------------------------------------------------------------------------


def stack_pairs(pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def grouped_b(groups: int, n: int, k: int, device: torch.device, kind: str = "block"):
    """(B [G, N, K], SFB [G, ...]): kind 'block' (128x128 float32), 'token' (1x128 float32),
    'packed' (1x128 UE8M0 int32) or 'fp4' (FP4 with 1x32 packed UE8M0 scales)."""
    make = {
        "block": lambda: fp8_per_block(n, k, device),
        "token": lambda: fp8_per_token(n, k, device),
        "packed": lambda: fp8_per_token(n, k, device, packed=True),
        "fp4": lambda: fp4_per_token(n, k, device),
    }[kind]
    return stack_pairs([make() for _ in range(groups)])


def recipe_kwargs(kind: str) -> dict[str, object]:
    if kind == "fp4":
        return {"recipe_a": (1, 128), "recipe_b": (1, 32)}
    if kind == "token":
        return {"recipe": (1, 1, 128)}
    return {}


def row_ids(group_rows: list[int], pad: int = 0, device: torch.device | str = "cpu") -> torch.Tensor:
    """Per-row group ids: group g repeated group_rows[g] times, each group followed by `pad` rows of -1."""
    ids: list[int] = []
    for g, rows in enumerate(group_rows):
        ids += [g] * rows + [-1] * pad
    return torch.tensor(ids, dtype=torch.int32, device=device)


def psum_ends(group_rows: list[int], alignment: int = ALIGNMENT) -> list[int]:
    """End rows of a psum layout: group g starts at align(end[g-1])."""
    ends, prev = [], 0
    for rows in group_rows:
        prev = align(prev, alignment) + rows
        ends.append(prev)
    return ends


def k_grouped_fp8(
    ks: list[int],
    mn: int,
    device: torch.device | str = "cpu",
    gran_k: int = 128,
    packed: bool = False,
    psum: bool = False,
    alignment: int = ALIGNMENT,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(FP8 [rows, mn], scales) of K-stacked groups with per-channel scales over gran_k rows of a group.

    Groups follow each other (psum=False) or start at the aligned end of the previous one (psum=True).
    Scales are float32 [sum ceil(k/gran_k), mn], or packed UE8M0 words of 4 blocks [sum words, mn].
    """
    ends = psum_ends(ks, alignment) if psum else [sum(ks[: i + 1]) for i in range(len(ks))]
    rows = ends[-1] if ends else 0
    data = torch.zeros(rows, mn, dtype=torch.float8_e4m3fn, device=device)
    sfs = []
    for k, end in zip(ks, ends):
        if k == 0:
            continue
        block = torch.zeros(align(k, gran_k), mn, device=device)
        block[:k] = randn(k, mn, device=device)
        q, sf = per_channel_cast_to_fp8(block, use_ue8m0=packed, gran_k=gran_k)
        data[end - k : end] = q[:k]
        if packed:
            sf_t = sf.t()
            pad = align(sf_t.shape[1], 4) - sf_t.shape[1]
            sf = pack_ue8m0_to_int(torch.nn.functional.pad(sf_t, (0, pad), value=1.0)).t()
        sfs.append(sf)
    dtype = torch.int32 if packed else torch.float32
    sf = torch.cat(sfs).contiguous() if sfs else torch.empty(0, mn, dtype=dtype, device=device)
    return data, sf


def k_major_flat(data: torch.Tensor, sf: torch.Tensor, ks: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """K-stacked [sum K, mn] data -> the K-major flat form (group g as [mn, k_g] row-major), scales transposed."""
    blocks, start = [], 0
    for k in ks:
        blocks.append(data[start : start + k].t().contiguous().flatten())
        start += k
    flat = torch.cat(blocks) if blocks else torch.empty(0, dtype=data.dtype, device=data.device)
    return flat, sf.t()


def bf16(*shape: int, device: torch.device | str = "cpu") -> torch.Tensor:
    return randn(*shape, device=device, dtype=torch.bfloat16)


# ---- M-grouped contiguous ------------------------------------------------------------

M_CASES = [
    # name, rows per group, padding rows after each group, N, K, B kind
    ("ids_padded", [3, 1, 4], 2, 64, 256, "block"),
    ("empty_group_m1", [1, 0, 5, 1], 0, 48, 128, "token"),
    ("packed_ue8m0", [2, 3], 1, 32, 256, "packed"),
    ("fp4_b", [4, 2], 1, 32, 128, "fp4"),
    ("odd_n_k200", [2, 2], 0, 24, 200, "block"),
]


def _m_contiguous(device: torch.device, nn: bool) -> list[Sample]:
    out = []
    for name, rows, pad, n, k, kind in M_CASES:
        ids = row_ids(rows, pad, device)
        m = ids.numel()
        a = fp8_per_token(m, k, device)
        b, sfb = grouped_b(len(rows), n, k, device, kind)
        if nn:
            if kind == "fp4":
                continue
            b, sfb = b.transpose(1, 2).contiguous(), sfb.transpose(1, 2).contiguous()
        d = randn(m, n, device=device, dtype=torch.bfloat16)
        out.append(Sample(name, (*a, b, sfb, d, ids), recipe_kwargs(kind)))
    # psum layout: unaligned ends, zero padding between groups.
    group_rows = [5, 0, 130, 1]
    ends = psum_ends(group_rows)
    m = align(ends[-1], ALIGNMENT)
    a = fp8_per_token(m, 128, device)
    b, sfb = grouped_b(len(group_rows), 32, 128, device, "token")
    if nn:
        b, sfb = b.transpose(1, 2).contiguous(), sfb.transpose(1, 2).contiguous()
    psum = torch.tensor(ends, dtype=torch.int32, device=device)
    kwargs: dict[str, object] = {"recipe": (1, 1, 128), "use_psum_layout": True}
    if not nn:
        kwargs["expected_m_for_psum_layout"] = 40
    d = randn(m, 32, device=device, dtype=torch.bfloat16)
    out.append(Sample("psum_zero_padding", (*a, b, sfb, d, psum), kwargs))
    out.append(Sample("psum_keep_padding", (*a, b, sfb, d.clone(), psum), {**kwargs, "ensure_zero_padding": False}))
    # No rows at all.
    a = fp8_per_token(0, 128, device)
    b, sfb = grouped_b(2, 32, 128, device, "block")
    if nn:
        b, sfb = b.transpose(1, 2).contiguous(), sfb.transpose(1, 2).contiguous()
    ids = torch.empty(0, dtype=torch.int32, device=device)
    out.append(Sample("m0", (*a, b, sfb, torch.empty(0, 32, device=device, dtype=torch.bfloat16), ids)))
    return out


@samples("m_grouped_fp8_fp4_gemm_nt_contiguous")
def _m_nt(device: torch.device) -> list[Sample]:
    return _m_contiguous(device, nn=False)


@samples("m_grouped_fp8_fp4_gemm_nn_contiguous")
def _m_nn(device: torch.device) -> list[Sample]:
    return _m_contiguous(device, nn=True)


def _m_bf16(device: torch.device, nn: bool) -> list[Sample]:
    out = []
    for name, rows, pad, n, k, _ in M_CASES:
        ids = row_ids(rows, pad, device)
        m = ids.numel()
        b = bf16(len(rows), k, n, device=device) if nn else bf16(len(rows), n, k, device=device)
        out.append(Sample(name, (bf16(m, k, device=device), b, bf16(m, n, device=device), ids)))
    group_rows = [3, 129, 0]
    ends = psum_ends(group_rows)
    m = align(ends[-1], ALIGNMENT)
    b = bf16(3, 64, 16, device=device) if nn else bf16(3, 16, 64, device=device)
    psum = torch.tensor(ends, dtype=torch.int32, device=device)
    out.append(
        Sample("psum", (bf16(m, 64, device=device), b, bf16(m, 16, device=device), psum), {"use_psum_layout": True})
    )
    # No rows at all.
    b = bf16(2, 64, 16, device=device) if nn else bf16(2, 16, 64, device=device)
    ids = torch.empty(0, dtype=torch.int32, device=device)
    out.append(Sample("m0", (bf16(0, 64, device=device), b, bf16(0, 16, device=device), ids)))
    return out


@samples("m_grouped_bf16_gemm_nt_contiguous")
def _mb_nt(device: torch.device) -> list[Sample]:
    return _m_bf16(device, nn=False)


@samples("m_grouped_bf16_gemm_nn_contiguous")
def _mb_nn(device: torch.device) -> list[Sample]:
    return _m_bf16(device, nn=True)


# ---- M-grouped masked ------------------------------------------------------------------

MASKED_CASES = [
    # name, masked_m, max_m, N, K, kind
    ("masked", [3, 0, 7], 8, 64, 256, "block"),
    ("m1_full", [1, 1], 1, 32, 128, "token"),
    ("packed", [2, 5], 6, 48, 128, "packed"),
    ("fp4_b", [4, 1], 4, 32, 256, "fp4"),
]


@samples("m_grouped_fp8_fp4_gemm_nt_masked")
def _masked(device: torch.device) -> list[Sample]:
    out = []
    for name, masked, max_m, n, k, kind in MASKED_CASES:
        g = len(masked)
        a = stack_pairs([fp8_per_token(max_m, k, device, packed=kind == "packed") for _ in range(g)])
        b = grouped_b(g, n, k, device, kind)
        d = randn(g, max_m, n, device=device, dtype=torch.bfloat16)
        mm = torch.tensor(masked, dtype=torch.int32, device=device)
        out.append(Sample(name, (*a, *b, d, mm, max(1, max(masked))), recipe_kwargs(kind)))
    return out


@samples("m_grouped_bf16_gemm_nt_masked")
def _masked_bf16(device: torch.device) -> list[Sample]:
    out = []
    for name, masked, max_m, n, k, _ in MASKED_CASES:
        g = len(masked)
        mm = torch.tensor(masked, dtype=torch.int32, device=device)
        args = (bf16(g, max_m, k, device=device), bf16(g, n, k, device=device), bf16(g, max_m, n, device=device))
        out.append(Sample(name, (*args, mm, 4)))
    return out


# ---- K-grouped ----------------------------------------------------------------------------

K_CASES = [
    # name, ks, M, N
    ("ks", [128, 256], 16, 24),
    ("empty_group", [128, 0, 128], 8, 12),
]


def _layout(values: list[int], device: torch.device) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32, device=device)


@samples("k_grouped_fp8_gemm_tn_contiguous")
def _k_tn(device: torch.device) -> list[Sample]:
    out = []
    for name, ks, m, n in K_CASES:
        a, b = k_grouped_fp8(ks, m, device), k_grouped_fp8(ks, n, device)
        d = randn(len(ks), m, n, device=device)
        out.append(Sample(name, (*a, *b, d, ks, _layout(ks, device), d)))
    ks = [128, 0, 256]
    a, b = k_grouped_fp8(ks, 8, device, packed=True, gran_k=32), k_grouped_fp8(ks, 16, device, gran_k=32)
    d, c = randn(3, 8, 16, device=device), randn(3, 8, 16, device=device)
    out.append(Sample("packed_gran32_separate_c", (*a, *b, d, ks, _layout(ks, device), c), {"recipe": (1, 1, 32)}))
    ks = [5, 0, 130]
    a, b = k_grouped_fp8(ks, 8, device, psum=True), k_grouped_fp8(ks, 12, device, psum=True)
    d = randn(3, 8, 12, device=device)
    ends = _layout(psum_ends(ks), device)
    out.append(Sample("psum_unaligned", (*a, *b, d, ks, ends, d), {"use_psum_layout": True}))
    d = randn(3, 8, 12, device=device)
    out.append(
        Sample(
            "psum_no_ks",
            (*a, *b, d, None, ends, d),
            {"use_psum_layout": True},
            graphable_reason="without ks_cpu the group sizes are read from grouped_layout",
        )
    )
    return out


@samples("k_grouped_fp8_gemm_nt_contiguous")
def _k_nt(device: torch.device) -> list[Sample]:
    out = []
    for name, ks, m, n in K_CASES:
        a = k_major_flat(*k_grouped_fp8(ks, m, device), ks)
        b = k_major_flat(*k_grouped_fp8(ks, n, device), ks)
        d = randn(len(ks), m, n, device=device)
        out.append(Sample(name, (*a, *b, d, ks, _layout(ks, device), d)))
    return out


@samples("k_grouped_bf16_gemm_tn_contiguous")
def _k_bf16(device: torch.device) -> list[Sample]:
    out = []
    for name, ks, m, n in K_CASES:
        d = randn(len(ks), m, n, device=device)
        args = (bf16(sum(ks), m, device=device), bf16(sum(ks), n, device=device), d)
        out.append(Sample(name, (*args, ks, _layout(ks, device), d)))
    ks = [3, 0, 129]
    rows = psum_ends(ks)[-1]
    d, c = randn(3, 4, 8, device=device), randn(3, 4, 8, device=device)
    args = (bf16(rows, 4, device=device), bf16(rows, 8, device=device), d)
    out.append(
        Sample(
            "psum_no_ks",
            (*args, None, _layout(psum_ends(ks), device), c),
            {"use_psum_layout": True},
            graphable_reason="without ks_cpu the group sizes are read from grouped_layout",
        )
    )
    return out


# ---- cuBLASLt (every build: the ATen reference on the CPU) -------------------------------------


def _cublaslt(device: torch.device, ta: bool, tb: bool) -> list[Sample]:
    out = []
    for name, dtype, out_dtype, m, n, k in [
        ("bf16", torch.bfloat16, torch.bfloat16, 8, 24, 64),
        ("fp32_m1", torch.float32, torch.float32, 1, 16, 32),
        ("fp8", torch.float8_e4m3fn, torch.bfloat16, 4, 32, 64),
    ]:
        a = randn(k, m, device=device, dtype=dtype) if ta else randn(m, k, device=device, dtype=dtype)
        b = randn(k, n, device=device, dtype=dtype) if tb else randn(n, k, device=device, dtype=dtype)
        out.append(Sample(name, (a, b, randn(m, n, device=device, dtype=out_dtype))))
    a = randn(16, 8, device=device, dtype=torch.bfloat16)
    a = a.t().contiguous() if not ta else a
    b = randn(16, 12, device=device, dtype=torch.bfloat16)
    b = b.t().contiguous() if not tb else b
    d = randn(8, 12, device=device)
    out.append(Sample("fp32_accumulate", (a, b, d, d)))
    return out


@samples("cublaslt_gemm_nt")
def _lt_nt(device: torch.device) -> list[Sample]:
    return _cublaslt(device, False, False)


@samples("cublaslt_gemm_nn")
def _lt_nn(device: torch.device) -> list[Sample]:
    return _cublaslt(device, False, True)


@samples("cublaslt_gemm_tn")
def _lt_tn(device: torch.device) -> list[Sample]:
    return _cublaslt(device, True, True)


@samples("cublaslt_gemm_tt")
def _lt_tt(device: torch.device) -> list[Sample]:
    return _cublaslt(device, True, False)
