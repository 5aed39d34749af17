"""Order-preserving parallel map with bounded memory, shared by ingest and parse.

``ProcessPoolExecutor.map`` and ``Pool.imap`` pull their whole input iterator
eagerly; a weekly USPTO file would then sit in memory at once. ``bounded_map``
keeps at most ``workers * ahead`` chunks in flight.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _apply_chunk(fn: Callable[[T], R], chunk: list[T]) -> list[R]:
    return [fn(item) for item in chunk]


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

    ``fn`` and ``initializer`` must be picklable (module-level functions).
    With ``workers <= 1`` everything runs in this process (initializer included).
    """
    if workers <= 1:
        if initializer is not None:
            initializer(*initargs)
        yield from map(fn, items)
        return
    iterator = iter(items)
    with ProcessPoolExecutor(max_workers=workers, initializer=initializer, initargs=initargs) as pool:
        pending: deque = deque()

        def submit_next() -> bool:
            chunk = list(itertools.islice(iterator, chunk_size))
            if chunk:
                pending.append(pool.submit(_apply_chunk, fn, chunk))
            return bool(chunk)

        for _ in range(workers * ahead):
            if not submit_next():
                break
        while pending:
            results = pending.popleft().result()
            submit_next()
            yield from results
