"""Numeric and timing helpers for tests and benchmarks."""

from .numeric import assert_bitwise_equal, calc_diff, count_bytes

__all__ = ["assert_bitwise_equal", "calc_diff", "count_bytes"]
