"""Step batches prepared ahead of the model, in worker processes, the same batches as in line.

A stage whose batch is a seeded function of (seed, step) alone, no model read (stage pretrain: the documents, spans,
teacher targets, the collate and node dropout), can build step s + 1, s + 2, ... while the model trains on step s.
On a GPU the model's step is the smaller part of the time: on the H200 machine `graphtx adapt` over 4,000 abstracts
waited 0.062 s of its 0.086 s a step for the batch built in line, and ran at 0.049 s a step with 4 workers building
them ahead, 0.046 s with 8 (benchmarks/RESULTS.md, Speed). ``prefetched`` hands the steps' items over in order, built by ``workers`` forked
processes through torch's DataLoader (one torch thread each), or in line with none; the items are those ``prepare``
returns either way, since each depends on its step alone (tests/train/test_prefetch.py checks a run's losses are the
same to the bit).

Workers are forked: they share the parent's memory (the graphs, the BM25 index, the teacher's vectors) copy-on-write
instead of being sent it; where fork is not offered (macOS, Windows) the batches are built in line. The DataLoader's
seed is drawn from its own generator, not torch's global one, so the model's dropout stream is the in-line run's.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch
from torch.utils.data import DataLoader, Dataset

Item = TypeVar("Item")

PREFETCH_PER_WORKER = 2  # steps each worker keeps ready (torch's prefetch_factor)
GPU_BATCH_WORKERS = (
    4  # auto's count beside a CUDA device, where cores allow: 1.75x in-line's speed on the H200, 8 gave 1.85x
)


class _Steps(Dataset):
    """Item ``step`` is ``prepare(step)``; the sampler names the steps, in order."""

    def __init__(self, prepare: Callable[[int], object]):
        self.prepare = prepare

    def __getitem__(self, step: int):
        return self.prepare(step)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def batch_workers(configured: int, device: torch.device) -> int:
    """How many processes build batches ahead: ``configured`` when >= 0; auto (-1): none on a CPU, whose cores the
    model's own threads already use, and GPU_BATCH_WORKERS beside a CUDA device, fewer where the machine has fewer
    cores than those plus the trainer's own threads (graphtx/train/distributed.py CPU_THREADS_BESIDE_GPU); none where
    fork is not offered."""
    from graphtx.train.distributed import CPU_THREADS_BESIDE_GPU

    if not can_fork():
        return 0
    if configured >= 0:
        return configured
    if device.type != "cuda":
        return 0
    spare = (os.cpu_count() or 1) - CPU_THREADS_BESIDE_GPU
    return max(0, min(GPU_BATCH_WORKERS, spare))


@contextlib.contextmanager
def prefetched(prepare: Callable[[int], Item], steps: range, workers: int) -> Iterator[Iterator[Item]]:
    """``prepare(step)`` for each step of ``steps``, in order: built in line (``workers`` 0) or ahead by ``workers``
    forked processes, PREFETCH_PER_WORKER steps each. Leaving the context, early too, ends the workers."""
    if workers <= 0 or len(steps) == 0:
        yield (prepare(step) for step in steps)
        return
    loader = DataLoader(
        _Steps(prepare),
        batch_size=None,  # an item is a whole step
        sampler=steps,
        num_workers=workers,
        prefetch_factor=PREFETCH_PER_WORKER,
        multiprocessing_context="fork",
        generator=torch.Generator().manual_seed(0),  # its base seed, not from torch's global stream
    )
    items = iter(loader)
    try:
        yield items
    finally:
        shutdown = getattr(items, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
