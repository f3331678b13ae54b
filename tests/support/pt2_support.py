"""Shared helpers of the PT2 and robustness suites.

test_samples, test_fakes, test_opcheck, test_compile, test_immutability and
test_fuzz all walk the manifest (tests/support/manifest.py: OPS), never a hand-written
list, so an op merged later is covered by every suite at once, and an op
without samples fails them.

An op is *present* when this build registered it (its guard holds, e.g. the
`cuda` guard in a CUDA build); absent ops are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

import deep_gemm
from tests.support.build import present
from tests.support.manifest import OPS, legacy_call
from tests.support.samples import Sample, clone_args, load_all

REGISTRY = load_all()

# Integer dtypes of each element size: a view as one of them compares bits, not values
# (NaN == NaN, -0.0 != 0.0), and works for every stride pattern.
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


# Section titles of docs/adding-an-op.md, which failure messages point at.
GUIDE_SECTIONS = {
    "manifest": "1. The manifest entry",
    "header": "2. The implementation header",
    "samples": "5. Samples",
    "read_and_written": "6. Ops that read what they write",
}


def guide(section: str) -> str:
    """Where docs/adding-an-op.md explains what a failure asks for."""
    return f"see docs/adding-an-op.md, section '{GUIDE_SECTIONS[section]}'"


def absent_reason(name: str) -> str:
    op = OPS[name]
    guard = f"its guard '{op.guard}' is off in this build" if op.guard else "the extension does not register it"
    return f"{name} is not in this build: {guard}"


def overload(name: str) -> torch._ops.OpOverload:
    return getattr(torch.ops.deep_gemm, name).default


def legacy(name: str) -> Callable[..., Any]:
    return getattr(deep_gemm._C, name)


def returns_python_values(name: str) -> bool:
    """Ops returning ints, bools or int lists (runtime getters, sizes): they cannot sit in a graph."""
    return any(r.base != "Tensor" for r in OPS[name].schema.returns)


def has_tensor_effect(name: str) -> bool:
    """Ops that return tensors or write them: what torch.compile must be able to trace."""
    op = OPS[name]
    return (op.returns_tensors or bool(op.writes)) and not returns_python_values(name)


@functools.cache
def samples_of(name: str, device: str = "cpu") -> tuple[Sample, ...]:
    """The registered samples (built once per session; use :func:`fresh` before running one)."""
    builder = REGISTRY.get(name)
    return tuple(builder(torch.device(device))) if builder else ()


def fresh(sample: Sample) -> Sample:
    """A copy of the sample with fresh tensors (same strides), so runs do not interfere."""
    return clone_args(sample)


def bound(name: str, sample: Sample) -> dict[str, Any]:
    """Schema argument name -> value for one sample (defaults filled in)."""
    out: dict[str, Any] = {}
    for i, arg in enumerate(OPS[name].schema.args):
        if i < len(sample.args):
            out[arg.name] = sample.args[i]
        elif arg.name in sample.kwargs:
            out[arg.name] = sample.kwargs[arg.name]
        elif arg.has_default:
            out[arg.name] = arg.default
    return out


def call_schema(name: str, sample: Sample) -> Any:
    return overload(name)(*sample.args, **sample.kwargs)


def call_legacy(name: str, sample: Sample) -> Any:
    args, kwargs = legacy_call(OPS[name], sample.args, sample.kwargs)
    return legacy(name)(*args, **kwargs)


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().view(_BITS[t.element_size()])


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device or a.device.type == "meta":
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.untyped_storage().nbytes() > 0


def cases(names: list[str], devices: tuple[str, ...] | list[str] = ("cpu",)) -> list[Any]:
    """pytest params (name, sample) for every sample of every op in ``names``, on each device.

    An absent op gives one skipped param; a present op without samples gives
    one param whose test fails (every op must have samples).  Samples on a
    device other than the CPU carry the ``gpu`` mark and an ``@device`` id.
    """
    out = []
    for name in names:
        if not present(name):
            out.append(pytest.param(name, None, id=f"{name}", marks=pytest.mark.skip(reason=absent_reason(name))))
            continue
        for device in devices:
            suffix, marks = ("", []) if device == "cpu" else (f"@{device}", [pytest.mark.gpu])
            found = samples_of(name, device)
            if not found:
                out.append(pytest.param(name, None, id=f"{name}/NO-SAMPLES{suffix}", marks=marks))
            out.extend(pytest.param(name, s, id=f"{name}/{s.name}{suffix}", marks=marks) for s in found)
    return out


def require_sample(name: str, sample: Sample | None) -> Sample:
    if sample is None:
        pytest.fail(
            f"{name} has no samples: register them in tests/support/samples/<family>.py with @samples('{name}'); "
            + guide("samples")
        )
    return fresh(sample)


def _setter_getter_pairs() -> list[tuple[str, str]]:
    pairs = []
    for name in OPS:
        if name.startswith("set_") and f"get_{name[4:]}" in OPS:
            getter = f"get_{name[4:]}"
            if present(name) and present(getter):
                pairs.append((name, getter))
    return pairs


@contextlib.contextmanager
def runtime_state_restored() -> Iterator[None]:
    """Put every process-wide setting back after the block (found by its set_X / get_X pair).

    Samples of the setters change process-wide state (the contiguous-layout
    alignment, the SM count, ...), which would leak into every later test.
    A setting is written back only when it changed.
    """
    pairs = _setter_getter_pairs()
    saved = {setter: overload(getter)() for setter, getter in pairs}
    try:
        yield
    finally:
        for setter, getter in pairs:
            if overload(getter)() != saved[setter]:
                overload(setter)(saved[setter])


def report(config: pytest.Config, lines: list[str]) -> None:
    """Write lines to the terminal even while pytest captures output (tables of counts)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        print("\n".join(lines))
        return
    with capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext():
        reporter.write_line("")
        for line in lines:
            reporter.write_line(line)
