"""What an op touches: inputs without ``!`` stay bit-identical, outputs are written where expected.

The schema is a promise torch.compile relies on: functionalization copies
back only the ``!`` arguments, so an op that also scribbles on a read-only
input (or returns a view of one) would make the compiled program silently
differ from eager.  For every sample, through both entry points:

* every tensor argument not marked ``!`` keeps its bits, shape, strides and
  storage offset (bits are compared through an integer view, so NaN payloads
  and -0.0 count), and every written tensor keeps its metadata;
* a returned tensor never shares memory with an input.

And for every sample of an op that writes: each written tensor is filled with
a poison pattern (all bytes 0xFF, then all bytes 0x7F) before the call.  An
element the op overwrites comes out the same under both poisons; one it left
alone still holds the poison.  Every element must be overwritten unless the
op is listed in ``PARTIAL_WRITES`` with the mask of elements it must write.
A written tensor that is also passed as another argument (``c=d``), or that
the op reads by design (``READ_AND_WRITTEN``), is left as the sample has it:
poisoning it would change the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from tests.support.build import DEVICES
from tests.support.manifest import OPS
from tests.support.pt2_support import (
    bits,
    bound,
    call_legacy,
    call_schema,
    cases,
    fresh,
    guide,
    require_sample,
    runtime_state_restored,
    same_bits,
    shares_memory,
    tensors_in,
)
from tests.support.samples import Sample

WRITING_OPS = sorted(name for name, op in OPS.items() if op.writes)
POISON_BYTES = (0xFF, 0x7F)

Mask = Callable[[dict[str, Any], str, torch.Tensor], torch.Tensor]


def _m_grouped_contiguous_rows(v: dict[str, Any], arg: str, d: torch.Tensor) -> torch.Tensor:
    """Every row with per-row ids (rows of no group come out zero); with psum ends the rows of a group
    (and, with ensure_zero_padding, the padding after each group), as the doc of
    m_grouped_fp8_fp4_gemm_nt_contiguous (docs/ops.md) defines them."""
    layout, m = v["grouped_layout"].long().cpu(), d.shape[0]
    if not v["use_psum_layout"]:
        rows = torch.ones(m, dtype=torch.bool)
    else:
        alignment = torch.ops.deep_gemm.get_mk_alignment_for_contiguous_layout()
        up = lambda x: (x + alignment - 1) // alignment * alignment  # noqa: E731
        starts = up(torch.cat([torch.zeros(1, dtype=torch.long), layout[:-1]]))
        r = torch.arange(m).unsqueeze(1)
        rows = ((r >= starts) & (r < layout)).any(1)
        if v["ensure_zero_padding"]:
            rows |= ((r >= layout) & (r < up(layout))).any(1)
    return rows.unsqueeze(1).expand(d.shape).to(d.device)


def _masked_rows(v: dict[str, Any], arg: str, d: torch.Tensor) -> torch.Tensor:
    """d [G, max_m, N]: the rows below masked_m[g] of each group."""
    rows = torch.arange(d.shape[1]).unsqueeze(0) < v["masked_m"].long().cpu().unsqueeze(1)
    return rows.unsqueeze(2).expand(d.shape).to(d.device)


def _kept_heads(v: dict[str, Any], arg: str, d: torch.Tensor) -> torch.Tensor:
    """d [M, heads * (left + mid + right)]: the left and right columns of each head, not the middle ones."""
    left, mid, right = v["head_splits"]
    col = torch.arange(left + mid + right)
    keep = (col < left) | (col >= left + mid)
    return keep.repeat(d.shape[1] // keep.numel()).unsqueeze(0).expand(d.shape).to(d.device)


def _mega_y(v: dict[str, Any], arg: str, d: torch.Tensor) -> torch.Tensor:
    """One rank combines into y itself; with several, the deep_gemm.mega wrapper combines across ranks."""
    return torch.full(d.shape, len(v["sym_buffer_ptrs"]) == 1, dtype=torch.bool, device=d.device)


# Ops that write only part of an output by design: op -> mask of the elements they must write
# (the others keep their value).  Every other op must write every element of every '!' tensor.
PARTIAL_WRITES: dict[str, Mask] = {
    "m_grouped_fp8_fp4_gemm_nt_contiguous": _m_grouped_contiguous_rows,
    "m_grouped_fp8_fp4_gemm_nn_contiguous": _m_grouped_contiguous_rows,
    "m_grouped_bf16_gemm_nt_contiguous": _m_grouped_contiguous_rows,
    "m_grouped_bf16_gemm_nn_contiguous": _m_grouped_contiguous_rows,
    "m_grouped_fp8_fp4_gemm_nt_masked": _masked_rows,
    "m_grouped_bf16_gemm_nt_masked": _masked_rows,
    "fp8_gemm_nt_skip_head_mid": _kept_heads,
    "fp8_fp4_mega_moe": _mega_y,
    "bf16_mega_moe": _mega_y,
}

# '!' arguments the op also reads: the symmetric buffer holds the staged tokens, and the receive
# statistics are incremented.  They are not poisoned (that would change the op's inputs).
READ_AND_WRITTEN: dict[str, set[str]] = {
    "fp8_fp4_mega_moe": {"sym_buffer", "cumulative_local_expert_recv_stats"},
    "bf16_mega_moe": {"sym_buffer", "cumulative_local_expert_recv_stats"},
}


def _metadata(t: torch.Tensor) -> tuple[Any, ...]:
    return tuple(t.shape), t.stride(), t.storage_offset(), t.dtype, t.device


def _tensor_args(name: str, sample: Sample) -> list[tuple[str, bool, torch.Tensor]]:
    values = bound(name, sample)
    return [(a.name, a.is_write, t) for a in OPS[name].schema.args for t in tensors_in(values.get(a.name))]


@pytest.mark.parametrize("entry", ["schema", "legacy"])
@pytest.mark.parametrize(("name", "sample"), cases(sorted(OPS), DEVICES))
def test_read_only_inputs_are_unchanged(name: str, sample: Sample | None, entry: str) -> None:
    s = require_sample(name, sample)
    tensors = _tensor_args(name, s)
    written = [t for _, is_write, t in tensors if is_write]
    watched = [
        (arg, t, t.clone(), _metadata(t))
        for arg, is_write, t in tensors
        if not is_write and not any(shares_memory(t, w) for w in written)
    ]
    written_meta = [(arg, t, _metadata(t)) for arg, is_write, t in tensors if is_write]
    with runtime_state_restored():
        out = call_schema(name, s) if entry == "schema" else call_legacy(name, s)
    for arg, t, before, meta in watched:
        assert _metadata(t) == meta, f"{name}[{s.name}]: read-only '{arg}' changed shape/strides/offset"
        assert same_bits(t, before), (
            f"{name}[{s.name}]: read-only '{arg}' was modified (it has no '!'); {guide('manifest')}"
        )
    for arg, t, meta in written_meta:
        assert _metadata(t) == meta, f"{name}[{s.name}]: written '{arg}' was resized or restrided"
    for i, o in enumerate(tensors_in(out)):
        for arg, _, t in tensors:
            assert not shares_memory(o, t), f"{name}[{s.name}]: output {i} shares memory with input '{arg}'"


def _poison(t: torch.Tensor, byte: int) -> None:
    size = t.element_size()
    bits(t).fill_(int.from_bytes(bytes([byte]) * size, "little", signed=True))


@pytest.mark.parametrize(("name", "sample"), cases(WRITING_OPS, DEVICES))
def test_written_outputs_are_written(name: str, sample: Sample | None) -> None:
    base = require_sample(name, sample)
    runs: list[list[tuple[str, torch.Tensor]]] = []
    skipped: list[str] = []
    read_too = READ_AND_WRITTEN.get(name, set())
    for byte in POISON_BYTES:
        s = fresh(base)
        tensors = _tensor_args(name, s)
        targets = []
        for arg, is_write, t in tensors:
            if not is_write or t.numel() == 0 or arg in read_too:
                continue
            if any(o is not t and shares_memory(o, t) for _, _, o in tensors):
                skipped.append(arg)
                continue
            _poison(t, byte)
            targets.append((arg, t))
        with runtime_state_restored():
            call_schema(name, s)
        runs.append(targets)
    if not runs[0]:
        whys = [f"{', '.join(sorted(set(skipped)))} also passed as an input"] if skipped else []
        whys += [f"{', '.join(sorted(read_too))} read by the op (READ_AND_WRITTEN)"] if read_too else []
        pytest.skip(f"nothing to poison: {'; '.join(whys) or 'written tensors are empty'}")
    mask_of = PARTIAL_WRITES.get(name)
    for (arg, first), (_, second) in zip(runs[0], runs[1]):
        overwritten = bits(first) == bits(second)
        must = mask_of(bound(name, base), arg, first) if mask_of else torch.ones_like(overwritten)
        left = int((must & ~overwritten).sum())
        assert left == 0, (
            f"{name}[{base.name}]: {left} of {int(must.sum())} elements of '{arg}' that the op must write "
            "still hold the poison (or depend on the old contents). An op that reads what it writes lists the "
            "argument in READ_AND_WRITTEN, one that writes part of it by design in PARTIAL_WRITES; "
            + guide("read_and_written")
        )
