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
