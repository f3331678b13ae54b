"""deep_gemm.utils.dist (init_dist, uneven_all_gather, dist_print) across two CPU processes (gloo)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import deep_gemm
from deep_gemm.utils import dist as dg_dist

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_two_ranks_gather_and_print() -> None:
    seed = int(torch.randint(0, 2**30, ()).item())
    env = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(_free_port()),
        "WORLD_SIZE": "1",  # nodes
        "RANK": "0",  # this node
        "GLOO_SOCKET_IFNAME": "lo",
        "CUDA_VISIBLE_DEVICES": "",  # gloo, whatever the machine has
    }
    procs = [
        subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "support" / "dist_worker.py"), str(r), "2", str(seed)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(2)
    ]
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        outs.append(out)
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {r}:\n{out}"
        assert f"gathered ok on rank {r}" in out
    assert "printed once per node" in outs[0]
    assert "printed once per node" not in outs[1]


def test_reexports_and_arguments() -> None:
    assert deep_gemm.utils.init_dist is dg_dist.init_dist
    assert deep_gemm.utils.uneven_all_gather is dg_dist.uneven_all_gather
    assert deep_gemm.init_dist is dg_dist.init_dist  # deep_gemm re-exports deep_gemm.utils
    with pytest.raises(
        ValueError, match=r"^init_dist: argument 'local_rank' must lie in \[0, num_local_ranks=2\), got 2$"
    ):
        dg_dist.init_dist(2, 2)


def test_dist_print_needs_init_dist() -> None:
    if dg_dist._local_rank is not None:
        pytest.skip("init_dist ran in this process")
    with pytest.raises(RuntimeError, match="^dist_print: init_dist has not been called in this process$"):
        dg_dist.dist_print("x")
