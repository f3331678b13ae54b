"""Every op on a CUDA device: agreement with the CPU, CUDA-graph capture and replay, opcheck.

Ops and inputs come from the manifest and the samples registry, so an op added
later is covered here without editing this file.  Skipped without a GPU.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import deep_gemm  # noqa: F401
from tests.support.build import present
from tests.support.manifest import OPS
from tests.support.opcheck_util import opcheck
from tests.support.samples import Sample, clone_args, load_all

pytestmark = pytest.mark.gpu

REGISTRY = load_all()
CUDA = torch.device("cuda")


def _tensor_ops() -> list[str]:
    names = []
    for name, op in sorted(OPS.items()):
        if name in REGISTRY and any(a.type.base == "Tensor" for a in op.schema.args):
            names.append(name)
    return names


def _cases(device: torch.device) -> list[tuple[str, Sample]]:
    if not torch.cuda.is_available():
        return []
    out = []
    for name in _tensor_ops():
        if not present(name):
            continue
        for sample in REGISTRY[name](device):
            out.append((name, sample))
    return out


CASES = _cases(CUDA)
IDS = [f"{n}-{s.name}" for n, s in CASES]


def _call(name: str, sample: Sample) -> Any:
    return getattr(torch.ops.deep_gemm, name).default(*sample.args, **sample.kwargs)


def _outputs(name: str, sample: Sample, result: Any) -> list[torch.Tensor]:
    """Returned tensors plus every argument the schema marks written."""
    op = OPS[name]
    written = {a.name for a in op.schema.args if a.is_write}
    bound = dict(zip(op.schema.arg_names, sample.args))
    bound.update(sample.kwargs)
    outs = [bound[w] for w in sorted(written) if isinstance(bound.get(w), torch.Tensor)]
    results = result if isinstance(result, (tuple, list)) else [result]
    return outs + [r for r in results if isinstance(r, torch.Tensor)]


# Note [FP8 tensor-core accumulation]
# On sm90 the FP8 GEMMs run wgmma, whose FP8 products are summed inside each 128-wide K block
# with fewer mantissa bits than float32 (the kernel promotes to float32 per block, as upstream
# does). Against the CPU's float32 formulation that leaves relative errors around 1e-4 of the
# largest output, so those ops are held to 2^-9 of it instead of float32's 1e-5.  The MQA
# logits kernels (ragged and paged) compute q . kv the same way, and the HC pre-norm GEMM
# multiplies on TF32 tensor cores (B rounded to 10 mantissa bits, as upstream's test allows):
# the H200 measured 1.7e-4 (MQA), 2.4e-4 (paged) and 5e-4 (HC) of the largest output on
# these samples.
FP8_TENSOR_CORE_OPS = {n for n in OPS if ("fp8" in n and "gemm" in n) or n.endswith("mqa_logits")}
TF32_TENSOR_CORE_OPS = {"tf32_hc_prenorm_gemm"}


def _same(x: torch.Tensor, y: torch.Tensor, exact: bool, rel: float | None = None) -> None:
    assert x.shape == y.shape and x.dtype == y.dtype
    if x.numel() == 0:
        return
    if exact or not x.is_floating_point():
        assert torch.equal(x.contiguous().view(-1).view(torch.uint8), y.contiguous().view(-1).view(torch.uint8))
        return
    finite = torch.isfinite(y)
    assert torch.equal(torch.isfinite(x), finite)
    assert torch.equal(x[~finite], y[~finite])
    xf, yf = x[finite].double(), y[finite].double()
    if yf.numel() == 0:
        return
    if rel is None:
        rel = 2**-7 if x.dtype in (torch.bfloat16, torch.float16) else 1e-5
    tol = rel * (yf.abs().max().item() + 1e-30)
    assert (xf - yf).abs().max().item() <= tol


def w_is_float32(outputs: list[torch.Tensor]) -> bool:
    return any(t.dtype == torch.float32 for t in outputs)


@pytest.mark.parametrize("name,sample", CASES, ids=IDS)
def test_cuda_matches_cpu(name: str, sample: Sample) -> None:
    if not sample.portable:
        pytest.skip("defined per GPU architecture (e.g. SM90 keeps float32 scales where the CPU packs UE8M0)")
    cpu = clone_args(sample, torch.device("cpu"))
    gpu = clone_args(sample)
    got = _outputs(name, gpu, _call(name, gpu))
    want = _outputs(name, cpu, _call(name, cpu))
    reduced = name in (FP8_TENSOR_CORE_OPS | TF32_TENSOR_CORE_OPS) and w_is_float32(want)
    for g, w in zip(got, want):
        _same(g.cpu(), w, exact=False, rel=2**-9 if reduced else None)


@pytest.mark.parametrize("name,sample", CASES, ids=IDS)
def test_cuda_graph_capture_and_replay(name: str, sample: Sample) -> None:
    if not sample.graphable:
        pytest.skip(f"reads device values on the host ({sample.graphable_reason})")
    eager = clone_args(sample)
    expected = [t.clone() for t in _outputs(name, eager, _call(name, eager))]
    captured = clone_args(sample)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        _call(name, clone_args(sample))  # warm-up outside the graph (workspaces, handles)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = _call(name, captured)
    outputs = _outputs(name, captured, result)
    returned = result if isinstance(result, (tuple, list)) else [result]
    for t in returned:
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            t.fill_(float("nan"))  # poison what the graph allocated: replay must rewrite it
    # Written arguments go back to their original values (they may be read, e.g. accumulators).
    fresh = clone_args(sample)
    for i, arg in enumerate(OPS[name].schema.args[: len(sample.args)]):
        if arg.is_write and isinstance(captured.args[i], torch.Tensor):
            captured.args[i].copy_(fresh.args[i])
    graph.replay()
    torch.cuda.synchronize()
    for got, want in zip(outputs, expected):
        _same(got, want, exact=True)


@pytest.mark.parametrize("name,sample", CASES, ids=IDS)
def test_opcheck_cuda(name: str, sample: Sample) -> None:
    opcheck(getattr(torch.ops.deep_gemm, name).default, clone_args(sample).args, clone_args(sample).kwargs)
