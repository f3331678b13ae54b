"""One rank of tests/ops/test_dist_utils.py: ``python tests/support/dist_worker.py LOCAL_RANK NUM_RANKS SEED``.

It joins the job through deep_gemm.utils.dist.init_dist (gloo on a CPU-only machine), checks
uneven_all_gather against the concatenation every rank can rebuild from the shared seed, and
prints through dist_print; the parent test reads the printed lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch

from deep_gemm.utils import init_dist, uneven_all_gather
from deep_gemm.utils.dist import dist_print


def piece(rank: int, seed: int, dim: int) -> torch.Tensor:
    """Rank `rank`'s tensor: 2 * rank + 1 entries along `dim` (so sizes differ), random values."""
    gen = torch.Generator().manual_seed(seed + rank)
    shape = [3, 5]
    shape[dim] = 2 * rank + 1
    return torch.randn(shape, generator=gen)


def main() -> None:
    local_rank, num_ranks, seed = (int(v) for v in sys.argv[1:4])
    rank, world, group = init_dist(local_rank, num_ranks)
    assert (rank, world) == (local_rank, num_ranks), (rank, world)
    assert torch.distributed.get_world_size(group) == num_ranks
    for dim in (0, 1, -1):
        gathered = uneven_all_gather(piece(rank, seed, dim % 2), dim=dim, group=group)
        expected = torch.cat([piece(r, seed, dim % 2) for r in range(num_ranks)], dim=dim)
        assert torch.equal(gathered, expected), f"dim={dim}: {gathered.shape} vs {expected.shape}"
    gathered = uneven_all_gather(piece(rank, seed, 0).to(torch.bfloat16))  # default dim and group
    assert gathered.dtype == torch.bfloat16 and gathered.shape == (num_ranks**2, 5)
    dist_print(f"gathered ok on rank {rank}")
    dist_print("printed once per node", once_in_node=True)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
