"""Inputs and float64 references for deep_gemm.legacy, shared by tests/ops/test_legacy_module.py and
the Triton-interpreter run of the kernels (``python tests/support/legacy_cases.py``, TRITON_INTERPRET=1).

The references are written from the layouts' definitions (docstring of deep_gemm.legacy) and
call nothing of deep_gemm.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import torch

F64 = torch.float64


@dataclass
class MGrouped:
    a: torch.Tensor  # [rows, K]
    b: torch.Tensor  # [G, N, K] (maybe an N-major view)
    groups: torch.Tensor  # int32 [M]
    row_map: torch.Tensor | None  # int32 [M] or None


def m_grouped_case(
    sizes: list[int], n: int, k: int, alignment: int, dtype: torch.dtype, gather: bool, n_major_b: bool, device: str
) -> MGrouped:
    """Groups of the given real row counts, each padded to `alignment` rows (ids -1), then one
    whole padding block; with `gather`, A has other rows and a row map with some -1 entries."""
    ids: list[int] = []
    for g, s in enumerate(sizes):
        padded = -(-s // alignment) * alignment
        ids += [g] * s + [-1] * (padded - s)
    ids += [-1] * alignment
    m = len(ids)
    groups = torch.tensor(ids, dtype=torch.int32, device=device)
    b = torch.randn(len(sizes), n, k, device=device).to(dtype)
    if n_major_b:
        b = b.transpose(1, 2).contiguous().transpose(1, 2)
    if gather:
        rows = m // 2 + 3
        a = torch.randn(rows, k, device=device).to(dtype)
        row_map = torch.randint(-1, rows, (m,), dtype=torch.int32, device=device)
        return MGrouped(a, b, groups, row_map)
    return MGrouped(torch.randn(m, k, device=device).to(dtype), b, groups, None)


def m_grouped_ref(case: MGrouped) -> tuple[torch.Tensor, torch.Tensor]:
    """(D, sum of |terms|) in float64: row r is A[row] . B[g]^T, zero outside any group or row."""
    a, b = case.a.cpu().to(F64), case.b.cpu().to(F64)
    groups = case.groups.cpu().long()
    rows = torch.arange(groups.numel()) if case.row_map is None else case.row_map.cpu().long()
    m, n = groups.numel(), b.size(1)
    ref, bound = torch.zeros(m, n, dtype=F64), torch.zeros(m, n, dtype=F64)
    for r in range(m):
        g, src = int(groups[r]), int(rows[r])
        if 0 <= g < b.size(0) and 0 <= src < a.size(0):
            ref[r] = b[g] @ a[src]
            bound[r] = b[g].abs() @ a[src].abs()
    return ref, bound


@dataclass
class KGrouped:
    a: torch.Tensor  # [rows or K, M]
    b: torch.Tensor  # [K or rows, N]
    k_map: torch.Tensor  # int32 [K]
    k_start: torch.Tensor  # int32 [G]
    k_end: torch.Tensor  # int32 [G]
    gather_a: bool


def k_grouped_case(
    ks: list[int], m: int, n: int, dtype: torch.dtype, gather_a: bool, device: str, gap: int = 0
) -> KGrouped:
    """Groups of K lengths `ks` laid one after the other (`gap` unused positions between them);
    the fused operand has other rows, the K map some -1 entries."""
    starts, ends, pos = [], [], 0
    for length in ks:
        starts.append(pos)
        ends.append(pos + length)
        pos += length + gap
    k = pos
    rows = max(k // 2, 1) + 5
    fused = torch.randn(rows, m if gather_a else n, device=device).to(dtype)
    plain = torch.randn(k, n if gather_a else m, device=device).to(dtype)
    k_map = torch.randint(-1, rows, (k,), dtype=torch.int32, device=device)
    i32 = dict(dtype=torch.int32, device=device)
    a, b = (fused, plain) if gather_a else (plain, fused)
    return KGrouped(a, b, k_map, torch.tensor(starts, **i32), torch.tensor(ends, **i32), gather_a)


def k_grouped_ref(case: KGrouped, d0: torch.Tensor, acc: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(D, magnitude bound) in float64: D[g] = (d0[g] if acc) + sum over the group's K positions
    of outer(A row, B row), the fused operand's row taken through the K map (-1: nothing)."""
    a, b = case.a.cpu().to(F64), case.b.cpu().to(F64)
    k_map = case.k_map.cpu().long()
    groups, m, n = d0.shape
    ref = d0.cpu().to(F64).clone() if acc else torch.zeros(groups, m, n, dtype=F64)
    bound = ref.abs()
    for g in range(groups):
        for k in range(int(case.k_start[g]), int(case.k_end[g])):
            src = int(k_map[k])
            if src < 0:
                continue
            ra, rb = (a[src], b[k]) if case.gather_a else (a[k], b[src])
            ref[g] += torch.outer(ra, rb)
            bound[g] += torch.outer(ra.abs(), rb.abs())
    return ref, bound


def assert_close(out: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor, k: int, label: str = "") -> None:
    """|out - ref| within a float32 accumulation of k terms plus one rounding into out's dtype."""
    rounding = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}.get(out.dtype, 2.0**-24)
    limit = ((k + 2) * 2.0**-23 + rounding) * bound + 1e-30
    err = (out.cpu().to(F64) - ref).abs()
    assert out.shape == ref.shape, f"{label}: shape {tuple(out.shape)} vs {tuple(ref.shape)}"
    assert not torch.isnan(err).any(), f"{label}: NaN in the output"
    excess = (err - limit).max().item() if err.numel() else -1.0
    assert excess <= 0, f"{label}: max error {err.max().item():.3e} exceeds the bound by {excess:.3e}"


def run_kernels_in_interpreter() -> None:
    """The Triton kernels themselves, in Triton's CPU interpreter, against the references.

    float16 operands: the interpreter multiplies bf16 tiles as raw bits, while the kernels
    are the same for any 16-bit float type (bf16 runs on the GPU tests)."""
    from deep_gemm.legacy import _kernels

    half = torch.float16
    for gather in (False, True):
        for n_major in (False, True):
            case = m_grouped_case([70, 0, 129], 144, 80, 64, half, gather, n_major, "cpu")
            d = torch.full((case.groups.numel(), 144), float("nan"), dtype=half)
            _kernels.launch_m_grouped(case.a, case.b, d, case.groups, case.row_map, 64)
            ref, bound = m_grouped_ref(case)
            assert_close(d, ref, bound, 80, f"m-grouped gather={gather} n_major={n_major}")
    for gather_a in (False, True):
        for acc in (False, True):
            case = k_grouped_case([100, 0, 37, 130], 130, 72, half, gather_a, "cpu", gap=3)
            d0 = torch.randn(4, 130, 72)
            d = d0.clone()
            _kernels.launch_k_grouped(case.a, case.b, d, case.k_map, case.k_start, case.k_end, gather_a, acc)
            ref, bound = k_grouped_ref(case, d0, acc)
            assert_close(d, ref, bound, 130, f"k-grouped gather_a={gather_a} acc={acc}")
    print("legacy kernels: interpreter checks passed")


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    run_kernels_in_interpreter()
