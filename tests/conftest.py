"""Shared fixtures: fresh random seeds, device selection (tests/ is a package: pytest puts the repo root on sys.path)."""

from __future__ import annotations

import pytest
import torch

import deep_gemm  # noqa: F401  (loads the extension before any test module uses torch.ops.deep_gemm)
from tests.support.build import DEVICES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_gpu)


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> torch.device:
    if request.param == "cuda":
        request.applymarker(pytest.mark.gpu)
    return torch.device(request.param)


@pytest.fixture(autouse=True)
def _fresh_seed() -> None:
    # Fresh random inputs every run (never a fixed pattern); the seed is printed on failure.
    seed = int.from_bytes(__import__("os").urandom(4), "little")
    torch.manual_seed(seed)
    print(f"seed={seed}")
