"""Samples for the runtime family (process-wide settings)."""

from __future__ import annotations

import os

import torch

from . import Sample, samples


@samples("get_num_sms", "get_tc_util", "get_pdl", "get_ignore_compile_dims", "get_block_size_multiple_of")
def _getters(device: torch.device) -> list[Sample]:
    return [Sample("plain", ())]


@samples("set_num_sms")
def _set_num_sms(device: torch.device) -> list[Sample]:
    return [Sample("reset", (0,)), Sample("one", (1,))]


@samples("set_tc_util")
def _set_tc_util(device: torch.device) -> list[Sample]:
    return [Sample("unset", (0,)), Sample("half", (50,)), Sample("full", (100,))]


@samples("set_pdl", "set_ignore_compile_dims")
def _set_bool(device: torch.device) -> list[Sample]:
    return [Sample("on", (True,)), Sample("off", (False,))]


@samples("set_block_size_multiple_of")
def _set_block(device: torch.device) -> list[Sample]:
    return [Sample("one", ([1],)), Sample("pair", ([64, 128],))]


@samples("init")
def _init(device: torch.device) -> list[Sample]:
    import deep_gemm

    # The values deep_gemm's own import passes (init has no getter to restore a different call from).
    root, cuda_home = os.path.dirname(os.path.abspath(deep_gemm.__file__)), deep_gemm._cuda_home()
    return [Sample("package", (root, cuda_home)), Sample("trailing_slash", (os.path.join(root, ""), cuda_home))]
