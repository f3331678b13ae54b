"""Samples for the layout family."""

from __future__ import annotations

import torch

from deep_gemm.utils import ceil_to_ue8m0

from . import Sample, samples


def _pow2(*shape: int, device: torch.device) -> torch.Tensor:
    return ceil_to_ue8m0(torch.rand(*shape, device=device) + 0.01)


@samples("get_tma_aligned_size")
def _tma(device: torch.device) -> list[Sample]:
    return [Sample("fp32", (4095, 4)), Sample("bf16", (7, 2)), Sample("byte", (0, 1))]


@samples("get_mn_major_tma_aligned_tensor")
def _mn_major(device: torch.device) -> list[Sample]:
    return [
        Sample("2d_odd", (torch.rand(33, 5, device=device),)),
        Sample("3d", (torch.rand(2, 8, 3, device=device),)),
        Sample("m1", (torch.rand(1, 4, device=device),)),
        Sample("empty", (torch.rand(0, 4, device=device),)),
    ]


@samples("get_mn_major_tma_aligned_packed_ue8m0_tensor")
def _packed(device: torch.device) -> list[Sample]:
    psum = torch.tensor([50, 300], dtype=torch.int32, device=device)
    return [
        Sample("2d", (_pow2(33, 7, device=device),)),
        Sample("3d", (_pow2(2, 16, 8, device=device),)),
        Sample("psum", (_pow2(384, 4, device=device), psum)),
        Sample("m1", (_pow2(1, 5, device=device),)),
        Sample("empty", (_pow2(0, 3, device=device),)),
        Sample("no_k_groups", (_pow2(2, 6, 0, device=device),)),
    ]


@samples("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor")
def _k_grouped(device: torch.device) -> list[Sample]:
    ks = [128, 0, 384]
    rows = sum(-(-k // 128) for k in ks)
    layout = torch.tensor(ks, dtype=torch.int32, device=device)
    psum_layout = torch.tensor([128, 128, 512], dtype=torch.int32, device=device)
    return [
        Sample("ks", (_pow2(rows, 8, device=device), layout, ks, 128, 128)),
        Sample("ks_gran32", (_pow2(sum(-(-k // 32) for k in ks), 8, device=device), layout, ks, 32, 128)),
        Sample(
            "psum_no_ks",
            (_pow2(rows, 8, device=device), psum_layout, None, 128, 128, True),
            graphable_reason="without ks_cpu the group sizes are read from grouped_layout",
        ),
    ]


def _sm90(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] == 9


@samples("transform_sf_into_required_layout")
def _transform(device: torch.device) -> list[Sample]:
    out = [
        Sample("sfa_fp32_keep", (torch.rand(65, 3, device=device), 65, 300, [1, 128, 128], None, True, True)),
        Sample("sfb_block_keep", (torch.rand(2, 3, device=device), 256, 300, [1, 128, 128], None, False, True)),
        # The CPU packs these to UE8M0 (SM100 rules); an SM90 GPU keeps them float32.
        Sample("sfa_pack", (_pow2(65, 3, device=device), 65, 300, [1, 128], None, None, False), portable=False),
        Sample("sfb_block_pack", (_pow2(2, 3, device=device), 200, 300, [128, 128], None, None, False), portable=False),
        Sample("sfa_m1_keep", (torch.rand(1, 2, device=device), 1, 256, [1, 128], None, None, True)),
        Sample(
            "sfb_empty_pack",
            (_pow2(0, 3, device=device), 0, 300, [1, 128, 128], None, False, False),
            portable=False,
        ),
    ]
    if not _sm90(device):  # K granularity 32 exists only with UE8M0 scales (not on SM90)
        out.append(Sample("grouped_gran32", (_pow2(2, 40, 4, device=device), 40, 128, [1, 32], 2, None, False)))
    packed = torch.zeros(2, 1, 40, dtype=torch.int32, device=device).transpose(1, 2)
    packed.copy_(torch.randint(0, 2**30, (2, 40, 1), device=device, dtype=torch.int32))
    out.append(Sample("packed_input", (packed, 40, 128, [1, 32], 2, None, False)))
    return out


@samples("set_mk_alignment_for_contiguous_layout")
def _set_mk(device: torch.device) -> list[Sample]:
    return [Sample("default", (128,)), Sample("small", (64,))]


@samples("get_mk_alignment_for_contiguous_layout")
def _get_mk(device: torch.device) -> list[Sample]:
    return [Sample("plain", ())]


@samples("get_theoretical_mk_alignment_for_contiguous_layout")
def _theoretical(device: torch.device) -> list[Sample]:
    return [Sample("none", ()), Sample("m100", (100,))]
