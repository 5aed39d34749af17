"""The GPU path of training and encoding: stage pretrain and stage base on CUDA (bf16 autocast), checked against the CPU.

Skipped without a CUDA device (CI has none); run on a GPU machine with ``pytest tests/train/test_cuda.py``."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from graphtx.cli import main
from graphtx.model.io import load_model
from graphtx.train.config import TrainConfig
from graphtx.train.pretrain_graph import PretrainPool, PretrainTrainer
from tests.train.test_prefetch import stage_config
from tests.train.test_pretrain_graph import _CharTokenizer, _fixed_batch, _tiny_model

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the bf16 GPU path)")


def _step_record(device: str, amp: bool, tmp_path) -> tuple[dict, torch.nn.Module]:
    store = _fixed_batch()[0].store
    cfg = TrainConfig(
        pretrain_batch_docs=8,
        pretrain_bm25_candidates=2,
        pretrain_query_min_share=0.5,
        pretrain_query_max_share=1.0,
        pretrain_views_weight=1.0,
        pretrain_bm25_weight=1.0,
        amp=amp,
    )
    trainer = PretrainTrainer(
        copy.deepcopy(_tiny_model()),
        _CharTokenizer(),
        PretrainPool(store, cfg),
        None,
        cfg,
        seed=0,
        out_dir=tmp_path / f"{device}-{amp}",
        device=device,
    )
    return trainer._step(trainer.batch_at(0), 0.0), trainer.model


@pytest.mark.timeout(120)
def test_a_pretrain_step_on_the_gpu_gives_the_cpu_loss(tmp_path):
    """Two objectives at once (views, BM25 targets): fp32 on the GPU matches the CPU; bf16 autocast stays close."""
    cpu, _ = _step_record("cpu", False, tmp_path)
    gpu, model = _step_record("cuda", False, tmp_path)
    bf16, _ = _step_record("cuda", True, tmp_path)
    assert next(model.parameters()).device.type == "cuda"
    for key in ("loss", "views_loss", "bm25_loss"):
        assert gpu[key] == pytest.approx(cpu[key], rel=1e-3, abs=1e-4), key
        assert bf16[key] == pytest.approx(cpu[key], rel=5e-2, abs=5e-3), key
    assert gpu["graphs"] == cpu["graphs"] and gpu["nodes"] == cpu["nodes"]  # the same batch, built on the CPU


@pytest.mark.timeout(180)
def test_batches_built_ahead_by_forked_workers_beside_cuda(tmp_path):
    """Workers forked after CUDA is up (auto: 4 where the cores allow) build the in-line run's batches."""
    store = _fixed_batch()[0].store
    logs = []
    for workers in (0, 2):
        cfg = stage_config(workers, steps=3)
        out = tmp_path / f"w{workers}"
        trainer = PretrainTrainer(
            copy.deepcopy(_tiny_model()), _CharTokenizer(), PretrainPool(store, cfg), None, cfg, 0, out, device="cuda"
        )
        trainer.run()
        logs.append([json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()])
    assert [(r["graphs"], r["nodes"]) for r in logs[1]] == [(r["graphs"], r["nodes"]) for r in logs[0]]
    assert len(logs[1]) == 3


@pytest.mark.timeout(300)
def test_train_on_the_gpu_learns_and_writes_a_cpu_loadable_model(synthetic, tmp_path, capsys):
    """Both stages on --device cuda (bf16): the model beats the untrained one, loads on the CPU, and encodes there as on the GPU."""
    base = [
        "--config",
        str(synthetic / "tiny.yaml"),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--citations",
        str(synthetic / "train.tsv"),
        "--valid-citations",
        str(synthetic / "valid.tsv"),
        "--quiet",
        "--json",
        "--no-rank-fit",
        "--device",
        "cuda",
    ]
    run = tmp_path / "run"
    assert (
        main(["train", *base, "--tokens", str(synthetic / "tokens"), "--stages", "pretrain,base", "--out", str(run)])
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["stages"]["pretrain"]["steps"] > 0 and summary["stages"]["base"]["steps"] > 0
    evals = [json.loads(x) for x in (run / "base" / "evals.jsonl").read_text().splitlines()]
    assert evals[0]["reference"] and len(evals) > 1  # the pre-trained start, then evaluations of the fine-tuned model
    scratch = tmp_path / "scratch"
    assert (
        main(
            [
                "train",
                *base,
                "--tokens",
                str(synthetic / "tokens"),
                "--stages",
                "base",
                "--max-steps",
                "1",
                "--out",
                str(scratch),
            ]
        )
        == 0
    )
    capsys.readouterr()
    untrained = json.loads((scratch / "base" / "evals.jsonl").read_text().splitlines()[0])
    assert summary["stages"]["base"]["best_recall"] > untrained["recall"]
    on_cpu = load_model(run / "model")  # checksums and fingerprint verified: the weights were saved from the GPU
    assert next(on_cpu.model.parameters()).device.type == "cpu"
    out_cpu, out_gpu = tmp_path / "cpu.parquet", tmp_path / "gpu.parquet"
    for out, device in ((out_cpu, "cpu"), (out_gpu, "cuda")):
        assert (
            main(
                [
                    "encode",
                    "--model",
                    str(run / "model"),
                    "--graphs",
                    str(synthetic / "graphs"),
                    "--out",
                    str(out),
                    "--device",
                    device,
                    "--quiet",
                ]
            )
            == 0
        )
    import pyarrow.parquet as pq

    a, b = (pq.read_table(p).to_pydict() for p in (out_cpu, out_gpu))
    assert a["doc_id"] == b["doc_id"]
    va, vb = torch.tensor(a["vector"]), torch.tensor(b["vector"])  # (n, D) each, float32
    assert torch.nn.functional.cosine_similarity(va, vb, dim=1).min() > 0.999
