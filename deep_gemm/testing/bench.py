"""Timing helpers with DeepGEMM's names and arguments: ``bench`` and ``bench_kineto``.

Both time on the GPU when torch has one. Without one they still run: ``bench``
falls back to the host clock and ``bench_kineto`` profiles CPU operators
(names such as ``deep_gemm::bf16_gemm_nt`` or ``aten::mm``), so scripts written
for a GPU degrade to something meaningful instead of failing.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import torch

# bench: an L2-sized write before timing (bytes); bench_kineto: the write before every call.
_BENCH_FLUSH_BYTES = 256 * 10**6
_KINETO_FLUSH_BYTES = 8 * 10**9


def _has_gpu() -> bool:
    return torch.cuda.is_available()


def _flush_l2(num_bytes: int) -> None:
    torch.empty(num_bytes // 4, dtype=torch.int32, device="cuda").zero_()


def bench(fn: Callable[[], Any], num_warmups: int = 5, num_tests: int = 10, high_precision: bool = False) -> float:
    """Mean seconds per call of ``fn`` over ``num_tests`` back-to-back calls, after ``num_warmups``.

    On a GPU: L2 is flushed once, the calls are bracketed by CUDA events, and
    ``high_precision`` first queues a large matmul so that host launch latency
    does not leak into the measured interval. Without a GPU the host clock is used.
    """
    if num_tests < 1:
        raise ValueError(f"bench: argument 'num_tests' must be at least 1, got {num_tests}")
    if not _has_gpu():
        for _ in range(num_warmups):
            fn()
        start = time.perf_counter()
        for _ in range(num_tests):
            fn()
        return (time.perf_counter() - start) / num_tests

    torch.cuda.synchronize()
    _flush_l2(_BENCH_FLUSH_BYTES)
    for _ in range(num_warmups):
        fn()
    if high_precision:
        big = torch.randn(8192, 8192, device="cuda")
        big @ big
    begin = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    begin.record()
    for _ in range(num_tests):
        fn()
    end.record()
    torch.cuda.synchronize()
    return float(begin.elapsed_time(end)) / 1e3 / num_tests


class empty_suppress:
    """A context manager that does nothing: the stand-in for ``suppress_stdout_stderr``."""

    def __enter__(self) -> empty_suppress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class suppress_stdout_stderr:
    """Silence file descriptors 1 and 2 (so output of C/C++ code and of the profiler goes too),
    and ``sys.stdout``/``sys.stderr``, until the block ends."""

    def __enter__(self) -> suppress_stdout_stderr:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        self._devnull = open(os.devnull, "w")  # closed in __exit__
        self._saved_fds = [os.dup(1), os.dup(2)]
        self._saved_streams = (sys.stdout, sys.stderr)
        os.dup2(self._devnull.fileno(), 1)
        os.dup2(self._devnull.fileno(), 2)
        sys.stdout = sys.stderr = self._devnull
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._devnull.flush()
        sys.stdout, sys.stderr = self._saved_streams
        for fd, saved in zip((1, 2), self._saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        self._devnull.close()


def _names_arg(kernel_names: object) -> tuple[str, ...]:
    if isinstance(kernel_names, str):
        return (kernel_names,)
    if isinstance(kernel_names, tuple) and all(isinstance(n, str) for n in kernel_names):
        return kernel_names
    raise TypeError(
        f"bench_kineto: argument 'kernel_names' must be a str or a tuple of str, got {type(kernel_names).__name__}"
    )


def _profile(
    fn: Callable[[], Any], num_tests: int, flush_l2: bool, barrier: Callable[[], Any] | None, gpu: bool
) -> torch.profiler.profile:
    activity = torch.profiler.ProfilerActivity.CUDA if gpu else torch.profiler.ProfilerActivity.CPU
    kwargs: dict[str, Any] = {
        "activities": [activity],
        "schedule": torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1),
    }
    if "acc_events" in inspect.signature(torch.profiler.profile).parameters:
        kwargs["acc_events"] = True
    profiler = torch.profiler.profile(**kwargs)
    with profiler:
        for _ in range(2):  # one warm-up round, then the recorded one
            for _ in range(num_tests):
                if gpu and flush_l2:
                    _flush_l2(_KINETO_FLUSH_BYTES)
                if barrier is not None:
                    if gpu:
                        # A ~10 ms kernel ahead of the barrier lets every rank's launches catch up.
                        torch.cuda._sleep(20_000_000)  # type: ignore[no-untyped-call]
                    barrier()
                fn()
            if gpu:
                torch.cuda.synchronize()
            profiler.step()
    return profiler


def _event_time_us(event: Any, gpu: bool) -> float:
    if gpu:
        for attr in ("device_time_total", "cuda_time_total"):
            if hasattr(event, attr):
                return float(getattr(event, attr))
        return 0.0
    return float(event.cpu_time_total)


def bench_kineto(
    fn: Callable[[], Any],
    kernel_names: str | tuple[str, ...],
    num_tests: int = 30,
    suppress_kineto_output: bool = False,
    trace_path: str | None = None,
    flush_l2: bool = True,
    with_multiple_kernels: bool = False,
    barrier: Callable[[], Any] | None = None,
) -> Any:
    """Mean seconds per launch of the kernels whose names contain each of ``kernel_names``.

    ``fn`` runs once, then ``num_tests`` times unrecorded and ``num_tests`` times under
    torch.profiler; each call is preceded (on a GPU) by an 8 GB write that flushes L2
    when ``flush_l2``, and by ``barrier()`` when given. For every name, the time of all
    recorded kernels whose name contains it is summed and divided by their launch count;
    a name that matches nothing gives 0. Unless ``with_multiple_kernels``, a name matching
    two different kernels raises AssertionError. A str gives one float, a tuple a tuple of floats.
    ``trace_path`` saves a Chrome trace. With ``DG_USE_NVIDIA_TOOLS=1`` nothing is profiled
    (it conflicts with Nsight and compute-sanitizer) and every time is 1.

    Without a GPU the profiled events are CPU operators and their total CPU time.
    """
    names = _names_arg(kernel_names)
    single = isinstance(kernel_names, str)
    if int(os.environ.get("DG_USE_NVIDIA_TOOLS", "0")):
        return 1 if single else (1,) * len(names)
    if num_tests < 1:
        raise ValueError(f"bench_kineto: argument 'num_tests' must be at least 1, got {num_tests}")

    gpu = _has_gpu()
    fn()  # first call outside the profile: compilation, autotuning and their prints
    with suppress_stdout_stderr() if suppress_kineto_output else empty_suppress():
        profiler = _profile(fn, num_tests, flush_l2, barrier, gpu)
    if trace_path is not None:
        profiler.export_chrome_trace(trace_path)

    events = list(profiler.key_averages())
    times = []
    for name in names:
        matched = [e for e in events if name in e.key]
        if not with_multiple_kernels and len(matched) > 1:
            found = ", ".join(sorted(e.key for e in matched))
            # An AssertionError, as callers written for DeepGEMM expect (some catch it and fall back).
            raise AssertionError(
                f"bench_kineto: kernel name '{name}' matches {len(matched)} different kernels ({found}); "
                "pass a more specific name or with_multiple_kernels=True"
            )
        count = sum(e.count for e in matched)
        total_us = sum(_event_time_us(e, gpu) for e in matched)
        times.append(total_us / 1e6 / count if count else 0.0)
    return times[0] if single else tuple(times)
