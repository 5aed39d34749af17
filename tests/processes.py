"""Child processes in tests: signalled children that start with default signal dispositions; multi-process
tests that cannot hang (spawn, join against a deadline, kill every child on the way out)."""

from __future__ import annotations

import signal
import time

SIGNALLED = (signal.SIGINT, signal.SIGTERM)


def default_signals() -> None:
    """``preexec_fn`` for a child that a test signals: SIGINT and SIGTERM at their defaults, unblocked.

    An ignored signal stays ignored across fork and exec, and whatever launched the test run may
    ignore SIGINT (``nohup make test &``, a background job of a non-interactive shell, some CI
    runners); a Python child then keeps SIGINT ignored (it installs its KeyboardInterrupt handler
    only when SIGINT is not ignored at start-up), so a test's Ctrl-C would do nothing. This runs in
    the child between fork and exec, so the child's Python starts as it would from a terminal.
    (``restore_signals=True`` only resets SIGPIPE, SIGXFZ and SIGXFSZ.)
    """
    for sig in SIGNALLED:
        signal.signal(sig, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALLED)


def run_processes(fn, args: tuple, nprocs: int, timeout: float) -> None:
    """``fn(rank, *args)`` in ``nprocs`` spawned processes; raises if one fails or all are not done in ``timeout`` s.

    Whatever happens (failure, time-out, an interrupt of the test run), no child outlives the call.
    """
    import torch.multiprocessing as mp  # here: the signal helper above must not pull in torch

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
