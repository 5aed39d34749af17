"""Order-preserving parallel map with bounded memory and clean interrupts, shared by ingest and parse.

``ProcessPoolExecutor.map`` and ``Pool.imap`` pull their whole input iterator
eagerly; a weekly USPTO file would then sit in memory at once. ``bounded_map``
keeps at most ``workers * ahead`` chunks in flight.

It owns its worker processes so that stopping is never in doubt:

- workers ignore SIGINT (Ctrl-C reaches the whole process group; only the parent acts on it,
  so no worker is interrupted while it holds a queue's lock) and take SIGTERM's default;
- workers die with their parent: ``PR_SET_PDEATHSIG`` on Linux, and a thread that watches
  ``os.getppid()`` everywhere, so a kill -9 of the parent leaves no process behind;
- whenever the map ends early (an exception, Ctrl-C, SIGTERM turned into an exception by
  the CLI, the consumer closing the generator) the parent kills its workers and does not
  wait on its queues' feeder threads, so it returns within a second or so;
- a worker that dies by itself is noticed and reported, not waited on for ever.
"""

from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.5  # how often the parent checks its workers while waiting for a result


def _apply_chunk(fn: Callable[[T], R], chunk: list[T]) -> list[R]:
    return [fn(item) for item in chunk]


# --- worker side -----------------------------------------------------------------------


def _die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` does (also if it is already gone)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _worker(fn, initializer, initargs, tasks, results, parent_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(
            signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}
        )  # blocked by the parent around the fork
    _die_with_parent(parent_pid)
    try:
        if initializer is not None:
            initializer(*initargs)
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which raises
        results.put((-1, None, _describe(err)))
        return
    while True:
        task = tasks.get()
        if task is None:
            return
        index, chunk = task
        try:
            results.put((index, _apply_chunk(fn, chunk), None))
        except BaseException as err:  # noqa: BLE001
            results.put((index, None, _describe(err)))


def _describe(err: BaseException) -> str:
    return "".join(traceback.format_exception(type(err), err, err.__traceback__)).rstrip()


class WorkerError(RuntimeError):
    """A worker process failed (its traceback is in the message) or died."""


# --- parent side -----------------------------------------------------------------------


def _start(context, count: int, args: tuple) -> list:
    processes = [
        context.Process(target=_worker, args=args, name=f"graphtx-worker-{i}", daemon=True) for i in range(count)
    ]
    can_mask = hasattr(signal, "pthread_sigmask")
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if can_mask else None
    try:  # a signal now waits until the workers are started and have set their own handlers
        for p in processes:
            p.start()
    finally:
        if can_mask:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return processes


def _stop(processes: list, tasks, results, graceful: bool) -> None:
    """End every worker: let them finish (``graceful``) for a moment, then kill; never block for long."""
    if graceful:
        for _ in processes:
            tasks.put(None)
        deadline = time.monotonic() + 5.0
        for p in processes:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in processes:
        if p.is_alive():
            p.kill()
    for p in processes:
        p.join(timeout=5.0)
    tasks.cancel_join_thread()  # the feeder thread may be stuck writing to a pipe no one reads now
    results.cancel_join_thread()
    tasks.close()
    results.close()


def bounded_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int = 1,
    chunk_size: int = 8,
    ahead: int = 4,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[R]:
    """``map(fn, items)`` over ``workers`` processes, results in input order.

    ``fn`` and ``initializer`` must be module-level functions; items and results are pickled.
    With ``workers <= 1`` everything runs in this process (initializer included).
    """
    if workers <= 1:
        if initializer is not None:
            initializer(*initargs)
        yield from map(fn, items)
        return
    context = multiprocessing.get_context()
    tasks, results = context.Queue(), context.Queue()
    processes = _start(context, workers, (fn, initializer, initargs, tasks, results, os.getpid()))
    iterator = iter(items)
    done: dict[int, list] = {}  # finished chunks not yet yielded, by index
    submitted = yielded = 0
    finished = False
    try:

        def submit_next() -> bool:
            nonlocal submitted
            chunk = list(itertools.islice(iterator, chunk_size))
            if chunk:
                tasks.put((submitted, chunk))
                submitted += 1
            return bool(chunk)

        more = True
        while more and submitted < workers * ahead:
            more = submit_next()
        while yielded < submitted:
            while yielded not in done:
                try:
                    index, chunk_results, error = results.get(timeout=_POLL_S)
                except queue.Empty:
                    dead = [(p.pid, p.exitcode) for p in processes if p.exitcode is not None]
                    if dead:
                        raise WorkerError(f"worker process(es) ended unexpectedly (pid, exit code): {dead}") from None
                    continue
                if error is not None:
                    raise WorkerError(f"a worker failed:\n{error}")
                done[index] = chunk_results
            chunk_results = done.pop(yielded)
            yielded += 1
            if more:
                more = submit_next()
            yield from chunk_results
        finished = True
    finally:
        _stop(processes, tasks, results, graceful=finished)
