"""torch.compile(fullgraph=True) over the legacy ``deep_gemm._C`` API, for every op with a tensor effect.

For every op that returns tensors or writes them, a function calling the
legacy entry point (``deep_gemm._C.fp8_gemm_nt((a, sfa), (b, sfb), d)``: the
pairs are unpacked inside the compiled region) is compiled once per backend
(``aot_eager`` and ``inductor``) and run on every sample.  Each run must

* compile into graphs without a single graph break (fullgraph=True raises on
  one, and Dynamo's counters must stay empty), with the op itself in a graph;
* give the eager result bit for bit: the tensors the op writes, and the
  tensors it returns (with the same shape, strides and dtype), both computed
  from fresh clones of the same inputs.

One compiled function serves all samples of an op (recompiling where shapes
or argument kinds change), and Dynamo is reset between ops.

Ops returning Python values (ints, bools, int lists: runtime getters, sizes)
cannot be in a graph (docs/pt2.md); the last tests pin that limitation and
check that calling them between calls of a compiled function changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch._dynamo.backends.registry import lookup_backend
from torch._dynamo.utils import counters
from torch.utils import _pytree as pytree

from tests.support.build import present
from tests.support.manifest import OPS, legacy_call
from tests.support.pt2_support import (
    absent_reason,
    bound,
    call_legacy,
    fresh,
    has_tensor_effect,
    legacy,
    overload,
    report,
    returns_python_values,
    runtime_state_restored,
    same_bits,
    samples_of,
    tensors_in,
)
from tests.support.samples import Sample

BACKENDS = ("aot_eager", "inductor")
GRAPH_OPS = sorted(name for name in OPS if has_tensor_effect(name))
PYTHON_VALUE_OPS = sorted(name for name in OPS if returns_python_values(name))

# name -> backend -> (compiled cases, graphs, graph breaks), printed at the end of the module.
TALLY: dict[str, dict[str, tuple[int, int, int]]] = {}


@pytest.fixture(scope="module", autouse=True)
def _report(request: pytest.FixtureRequest) -> Any:
    yield
    if not TALLY:
        return
    lines = ["torch.compile(fullgraph=True) over deep_gemm._C: compiled cases / graphs / graph breaks"]
    totals = {b: [0, 0, 0] for b in BACKENDS}
    for name in sorted(TALLY):
        cells = []
        for backend in BACKENDS:
            counts = TALLY[name].get(backend, (0, 0, 0))
            totals[backend] = [t + v for t, v in zip(totals[backend], counts)]
            cells.append(f"{backend:9s} {counts[0]:3d} / {counts[1]:3d} / {counts[2]}")
        lines.append(f"  {name:56s} " + "   ".join(cells))
    cells = [f"{b:9s} {c:3d} / {g:3d} / {k}" for b, (c, g, k) in totals.items()]
    lines.append(f"  {'total':56s} " + "   ".join(cells))
    report(request.config, lines)


def _compile(name: str, backend: str) -> tuple[Callable[..., Any], set[Any]]:
    """A compiled function calling the legacy entry point, and the set of call targets in its graphs."""
    entry = legacy(name)

    def call(*args: Any, **kwargs: Any) -> Any:
        return entry(*args, **kwargs)

    targets: set[Any] = set()
    inner = lookup_backend(backend)

    def recording_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        targets.update(node.target for node in gm.graph.nodes if node.op == "call_function")
        return inner(gm, example_inputs)

    return torch.compile(call, backend=recording_backend, fullgraph=True), targets


def _written(name: str, sample: Sample) -> list[tuple[str, torch.Tensor]]:
    values = bound(name, sample)
    return [(a.name, t) for a in OPS[name].schema.args if a.is_write for t in tensors_in(values.get(a.name))]


def _check_same(name: str, sample: Sample, eager: tuple[Sample, Any], compiled: tuple[Sample, Any]) -> None:
    (eager_sample, eager_out), (compiled_sample, compiled_out) = eager, compiled
    for (arg, e), (_, c) in zip(_written(name, eager_sample), _written(name, compiled_sample)):
        assert same_bits(e, c), f"{name}[{sample.name}]: '{arg}' written under torch.compile differs from eager"
    eager_leaves, eager_spec = pytree.tree_flatten(eager_out)
    compiled_leaves, compiled_spec = pytree.tree_flatten(compiled_out)
    assert eager_spec == compiled_spec, f"{name}[{sample.name}]: compiled returns {compiled_spec}, eager {eager_spec}"
    for i, (e, c) in enumerate(zip(eager_leaves, compiled_leaves)):
        if not isinstance(e, torch.Tensor):
            assert e == c
            continue
        assert (tuple(c.shape), c.stride(), c.dtype) == (tuple(e.shape), e.stride(), e.dtype), (
            f"{name}[{sample.name}] output {i}: compiled (shape, strides, dtype) "
            f"{(tuple(c.shape), c.stride(), c.dtype)} != eager {(tuple(e.shape), e.stride(), e.dtype)}"
        )
        assert same_bits(e, c), f"{name}[{sample.name}] output {i}: compiled values differ from eager"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", GRAPH_OPS)
def test_compiled_legacy_call_matches_eager(name: str, backend: str) -> None:
    if not present(name):
        pytest.skip(absent_reason(name))
    found = samples_of(name)
    assert found, f"{name} has no samples"
    torch._dynamo.reset()
    counters.clear()
    compiled, targets = _compile(name, backend)
    with torch._dynamo.config.patch(recompile_limit=64, accumulated_recompile_limit=4096):
        for sample in found:
            eager_sample, compiled_sample = fresh(sample), fresh(sample)
            with runtime_state_restored():
                eager_out = call_legacy(name, eager_sample)
                args, kwargs = legacy_call(OPS[name], compiled_sample.args, compiled_sample.kwargs)
                compiled_out = compiled(*args, **kwargs)
            _check_same(name, sample, (eager_sample, eager_out), (compiled_sample, compiled_out))
    breaks = sum(counters["graph_break"].values())
    graphs = counters["stats"]["unique_graphs"]
    TALLY.setdefault(name, {})[backend] = (len(found), graphs, breaks)
    assert breaks == 0, f"{name}: graph breaks {dict(counters['graph_break'])}"
    assert overload(name) in targets, f"{name}: the op is not in the compiled graphs ({targets})"
    torch._dynamo.reset()


# ---- ops returning Python values --------------------------------------------------------------


def _python_value_cases() -> list[Any]:
    marks = {name: [] if present(name) else [pytest.mark.skip(reason=absent_reason(name))] for name in PYTHON_VALUE_OPS}
    return [pytest.param(name, id=name, marks=marks[name]) for name in PYTHON_VALUE_OPS]


@pytest.mark.parametrize("name", _python_value_cases())
def test_python_value_op_cannot_be_in_a_graph(name: str) -> None:
    """The documented limitation (docs/pt2.md): the shim breaks the graph at an op whose result is not a
    Tensor (Note [Python values under Dynamo]), so fullgraph=True fails with that reason."""
    sample = fresh(samples_of(name)[0])
    args, kwargs = legacy_call(OPS[name], sample.args, sample.kwargs)
    entry = legacy(name)

    def uses_it(x: torch.Tensor) -> Any:
        return x, entry(*args, **kwargs)

    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"torch\._dynamo\.graph_break\(\)"):
        torch.compile(uses_it, backend="aot_eager", fullgraph=True)(torch.zeros(2))
    torch._dynamo.reset()


def test_int_list_result_is_not_baked_into_the_graph() -> None:
    """Without the graph break, Dynamo would run the getter once while tracing and freeze its
    result; a compiled caller must see the value a setter gives it later."""
    name = "get_block_size_multiple_of"
    if name not in OPS or not present(name) or not present("set_block_size_multiple_of"):
        pytest.skip("needs get/set_block_size_multiple_of")
    entry = legacy(name)

    def first_multiple(x: torch.Tensor) -> torch.Tensor:
        return x + entry()[0]

    torch._dynamo.reset()
    compiled = torch.compile(first_multiple, backend="aot_eager")
    with runtime_state_restored():
        legacy("set_block_size_multiple_of")(1)
        assert compiled(torch.zeros(1)).item() == 1
        legacy("set_block_size_multiple_of")(16)
        assert first_multiple(torch.zeros(1)).item() == 16
        assert compiled(torch.zeros(1)).item() == 16
    torch._dynamo.reset()


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_value_ops_called_outside_do_not_disturb_a_compiled_function(backend: str) -> None:
    """Getters and size queries called between runs of a compiled function: no recompile, same results."""
    name = next((n for n in GRAPH_OPS if present(n) and samples_of(n)), None)
    if name is None:
        pytest.skip("no op with a tensor effect in this build")
    sample = samples_of(name)[0]
    torch._dynamo.reset()
    counters.clear()
    compiled, _ = _compile(name, backend)

    def run_both() -> None:
        eager_sample, compiled_sample = fresh(sample), fresh(sample)
        eager_out = call_legacy(name, eager_sample)
        args, kwargs = legacy_call(OPS[name], compiled_sample.args, compiled_sample.kwargs)
        _check_same(name, sample, (eager_sample, eager_out), (compiled_sample, compiled(*args, **kwargs)))

    run_both()
    graphs = counters["stats"]["unique_graphs"]
    called = 0
    for other in PYTHON_VALUE_OPS:
        if not present(other):
            continue
        for other_sample in samples_of(other):
            s = fresh(other_sample)
            with runtime_state_restored():
                call_legacy(other, s)
            called += 1
            run_both()
    assert called > 0 or not [n for n in PYTHON_VALUE_OPS if present(n)]
    assert counters["stats"]["unique_graphs"] == graphs, "calling a getter outside the graph caused a recompile"
    assert sum(counters["graph_break"].values()) == 0
    torch._dynamo.reset()
