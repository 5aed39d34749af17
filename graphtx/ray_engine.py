"""The Ray engine (``--engine ray``): parse and index work spread over a Ray cluster, or a local Ray.

Only the heavy per-item work moves to Ray; everything that writes (staged directories, parts,
manifests, FAISS shards) stays in the driver and is the local engine's own code, so the outputs
of the two engines are the same files and downstream stages cannot tell them apart.

* parse: the corpus in shards (row ranges of documents.parquet, ``parse.shard_size`` documents)
  sent to a pool of ``_ParseActor`` (spaCy and the rules loaded once, ``graphtx.graphs.parse._init_worker``)
  that run the local engine's per-document function ``_build_one``; each finished shard is journaled
  by the driver (``graphtx.shards``), so a killed run redoes only unfinished shards, and the results
  go in corpus order into the same writer as ``--engine local``. (Plain actors rather than a Ray Data
  pipeline: the driver must know when a shard is complete to commit it.)
* encode and index: chunks of graphs go to a pool of ``_EncodeActor`` (model and tokenizer loaded
  once per actor; ``num_gpus`` per actor from the cluster's resources, ``encoder_plan``), a bounded
  number in flight, results taken back in order; ``graphtx encode`` journals each chunk as a shard
  (resumable), ``graphtx index`` commits each as a document part (resumable the same way), then
  the index's FAISS shards are filled in parallel as Ray tasks (``graphtx.index.sharded``).

Ray is an optional extra (``pip install 'graphtx[ray]'``); it is imported only when the engine is
used. Every node of a cluster needs graphtx (with the extra) installed, or the driver's checkout on
its ``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path

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
        raise GraphtxError("--engine ray needs Ray, which is not installed: pip install 'graphtx[ray]' (or use --engine local)") from err
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
        raise GraphtxError(f"no Ray cluster answers at {address!r} ({err}): check --ray-address (or RAY_ADDRESS), "
                           "or leave it out for a local Ray") from err  # fmt: skip


# --- parse -------------------------------------------------------------------------------


class _ParseActor:
    """One per actor: spaCy + rules loaded once, then shards (row ranges of documents.parquet) -> per-document results."""

    def __init__(self, cfg) -> None:
        from graphtx.graphs import parse

        parse._init_worker(cfg)
        self._build_one = parse._build_one

    def parse_rows(self, documents_file: str, start: int, stop: int) -> list[tuple]:
        """``(doc id, graphs, reason, lang)`` of rows ``start .. stop - 1``, in file order (the actor reads them itself)."""
        from graphtx.corpus.store import document_from_row, read_rows

        return [self._build_one(document_from_row(row)) for row in read_rows(documents_file, start, stop)]


def parse_shards(documents_file: str | Path, shards: list[tuple[int, int, int]], cfg, address: str | None = None,
                 ahead: int = 2) -> Iterator[tuple[int, list]]:  # fmt: skip
    """``(shard, results)`` for each ``(shard, start, stop)`` of ``shards``, as each finishes (any order).

    ``cfg.workers`` actors, each given at most ``ahead`` shards at a time; the actors read their rows from
    ``documents_file``, which must be on storage every node sees (one machine, or a shared file system)."""
    workers = max(1, min(cfg.workers, len(shards)))
    with ray_session(address, num_cpus=max(1, cfg.workers)) as ray:
        actor_class = ray.remote(num_cpus=1)(_ParseActor)
        actors = [actor_class.remote(cfg) for _ in range(workers)]
        load = {i: 0 for i in range(workers)}
        todo, pending = deque(shards), {}  # ref -> (shard, actor number)
        path = str(Path(documents_file).resolve())
        try:
            while todo or pending:
                while todo and min(load.values()) < ahead:
                    a = min(load, key=load.get)
                    shard, start, stop = todo.popleft()
                    pending[actors[a].parse_rows.remote(path, start, stop)] = (shard, a)
                    load[a] += 1
                [ref], _ = ray.wait(list(pending), num_returns=1)
                shard, a = pending.pop(ref)
                load[a] -= 1
                yield shard, ray.get(ref)
        finally:
            for actor in actors:
                ray.kill(actor)


# --- index -------------------------------------------------------------------------------


class _EncodeActor:
    """One per actor: the model and tokenizer loaded once, then chunks of graphs -> vectors (and node vectors)."""

    def __init__(self, model_dir: str, device: str, batch_size: int, late: bool) -> None:
        from graphtx.index.build import _device
        from graphtx.model.io import load_model

        loaded = load_model(model_dir, map_location=_device(device))
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        self.batch_size, self.late = batch_size, late

    def encode(self, chunk: list) -> tuple:
        """(vectors (b, dim) float32, node vectors (N, L) or None, offsets (b + 1,) or None, seconds)."""
        import torch

        t0 = time.time()
        vectors = self.model.encode(chunk, self.tokenizer, batch_size=self.batch_size).to(dtype=torch.float32).numpy()
        nodes = offsets = None
        if self.late:
            nodes, _, offsets = self.model.encode_nodes(chunk, self.tokenizer, batch_size=self.batch_size)
            nodes, offsets = nodes.numpy(), offsets.numpy()
        return vectors, nodes, offsets, time.time() - t0


def encoder_plan(cluster: dict, workers: int, num_gpus: float | None = None) -> tuple[int, float, str]:
    """(actors, GPUs per actor, device) of the encoder pool on a cluster whose resources are ``cluster``
    (``ray.cluster_resources()``: {"CPU": 16.0, "GPU": 4.0, ...}).

    ``num_gpus`` None: GPUs when the cluster has them, the cluster's GPUs shared out over ``workers`` actors
    (one each at most; a fraction each when there are more actors than GPUs); CPU actors otherwise. An explicit
    ``num_gpus`` is kept (0: CPU). Actors are capped by what the cluster can place (1 CPU each, and the GPUs),
    since an actor Ray cannot place waits for ever. Refused: GPUs asked of a cluster that has none."""
    if workers < 1:
        raise ValueError(f"the number of Ray workers must be at least 1, got {workers}")
    cpus, gpus = float(cluster.get("CPU", 0)), float(cluster.get("GPU", 0))
    if num_gpus is None:
        num_gpus = 0.0 if gpus < 1 else min(1.0, int(gpus / workers * 100) / 100)  # hundredths: Ray's own GPU granularity
    if num_gpus < 0:
        raise ValueError(f"GPUs per encoder actor must be 0 or more, got {num_gpus}")
    if num_gpus > 0 and gpus < num_gpus:
        raise GraphtxError(f"--ray-gpus {num_gpus:g} asks each encoder actor for GPUs, but the Ray cluster has {gpus:g}: "
                           "leave --ray-gpus out (GPUs are used when the cluster has them), or give 0")  # fmt: skip
    actors = min(workers, max(1, int(cpus)))
    if num_gpus > 0:
        actors = min(actors, max(1, int(gpus / num_gpus + 1e-9)))
    return actors, num_gpus, "cuda" if num_gpus > 0 else "cpu"


def encode_chunks(chunks: Iterable[list], model_dir: str | Path, *, batch_size: int, late: bool, workers: int,
                  num_gpus: float | None = None, address: str | None = None, ahead: int = 2) -> Iterator[tuple]:  # fmt: skip
    """``(chunk, (vectors, nodes, offsets, seconds))`` for each chunk, in order, encoded by up to ``workers`` Ray actors
    (sized by ``encoder_plan``: GPUs when the cluster has them); at most ``actors * ahead`` chunks in flight
    (memory stays bounded on any corpus size)."""
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        actors_n, gpus, device = encoder_plan(ray.cluster_resources(), workers, num_gpus)
        actor_class = ray.remote(num_cpus=1, num_gpus=gpus)(_EncodeActor)
        actors = [actor_class.remote(str(Path(model_dir).resolve()), device, batch_size, late) for _ in range(actors_n)]
        pending: deque = deque()
        try:
            for i, chunk in enumerate(chunks):
                pending.append((chunk, actors[i % len(actors)].encode.remote(chunk)))
                if len(pending) >= len(actors) * ahead:
                    done, ref = pending.popleft()
                    yield done, ray.get(ref)
            while pending:
                done, ref = pending.popleft()
                yield done, ray.get(ref)
        finally:
            for actor in actors:
                ray.kill(actor)


# --- train -------------------------------------------------------------------------------


def _train_worker(kwargs: dict) -> None:
    """One Ray Train worker: Ray has joined the process group (gloo on CPU, NCCL on GPUs) and set RANK / WORLD_SIZE /
    LOCAL_RANK, so the torchrun code path of ``graphtx.train.run.train`` runs unchanged (rank 0 writes the run)."""
    from graphtx.train.run import train

    train(**kwargs)


def train_on_ray(kwargs: dict, workers: int, use_gpu: bool = False, address: str | None = None) -> dict:
    """``graphtx.train.run.train(**kwargs)`` as DDP over ``workers`` Ray Train workers; returns the run's summary.json.

    The run directory (``kwargs["out_dir"]``) must be on a file system every worker sees (one machine, or shared
    storage on a cluster); checkpoints and resume are the training loop's own, as with torchrun."""
    import json

    with ray_session(address, num_cpus=max(1, workers)):
        from ray.train import RunConfig, ScalingConfig
        from ray.train.torch import TorchConfig, TorchTrainer

        out = Path(kwargs["out_dir"]).resolve()
        kwargs = dict(kwargs, out_dir=str(out), device="cuda" if use_gpu else "cpu", progress=False)
        trainer = TorchTrainer(
            _train_worker, train_loop_config=kwargs, torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo"),
            scaling_config=ScalingConfig(num_workers=workers, use_gpu=use_gpu),
            run_config=RunConfig(name="ray_train", storage_path=str(out)),  # Ray Train's own records: RUN_DIR/ray_train/
        )  # fmt: skip
        trainer.fit()
    summary = out / "summary.json"
    return json.loads(summary.read_text()) if summary.exists() else {}
