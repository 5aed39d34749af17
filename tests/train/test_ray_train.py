"""graphtx train --engine ray: Ray Train's TorchTrainer runs the torchrun code path (2 gloo workers on a local Ray)."""

from __future__ import annotations

import json

import pytest
import yaml

from graphtx.cli import main
from tests.train.test_loop import _train_args

pytest.importorskip(
    "ray", reason="Ray is the optional extra: pip install 'graphtx[ray]' (its tests run in make test-slow)"
)
pytestmark = pytest.mark.slow


@pytest.mark.timeout(400)
def test_ray_train_is_ddp_over_two_workers_with_the_single_process_loss(synthetic, tmp_path, ray_local):
    config = yaml.safe_load(
        (synthetic / "tiny.yaml").read_text()
    )  # no randomness that differs per rank (as test_distributed.py)
    config["model"] |= {"dropout": 0.0, "attention_dropout": 0.0, "embedding_dropout": 0.0}
    config["train"] |= {
        "node_dropout_max": 0.0,
        "graph_type_augment_p": 0.0,
        "mining": "hardest",
        "cross_rank_negatives": True,
    }
    (tmp_path / "exact.yaml").write_text(yaml.safe_dump(config))
    common = ("--config", str(tmp_path / "exact.yaml"), "--stages", "base", "--max-steps", "3", "--device", "cpu")
    assert main(_train_args(synthetic, tmp_path / "local", *common)) == 0
    assert main(_train_args(synthetic, tmp_path / "ray", *common, "--engine", "ray", "--ray-workers", "2")) == 0
    log = lambda d: [json.loads(x) for x in (d / "base" / "log.jsonl").read_text().splitlines()]  # noqa: E731
    local, on_ray = log(tmp_path / "local"), log(tmp_path / "ray")
    assert len(local) == len(on_ray) == 3
    # DDP's loss normalisation: the global batch's loss, as one process computes it (tests/train/test_distributed.py)
    assert on_ray[0]["loss"] == pytest.approx(local[0]["loss"], abs=1e-4)
    assert (tmp_path / "ray" / "model" / "fingerprint.txt").exists()
    assert json.loads((tmp_path / "ray" / "summary.json").read_text())["stages"]["base"]["steps"] == 3


@pytest.mark.timeout(600)
@pytest.mark.parametrize("seed", range(10))
def test_ray_train_with_a_worker_killed_mid_epoch_resumes_to_the_same_run(seed, synthetic, tmp_path, ray_local):
    """kill -9 of one Ray Train worker after a seeded number of the run's checkpoints (1-4 of 8): Ray restarts the
    worker group, training resumes from the checkpoint, and every logged step and the final weights equal an
    uninterrupted run's of the same seed."""
    import os
    import signal
    import threading
    import time

    import numpy as np
    import torch

    from graphtx.model.io import load_model

    config = yaml.safe_load((synthetic / "tiny.yaml").read_text())
    config["model"] |= {"dropout": 0.0, "attention_dropout": 0.0, "embedding_dropout": 0.0}
    config["train"] |= {
        "node_dropout_max": 0.0,
        "graph_type_augment_p": 0.0,
        "mining": "hardest",
        "cross_rank_negatives": True,
        "checkpoint_every_steps": 1,
        "early_stop_evals": 100,
    }
    (tmp_path / "exact.yaml").write_text(yaml.safe_dump(config))
    common = ("--config", str(tmp_path / "exact.yaml"), "--stages", "base", "--max-steps", "8", "--device", "cpu")
    ray_args = ("--engine", "ray", "--ray-workers", "2")
    assert main(_train_args(synthetic, tmp_path / "full", *common, *ray_args)) == 0
    checkpoint, killed = tmp_path / "killed" / "base" / "checkpoint.pt", []
    rng = np.random.default_rng(seed)
    # the seeded moment: after the k-th checkpoint (one a step, 8 steps), then a few ms; counted in steps, not in
    # seconds, so it falls inside the stage however fast the machine runs it (a 0-0.5 s delay after the first
    # checkpoint outlasted the whole stage on a quiet machine)
    after_checkpoints, delay = int(rng.integers(1, 5)), float(rng.uniform(0.0, 0.005))

    def kill_a_worker():
        deadline, seen, last = time.time() + 300, 0, None
        while seen < after_checkpoints and time.time() < deadline:
            try:
                stamp = checkpoint.stat().st_mtime_ns
            except OSError:
                stamp = None
            if stamp is not None and stamp != last:
                seen, last = seen + 1, stamp
            time.sleep(0.001)
        time.sleep(delay)
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                title = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            if title.startswith("ray::RayTrainWorker"):
                finished = (tmp_path / "killed" / "base" / "done.json").exists()
                os.kill(int(name), signal.SIGKILL)
                killed.append(finished)
                return

    watcher = threading.Thread(target=kill_a_worker, daemon=True)
    watcher.start()
    assert main(_train_args(synthetic, tmp_path / "killed", *common, *ray_args)) == 0
    watcher.join(timeout=60)
    assert killed == [False], "no Ray Train worker was killed before the stage finished"
    log = lambda d: [json.loads(x) for x in (d / "base" / "log.jsonl").read_text().splitlines()]  # noqa: E731
    full, resumed = log(tmp_path / "full"), log(tmp_path / "killed")
    assert [r["step"] for r in resumed] == [r["step"] for r in full] == list(range(1, 9))  # every step logged once
    assert [r["loss"] for r in resumed] == pytest.approx([r["loss"] for r in full], abs=1e-6)
    a, b = load_model(tmp_path / "full" / "model").model, load_model(tmp_path / "killed" / "model").model
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.allclose(p, q, atol=1e-6), name
