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
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from graphtx.errors import GraphtxError

log = logging.getLogger(__name__)

ACTOR_RETRIES = (
    3  # a task whose actor died (a pre-empted node, an OOM kill, kill -9) goes to a new actor at most this often
)

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


class _Actors:
    """The actors of one job. One that dies is replaced once (however many of its tasks report the death) and each of its
    tasks goes to the replacement; ``retried`` counts the new attempts of each task's key."""

    def __init__(self, ray, actor_class, count: int, init: Callable, device: str, init_args: tuple, retried: dict):
        self.ray, self.make = ray, lambda: actor_class.remote(init, device, tuple(init_args))
        self.actors = [self.make() for _ in range(count)]
        self.generation = [0] * count  # bumped at each replacement
        self.retried = retried

    def submit(self, a: int, work: Callable, args: tuple):
        """(ref, generation) of ``work(*args)`` on actor ``a``."""
        return self.actors[a].run.remote(work, tuple(args)), self.generation[a]

    def get(self, ref):
        """(the task's result, True), or (None, False) when its actor died (the caller resubmits)."""
        try:
            return self.ray.get(ref), True
        except self.ray.exceptions.RayActorError:
            return None, False

    def replace_after_death(self, a: int, generation: int, key, err: str = "") -> None:
        """Count another attempt of ``key``; replace actor ``a`` unless an earlier report of the same death did."""
        self.retried[key] = self.retried.get(key, 0) + 1
        if self.retried[key] > ACTOR_RETRIES:
            raise GraphtxError(
                f"the Ray actor running task {key!r} died {self.retried[key]} times: giving up (its finished work is kept; "
                "the same command resumes)"
            )
        if generation == self.generation[a]:
            with contextlib.suppress(Exception):
                self.ray.kill(self.actors[a])
            self.actors[a] = self.make()
            self.generation[a] += 1
        log.warning(
            "Ray actor %d died during task %r: retried on a new actor (attempt %d)", a, key, self.retried[key] + 1
        )

    def kill_all(self) -> None:
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor)


def map_unordered(
    tasks: list[tuple[object, tuple]],
    init: Callable,
    init_args: tuple,
    work: Callable,
    *,
    workers: int,
    address: str | None = None,
    ahead: int = 2,
    retried: dict | None = None,
) -> Iterator[tuple[object, object]]:
    """``(key, work(state, *args))`` for each ``(key, args)`` of ``tasks``, as each finishes (any order), each key once.

    ``workers`` CPU actors (fewer when there are fewer tasks), each given at most ``ahead`` tasks at a time; an actor
    that dies is replaced and its tasks run again on the new one (at most ``ACTOR_RETRIES`` times a task; ``retried``, when
    given, collects {key: new attempts}); actors are killed when the generator ends or is closed (an error, Ctrl-C)."""
    _by_reference(init, work)
    workers = max(1, min(workers, len(tasks)))
    retried = {} if retried is None else retried
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        pool = _Actors(ray, ray.remote(num_cpus=1)(_StageActor), workers, init, "cpu", init_args, retried)
        load = {i: 0 for i in range(workers)}
        todo, pending = deque(tasks), {}  # ref -> (key, args, actor number, its generation)
        try:
            while todo or pending:
                while todo and min(load.values()) < ahead:
                    a = min(load, key=load.get)
                    key, args = todo.popleft()
                    ref, generation = pool.submit(a, work, args)
                    pending[ref] = (key, args, a, generation)
                    load[a] += 1
                [ref], _ = ray.wait(list(pending), num_returns=1)
                key, args, a, generation = pending.pop(ref)
                load[a] -= 1
                result, ok = pool.get(ref)
                if not ok:  # its actor died: the task goes back to the front, for the actor's replacement
                    pool.replace_after_death(a, generation, key)
                    todo.appendleft((key, args))
                    continue
                yield key, result
        finally:
            pool.kill_all()


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
    retried: dict | None = None,
) -> Iterator[tuple[object, object]]:
    """``(item, work(state, item))`` for each item, in input order, on up to ``workers`` actors sized by ``actor_plan``
    (each actor's ``init`` gets the plan's device, "cuda" or "cpu"); at most ``actors * ahead`` items in flight, so
    memory stays bounded on any corpus size. An actor that dies is replaced and the item runs again in its place
    (``retried``: {item number: new attempts}). Actors are killed when the generator ends or is closed."""
    _by_reference(init, work)
    retried = {} if retried is None else retried
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        actors_n, gpus, device = actor_plan(ray.cluster_resources(), workers, num_gpus)
        pool = _Actors(
            ray, ray.remote(num_cpus=1, num_gpus=gpus)(_StageActor), actors_n, init, device, init_args, retried
        )
        pending: deque = deque()  # (item, its number, ref, actor number, generation), in input order

        def result_of(entry):
            item, i, ref, a, generation = entry
            while True:
                result, ok = pool.get(ref)
                if ok:
                    return item, result
                pool.replace_after_death(a, generation, i)  # its actor died: again on the replacement, in its place
                ref, generation = pool.submit(a, work, (item,))

        try:
            for i, item in enumerate(items):
                a = i % actors_n
                ref, generation = pool.submit(a, work, (item,))
                pending.append((item, i, ref, a, generation))
                if len(pending) >= actors_n * ahead:
                    yield result_of(pending.popleft())
            while pending:
                yield result_of(pending.popleft())
        finally:
            pool.kill_all()
