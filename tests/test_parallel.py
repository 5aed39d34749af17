from __future__ import annotations

from graphtx.parallel import bounded_map


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
