"""CUDA-graph safety on a GPU: a call reads device data on the host exactly when its sample says so.

A CUDA graph records device work only, so a call that copies device data to
the host (``.item()``, a device-to-host copy) cannot be captured.  Samples
declare such calls with ``graphable_reason`` (tests/support/samples/__init__.py), and
tests/ops/test_cuda.py captures and replays every other one.  This checks the
declarations themselves: every CUDA sample of every op runs under
``torch.cuda.set_sync_debug_mode("error")``, and it must synchronise with the
host if and only if its sample has a ``graphable_reason``.  An op that starts
reading the host without saying so fails here (and would fail capture);
a declaration that is no longer true fails too.

Skipped without a CUDA device.
"""

from __future__ import annotations

import pytest
import torch

from tests.support.manifest import OPS
from tests.support.pt2_support import call_schema, cases, has_tensor_effect, require_sample, runtime_state_restored
from tests.support.samples import Sample

pytestmark = pytest.mark.gpu

GRAPH_OPS = sorted(name for name in OPS if has_tensor_effect(name))
DEVICE_CASES = cases(GRAPH_OPS, ["cuda"]) if torch.cuda.is_available() else []


@pytest.mark.parametrize(("name", "sample"), DEVICE_CASES)
def test_host_reads_match_the_samples_declaration(name: str, sample: Sample | None) -> None:
    s = require_sample(name, sample)
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        with runtime_state_restored():
            call_schema(name, s)
        synced = False
    except RuntimeError as exc:
        if "synchroniz" not in str(exc):
            raise
        synced = True
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    declared = bool(s.graphable_reason)
    assert synced == declared, (
        f"{name}[{s.name}] {'synchronised with the host' if synced else 'ran without a host sync'}, but its sample "
        f"{'declares' if declared else 'does not declare'} a graphable_reason ({s.graphable_reason!r})"
    )
