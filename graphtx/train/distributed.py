"""Data-parallel training with torchrun: process group, gathers, loss normalisation.

``torchrun --nproc-per-node N -m graphtx train ...`` sets RANK / WORLD_SIZE /
LOCAL_RANK; ``init_distributed`` joins the group (NCCL on CUDA, gloo on CPU). Every
rank builds the same global batch, takes its node-balanced shard
(batching.shard_for_rank) and encodes it.

With ``cross_rank_negatives`` the cited-graph vectors of all ranks are gathered
(with gradient, ``torch.distributed.nn.all_gather``) so each anchor mines its
negatives over the whole global batch. Each rank's loss is
``world_size · Σ_rank ℓ / Σ_all denom``: DDP averages gradients over ranks, so the
averaged gradient equals the single-process gradient on the global batch
(tests/train/test_distributed.py checks it with two gloo processes).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.distributed as dist

from graphtx.hardware import trains_in_bf16
from graphtx.threads import torch_threads


@dataclass(frozen=True)
class DistContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def bf16_autocast(device: torch.device, enabled: bool, on_cpu: bool = False):
    """The forward's context: bf16 autocast where graphtx.hardware.trains_in_bf16 says (a CUDA device; with ``on_cpu``
    a CPU with bf16 in hardware), fp32 elsewhere."""
    kind = "cuda" if device.type == "cuda" else "cpu"
    return torch.autocast(kind, dtype=torch.bfloat16, enabled=trains_in_bf16(device.type, enabled, on_cpu))


CPU_THREADS_BESIDE_GPU = 4  # torch's CPU threads while a GPU trains (an explicit OMP_NUM_THREADS wins)


@contextlib.contextmanager
def cpu_threads_beside_gpu(device: torch.device) -> Iterator[None]:
    """While a model trains on a CUDA device, at most CPU_THREADS_BESIDE_GPU threads for torch's CPU ops (the collate,
    node dropout, the teacher's targets: small tensors, one batch at a time); the CPU and an explicit OMP_NUM_THREADS
    are left alone (torchrun and Ray set it to 1 a worker). Measured on the H200 machine (16 cores), `graphtx adapt`
    over 4,000 abstracts: 0.20 s a step at torch's default of one thread a core, 0.079 s with this cap, 0.073 s and
    0.075 s with OMP_NUM_THREADS 4 and 1 (benchmarks/RESULTS.md, Speed). The count is process-wide (graphtx/threads.py):
    trainers run one after another."""
    if device.type != "cuda" or os.environ.get("OMP_NUM_THREADS", "").strip():  # set but empty: as unset
        yield
        return
    with torch_threads(min(torch.get_num_threads(), CPU_THREADS_BESIDE_GPU)):
        yield


def rng_devices(device: torch.device) -> list[int]:
    """The CUDA devices whose RNG ``torch.random.fork_rng`` forks for a model on ``device`` (none on the CPU)."""
    return [device.index or 0] if device.type == "cuda" else []


def init_distributed(device: str = "auto") -> DistContext:
    """Join the torchrun process group when WORLD_SIZE > 1; otherwise a single-process context."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    from graphtx.model.chunks import resolve_device

    use_cuda = resolve_device(device).startswith(
        "cuda"
    )  # checked: a bad name, or cuda where PyTorch sees no GPU, in words
    dev = torch.device(f"cuda:{local}" if use_cuda else "cpu")
    if world > 1 and not dist.is_initialized():
        if use_cuda:
            torch.cuda.set_device(dev)
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    return DistContext(rank, world, local, dev)


def gather_rows(x: torch.Tensor, ctx: DistContext) -> tuple[torch.Tensor, list[int]]:
    """All ranks' rows of x, concatenated in rank order, with gradient; and each rank's row count.

    Ranks may hold different numbers of rows: padded to the largest, then cut.
    """
    if not ctx.enabled:
        return x, [x.size(0)]
    counts = torch.tensor([x.size(0)], device=x.device)
    all_counts = [torch.zeros_like(counts) for _ in range(ctx.world_size)]
    dist.all_gather(all_counts, counts)
    sizes = [int(c.item()) for c in all_counts]
    pad = max(sizes) - x.size(0)
    padded = torch.cat([x, x.new_zeros(pad, *x.shape[1:])]) if pad else x
    import warnings

    from torch.distributed.nn.functional import all_gather  # autograd-aware: gradients flow back to their rank

    with warnings.catch_warnings():  # deprecated in favour of a private API; still the public autograd gather
        warnings.simplefilter("ignore", FutureWarning)
        parts = all_gather(padded)
    return torch.cat([p[:n] for p, n in zip(parts, sizes)]), sizes


def all_reduce_sum(x: torch.Tensor, ctx: DistContext) -> torch.Tensor:
    """Sum over ranks, no gradient (for denominators and counts)."""
    if not ctx.enabled:
        return x
    x = x.detach().clone()
    dist.all_reduce(x)
    return x


def all_gather_objects(obj, ctx: DistContext) -> list:
    if not ctx.enabled:
        return [obj]
    out = [None] * ctx.world_size
    dist.all_gather_object(out, obj)
    return out


def broadcast_object(obj, ctx: DistContext):
    if not ctx.enabled:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier(ctx: DistContext) -> None:
    if ctx.enabled:
        dist.barrier()


def shutdown(ctx: DistContext, clean: bool = True) -> None:
    """Leave the process group in an order that cannot deadlock; call after every DDP wrapper is dropped.

    The trap (seen as a hang at the end of a two-process gloo run): a DDP ``Reducer`` that
    outlives ``destroy_process_group`` holds the last reference to the gloo group, so the
    group's destructor runs inside the reducer's, with the GIL held, and joins gloo's worker
    threads; a worker finishing an all-reduce waits for the GIL to free the Python-owned
    tensor of that work: neither thread moves. So: every rank's collectives finish (barrier),
    Python drops the remaining wrappers, work handles and their tensors (``gc.collect``) while
    the group is still registered, a second barrier keeps ranks in step, and only then is the
    group destroyed (its Python binding releases the GIL while the threads are joined).
    ``clean=False`` (an exception is on its way out, a peer may be gone) skips the barriers.
    """
    if not (ctx.enabled and dist.is_initialized()):
        return
    if clean:
        if ctx.device.type == "cuda":
            torch.cuda.synchronize(ctx.device)
        dist.barrier()
    gc.collect()
    if clean:
        dist.barrier()
    dist.destroy_process_group()
