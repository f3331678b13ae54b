"""Kernel switches compared inside one process, call by call.

A variant is a set of environment switches that the GEMM launchers read on every launch
(DG_SM90_GEMM_CONFIG and the opt-in switches of csrc/cuda/gemm_instantiate.cuh).  The GPU
benchmarks time each variant of a call in the same round as the call itself (the launch
environment), with the L2 flushed before each, so a variant's ratio is taken against a call made
moments before it on the same clocks and temperature.  Two processes, one per setting, differ
by more than the effects measured here: the eighteenth session's two runs of one build moved
3-9% at m = 4096.

Each round gives one paired ratio per variant, base time / variant time (above 1: the variant is
faster).  A shape's verdict reads the quartiles of those ratios: "faster" when the lower quartile
is above 1, "slower" when the upper quartile is below 1, "level" otherwise.  A switch is worth
turning on for a family when no shape reads "slower" and the geomean of the median ratios is
above 1 (the rule docs/performance.md states for the opt-ins).

    --variant NAME:KEY=VALUE[,KEY=VALUE...]    (repeatable)
    --tiles BMxBN,...                          (each tile a variant named after it)

This module needs neither torch nor a GPU; tests/tools/test_bench_variants.py checks it on the CPU.
"""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# The switches the launchers read on every launch (not once per process): only these can differ
# between calls of one process.  tests/tools/test_bench_variants.py checks the list against csrc/.
PER_CALL_SWITCHES = (
    "DG_SM90_GEMM_CONFIG",
    "DG_GEMM_SKIP_IDLE_WAVES",
    "DG_GEMM_SLAB_WAIT",
    "DG_GEMM_STSM",
    "DG_GEMM_COMPACT_EPILOGUE",
    "DG_GEMM_LEAN",
    "DG_GEMM_STAGGER_CYCLES",
    "DG_GEMM_MASKED_SCHEDULE",
    "DG_GEMM_K_GROUPED_SCHEDULE",
    "DG_GEMM_ROW_AS_K_GROUP",
    "DG_GEMM_SWIZZLE",
    "DG_GEMM_SCALE_WARP",
    "DG_GEMM_L2_HINTS",
)

_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")


@dataclass(frozen=True)
class Variant:
    """A named set of switches, applied on top of the launch environment for one call."""

    name: str
    env: tuple[tuple[str, str], ...]


def parse_variant(text: str) -> Variant:
    """NAME:KEY=VALUE[,KEY=VALUE...] -> Variant; a clear ValueError on anything else."""
    name, sep, body = text.partition(":")
    if not sep or not _NAME.match(name):
        raise ValueError(f"--variant {text!r}: expected NAME:KEY=VALUE[,KEY=VALUE...] (NAME of [A-Za-z0-9_.+-])")
    pairs: list[tuple[str, str]] = []
    for item in body.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--variant {text!r}: {item!r} is not KEY=VALUE")
        if key not in PER_CALL_SWITCHES:
            raise ValueError(
                f"--variant {text!r}: {key} is not read on every launch, so it cannot differ between the calls "
                f"of one process (per-call switches: {', '.join(PER_CALL_SWITCHES)}); compare it across two runs"
            )
        if any(k == key for k, _ in pairs):
            raise ValueError(f"--variant {text!r}: {key} given twice")
        pairs.append((key, value))
    return Variant(name, tuple(pairs))


def variants_from_args(variant_texts: Sequence[str] | None, tiles: str | None) -> list[Variant]:
    """The --variant values, then one variant per --tiles entry (named after the tile)."""
    out = [parse_variant(t) for t in variant_texts or []]
    for tile in tiles.split(",") if tiles else []:
        out.append(Variant(tile, (("DG_SM90_GEMM_CONFIG", tile),)))
    names = [v.name for v in out]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"variant names must differ: {', '.join(duplicated)} given twice")
    return out


def under(fn: Callable[[], object], variant: Variant) -> Callable[[], object]:
    """fn with the variant's switches set for the call and the previous values put back after it."""

    def run() -> object:
        saved = {key: os.environ.get(key) for key, _ in variant.env}
        os.environ.update(dict(variant.env))
        try:
            return fn()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    return run


@dataclass(frozen=True)
class Paired:
    """Quartiles of the per-round ratios base time / variant time (above 1: the variant is faster)."""

    median: float
    q1: float
    q3: float

    @property
    def verdict(self) -> str:
        if self.q1 > 1.0:
            return "faster"
        if self.q3 < 1.0:
            return "slower"
        return "level"

    def __str__(self) -> str:
        return f"{self.median:.3f} [{self.q1:.3f}, {self.q3:.3f}] {self.verdict}"


def paired(base: Sequence[float], other: Sequence[float]) -> Paired:
    """The ratios base[i] / other[i] of rounds timed together, as quartiles."""
    if len(base) != len(other) or not base:
        raise ValueError(f"paired samples: {len(base)} base and {len(other)} variant times")
    ratios = sorted(b / o for b, o in zip(base, other, strict=True))
    if len(ratios) == 1:
        return Paired(ratios[0], ratios[0], ratios[0])
    q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return Paired(median, q1, q3)


def summary(label: str, name: str, results: Sequence[Paired]) -> str:
    """One line per variant and family: geomean of the median ratios, the worst, and the verdicts."""
    medians = [p.median for p in results]
    geo = statistics.geometric_mean(medians)
    counts = {v: sum(p.verdict == v for p in results) for v in ("faster", "level", "slower")}
    worth = counts["slower"] == 0 and geo > 1.0
    return (
        f"{label}: variant {name}: geomean base/variant {geo:.3f}, worst {min(medians):.3f}; "
        f"{counts['faster']} faster, {counts['level']} level, {counts['slower']} slower of {len(results)}; "
        f"{'meets' if worth else 'does not meet'} the rule (no shape slower, geomean above 1)"
    )
