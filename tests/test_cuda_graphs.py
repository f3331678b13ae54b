"""CUDA-graph safety, on a GPU: no op synchronises with the host unless documented, and captures replay.

A CUDA graph records device work only; an op that reads device data on the
host (a device-to-host copy, ``.item()``) cannot be captured, and one that
uploads host data would freeze it into the graph.  For every CUDA sample of
every op with a tensor effect:

* run under ``torch.cuda.set_sync_debug_mode("error")``: only the calls listed
  in ``HOST_READS`` (docs/pt2.md, "CUDA graphs") may synchronise;
* capture the call in a ``torch.cuda.CUDAGraph``, replay it, and compare what it
  wrote and returned with an eager call on clones of the same inputs, bit for bit.

Skipped without a CUDA device (the samples are built on the GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from pt2_support import (
    bound,
    call_schema,
    cases,
    fresh,
    has_tensor_effect,
    require_sample,
    runtime_state_restored,
    same_bits,
    tensors_in,
)

from manifest import OPS
from samples import Sample

pytestmark = pytest.mark.gpu

GRAPH_OPS = sorted(name for name in OPS if has_tensor_effect(name))
DEVICE_CASES = cases(GRAPH_OPS, "cuda") if torch.cuda.is_available() else []

# op -> predicate on the bound schema arguments: True when that call reads device data on the host.
HOST_READS: dict[str, Callable[[dict[str, Any]], bool]] = {
    # Without ks_cpu the group sizes come from grouped_layout, which is copied to the host.
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor": lambda v: not v.get("ks_cpu"),
}


def _reads_host(name: str, sample: Sample) -> bool:
    rule = HOST_READS.get(name)
    return bool(rule and rule(bound(name, sample)))


def _written(name: str, sample: Sample) -> list[torch.Tensor]:
    values = bound(name, sample)
    return [t for a in OPS[name].schema.args if a.is_write for t in tensors_in(values.get(a.name))]


@pytest.mark.parametrize(("name", "sample"), DEVICE_CASES)
def test_no_host_sync(name: str, sample: Sample | None) -> None:
    s = require_sample(name, sample)
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        with runtime_state_restored():
            call_schema(name, s)
        synced = False
    except RuntimeError as exc:
        if "synchronizing" not in str(exc):
            raise
        synced = True
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    assert synced == _reads_host(name, s), (
        f"{name}[{s.name}] {'synchronised with the host' if synced else 'did not synchronise'}, "
        "which HOST_READS (and docs/pt2.md) do not say"
    )


@pytest.mark.parametrize(("name", "sample"), DEVICE_CASES)
def test_capture_and_replay_matches_eager(name: str, sample: Sample | None) -> None:
    s = require_sample(name, sample)
    if _reads_host(name, s):
        pytest.skip("this call reads device data on the host (HOST_READS): it cannot be captured")
    eager = fresh(s)
    with runtime_state_restored():
        eager_out = call_schema(name, eager)
        captured = fresh(s)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            call_schema(name, fresh(s))  # warm-up outside the capture (lazy initialisation)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            graph_out = call_schema(name, captured)  # recorded, not run: `captured` keeps its inputs
        graph.replay()
        torch.cuda.synchronize()
    for e, c in zip(_written(name, eager), _written(name, captured)):
        assert same_bits(e, c), f"{name}[{s.name}]: a written tensor differs after replay"
    for e, c in zip(tensors_in(eager_out), tensors_in(graph_out)):
        assert same_bits(e, c), f"{name}[{s.name}]: a returned tensor differs after replay"
