"""Multi-process tests that cannot hang: spawn, join against a deadline, kill every child on the way out."""

from __future__ import annotations

import time

import torch.multiprocessing as mp


def run_processes(fn, args: tuple, nprocs: int, timeout: float) -> None:
    """``fn(rank, *args)`` in ``nprocs`` spawned processes; raises if one fails or all are not done in ``timeout`` s.

    Whatever happens (failure, time-out, an interrupt of the test run), no child outlives the call.
    """
    context = mp.start_processes(fn, args=args, nprocs=nprocs, join=False, start_method="spawn")
    deadline = time.monotonic() + timeout
    try:
        while not context.join(timeout=1.0):  # True once every process ended well; raises when one failed
            if time.monotonic() > deadline:
                alive = [p.pid for p in context.processes if p.is_alive()]
                raise TimeoutError(f"processes {alive} still running after {timeout:.0f} s (killed)")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
        for process in context.processes:
            process.join(timeout=10)
