"""Helpers to build the inputs of deep_gemm ops (quantisation, scale layouts)."""

from . import layout, math
from .layout import *  # noqa: F403
from .math import *  # noqa: F403

__all__ = [*layout.__all__, *math.__all__]
