"""The Ray engine (``--engine ray``): parse and index work spread over a Ray cluster, or a local Ray.

Only the heavy per-item work moves to Ray; everything that writes (staged directories, parts,
manifests, FAISS shards) stays in the driver and is the local engine's own code, so the outputs
of the two engines are the same files and downstream stages cannot tell them apart.

* parse: a Ray Data pipeline ``read_parquet(documents.parquet) -> map_batches(_ParseActor)``, an
  actor pool whose actors load spaCy and the rules once (``graphtx.graphs.parse._init_worker``)
  and run the local engine's per-document function ``_build_one``; blocks keep the input order,
  and the driver streams the results into the same writer as ``--engine local``.
* index: chunks of graphs go to a pool of ``_EncodeActor`` (model and tokenizer loaded once per
  actor; ``num_gpus`` per actor when asked), a bounded number in flight, results taken back in
  order; ids, parts and shards are then committed by ``graphtx.index.build`` as locally.

Ray is an optional extra (``pip install 'graphtx[ray]'``); it is imported only when the engine is
used. Every node of a cluster needs graphtx (with the extra) installed, or the driver's checkout on
its ``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
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
        raise GraphtxError(f"could not connect to the Ray cluster at {address!r}: {err} (start one with `ray start --head`, or leave out --ray-address for a local Ray)") from err
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
    """One per actor: spaCy + rules loaded once, then batches of corpus rows -> pickled per-document results."""

    def __init__(self, cfg) -> None:
        from graphtx.graphs import parse

        parse._init_worker(cfg)
        self._build_one = parse._build_one

    def __call__(self, batch):  # pyarrow.Table of corpus rows -> {"result": pickled (id, graphs, reason, lang)}
        from graphtx.corpus.store import document_from_row

        results = [pickle.dumps(self._build_one(document_from_row(row)), protocol=5) for row in batch.to_pylist()]
        return {"result": results}


def parse_results(documents_file: str | Path, cfg, address: str | None = None) -> Iterator[tuple]:
    """``(doc id, graphs, reason, lang)`` per document of ``documents_file``, in file order, parsed on Ray.

    Actors: ``cfg.workers``; rows per batch: ``cfg.chunk_size``."""
    with ray_session(address, num_cpus=max(1, cfg.workers) + 1) as ray:  # + 1: the read tasks beside the actors
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True  # results in corpus order, like the local engine
        ctx.enable_progress_bars = False
        ds = ray.data.read_parquet(str(Path(documents_file).resolve()), override_num_blocks=max(1, cfg.workers) * 4)
        ds = ds.map_batches(
            _ParseActor, fn_constructor_args=(cfg,), batch_size=max(1, cfg.chunk_size), batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=max(1, cfg.workers)), num_cpus=1,
        )  # fmt: skip
        for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            for blob in batch.column("result").to_pylist():
                yield pickle.loads(blob)


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


def encode_chunks(chunks: Iterable[list], model_dir: str | Path, *, device: str, batch_size: int, late: bool, workers: int,
                  num_gpus: float = 0.0, address: str | None = None, ahead: int = 2) -> Iterator[tuple]:  # fmt: skip
    """``(chunk, (vectors, nodes, offsets, seconds))`` for each chunk, in order, encoded by ``workers`` Ray actors;
    at most ``workers * ahead`` chunks in flight (memory stays bounded on any corpus size)."""
    with ray_session(address, num_cpus=max(1, workers)) as ray:
        actor_class = ray.remote(num_cpus=1, num_gpus=num_gpus)(_EncodeActor)
        actors = [actor_class.remote(str(Path(model_dir).resolve()), device, batch_size, late) for _ in range(max(1, workers))]
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
