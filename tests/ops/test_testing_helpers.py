"""deep_gemm.testing: bench, bench_kineto, the output suppressors and the test-selection helpers.

No assertion is about how long anything takes: only about what is called, counted and returned.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

import deep_gemm
from deep_gemm import testing


class Counter:
    """A callable that runs one small deep_gemm op and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.a = torch.randn(64, 32).bfloat16()
        self.b = torch.randn(48, 32).bfloat16()
        self.d = torch.empty(64, 48).bfloat16()

    def __call__(self) -> None:
        self.calls += 1
        deep_gemm.bf16_gemm_nt(self.a, self.b, self.d)


def test_bench_calls_and_returns_seconds_per_call() -> None:
    fn = Counter()
    t = testing.bench(fn, num_warmups=2, num_tests=7)
    assert fn.calls == 9
    assert isinstance(t, float) and t > 0
    with pytest.raises(ValueError, match="^bench: argument 'num_tests' must be at least 1, got 0$"):
        testing.bench(fn, num_tests=0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="profiles CPU operators, as bench_kineto does without a GPU")
def test_bench_kineto_on_cpu_operators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DG_USE_NVIDIA_TOOLS", raising=False)
    fn = Counter()
    t = testing.bench_kineto(fn, "deep_gemm::bf16_gemm_nt", num_tests=4)
    assert fn.calls == 1 + 2 * 4  # one unprofiled call, a warm-up round, the recorded round
    assert isinstance(t, float) and t > 0
    both = testing.bench_kineto(fn, ("deep_gemm::bf16_gemm_nt", "no_such_kernel"), num_tests=2)
    assert isinstance(both, tuple) and len(both) == 2 and both[0] > 0 and both[1] == 0
    with pytest.raises(AssertionError, match="^bench_kineto: kernel name 'aten::' matches [0-9]+ different kernels"):
        testing.bench_kineto(fn, "aten::", num_tests=2)
    assert testing.bench_kineto(fn, "aten::", num_tests=2, with_multiple_kernels=True) > 0
    trace = tmp_path / "trace.json"
    testing.bench_kineto(fn, "deep_gemm::bf16_gemm_nt", num_tests=2, trace_path=str(trace))
    names = {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    assert "deep_gemm::bf16_gemm_nt" in names


def test_bench_kineto_barrier_runs_before_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DG_USE_NVIDIA_TOOLS", raising=False)
    fn, order = Counter(), []

    def traced() -> None:
        order.append("fn")
        fn()

    testing.bench_kineto(traced, "deep_gemm::bf16_gemm_nt", num_tests=3, barrier=lambda: order.append("barrier"))
    assert order == ["fn"] + ["barrier", "fn"] * 6


def test_bench_kineto_with_nvidia_tools_returns_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_USE_NVIDIA_TOOLS", "1")
    fn = Counter()
    assert testing.bench_kineto(fn, "gemm_") == 1
    assert testing.bench_kineto(fn, ("mqa_logits", "clean_logits")) == (1, 1)
    assert fn.calls == 0


def test_bench_kineto_rejects_a_list_of_names() -> None:
    with pytest.raises(
        TypeError, match="^bench_kineto: argument 'kernel_names' must be a str or a tuple of str, got list$"
    ):
        testing.bench_kineto(Counter(), ["gemm_"])


def test_suppress_stdout_stderr_silences_both_descriptors(capfd: pytest.CaptureFixture[str]) -> None:
    print("before")
    with testing.suppress_stdout_stderr() as s:
        assert isinstance(s, testing.suppress_stdout_stderr)
        print("hidden print")
        os.write(1, b"hidden fd 1\n")
        os.write(2, b"hidden fd 2\n")
    print("after")
    with testing.empty_suppress() as e:
        assert isinstance(e, testing.empty_suppress)
        print("shown")
    out, err = capfd.readouterr()
    assert out == "before\nafter\nshown\n"
    assert "hidden" not in err


def test_get_arch_major() -> None:
    expected = torch.cuda.get_device_capability()[0] if torch.cuda.is_available() else 0
    assert testing.get_arch_major() == expected


def test_test_filter(capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    @testing.test_filter(lambda: True)
    def kept(x: int) -> int:
        calls.append(x)
        return x + 1

    @testing.test_filter(lambda: False)
    def dropped() -> None:
        calls.append(-1)

    assert kept(4) == 5 and kept.__name__ == "kept"
    assert dropped() is None
    assert calls == [4]
    assert "dropped:\n > Filtered by" in capsys.readouterr().out
    assert testing.test_filter.__test__ is False  # not collected by pytest when imported into a test module


def test_ignore_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_TEST_IGNORED", "7")
    seen = []

    def look() -> None:
        seen.append(os.environ.get("DG_TEST_IGNORED"))

    testing.ignore_env("DG_TEST_IGNORED", lambda: True)(look)()
    testing.ignore_env("DG_TEST_IGNORED", lambda: False)(look)()
    assert seen == [None, "7"]
    assert os.environ["DG_TEST_IGNORED"] == "7"

    def fail() -> None:
        raise KeyError("inside")

    with pytest.raises(KeyError):
        testing.ignore_env("DG_TEST_IGNORED", lambda: True)(fail)()
    assert os.environ["DG_TEST_IGNORED"] == "7"  # put back after an error too


@pytest.mark.gpu
def test_bench_kineto_finds_a_triton_kernel_on_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DG_USE_NVIDIA_TOOLS", raising=False)
    from tests.support.legacy_cases import m_grouped_case

    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    case = m_grouped_case([300, 200], 256, 256, align, torch.bfloat16, False, False, "cuda")
    d = torch.empty(case.groups.numel(), 256, dtype=torch.bfloat16, device="cuda")

    def run() -> None:
        deep_gemm.legacy.m_grouped_bf16_gemm_nt_contiguous_tl(case.a, case.b, d, case.groups)

    t, missing = testing.bench_kineto(run, ("m_grouped_bf16_gemm_contiguous_tl_impl", "no_such_kernel"), num_tests=5)
    assert t > 0 and missing == 0
    assert testing.bench(run, num_warmups=1, num_tests=3) > 0
