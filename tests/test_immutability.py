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
A written tensor that is also passed as another argument (``c=d``) is read by
the op, so poisoning it would change the result: it is left as the sample has it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from pt2_support import (
    bits,
    bound,
    call_legacy,
    call_schema,
    cases,
    fresh,
    require_sample,
    runtime_state_restored,
    same_bits,
    shares_memory,
    tensors_in,
)

from manifest import OPS
from samples import Sample

WRITING_OPS = sorted(name for name, op in OPS.items() if op.writes)
POISON_BYTES = (0xFF, 0x7F)

# op -> (bound schema arguments, written argument name, the written tensor) -> bool mask of the
# elements the op must write, or None when it reads them first (accumulating counters).  For ops that
# write only part of an output by design, e.g. rows past masked_m; every other op must write all of it.
PARTIAL_WRITES: dict[str, Callable[[dict[str, Any], str, torch.Tensor], torch.Tensor | None]] = {}


def _metadata(t: torch.Tensor) -> tuple[Any, ...]:
    return tuple(t.shape), t.stride(), t.storage_offset(), t.dtype, t.device


def _tensor_args(name: str, sample: Sample) -> list[tuple[str, bool, torch.Tensor]]:
    values = bound(name, sample)
    return [(a.name, a.is_write, t) for a in OPS[name].schema.args for t in tensors_in(values.get(a.name))]


@pytest.mark.parametrize("entry", ["schema", "legacy"])
@pytest.mark.parametrize(("name", "sample"), cases(sorted(OPS)))
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
        assert same_bits(t, before), f"{name}[{s.name}]: read-only '{arg}' was modified (it has no '!')"
    for arg, t, meta in written_meta:
        assert _metadata(t) == meta, f"{name}[{s.name}]: written '{arg}' was resized or restrided"
    for i, o in enumerate(tensors_in(out)):
        for arg, _, t in tensors:
            assert not shares_memory(o, t), f"{name}[{s.name}]: output {i} shares memory with input '{arg}'"


def _poison(t: torch.Tensor, byte: int) -> None:
    size = t.element_size()
    bits(t).fill_(int.from_bytes(bytes([byte]) * size, "little", signed=True))


@pytest.mark.parametrize(("name", "sample"), cases(WRITING_OPS))
def test_written_outputs_are_written(name: str, sample: Sample | None) -> None:
    base = require_sample(name, sample)
    runs: list[list[tuple[str, torch.Tensor]]] = []
    skipped: list[str] = []
    for byte in POISON_BYTES:
        s = fresh(base)
        tensors = _tensor_args(name, s)
        targets = []
        for arg, is_write, t in tensors:
            if not is_write or t.numel() == 0:
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
        why = f"{', '.join(sorted(set(skipped)))} also passed as an input" if skipped else "written tensors are empty"
        pytest.skip(f"nothing to poison: {why}")
    mask_of = PARTIAL_WRITES.get(name)
    for (arg, first), (_, second) in zip(runs[0], runs[1]):
        overwritten = bits(first) == bits(second)
        must = mask_of(bound(name, base), arg, first) if mask_of else torch.ones_like(overwritten)
        if must is None:
            continue
        left = int((must & ~overwritten).sum())
        assert left == 0, (
            f"{name}[{base.name}]: {left} of {int(must.sum())} elements of '{arg}' that the op must write "
            "still hold the poison (or depend on the old contents)"
        )
