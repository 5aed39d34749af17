"""Ray Train's launcher for ``graphtx train --engine ray``: the training loop as DDP over Ray Train workers.

Ray joins the process group (gloo on CPU, NCCL on GPUs) and sets RANK / WORLD_SIZE / LOCAL_RANK, so the
torchrun code path of ``graphtx.train.run.train`` runs unchanged (rank 0 writes the run). The connection
to Ray is the engine's (``graphtx.ray_engine.ray_session``); Ray is the optional extra ``graphtx[ray]``.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphtx.ray_engine import ray_session

WORKER_FAILURES = 3  # worker-group restarts after a lost worker, before the run fails


def _train_worker(kwargs: dict) -> None:
    """One Ray Train worker: ``graphtx.train.run.train(**kwargs)`` in the process group Ray made."""
    from graphtx.train.run import train

    train(**kwargs)


def train_on_ray(kwargs: dict, workers: int, use_gpu: bool = False, address: str | None = None) -> dict:
    """``graphtx.train.run.train(**kwargs)`` as DDP over ``workers`` Ray Train workers; returns the run's summary.json.

    The run directory (``kwargs["out_dir"]``) must be on a file system every worker sees (one machine, or shared
    storage on a cluster); checkpoints and resume are the training loop's own, as with torchrun. A worker that dies
    mid-epoch costs the steps since the last checkpoint (``train.checkpoint_every_steps``): Ray restarts the group,
    at most ``WORKER_FAILURES`` times, and training continues from that checkpoint."""
    with ray_session(address, num_cpus=max(1, workers)):
        from ray.train import FailureConfig, RunConfig, ScalingConfig
        from ray.train.torch import TorchConfig, TorchTrainer

        out = Path(kwargs["out_dir"]).resolve()
        kwargs = dict(kwargs, out_dir=str(out), device="cuda" if use_gpu else "cpu", progress=False)
        trainer = TorchTrainer(
            _train_worker,
            train_loop_config=kwargs,
            torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo"),
            scaling_config=ScalingConfig(num_workers=workers, use_gpu=use_gpu),
            run_config=RunConfig(
                name="ray_train",
                storage_path=str(out),  # Ray Train's own records: RUN_DIR/ray_train/
                # a worker lost (a pre-empted node, kill -9): Ray restarts the worker group, whose train() resumes
                # from the run's last checkpoint (RUN_DIR/<stage>/checkpoint.pt), as a rerun of the command would
                failure_config=FailureConfig(max_failures=WORKER_FAILURES),
            ),
        )
        trainer.fit()
    summary = out / "summary.json"
    return json.loads(summary.read_text()) if summary.exists() else {}
