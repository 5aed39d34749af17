"""Step batches prepared ahead of the model, in worker processes, the same batches as in line.

A stage whose batch is a seeded function of (seed, step) alone, no model read (stage pretrain: the documents, spans,
teacher targets, the collate and node dropout), can build step s + 1, s + 2, ... while the model trains on step s.
On a GPU the model's step is the smaller part of the time: on the H200 machine `graphtx adapt` over 4,000 abstracts
waited 0.054-0.066 s of its 0.073-0.091 s a step for the batch built in line, and ran at 0.037-0.043 s a step with 4
workers building them ahead (benchmarks/RESULTS.md, Speed). ``prefetched`` hands the steps' items over in order,
built by ``workers`` forked processes through torch's DataLoader (one torch thread each, the tokenizers' own thread
pool off), or in line with none; the items are those ``prepare`` returns either way, since each depends on its step
alone (tests/train/test_prefetch.py checks a run's losses and weights are the same to the bit).

Workers are forked: they share the parent's memory (the graphs, the BM25 index, the teacher's vectors) copy-on-write
instead of being sent it, though reading a graph touches its Python objects, so a worker can come to hold its own
copy of the graphs (about 60 MB for 4,000 abstracts' 8,000 graphs; docs/howto/gpu.md). Where fork is not offered
(macOS, Windows) the batches are built in line. The DataLoader's seed is drawn from its own generator, not torch's
global one, so the model's dropout stream is the in-line run's.
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
WORKER_TIMEOUT_S = 600.0  # a worker that hands over nothing for this long is stuck: an error, not a hang
# auto's count beside a CUDA device, where cores allow: about 2x in-line's speed on the H200; 8 were no faster
GPU_BATCH_WORKERS = 4


class _Steps(Dataset):
    """Item ``step`` is ``prepare(step)``; the sampler names the steps, in order."""

    def __init__(self, prepare: Callable[[int], object]):
        self.prepare = prepare

    def __getitem__(self, step: int):
        return self.prepare(step)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _as_is(item):
    """The DataLoader's collate_fn: the item as ``prepare`` returned it (torch's default would turn tuples into lists
    and numpy arrays into tensors)."""
    return item


def _quiet_worker(worker_id: int) -> None:
    """A worker's start: the HuggingFace tokenizers of the collate encode on this process's one thread, not on a pool
    of one thread a core in each worker beside the trainer (nor warn that the process was forked)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


def batch_workers(configured: int, device_type: str) -> int:
    """How many processes build batches ahead: ``configured`` when >= 0; auto (-1): none on a CPU, whose cores the
    model's own threads already use, and GPU_BATCH_WORKERS beside a CUDA device, fewer where the machine has fewer
    cores than those plus the trainer's own threads (graphtx/train/distributed.py CPU_THREADS_BESIDE_GPU); none where
    fork is not offered."""
    from graphtx.train.distributed import CPU_THREADS_BESIDE_GPU

    if not can_fork():
        return 0
    if configured >= 0:
        return configured
    if device_type != "cuda":
        return 0
    spare = usable_cores() - CPU_THREADS_BESIDE_GPU
    return max(0, min(GPU_BATCH_WORKERS, spare))


@contextlib.contextmanager
def prefetched(prepare: Callable[[int], Item], steps: range, workers: int) -> Iterator[Iterator[Item]]:
    """``prepare(step)`` for each step of ``steps``, in order: built in line (``workers`` 0) or ahead by ``workers``
    forked processes, PREFETCH_PER_WORKER steps each. Leaving the context, early too, ends the workers."""
    workers = min(workers, len(steps))
    if workers <= 0:
        yield (prepare(step) for step in steps)
        return
    loader = DataLoader(
        _Steps(prepare),
        batch_size=None,  # an item is a whole step
        sampler=steps,
        collate_fn=_as_is,
        num_workers=workers,
        prefetch_factor=PREFETCH_PER_WORKER,
        multiprocessing_context="fork",
        worker_init_fn=_quiet_worker,
        timeout=WORKER_TIMEOUT_S,
        generator=torch.Generator().manual_seed(0),  # its base seed, not from torch's global stream
    )
    items = iter(loader)
    try:
        yield items
    finally:
        items._shutdown_workers()  # torch's own clean-up (private; its __del__ calls the same), now, not at collection
