"""bounded_map: order, laziness, and stopping that is never in doubt (failures, deaths, early close)."""

from __future__ import annotations

import os

import psutil
import pytest

from graphtx.parallel import WorkerError, bounded_map


def _square(x: int) -> int:
    return x * x


def test_bounded_map_keeps_order_across_processes():
    assert list(bounded_map(_square, range(50), workers=2, chunk_size=3)) == [x * x for x in range(50)]


def test_bounded_map_pulls_input_lazily():
    pulled = []

    def source():
        for i in range(10_000):
            pulled.append(i)
            yield i

    results = bounded_map(_square, source(), workers=2, chunk_size=4, ahead=2)
    assert next(results) == 0
    assert len(pulled) <= 2 * 2 * 4 + 4  # at most workers * ahead chunks (+ one refill) were read
    results.close()


def test_single_worker_runs_inline_with_initializer():
    state = []
    out = list(bounded_map(_square, [1, 2], workers=1, initializer=state.append, initargs=("ready",)))
    assert out == [1, 4] and state == ["ready"]


# --- stopping is never in doubt ---------------------------------------------------------------


def _fail_on_7(x: int) -> int:
    if x == 7:
        raise ValueError("seven")
    return x


def _die_on_7(x: int) -> int:
    if x == 7:
        os._exit(3)
    return x


def _worker_pids() -> set[int]:
    return {p.pid for p in psutil.Process().children() if "resource_tracker" not in " ".join(p.cmdline())}


@pytest.mark.timeout(60)
def test_a_failing_worker_raises_with_its_traceback_and_no_worker_stays():
    with pytest.raises(WorkerError, match="ValueError: seven"):
        list(bounded_map(_fail_on_7, range(20), workers=2, chunk_size=2))
    assert _worker_pids() == set()


@pytest.mark.timeout(60)
def test_a_worker_that_dies_is_reported_not_waited_for():
    with pytest.raises(WorkerError, match="ended unexpectedly"):
        list(bounded_map(_die_on_7, range(20), workers=2, chunk_size=2))
    assert _worker_pids() == set()


@pytest.mark.timeout(60)
def test_closing_the_map_early_ends_its_workers():
    results = bounded_map(_square, range(10_000), workers=2, chunk_size=4)
    assert next(results) == 0 and len(_worker_pids()) == 2
    results.close()
    assert _worker_pids() == set()
