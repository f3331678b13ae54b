"""Fake kernels: every op returning tensors declares one, and it predicts the real output exactly.

torch.compile, torch.export and FakeTensor learn an op's output from its fake
kernel alone, so a fake that is wrong by one stride makes the compiled program
read the wrong elements.  For every sample, the op runs eagerly and under
FakeTensorMode, and the outputs must agree in shape, strides, dtype and device.
"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils import _pytree as pytree

from tests.support.build import DEVICES
from tests.support.manifest import OPS
from tests.support.pt2_support import cases, fresh, overload, require_sample, runtime_state_restored
from tests.support.samples import Sample

TENSOR_RETURNING = sorted(name for name, op in OPS.items() if op.returns_tensors)


@pytest.mark.parametrize("name", sorted(OPS))
def test_tensor_returning_ops_declare_a_fake(name: str) -> None:
    op = OPS[name]
    if op.returns_tensors:
        assert op.fake is not None, f"{name} returns a Tensor but ops.yaml gives it no `fake`"


def _metadata(t: torch.Tensor) -> tuple[object, ...]:
    return tuple(t.shape), t.stride(), t.dtype, t.device


@pytest.mark.parametrize(("name", "sample"), cases(TENSOR_RETURNING, DEVICES))
def test_fake_matches_eager(name: str, sample: Sample | None) -> None:
    real_sample = require_sample(name, sample)
    fake_sample = fresh(real_sample)
    with runtime_state_restored():
        real = overload(name)(*real_sample.args, **real_sample.kwargs)
        mode = FakeTensorMode()
        args, kwargs = pytree.tree_map_only(torch.Tensor, mode.from_tensor, (fake_sample.args, fake_sample.kwargs))
        with mode:
            fake = overload(name)(*args, **kwargs)
    real_leaves, real_spec = pytree.tree_flatten(real)
    fake_leaves, fake_spec = pytree.tree_flatten(fake)
    assert real_spec == fake_spec, f"{name}: the fake returns {fake_spec}, the op {real_spec}"
    for i, (r, f) in enumerate(zip(real_leaves, fake_leaves)):
        assert isinstance(f, torch.Tensor) == isinstance(r, torch.Tensor)
        if isinstance(r, torch.Tensor):
            assert _metadata(f) == _metadata(r), (
                f"{name}[{sample.name}] output {i}: fake (shape, strides, dtype, device) {_metadata(f)} "
                f"!= real {_metadata(r)}"
            )
