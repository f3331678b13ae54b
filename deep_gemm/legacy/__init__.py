"""BF16 grouped GEMMs under DeepGEMM's ``legacy`` names, for GPUs the sm90a kernels do not target.

On CUDA tensors they run this package's Triton kernels (deep_gemm/legacy/_kernels.py,
imported on first use; Triton ships with CUDA builds of torch). On the CPU they run
the package's reference: the m-grouped ones through ``m_grouped_bf16_gemm_nt_contiguous``,
the k-grouped ones through ATen. Every call writes ``d`` in place and returns None.

Layouts (all index tensors int32, on d's device):
- m-grouped: ``m_indices[r]`` is the group of row r of ``d``, or -1 for a padding row
  (written as zeros). As in every contiguous layout, each group starts at a multiple of
  ``get_mk_alignment_for_contiguous_layout()`` rows, so an aligned block of rows holds one
  group and padding; M must be a multiple of that alignment.
- a_fused m-grouped: row r of ``d`` uses row ``m_row_indices[r]`` of ``a`` (-1: a zero row).
- k-grouped: group g sums over the K positions ``[k_start[g], k_end[g])``; ``k_indices[k]``
  is the row of the fused operand used at position k (-1: a zero row). With ``acc`` the
  sums are added to ``d``, otherwise they replace it (an empty group gives zeros).
Indices outside their table count as zero rows and K ranges are clipped to [0, K).
"""

from __future__ import annotations

import importlib
from types import ModuleType

import torch

from .. import _C

__all__ = [
    "a_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl",
    "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl",
    "b_fused_k_grouped_bf16_gemm_tn_contiguous_tl",
    "m_grouped_bf16_gemm_nn_contiguous_tl",
    "m_grouped_bf16_gemm_nt_contiguous_tl",
]


class _Args:
    """Argument checks of one call; every message starts with the function and the argument."""

    def __init__(self, fn: str) -> None:
        self.fn = fn

    def fail(self, arg: str, what: str) -> None:
        raise ValueError(f"{self.fn}: argument '{arg}' {what}")

    def tensor(
        self, t: object, arg: str, dtypes: tuple[torch.dtype, ...], dim: int, contiguous: bool = True
    ) -> torch.Tensor:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{self.fn}: argument '{arg}' must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype not in dtypes:
            names = " or ".join(str(d).removeprefix("torch.") for d in dtypes)
            self.fail(arg, f"must be {names}, got {str(t.dtype).removeprefix('torch.')}")
        if t.dim() != dim:
            self.fail(arg, f"must be {dim}-D, got {t.dim()}-D {tuple(t.shape)}")
        if contiguous and not t.is_contiguous():
            self.fail(arg, f"must be contiguous, got strides {t.stride()}")
        return t

    def size(self, t: torch.Tensor, arg: str, dim: int, expected: int, why: str) -> None:
        if t.size(dim) != expected:
            self.fail(arg, f"has size {t.size(dim)} in dim {dim}, expected {expected} ({why})")

    def same_device(self, d: torch.Tensor, **others: torch.Tensor) -> None:
        for arg, t in others.items():
            if t.device != d.device:
                self.fail(arg, f"is on {t.device} but 'd' is on {d.device}")

    def pair(self, value: object, arg: str, count: int) -> tuple[object, ...]:
        if not isinstance(value, (tuple, list)) or len(value) != count:
            raise TypeError(f"{self.fn}: argument '{arg}' must be a tuple of {count} tensors, got {value!r:.80}")
        return tuple(value)


def _block_m(fn: str, alignment: int) -> int:
    """The largest tile height (16..128, a power of two) that divides the group alignment."""
    for block in (128, 64, 32, 16):
        if alignment % block == 0:
            return block
    raise ValueError(
        f"{fn}: the contiguous-layout alignment is {alignment}; the Triton kernels need a multiple of 16 "
        "(set_mk_alignment_for_contiguous_layout)"
    )


def _triton() -> ModuleType:
    # Imported by name on first use: Triton is loaded only when a CUDA tensor arrives.
    try:
        return importlib.import_module(f"{__name__}._kernels")
    except ImportError as e:
        raise RuntimeError(f"deep_gemm.legacy needs Triton for CUDA tensors ({e})") from e


_I32 = (torch.int32,)
_BF16 = (torch.bfloat16,)


def _m_grouped(fn: str, a: object, b: object, d: object, m_indices: object, m_row_indices: object | None) -> None:
    args = _Args(fn)
    a = args.tensor(a, "a", _BF16, 2)
    b = args.tensor(b, "b", _BF16, 3, contiguous=False)
    d = args.tensor(d, "d", _BF16, 2)
    index_arg = "mappings[0]" if m_row_indices is not None else "m_indices"
    groups = args.tensor(m_indices, index_arg, _I32, 1)
    args.same_device(d, a=a, b=b, **{index_arg: groups})
    m, n, k = d.size(0), b.size(1), b.size(2)
    args.size(a, "a", 1, k, "K, dim 2 of 'b' in its [G, N, K] form")
    args.size(d, "d", 1, n, "N of 'b'")
    args.size(groups, index_arg, 0, m, "one group id per row of 'd'")
    row_map = None
    if m_row_indices is None:
        args.size(a, "a", 0, m, "one row per row of 'd'")
    else:
        row_map = args.tensor(m_row_indices, "mappings[1]", _I32, 1)
        args.same_device(d, **{"mappings[1]": row_map})
        args.size(row_map, "mappings[1]", 0, m, "one row of 'a' per row of 'd'")
    alignment = _C.get_mk_alignment_for_contiguous_layout()
    if m % alignment:
        args.fail("d", f"has {m} rows, not a multiple of the contiguous-layout alignment {alignment}")
    if m == 0 or n == 0:
        return
    if d.is_cuda:
        _triton().launch_m_grouped(a, b, d, groups, row_map, _block_m(fn, alignment))
        return
    # CPU: gather A's rows, run the package's m-grouped GEMM, zero the rows outside any group.
    if row_map is not None:
        taken = (row_map >= 0) & (row_map < a.size(0))
        a = torch.where(taken.unsqueeze(1), a.index_select(0, torch.where(taken, row_map, 0)), 0)
    if not (b.is_contiguous() or b.mT.is_contiguous()):
        b = b.contiguous()  # the package op takes K-major or N-major weights
    torch.ops.deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, groups)
    outside = (groups < 0) | (groups >= b.size(0))
    d.masked_fill_(outside.unsqueeze(1), 0)


def m_grouped_bf16_gemm_nt_contiguous_tl(
    a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, m_indices: torch.Tensor
) -> None:
    """d [M, N] (bf16) = a [M, K] . b[m_indices[r]]^T per row r; b is [G, N, K]."""
    _m_grouped("m_grouped_bf16_gemm_nt_contiguous_tl", a, b, d, m_indices, None)


def m_grouped_bf16_gemm_nn_contiguous_tl(
    a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, m_indices: torch.Tensor
) -> None:
    """m_grouped_bf16_gemm_nt_contiguous_tl with b given as [G, K, N]."""
    fn = "m_grouped_bf16_gemm_nn_contiguous_tl"
    _m_grouped(fn, a, _Args(fn).tensor(b, "b", _BF16, 3, contiguous=False).mT, d, m_indices, None)


def a_fused_m_grouped_bf16_gemm_nt_contiguous_tl(
    a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, mappings: tuple[torch.Tensor, torch.Tensor]
) -> None:
    """d [M, N] (bf16) = a[m_row_indices[r]] . b[m_indices[r]]^T per row r, with
    mappings = (m_indices, m_row_indices) and b [G, N, K]; a may have any number of rows."""
    fn = "a_fused_m_grouped_bf16_gemm_nt_contiguous_tl"
    m_indices, m_row_indices = _Args(fn).pair(mappings, "mappings", 2)
    _m_grouped(fn, a, b, d, m_indices, m_row_indices)


def a_fused_m_grouped_bf16_gemm_nn_contiguous_tl(
    a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, mappings: tuple[torch.Tensor, torch.Tensor]
) -> None:
    """a_fused_m_grouped_bf16_gemm_nt_contiguous_tl with b given as [G, K, N]."""
    fn = "a_fused_m_grouped_bf16_gemm_nn_contiguous_tl"
    args = _Args(fn)
    m_indices, m_row_indices = args.pair(mappings, "mappings", 2)
    _m_grouped(fn, a, args.tensor(b, "b", _BF16, 3, contiguous=False).mT, d, m_indices, m_row_indices)


def _k_grouped(fn: str, a: object, b: object, d: object, handle: object, acc: object, gather_a: bool) -> None:
    args = _Args(fn)
    a = args.tensor(a, "a", _BF16, 2)
    b = args.tensor(b, "b", _BF16, 2)
    d = args.tensor(d, "d", (torch.float32, torch.bfloat16), 3)
    k_indices, k_start, k_end = (
        args.tensor(t, f"handle[{i}]", _I32, 1) for i, t in enumerate(args.pair(handle, "handle", 3))
    )
    if not isinstance(acc, bool):
        raise TypeError(f"{fn}: argument 'acc' must be a bool, got {type(acc).__name__}")
    args.same_device(d, a=a, b=b, **{"handle[0]": k_indices, "handle[1]": k_start, "handle[2]": k_end})
    num_groups, m, n = d.shape
    plain, plain_arg = (b, "b") if gather_a else (a, "a")
    k = plain.size(0)
    args.size(k_indices, "handle[0]", 0, k, f"one entry per K row of '{plain_arg}'")
    args.size(k_start, "handle[1]", 0, num_groups, "one start per group of 'd'")
    args.size(k_end, "handle[2]", 0, num_groups, "one end per group of 'd'")
    args.size(a, "a", 1, m, "M of 'd' [G, M, N]")
    args.size(b, "b", 1, n, "N of 'd' [G, M, N]")
    if d.numel() == 0:
        return
    if d.is_cuda:
        _triton().launch_k_grouped(a, b, d, k_indices, k_start, k_end, gather_a, acc)
        return
    # CPU: the fused operand's rows gathered (zero where absent), then one float64 product per
    # group, rounded once to float32 and to d's dtype (the package's reference rounding).
    src = a if gather_a else b
    taken = (k_indices >= 0) & (k_indices < src.size(0))
    gathered = torch.where(taken.unsqueeze(1), src.index_select(0, torch.where(taken, k_indices, 0)), 0)
    a64, b64 = (gathered, b) if gather_a else (a, gathered)
    a64, b64 = a64.double(), b64.double()
    starts, ends = k_start.clamp(0, k).tolist(), k_end.clamp(0, k).tolist()
    for g in range(num_groups):
        lo, hi = starts[g], max(starts[g], ends[g])
        total = a64[lo:hi].t() @ b64[lo:hi]
        if acc:
            total += d[g].double()
        d[g].copy_(total.float())


def a_fused_k_grouped_bf16_gemm_tn_contiguous_tl(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    handle: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    acc: bool,
) -> None:
    """d[g] (+)= sum over k in [k_start[g], k_end[g]) of a[k_indices[k]]^T b[k], with
    handle = (k_indices, k_start, k_end), a [rows, M], b [K, N] and d [G, M, N]."""
    _k_grouped("a_fused_k_grouped_bf16_gemm_tn_contiguous_tl", a, b, d, handle, acc, gather_a=True)


def b_fused_k_grouped_bf16_gemm_tn_contiguous_tl(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    handle: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    acc: bool,
) -> None:
    """d[g] (+)= sum over k in [k_start[g], k_end[g]) of a[k]^T b[k_indices[k]], with
    handle = (k_indices, k_start, k_end), a [K, M], b [rows, N] and d [G, M, N]."""
    _k_grouped("b_fused_k_grouped_bf16_gemm_tn_contiguous_tl", a, b, d, handle, acc, gather_a=False)
