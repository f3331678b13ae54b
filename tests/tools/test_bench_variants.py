"""benchmarks/variants.py: per-launch switches compared call by call in one process.

The parsing refuses what cannot work (a switch read once per process, a malformed spec), a
variant's switches hold for its call alone, the paired-ratio verdicts read the quartiles, and
the list of per-launch switches agrees with where csrc/ reads them.  The grouped benchmark's
timing order and checks run here with stand-ins for the GPU timer."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench_path() -> Iterator[None]:
    # The benchmarks import each other by bare name, as they do when run as scripts.
    sys.path.insert(0, str(ROOT / "benchmarks"))
    yield
    sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture
def variants(bench_path: None) -> ModuleType:
    import variants as module

    return module


def test_parse_variant_reads_names_and_switches(variants: ModuleType) -> None:
    v = variants.parse_variant("mk+skip:DG_GEMM_MASKED_SCHEDULE=1,DG_GEMM_SKIP_IDLE_WAVES=1")
    assert v.name == "mk+skip"
    assert v.env == (("DG_GEMM_MASKED_SCHEDULE", "1"), ("DG_GEMM_SKIP_IDLE_WAVES", "1"))
    tiles = variants.variants_from_args(["slab:DG_GEMM_SLAB_WAIT=1"], "128x128,256x128")
    assert [t.name for t in tiles] == ["slab", "128x128", "256x128"]
    assert tiles[2].env == (("DG_SM90_GEMM_CONFIG", "256x128"),)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("DG_GEMM_SLAB_WAIT=1", ["NAME:KEY=VALUE"]),
        ("a b:DG_GEMM_SLAB_WAIT=1", ["NAME:KEY=VALUE"]),
        ("x:DG_GEMM_SLAB_WAIT", ["'DG_GEMM_SLAB_WAIT' is not KEY=VALUE"]),
        ("x:DG_GEMM_GENERAL_SCHEDULE=1", ["DG_GEMM_GENERAL_SCHEDULE is not read on every launch", "two runs"]),
        ("x:DG_BF16_GEMM_NATIVE=1", ["DG_BF16_GEMM_NATIVE is not read on every launch"]),
        ("x:DG_GEMM_SLAB_WAIT=1,DG_GEMM_SLAB_WAIT=0", ["DG_GEMM_SLAB_WAIT given twice"]),
    ],
)
def test_parse_variant_refuses_with_the_reason(variants: ModuleType, text: str, words: list[str]) -> None:
    with pytest.raises(ValueError) as err:
        variants.parse_variant(text)
    assert "--variant" in str(err.value)
    for w in words:
        assert w in str(err.value)


def test_duplicate_variant_names_are_refused(variants: ModuleType) -> None:
    with pytest.raises(ValueError, match="128x128 given twice"):
        variants.variants_from_args(["128x128:DG_GEMM_SLAB_WAIT=1"], "128x128")


def test_a_variant_holds_for_its_call_alone(variants: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DG_GEMM_SLAB_WAIT", "0")  # set at launch: put back after the call
    monkeypatch.delenv("DG_GEMM_SKIP_IDLE_WAVES", raising=False)  # unset at launch: unset again after
    seen: list[tuple[str | None, str | None]] = []

    def call() -> int:
        seen.append((os.environ.get("DG_GEMM_SLAB_WAIT"), os.environ.get("DG_GEMM_SKIP_IDLE_WAVES")))
        return len(seen)

    v = variants.parse_variant("both:DG_GEMM_SLAB_WAIT=1,DG_GEMM_SKIP_IDLE_WAVES=1")
    assert variants.under(call, v)() == 1
    assert seen == [("1", "1")]
    assert os.environ.get("DG_GEMM_SLAB_WAIT") == "0"
    assert "DG_GEMM_SKIP_IDLE_WAVES" not in os.environ

    def failing() -> None:
        raise RuntimeError("kernel refused")

    with pytest.raises(RuntimeError, match="kernel refused"):
        variants.under(failing, v)()
    assert os.environ.get("DG_GEMM_SLAB_WAIT") == "0"
    assert "DG_GEMM_SKIP_IDLE_WAVES" not in os.environ


def test_paired_ratios_and_verdicts(variants: ModuleType) -> None:
    base = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0, 103.0, 97.0]
    faster = variants.paired(base, [b / 1.05 for b in base])  # every round 5% faster
    assert faster.median == pytest.approx(1.05) and faster.verdict == "faster"
    slower = variants.paired(base, [b * 1.04 for b in base])
    assert slower.median == pytest.approx(1 / 1.04) and slower.verdict == "slower"
    # Rounds that go both ways: the quartiles straddle 1.
    mixed = variants.paired(base, [b * f for b, f in zip(base, [0.97, 1.03, 0.98, 1.02, 0.99, 1.01, 0.96, 1.04])])
    assert mixed.q1 < 1.0 < mixed.q3 and mixed.verdict == "level"
    # A clock drift that slows both calls of a round alike leaves the pairs' ratio alone, where
    # the medians of the two series alone would read it as an effect.
    drift = [100.0 * (1 + 0.02 * i) for i in range(8)]
    assert variants.paired(drift, [t / 1.01 for t in drift]).median == pytest.approx(1.01)
    assert str(faster).endswith("faster")
    with pytest.raises(ValueError, match="paired samples"):
        variants.paired(base, base[:-1])


def test_summary_applies_the_rule(variants: ModuleType) -> None:
    p = variants.Paired
    meets = variants.summary("masked", "skip", [p(1.04, 1.02, 1.06), p(1.0, 0.99, 1.01)])
    assert "geomean base/variant 1.020" in meets and "1 faster, 1 level, 0 slower of 2" in meets
    assert "; meets the rule" in meets
    one_slower = variants.summary("masked", "skip", [p(1.2, 1.1, 1.3), p(0.98, 0.97, 0.99)])
    assert "1 slower" in one_slower and "does not meet the rule" in one_slower
    below = variants.summary("dense", "slab", [p(0.995, 0.98, 1.01)])
    assert "does not meet the rule" in below


# Where csrc/ reads a switch: a read cached in a static, directly or through the function that
# reads it, holds for the whole process.
_SOURCES = [p for ext in ("*.cu", "*.cuh", "*.h", "*.hpp", "*.cpp") for p in (ROOT / "csrc").rglob(ext)]
_FUNCTION = re.compile(r"^[A-Za-z_][\w:<>,*& ]*?\b([A-Za-z_]\w*)\s*\([^;]*\)\s*(const\s*)?\{")


def _read_once_reasons(key: str) -> list[str]:
    texts = {p: p.read_text().splitlines() for p in _SOURCES}
    sites = [(p, i) for p, lines in texts.items() for i, line in enumerate(lines) if f'"{key}"' in line]
    assert sites, f"{key} is read nowhere in csrc/"
    reasons = []
    for p, i in sites:
        lines = texts[p]
        if "static" in lines[i]:
            reasons.append(f"{p.name}:{i + 1} caches it in a static")
        definition = next((m for j in range(i, -1, -1) if (m := _FUNCTION.match(lines[j]))), None)
        assert definition is not None, f"{p.name}:{i + 1}: no enclosing function found"
        name = definition.group(1)
        cached = re.compile(rf"static[^;(]*=\s*[\w:]*\b{name}\(")
        reasons += [
            f"{q.name}:{j + 1} caches {name}() in a static"
            for q, other in texts.items()
            for j, line in enumerate(other)
            if cached.search(line)
        ]
    return reasons


def test_per_call_switches_are_read_on_every_launch(variants: ModuleType) -> None:
    for key in variants.PER_CALL_SWITCHES:
        assert _read_once_reasons(key) == [], key
    # The check sees the switches that are read once.
    assert _read_once_reasons("DG_GEMM_GENERAL_SCHEDULE")
    assert _read_once_reasons("DG_BF16_GEMM_NATIVE")


def test_grouped_benchmark_times_and_checks_each_variant(bench_path: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """time_pair / measure with stand-ins for the GPU timer, the host timer and the memory probe:
    each round runs ours, the anchor and each variant in that order, each variant under its own
    switches only, and every variant's result is checked before the timing."""
    import gpu_grouped_gemm as grouped
    import variants

    monkeypatch.delenv("DG_SM90_GEMM_CONFIG", raising=False)
    monkeypatch.delenv("DG_GEMM_SKIP_IDLE_WAVES", raising=False)
    log: list[str] = []

    def ours() -> None:
        log.append(f"ours cfg={os.environ.get('DG_SM90_GEMM_CONFIG')} skip={os.environ.get('DG_GEMM_SKIP_IDLE_WAVES')}")

    def anchor() -> None:
        log.append("anchor")

    def fake_samples(fns: list[Callable[[], object]], repeats: int, flush: object) -> list[list[float]]:
        rounds: list[list[float]] = [[] for _ in fns]
        for r in range(repeats):
            for i, fn in enumerate(fns):
                fn()
                rounds[i].append(100.0 + r if i != 3 else (100.0 + r) / 1.1)  # variant 2 is 10% faster
        return rounds

    checks: list[str | None] = []

    def check() -> float:
        checks.append(os.environ.get("DG_GEMM_SKIP_IDLE_WAVES"))
        return 1e-6

    monkeypatch.setattr(grouped, "time_gpu_samples", fake_samples)
    monkeypatch.setattr(grouped, "time_host", lambda fn, calls: 1.0)
    monkeypatch.setattr(grouped, "peak_bytes", lambda fn: 0)
    monkeypatch.setattr(grouped, "OTHER", [])
    monkeypatch.setattr(grouped, "VARIANTS", variants.variants_from_args(["skip:DG_GEMM_SKIP_IDLE_WAVES=1"], "128x128"))
    r = grouped.measure(10, ours, anchor, check, 2, None, host_calls=1)
    assert checks == [None, "1", None]  # as launched, then under each variant
    assert r["variant_diffs"] == {"skip": 1e-6, "128x128": 1e-6}
    assert log == [
        "ours cfg=None skip=None", "anchor", "ours cfg=None skip=1", "ours cfg=128x128 skip=None",
    ] * 2  # fmt: skip
    names = [name for name, _, _ in r["variants"]]
    assert names == ["skip", "128x128"]
    (_, t_skip, p_skip), (_, t_tile, p_tile) = r["variants"]
    assert t_skip == pytest.approx(100.5)
    assert p_skip.median == pytest.approx(1.0) and p_skip.verdict == "level"
    assert p_tile.median == pytest.approx(1.1) and p_tile.verdict == "faster"
    assert t_tile == pytest.approx(100.5 / 1.1)
    assert "DG_GEMM_SKIP_IDLE_WAVES" not in os.environ and "DG_SM90_GEMM_CONFIG" not in os.environ


def test_grouped_benchmark_times_extra_calls_after_the_variants(
    bench_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """measure(extras=...) (--dense-rows): each extra call runs in every round after the variants,
    is never checked as a variant is, and comes back as its median and the paired ratios ours / it."""
    import gpu_grouped_gemm as grouped
    import variants

    monkeypatch.delenv("DG_SM90_GEMM_CONFIG", raising=False)
    log: list[str] = []

    def fake_samples(fns: list[Callable[[], object]], repeats: int, flush: object) -> list[list[float]]:
        rounds: list[list[float]] = [[] for _ in fns]
        for r in range(repeats):
            for i, fn in enumerate(fns):
                fn()
                rounds[i].append(100.0 + r if i != len(fns) - 1 else (100.0 + r) / 1.25)  # the extra: 25% faster
        return rounds

    checks: list[str] = []
    monkeypatch.setattr(grouped, "time_gpu_samples", fake_samples)
    monkeypatch.setattr(grouped, "time_host", lambda fn, calls: 1.0)
    monkeypatch.setattr(grouped, "peak_bytes", lambda fn: 0)
    monkeypatch.setattr(grouped, "OTHER", [])
    monkeypatch.setattr(grouped, "VARIANTS", variants.variants_from_args([], "128x128"))
    r = grouped.measure(
        10,
        lambda: log.append(f"ours cfg={os.environ.get('DG_SM90_GEMM_CONFIG')}"),
        lambda: log.append("anchor"),
        lambda: checks.append("check") or 1e-6,
        3,
        None,
        host_calls=1,
        extras=[("dense-rows", lambda: log.append("dense"))],
    )
    assert log == ["ours cfg=None", "anchor", "ours cfg=128x128", "dense"] * 3
    assert checks == ["check", "check"]  # as launched and under the one variant, never the extra
    assert [name for name, _, _ in r["variants"]] == ["128x128"]
    ((name, t_dense, p_dense),) = r["extras"]
    assert name == "dense-rows"
    assert t_dense == pytest.approx(101.0 / 1.25)
    assert p_dense.median == pytest.approx(1.25)  # ours / the extra: ours 25% slower


def test_ratio_summary_line(bench_path: None) -> None:
    """gpu_gemm.ratio_summary: the geomean of other/ours ratios (the fourth root of their product
    here), the smallest, and the count at or above 1.0 (1.0 itself counts)."""
    import gpu_gemm

    line = gpu_gemm.ratio_summary("in-run", [1.1, 0.9, 1.0, 0.8])
    expected_geo = (1.1 * 0.9 * 1.0 * 0.8) ** 0.25
    assert line == f"in-run: geomean {expected_geo:.3f}, worst 0.800, 2 of 4 at >= 1.0."
    assert gpu_gemm.ratio_summary("one", [1.25]) == "one: geomean 1.250, worst 1.250, 1 of 1 at >= 1.0."


def test_timing_rounds_shuffle_the_order(bench_path: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """time_gpu_samples: each round takes every call once, in an order of its own; over the rounds
    every call takes every place and follows every other call (a fixed predecessor, torch's anchor,
    biased the call after it); the orders repeat from run to run; sample r of each call comes from
    round r (the pairs stay pairs)."""
    import gpu_gemm
    import torch

    clock = {"t": 0.0}

    class FakeEvent:  # a timer that reads a clock the calls advance
        def __init__(self, enable_timing: bool = False) -> None:
            self.t = 0.0

        def record(self) -> None:
            self.t = clock["t"]

        def synchronize(self) -> None:
            pass

        def elapsed_time(self, other: FakeEvent) -> float:
            return other.t - self.t

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    order: list[int] = []

    def call(i: int) -> Callable[[], None]:
        def run() -> None:
            order.append(i)
            clock["t"] += 1.0 + i  # call i takes (1 + i) ms

        return run

    n, rounds = 4, 40
    fns = [call(i) for i in range(n)]
    flush = torch.empty(4)
    samples = gpu_gemm.time_gpu_samples(fns, rounds, flush)
    timed = order[3 * n :]  # after three warm-up calls each
    per_round = [timed[r * n : (r + 1) * n] for r in range(rounds)]
    assert all(sorted(r) == list(range(n)) for r in per_round)
    assert {(r.index(i), i) for r in per_round for i in range(n)} == {(p, i) for p in range(n) for i in range(n)}
    followed = {(r[j - 1], r[j]) for r in per_round for j in range(1, n)}
    assert followed == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert len({tuple(r) for r in per_round}) > n  # not a rotation of one list
    assert samples == [[(1.0 + i) * 1e3] * rounds for i in range(n)]
    order.clear()
    gpu_gemm.time_gpu_samples(fns, rounds, flush)
    assert order[3 * n :] == timed  # the same orders again


def test_head_start_spin_comes_between_flush_and_start(bench_path: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """--head-start-cycles: every timed call (warm-up calls excepted) is preceded by the flush, then the
    GPU spin of the given cycles, then its start event; without it, by the flush and the start event
    alone; a negative count is refused."""
    import gpu_gemm
    import torch

    log: list[str] = []

    class LoggingEvent:
        def __init__(self, enable_timing: bool = False) -> None:
            self.name = "start" if not any(isinstance(e, LoggingEvent) for e in made) else "end"
            made.append(self)

        def record(self) -> None:
            log.append(self.name)

        def synchronize(self) -> None:
            pass

        def elapsed_time(self, other: LoggingEvent) -> float:
            return 1.0

    class LoggingFlush:
        def zero_(self) -> None:
            log.append("flush")

    made: list[LoggingEvent] = []
    monkeypatch.setattr(torch.cuda, "Event", LoggingEvent)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append(f"spin {cycles}"), raising=False)
    monkeypatch.setitem(gpu_gemm.HEAD_START, "cycles", 0)
    fns = [lambda i=i: log.append(f"call {i}") for i in range(2)]

    def timed_calls(rounds: int) -> list[list[str]]:
        log.clear()
        made.clear()
        gpu_gemm.time_gpu_samples(fns, rounds, LoggingFlush())  # type: ignore[arg-type]
        timed = log[6:]  # three warm-up calls each, untimed
        per_call = len(timed) // (2 * rounds)
        return [timed[j : j + per_call] for j in range(0, len(timed), per_call)]

    for seq in timed_calls(3):
        assert seq[0] == "flush" and seq[1] == "start" and seq[2].startswith("call ") and seq[3] == "end", seq
    gpu_gemm.set_head_start(200_000)
    for seq in timed_calls(3):
        assert seq[:3] == ["flush", "spin 200000", "start"] and seq[3].startswith("call ") and seq[4] == "end", seq
    with pytest.raises(ValueError, match="--head-start-cycles must be >= 0"):
        gpu_gemm.set_head_start(-1)
