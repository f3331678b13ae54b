"""torch.library.opcheck on every sample of every op in the manifest.

All four checks run (tests/support/opcheck_util.py): test_schema (nothing outside the
``!`` arguments is mutated, no output aliases an input), test_faketensor (the
fake kernel agrees with the real one), test_aot_dispatch_dynamic (AOTAutograd
with dynamic shapes gives the eager result) and test_autograd_registration.

Note [Autograd registration]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
No deep_gemm op is differentiable: the GEMMs write their result into ``d``
(autograd cannot differentiate through a mutated output of a custom op without
a formula), their operands are FP8/FP4 codes with UE8M0 scale factors, and
the layout ops are bit manipulations (exponent packing).  So no op registers
an autograd kernel, and the right behaviour is the one opcheck's
test_autograd_registration enforces: a kernel registered at the CPU/CUDA key
must never hand back an output that requires grad (that would be an autograd
formula hidden in a backend kernel, i.e. silently wrong gradients).

That check does nothing when no input requires grad, and the samples are
plain tensors.  So every op whose samples have floating-point inputs gets one
more case (``.../requires_grad``): a sample whose floating-point read-only
inputs require grad, run through all four checks.  The fixture tests below
show the check is live: it rejects a kernel leaking ``requires_grad`` only when
an input requires grad, and test_schema rejects a write without ``!``.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from tests.support.build import present
from tests.support.manifest import OPS
from tests.support.opcheck_util import opcheck
from tests.support.pt2_support import (
    bound,
    cases,
    overload,
    require_sample,
    runtime_state_restored,
    samples_of,
    shares_memory,
    tensors_in,
)
from tests.support.samples import Sample


@pytest.mark.parametrize(("name", "sample"), cases(sorted(OPS)))
def test_opcheck(name: str, sample: Sample | None) -> None:
    s = require_sample(name, sample)
    with runtime_state_restored():
        opcheck(overload(name), s.args, s.kwargs)


def grad_variant(name: str, sample: Sample) -> Sample | None:
    """The sample with its floating-point read-only inputs requiring grad (None if it has none)."""
    op = OPS[name]
    values = bound(name, sample)
    written = [t for a in op.schema.args if a.is_write for t in tensors_in(values.get(a.name))]
    replaced: dict[str, Any] = {}
    for arg in op.schema.args:
        value = values.get(arg.name)
        if arg.is_write or not isinstance(value, torch.Tensor) or not value.is_floating_point():
            continue
        if any(shares_memory(value, w) for w in written):
            continue  # e.g. c=d: the written tensor itself
        replaced[arg.name] = value.detach().clone().requires_grad_(True)
    if not replaced:
        return None
    names = op.schema.arg_names
    args = tuple(replaced.get(names[i], v) for i, v in enumerate(sample.args))
    kwargs = {k: replaced.get(k, v) for k, v in sample.kwargs.items()}
    return Sample(f"{sample.name}/requires_grad", args, kwargs)


def _grad_cases() -> list[Any]:
    out = []
    for name in sorted(OPS):
        if not present(name):
            continue
        for sample in samples_of(name):
            variant = grad_variant(name, sample)
            if variant is not None:
                out.append(pytest.param(name, variant, id=f"{name}/{variant.name}"))
                break
    return out


GRAD_CASES = _grad_cases()


@pytest.mark.filterwarnings("ignore:.*an autograd kernel was not registered:UserWarning")
@pytest.mark.parametrize(("name", "sample"), GRAD_CASES)
def test_opcheck_with_inputs_requiring_grad(name: str, sample: Sample) -> None:
    """See Note [Autograd registration]: here test_autograd_registration has something to check."""
    s = require_sample(name, sample)
    assert any(t.requires_grad for t in tensors_in([*s.args, *s.kwargs.values()]))
    with runtime_state_restored():
        opcheck(overload(name), s.args, s.kwargs)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_with_float_inputs_has_a_grad_case(name: str) -> None:
    if not present(name):
        pytest.skip("not in this build")
    has_float_input = any(grad_variant(name, s) is not None for s in samples_of(name))
    has_grad_case = any(p.values[0] == name for p in GRAD_CASES)
    assert has_grad_case == has_float_input


# ---- fixtures: opcheck catches what it is meant to catch --------------------------------------

_FIXTURE = torch.library.Library("deep_gemm_pt2_fixture", "DEF")
# A write the schema does not declare: `d` should be `Tensor(d!) d`.
_FIXTURE.define("misannotated_write(Tensor a, Tensor d) -> ()")
_FIXTURE.define("annotated_write(Tensor a, Tensor(d!) d) -> ()")
# A backend kernel whose output requires grad: an autograd formula at the wrong key.
_FIXTURE.define("grad_leak(Tensor a) -> Tensor")


def _write(a: torch.Tensor, d: torch.Tensor) -> None:
    d.copy_(a * 2)


def _grad_leak(a: torch.Tensor) -> torch.Tensor:
    return (a * 2).requires_grad_(True)


_FIXTURE.impl("misannotated_write", _write, "CPU")
_FIXTURE.impl("annotated_write", _write, "CPU")
_FIXTURE.impl("grad_leak", _grad_leak, "CPU")


def test_opcheck_catches_a_write_without_bang() -> None:
    a, d = torch.randn(8), torch.randn(8)
    with pytest.raises(Exception, match=r"test_schema failed.*d is not defined as mutable but was mutated"):
        opcheck(torch.ops.deep_gemm_pt2_fixture.misannotated_write.default, (a, d))


def test_opcheck_accepts_the_annotated_write() -> None:
    a, d = torch.randn(8), torch.randn(8)
    result = torch.library.opcheck(
        torch.ops.deep_gemm_pt2_fixture.annotated_write.default, (a, d), test_utils="test_schema"
    )
    assert result == {"test_schema": "SUCCESS"}


def test_autograd_registration_needs_an_input_requiring_grad() -> None:
    op = torch.ops.deep_gemm_pt2_fixture.grad_leak.default
    check = "test_autograd_registration"
    # Without such an input the check has nothing to look at and passes, even for this broken kernel ...
    assert torch.library.opcheck(op, (torch.randn(4),), test_utils=check) == {check: "SUCCESS"}
    # ... with one, it sees the leaked requires_grad.
    with pytest.raises(Exception, match="test_autograd_registration failed"):
        torch.library.opcheck(op, (torch.randn(4).requires_grad_(True),), test_utils=check)
