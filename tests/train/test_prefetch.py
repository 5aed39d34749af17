"""Batches built ahead in worker processes (graphtx/train/prefetch.py): the same items in the same order as in line,
the same training to the bit, the workers gone when the stage stops, and auto's count of workers."""

from __future__ import annotations

import json
import multiprocessing

import numpy as np
import pytest
import torch

from graphtx.train import prefetch, pretrain_graph
from graphtx.train.config import TrainConfig
from graphtx.train.prefetch import batch_workers, can_fork, prefetched
from graphtx.train.pretrain_graph import PretrainPool, PretrainTrainer
from tests.train.test_pretrain_graph import _CharTokenizer, _fixed_batch, _tiny_model

needs_fork = pytest.mark.skipif(not can_fork(), reason="worker processes are forked; this platform has no fork")


def _item(step: int) -> tuple[int, torch.Tensor]:
    return step, torch.randn(3, generator=torch.Generator().manual_seed(step))  # (3,)


def _mixed(step: int) -> tuple[int, np.ndarray]:
    return step, np.full(2, step)


def _failing(step: int) -> int:
    if step == 4:
        raise ValueError("document D4 has no graph")
    return step


@needs_fork
@pytest.mark.timeout(60)
def test_workers_hand_over_the_in_line_items_in_order():
    with prefetched(_item, range(3, 11), 0) as items:
        in_line = list(items)
    with prefetched(_item, range(3, 11), 2) as items:
        ahead = list(items)
    assert [s for s, _ in ahead] == list(range(3, 11))
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(in_line, ahead))
    with prefetched(_mixed, range(2), 2) as items:
        first = next(items)
    assert isinstance(first, tuple) and isinstance(first[1], np.ndarray)  # as prepare made it, not collated


@needs_fork
@pytest.mark.timeout(60)
def test_workers_leave_torchs_global_random_stream_alone():
    torch.manual_seed(5)
    before = torch.get_rng_state()
    with prefetched(_item, range(6), 2) as items:
        list(items)
    assert torch.equal(torch.get_rng_state(), before)  # the model's dropout draws as in line


@needs_fork
@pytest.mark.timeout(60)
def test_leaving_early_ends_the_workers_and_an_error_in_one_reaches_the_caller():
    with prefetched(_item, range(0, 1000), 2) as items:
        assert next(items)[0] == 0
        assert multiprocessing.active_children()  # the workers are up
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]
    with pytest.raises(ValueError, match="D4 has no graph"):
        with prefetched(_failing, range(10), 2) as items:
            list(items)
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_an_empty_range_starts_nothing():
    with prefetched(_item, range(5, 5), 4) as items:
        assert list(items) == []
    assert not multiprocessing.active_children()


def test_auto_is_none_on_a_cpu_and_four_beside_a_gpu_where_cores_allow(monkeypatch):
    monkeypatch.setattr(prefetch, "can_fork", lambda: True)
    cpu, gpu = "cpu", "cuda"
    monkeypatch.setattr(prefetch, "usable_cores", lambda: 16)
    assert batch_workers(-1, cpu) == 0 and batch_workers(-1, gpu) == prefetch.GPU_BATCH_WORKERS == 4
    assert batch_workers(2, cpu) == 2 and batch_workers(0, gpu) == 0  # a set count wins
    monkeypatch.setattr(prefetch, "usable_cores", lambda: 6)
    assert batch_workers(-1, gpu) == 2  # 6 cores: 4 for the trainer's threads, 2 left
    monkeypatch.setattr(prefetch, "usable_cores", lambda: 2)
    assert batch_workers(-1, gpu) == 0
    monkeypatch.setattr(prefetch, "can_fork", lambda: False)
    assert batch_workers(3, gpu) == 0  # no fork: in line


def test_the_config_refuses_a_negative_count_other_than_auto():
    assert TrainConfig(pretrain_batch_workers=3).pretrain_batch_workers == 3
    with pytest.raises(ValueError, match="pretrain_batch_workers"):
        TrainConfig(pretrain_batch_workers=-2)


def stage_config(workers: int, steps: int) -> TrainConfig:
    """A tiny stage pretrain over _fixed_batch's 8 documents, two objectives, heavy node dropout (it draws from the
    step's generator: built elsewhere, the same nodes must go)."""
    return TrainConfig(
        pretrain_steps=steps,
        pretrain_batch_docs=4,
        pretrain_bm25_candidates=2,
        pretrain_query_min_share=0.5,
        pretrain_query_max_share=1.0,
        pretrain_views_weight=1.0,
        pretrain_bm25_weight=1.0,
        node_dropout_max=0.5,
        checkpoint_every_steps=2,
        pretrain_batch_workers=workers,
    )


def _run(tmp_path, monkeypatch, workers: int, stop_after_steps: int = 0) -> tuple[list[dict], dict]:
    store = _fixed_batch()[0].store
    cfg = stage_config(workers, steps=6)
    out = tmp_path / f"w{workers}"
    trainer = PretrainTrainer(_tiny_model(), _CharTokenizer(), PretrainPool(store, cfg), None, cfg, seed=3, out_dir=out)
    used = []
    real = prefetch.prefetched

    def spy(prepare, steps, count):
        used.append(count)
        return real(prepare, steps, count)

    monkeypatch.setattr(pretrain_graph, "prefetched", spy)
    trainer.run(stop_after_steps=stop_after_steps)
    assert used == [workers]  # the stage took the configured count
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    return log, trainer.model.state_dict()


@needs_fork
@pytest.mark.timeout(120)
def test_a_stage_trained_with_workers_is_the_in_line_stage_to_the_bit(tmp_path, monkeypatch):
    in_line, weights = _run(tmp_path, monkeypatch, 0)
    ahead, weights_ahead = _run(tmp_path, monkeypatch, 2)
    keys = ("loss", "views_loss", "bm25_loss", "graphs", "nodes", "candidates", "grad_norm")
    assert [[r[k] for k in keys] for r in ahead] == [[r[k] for k in keys] for r in in_line]
    assert all(torch.equal(weights[k], weights_ahead[k]) for k in weights)
    assert len({r["nodes"] for r in in_line}) > 1  # the steps differ: the test compares something


@needs_fork
@pytest.mark.timeout(120)
def test_a_killed_run_with_workers_resumes_to_the_same_weights(tmp_path, monkeypatch):
    _, weights = _run(tmp_path / "whole", monkeypatch, 0)
    _run(tmp_path / "killed", monkeypatch, 2, stop_after_steps=3)  # a checkpoint at step 2; step 3 is lost
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]
    log, weights_resumed = _run(tmp_path / "killed", monkeypatch, 2)
    assert [r["step"] for r in log] == list(range(1, 7))
    assert all(torch.equal(weights[k], weights_resumed[k]) for k in weights)
