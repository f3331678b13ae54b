"""The samples registry covers the manifest: every op present in this build has several valid samples.

Samples (tests/support/samples/<family>.py) feed opcheck, torch.compile, the
immutability checks and the fuzzer's seeds, so an op without them would
escape every one of those suites; this module makes that a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.support.build import present
from tests.support.manifest import OPS
from tests.support.pt2_support import (
    GUIDE_SECTIONS,
    REGISTRY,
    absent_reason,
    bound,
    call_schema,
    fresh,
    guide,
    runtime_state_restored,
    samples_of,
)
from tests.support.samples import Sample


def _is_edge(name: str, sample: Sample) -> bool:
    """An edge case: an empty tensor, a size-1 dimension, or a zero size or group (an int or int-list entry 0)."""
    values = bound(name, sample)
    for arg in OPS[name].schema.args:
        value = values.get(arg.name)
        if isinstance(value, torch.Tensor):
            if value.numel() == 0 or 1 in value.shape:
                return True
        elif arg.type.base == "int" and not isinstance(value, bool):
            entries = value if isinstance(value, (list, tuple)) else [value]
            if any(v == 0 for v in entries if isinstance(v, int)):
                return True
    return False


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_samples(name: str) -> None:
    if not present(name):
        pytest.skip(absent_reason(name))
    assert name in REGISTRY, (
        f"{name} has no samples: register them in tests/support/samples/<family>.py with @samples('{name}'); "
        + guide("samples")
    )
    found = samples_of(name)
    takes_args = bool(OPS[name].schema.args)
    assert len(found) >= (2 if takes_args else 1), (
        f"{name} has {len(found)} sample(s); ops that take arguments need several (typical shapes and edge cases); "
        + guide("samples")
    )
    names = [s.name for s in found]
    assert len(set(names)) == len(names), f"{name}: sample names repeat: {names}"
    if any(a.type.is_tensor for a in OPS[name].schema.args):
        assert any(_is_edge(name, s) for s in found), (
            f"{name}: no edge-case sample (an empty tensor, a size-1 dim such as m=1, or an empty group / zero size); "
            + guide("samples")
        )


@pytest.mark.parametrize("name", sorted(OPS))
def test_samples_are_valid_calls(name: str) -> None:
    """Every sample is a call the op accepts (the other suites rely on that)."""
    if not present(name):
        pytest.skip(absent_reason(name))
    for sample in samples_of(name):
        with runtime_state_restored():
            call_schema(name, fresh(sample))


def test_failure_messages_point_at_sections_the_guide_has() -> None:
    """The sample, immutability and fuzz suites cite docs/adding-an-op.md by section title."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "adding-an-op.md").read_text()
    headings = {line.removeprefix("## ") for line in text.splitlines() if line.startswith("## ")}
    missing = sorted(set(GUIDE_SECTIONS.values()) - headings)
    assert not missing, f"docs/adding-an-op.md has no section {missing}; its sections: {sorted(headings)}"


def test_registry_names_only_manifest_ops() -> None:
    stale = sorted(set(REGISTRY) - set(OPS))
    assert not stale, f"samples registered for ops that ops.yaml does not have: {stale}"
