"""The Ray engine (``--engine ray``): a stage's heavy per-shard work spread over a Ray cluster, or a local Ray.

Infrastructure, like the local worker pool (``graphtx.parallel``): it knows no stage. A stage hands it its
own initialiser and per-shard function (module-level functions, so Ray ships them by reference), and keeps
everything that writes (staged directories, journals, parts, manifests) in the driver, so the outputs of
the two engines are the same files and downstream stages cannot tell them apart.

* ``map_unordered``: ``(key, args)`` tasks to a pool of actors, each result as it finishes (any order).
  ``graphtx parse`` sends row ranges of documents.parquet and journals each finished shard itself
  (``graphtx.shards``), so a killed run redoes only unfinished shards.
* ``map_ordered``: items (chunks of graphs) to a pool sized by ``actor_plan`` (GPUs when the cluster has
  them), a bounded number in flight, results back in input order: ``graphtx encode`` and ``graphtx index``.
* ``ray_session``: a connected Ray for a stage's own use (the index's FAISS shards filled as Ray tasks,
  ``graphtx.index.sharded``; Ray Train's launcher, ``graphtx.train.ray_launch``).

Plain actors rather than a Ray Data pipeline: the driver must know when a shard is complete to commit it.
Each actor runs ``init(device, *init_args)`` once (spaCy and the rules, or the model, loaded once) and then
``work(state, *args)`` per task, where ``state`` is what ``init`` returned.

Ray is an optional extra (``pip install 'graphtx[ray]'``); it is imported only when the engine is
used. Every node of a cluster needs graphtx (with the extra) installed, or the driver's checkout on
its ``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from graphtx.errors import GraphtxError

ENGINES = ("local", "ray")


def check_engine(engine: str) -> None:
    """Before anything is written: a known engine, and Ray installed when it is ``ray``."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: local or ray")
    if engine == "ray":
        import_ray()


def import_ray():
    """``ray``, or a clear message naming the mend when the extra is not installed."""
    try:
        import ray
    except ImportError as err:
        raise GraphtxError(
            "--engine ray needs Ray, which is not installed: pip install 'graphtx[ray]' (or use --engine local)"
        ) from err
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[object]:
    """A connected Ray: the one already initialised in this process, the cluster at ``address``
    (``auto``, ``ray://host:10001``, ``host:6379``), or a local Ray started here and shut down at the end."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _check_reachable(address)
    kwargs = {"include_dashboard": False, "log_to_driver": False} | ({} if address else {"num_cpus": num_cpus})
    try:
        ray.init(address=address, **kwargs)
    except ConnectionError as err:
        raise GraphtxError(
            f"could not connect to the Ray cluster at {address!r}: {err} (start one with `ray start --head`, or leave out --ray-address for a local Ray)"
        ) from err
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """A HOST:PORT (or ray://HOST:PORT) address that answers a TCP connection; else a clear error at once
    (``ray.init`` itself retries an unreachable cluster for minutes). ``auto`` and other forms go to Ray as they are."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as err:
        raise GraphtxError(
            f"no Ray cluster answers at {address!r} ({err}): check --ray-address (or RAY_ADDRESS), or leave it out for a local Ray"
        ) from err


# --- executors ---------------------------------------------------------------------------


def _by_reference(*functions: Callable) -> None:
    """Refuse a lambda or closure: Ray would ship it by value with all it captures; a stage's work is a module-level function."""
    for f in functions:
        if "<locals>" in f.__qualname__ or "<lambda>" in f.__qualname__ or f.__module__ == "__main__":
            raise TypeError(
                f"{f.__qualname__} must be a module-level function of an importable module (Ray ships it by name)"
            )


class _StageActor:
    """One per actor: the stage's ``init(device, *init_args)`` once, then ``work(state, *args)`` per task."""

    def __init__(self, init: Callable, device: str, init_args: tuple) -> None:
        self.state = init(device, *init_args)

    def run(self, work: Callable, args: tuple):
        return work(self.state, *args)


def map_unordered(
    tasks: list[tuple[object, tuple]],
    init: Callable,
    init_args: tuple,
    work: Callable,
    *,
    workers: int,
    address: str | None = None,
    ahead: int = 2,
) -> Iterator[tuple[object, object]]:
    """``(key, work(state, *args))`` for each ``(key, args)`` of ``tasks``, as each finishes (any order).

    ``workers`` CPU actors (fewer when there are fewer tasks), each given at most ``ahead`` tasks at a time;
    actors are killed when the generator ends or is closed (an error, Ctrl-C)."""
    _by_reference(init, work)
    workers = max(1, min(workers, len(tasks)))
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        actor_class = ray.remote(num_cpus=1)(_StageActor)
        actors = [actor_class.remote(init, "cpu", tuple(init_args)) for _ in range(workers)]
        load = {i: 0 for i in range(workers)}
        todo, pending = deque(tasks), {}  # ref -> (key, actor number)
        try:
            while todo or pending:
                while todo and min(load.values()) < ahead:
                    a = min(load, key=load.get)
                    key, args = todo.popleft()
                    pending[actors[a].run.remote(work, tuple(args))] = (key, a)
                    load[a] += 1
                [ref], _ = ray.wait(list(pending), num_returns=1)
                key, a = pending.pop(ref)
                load[a] -= 1
                yield key, ray.get(ref)
        finally:
            for actor in actors:
                ray.kill(actor)


def actor_plan(cluster: dict, workers: int, num_gpus: float | None = None) -> tuple[int, float, str]:
    """(actors, GPUs per actor, device) of an actor pool on a cluster whose resources are ``cluster``
    (``ray.cluster_resources()``: {"CPU": 16.0, "GPU": 4.0, ...}).

    ``num_gpus`` None: GPUs when the cluster has them, the cluster's GPUs shared out over ``workers`` actors
    (one each at most; a fraction each when there are more actors than GPUs); CPU actors otherwise. An explicit
    ``num_gpus`` is kept (0: CPU). Actors are capped by what the cluster can place (1 CPU each, and the GPUs),
    since an actor Ray cannot place waits for ever. Refused: GPUs asked of a cluster that has none."""
    if workers < 1:
        raise ValueError(f"the number of Ray workers must be at least 1, got {workers}")
    cpus, gpus = float(cluster.get("CPU", 0)), float(cluster.get("GPU", 0))
    if num_gpus is None:
        num_gpus = (
            0.0 if gpus < 1 else min(1.0, int(gpus / workers * 100) / 100)
        )  # hundredths: Ray's own GPU granularity
    if num_gpus < 0:
        raise ValueError(f"GPUs per actor must be 0 or more, got {num_gpus}")
    if num_gpus > 0 and gpus < num_gpus:
        raise GraphtxError(
            f"--ray-gpus {num_gpus:g} asks each actor for GPUs, but the Ray cluster has {gpus:g}: "
            "leave --ray-gpus out (GPUs are used when the cluster has them), or give 0"
        )
    actors = min(workers, max(1, int(cpus)))
    if num_gpus > 0:
        actors = min(actors, max(1, int(gpus / num_gpus + 1e-9)))
    return actors, num_gpus, "cuda" if num_gpus > 0 else "cpu"


def map_ordered(
    items: Iterable,
    init: Callable,
    init_args: tuple,
    work: Callable,
    *,
    workers: int,
    num_gpus: float | None = None,
    address: str | None = None,
    ahead: int = 2,
) -> Iterator[tuple[object, object]]:
    """``(item, work(state, item))`` for each item, in input order, on up to ``workers`` actors sized by ``actor_plan``
    (each actor's ``init`` gets the plan's device, "cuda" or "cpu"); at most ``actors * ahead`` items in flight, so
    memory stays bounded on any corpus size. Actors are killed when the generator ends or is closed."""
    _by_reference(init, work)
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        actors_n, gpus, device = actor_plan(ray.cluster_resources(), workers, num_gpus)
        actor_class = ray.remote(num_cpus=1, num_gpus=gpus)(_StageActor)
        actors = [actor_class.remote(init, device, tuple(init_args)) for _ in range(actors_n)]
        pending: deque = deque()
        try:
            for i, item in enumerate(items):
                pending.append((item, actors[i % len(actors)].run.remote(work, (item,))))
                if len(pending) >= len(actors) * ahead:
                    done, ref = pending.popleft()
                    yield done, ray.get(ref)
            while pending:
                done, ref = pending.popleft()
                yield done, ray.get(ref)
        finally:
            for actor in actors:
                ray.kill(actor)
