"""Numeric, timing and test-selection helpers for tests and benchmarks."""

from . import numeric, utils  # noqa: F401  (submodules, reachable as deep_gemm.testing.<name>)
from .bench import bench, bench_kineto, empty_suppress, suppress_stdout_stderr
from .numeric import assert_bitwise_equal, calc_diff, count_bytes
from .utils import get_arch_major, ignore_env, test_filter

# The attribute `bench` is the function, not its module (sys.modules['deep_gemm.testing.bench']).
__all__ = [
    "assert_bitwise_equal",
    "bench",
    "bench_kineto",
    "calc_diff",
    "count_bytes",
    "empty_suppress",
    "get_arch_major",
    "ignore_env",
    "suppress_stdout_stderr",
    "test_filter",
]
