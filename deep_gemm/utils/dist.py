"""Multi-process helpers with DeepGEMM's names: ``init_dist``, ``uneven_all_gather``, ``dist_print``.

They use torch.distributed with NCCL when torch has a GPU and gloo otherwise,
so the same script runs across GPUs or, for tests, across CPU processes.
torch.distributed is imported on first use, not with the package.
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

# The local rank given to init_dist in this process (dist_print needs it), None before.
_local_rank: int | None = None


def _backend() -> str:
    return "nccl" if torch.cuda.is_available() else "gloo"


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, str(default))
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"init_dist: environment variable {name} must be an integer, got {value!r}") from None


def init_dist(local_rank: int, num_local_ranks: int) -> tuple[int, int, ProcessGroup]:
    """Join the job as local rank ``local_rank`` of ``num_local_ranks`` on this node.

    The rendezvous is ``tcp://$MASTER_ADDR:$MASTER_PORT`` (defaults 127.0.0.1 and 8361);
    ``$WORLD_SIZE`` is the number of nodes (default 1) and ``$RANK`` this node's index
    (default 0), so the global rank is ``RANK * num_local_ranks + local_rank``. With a
    GPU the backend is NCCL, this process takes GPU ``local_rank`` and new tensors default
    to it; without one the backend is gloo. Returns (rank, world size, a group of all ranks).
    """
    import torch.distributed as dist

    if not 0 <= local_rank < num_local_ranks:
        raise ValueError(
            f"init_dist: argument 'local_rank' must lie in [0, num_local_ranks={num_local_ranks}), got {local_rank}"
        )
    global _local_rank
    _local_rank = local_rank

    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = _env_int("MASTER_PORT", 8361)
    num_nodes = _env_int("WORLD_SIZE", 1)
    node_rank = _env_int("RANK", 0)
    backend = _backend()
    kwargs: dict[str, object] = {
        "backend": backend,
        "init_method": f"tcp://{addr}:{port}",
        "world_size": num_nodes * num_local_ranks,
        "rank": node_rank * num_local_ranks + local_rank,
    }
    if backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        if "device_id" in inspect.signature(dist.init_process_group).parameters:
            kwargs["device_id"] = device
    dist.init_process_group(**kwargs)  # type: ignore[arg-type]
    if backend == "nccl":
        torch.set_default_device("cuda")
    world = dist.get_world_size()
    return dist.get_rank(), world, dist.new_group(list(range(world)))


def uneven_all_gather(tensor: torch.Tensor, dim: int = 0, group: ProcessGroup | None = None) -> torch.Tensor:
    """Concatenate every rank's ``tensor`` along ``dim``, in rank order; the ranks may hold
    different sizes along ``dim`` (all other sizes and the dtype must agree)."""
    import torch.distributed as dist

    if not -tensor.dim() <= dim < tensor.dim():
        raise ValueError(f"uneven_all_gather: argument 'dim' is {dim}, out of range for a {tensor.dim()}-D tensor")
    dim %= tensor.dim()
    world = dist.get_world_size(group)
    size = torch.tensor([tensor.size(dim)], dtype=torch.int64, device=tensor.device)
    sizes_t = [torch.empty_like(size) for _ in range(world)]
    dist.all_gather(sizes_t, size, group=group)
    sizes = [int(s.item()) for s in sizes_t]

    # all_gather needs one shape on every rank: pad to the largest, then cut each piece back.
    padded_shape = list(tensor.shape)
    padded_shape[dim] = max(sizes)
    padded = tensor.new_zeros(padded_shape)
    padded.narrow(dim, 0, tensor.size(dim)).copy_(tensor)
    pieces = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(pieces, padded, group=group)
    return torch.cat([piece.narrow(dim, 0, n) for piece, n in zip(pieces, sizes)], dim=dim)


def dist_print(s: str = "", once_in_node: bool = False) -> None:
    """Print ``s`` (flushed) on every rank, or with ``once_in_node`` on local rank 0 only,
    then wait for all ranks (a barrier), so the lines of one step come out together."""
    import torch.distributed as dist

    if _local_rank is None:
        raise RuntimeError("dist_print: init_dist has not been called in this process")
    if not once_in_node or _local_rank == 0:
        print(s, flush=True)
    dist.barrier()
