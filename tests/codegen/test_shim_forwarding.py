"""What the generated shim forwards to the op (Note [Shim call path] in codegen/spelling/python.py).

Every op of the manifest is checked generically: the shim's eager callable
(``_call_<op>``) is replaced by a recorder, and each call must forward every
argument up to the last one that differs from its schema default, and nothing
after it.  Under Dynamo (``_compiling`` true) the OpOverload gets every argument.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import deep_gemm
from codegen.model import Op
from codegen.spelling.python import PyParam, params
from deep_gemm import _C
from tests.support.manifest import OPS
from tests.support.operands import fp8_per_block, fp8_per_token

# A valid value for parameters with a Python converter (the converter runs first).
CONVERTED = {"int_or_pair": (3, [3]), "recipe_2_or_3": ((1, 128), (1, 128))}  # a plain int tuple passes through


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))


def _present(op: Op) -> bool:
    return hasattr(_C, op.name)


def _required(p: PyParam) -> tuple[Any, list[Any]]:
    """(value passed to the shim, values the op must receive) for a parameter without a default."""
    if p.converter:
        return CONVERTED[p.converter][0], [CONVERTED[p.converter][1]]
    if p.is_pack:
        first, second = object(), object()
        return (first, second), [first, second]
    value = object()
    return value, [value]


def _default(p: PyParam) -> Any:
    assert p.default is not None
    return eval(p.default, {"torch": torch})


def _expected(ps: list[PyParam], given: dict[str, list[Any]], upto: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """What the op receives: parameters [0, upto), each given value or the default."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in ps[:upto]:
        values = given[p.name] if p.name in given else [_default(p)]
        if p.kind == "kwonly":
            kwargs.update(zip((m.name for m in p.members), values))
        else:
            args += values
    return tuple(args), kwargs


def _call_shim(op: Op, ps: list[PyParam], passed: dict[str, Any]) -> None:
    """Call the shim with ``passed``: positionally up to the first left-out parameter, then by keyword."""
    pos: list[Any] = []
    kw: dict[str, Any] = {}
    gap = False
    for p in ps:
        if p.name not in passed:
            gap = True
            if p.kind == "posonly" and any(q.name in passed for q in ps[ps.index(p) :]):
                pos.append(_default(p))  # cannot skip a positional-only parameter
            continue
        if p.kind == "kwonly" or (gap and p.kind == "pos"):
            kw[p.name] = passed[p.name]
        else:
            pos.append(passed[p.name])
    getattr(_C, op.name)(*pos, **kw)


def _trailing_default_ops() -> list[str]:
    return sorted(name for name, op in OPS.items() if any(p.forwards_default for p in params(op)))


def _setup(op: Op) -> tuple[list[PyParam], dict[str, Any], dict[str, list[Any]], int]:
    ps = params(op)
    passed: dict[str, Any] = {}
    received: dict[str, list[Any]] = {}
    cut = len(ps)
    while cut > 0 and ps[cut - 1].forwards_default and not ps[cut - 1].converter:
        cut -= 1
    for p in ps[:cut]:
        if p.default is None:
            passed[p.name], received[p.name] = _required(p)
    return ps, passed, received, cut


@pytest.mark.parametrize("name", sorted(OPS))
def test_all_defaults_forward_only_the_leading_arguments(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    op = OPS[name]
    if not _present(op):
        pytest.skip("not in this build")
    ps, passed, received, cut = _setup(op)
    rec = Recorder()
    monkeypatch.setattr(_C, f"_call_{op.name}", rec)
    _call_shim(op, ps, passed)
    assert rec.calls == [_expected(ps, received, cut)]


@pytest.mark.parametrize("name", _trailing_default_ops())
def test_a_changed_trailing_argument_is_forwarded_with_those_before_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = OPS[name]
    if not _present(op):
        pytest.skip("not in this build")
    ps, passed, received, cut = _setup(op)
    assert cut < len(ps)
    for i in range(cut, len(ps)):
        p = ps[i]
        value = object()  # differs from any default
        rec = Recorder()
        monkeypatch.setattr(_C, f"_call_{op.name}", rec)
        _call_shim(op, ps, {**passed, p.name: value})
        assert rec.calls == [_expected(ps, {**received, p.name: [value]}, i + 1)], p.name


@pytest.mark.parametrize("name", _trailing_default_ops())
def test_a_default_of_another_type_is_forwarded(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``0`` for ``False`` or ``1.0`` for ``1`` is not the default: the dispatcher must see it."""
    op = OPS[name]
    if not _present(op):
        pytest.skip("not in this build")
    ps, passed, received, cut = _setup(op)
    checked = 0
    for i in range(cut, len(ps)):
        p = ps[i]
        default = _default(p)
        if isinstance(default, bool):
            lookalike: Any = int(default)
        elif isinstance(default, (int, float)):
            lookalike = (
                float(default) if isinstance(default, int) else int(default) if default == int(default) else None
            )
        else:
            continue
        if lookalike is None:
            continue
        rec = Recorder()
        monkeypatch.setattr(_C, f"_call_{op.name}", rec)
        _call_shim(op, ps, {**passed, p.name: lookalike})
        assert rec.calls == [_expected(ps, {**received, p.name: [lookalike]}, i + 1)], p.name
        assert type(rec.calls[0][0][-1] if p.kind != "kwonly" else rec.calls[0][1][p.name]) is type(lookalike)
        checked += 1
    if not checked:
        pytest.skip("no bool/int/float trailing default")


@pytest.mark.parametrize("name", sorted(OPS))
def test_under_dynamo_the_overload_gets_every_argument(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    op = OPS[name]
    if not _present(op):
        pytest.skip("not in this build")
    ps, passed, received, _ = _setup(op)
    eager, traced = Recorder(), Recorder()
    monkeypatch.setattr(_C, f"_call_{op.name}", eager)
    monkeypatch.setattr(_C, f"_overload_{op.name}", traced)
    monkeypatch.setattr(_C, "_compiling", lambda: True)
    _call_shim(op, ps, passed)
    assert eager.calls == []
    assert traced.calls == [_expected(ps, received, len(ps))]


def test_pack_rejects_a_tensor_and_accepts_any_pair() -> None:
    a, sfa = fp8_per_token(4, 128)
    b, sfb = fp8_per_block(8, 128)
    d = torch.randn(4, 8).bfloat16()
    before = d.clone()
    two_rows = torch.empty(2, 128, dtype=torch.float8_e4m3fn)  # would unpack into two rows
    with pytest.raises(TypeError, match=r"fp8_fp4_gemm_nt: argument 'a' must be a \(tensor, scale\) pair"):
        deep_gemm.fp8_gemm_nt(two_rows, (b, sfb), d)
    with pytest.raises(TypeError, match=r"fp8_fp4_gemm_nt: argument 'b' must be a \(tensor, scale\) pair"):
        deep_gemm.fp8_gemm_nt((a, sfa), torch.nn.Parameter(two_rows.float(), requires_grad=False), d)
    assert torch.equal(d, before)
    expected = torch.empty_like(d)
    torch.ops.deep_gemm.fp8_fp4_gemm_nt(a, sfa, b, sfb, expected)
    for pair in ([a, sfa], (a, sfa)):
        out = torch.empty_like(d)
        deep_gemm.fp8_gemm_nt(pair, [b, sfb], out)
        assert torch.equal(out, expected)


def test_forwarded_arguments_reach_the_kernel() -> None:
    """The shim's shortened calls compute what the full op call computes (c = d accumulates)."""
    a, sfa = fp8_per_token(5, 256)
    b, sfb = fp8_per_block(24, 256)
    c = torch.randn(5, 24)
    want = c.clone()
    torch.ops.deep_gemm.fp8_fp4_gemm_nt(a, sfa, b, sfb, want, want, None, None, None, "nk", False)
    for extra in ({}, {"compiled_dims": "mn"}, {"recipe": (1, 128, 128)}, {"disable_ue8m0_cast": True}):
        got = c.clone()
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), got, c=got, **extra)
        torch.testing.assert_close(got, want, rtol=0, atol=0, msg=str(extra))
    plain = c.clone()
    deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), plain)
    assert not torch.equal(plain, want)  # without c the result differs, so c really was forwarded above


def test_dynamo_traces_the_shim_without_a_graph_break() -> None:
    a, sfa = fp8_per_token(3, 128)
    b, sfb = fp8_per_block(16, 128)

    def f(d: torch.Tensor) -> torch.Tensor:
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=d)
        return d * 2

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    base = torch.randn(3, 16)
    want, got = base.clone(), base.clone()
    f(want)
    compiled(got)
    assert torch.equal(got, want)
