"""Two CPU processes with gloo take the same optimiser step as one process on the whole batch."""

from __future__ import annotations

import dataclasses
import os
import socket
from pathlib import Path

import pytest
import torch

from graphtx.config import load_config
from graphtx.model.embed import init_model
from graphtx.text.pretrain import load_tokens
from graphtx.train.data import GraphStore
from graphtx.train.distributed import DistContext, init_distributed, shutdown
from graphtx.train.evaluate import CitationEvaluator
from graphtx.train.loop import StageTrainer
from graphtx.train.run import Documents, build_training_set, split_citations
from tests.processes import run_processes


def _trainer(root, out, ctx: DistContext, loss: str = "triplet") -> StageTrainer:
    config = load_config(root / "tiny.yaml")
    model_cfg = dataclasses.replace(config.model.as_base(), dropout=0.0, attention_dropout=0.0, embedding_dropout=0.0)
    cfg = dataclasses.replace(
        config.train,
        node_dropout_max=0.0,
        graph_type_augment_p=0.0,
        mining="hardest",
        cross_rank_negatives=True,
        loss=loss,
    )
    model, tokenizer = init_model(model_cfg, root / "tokens", seed=0)
    _, vectors = load_tokens(root / "tokens")
    docs = Documents.read(root / "corpus")
    store = GraphStore.load(root / "graphs")
    prepared = split_citations(
        cfg, docs, 0, str(root / "train.tsv"), str(root / "valid.tsv"), None, str(root / "corpus")
    )
    data, _, _ = build_training_set(cfg, docs, store, prepared, 0, tokenizer, vectors)
    evaluator = CitationEvaluator(prepared.valid, store, cfg.query_kind, cfg.candidate_kind, 3, 20)
    return StageTrainer("base", model, tokenizer, data, evaluator, cfg, 0, out, ctx, progress=False)


def _worker(rank: int, world: int, port: int, root: str, out: str, result_path: str, loss: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank)
    )
    torch.set_num_threads(1)
    ctx = init_distributed("cpu")
    trainer, clean = None, False
    try:
        trainer = _trainer(Path(root), Path(out), ctx, loss)
        batch = trainer.batcher.batches(0)[0]
        record = trainer._step(batch)
        if rank == 0:  # after DDP's all-reduce every rank holds the averaged gradient
            grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters()}
            torch.save({"state": trainer.model.state_dict(), "grads": grads, "loss": record["loss"]}, result_path)
        clean = True
    finally:
        if trainer is not None:
            trainer.close()  # the DDP reducer goes before the process group (the teardown order shutdown documents)
        shutdown(ctx, clean=clean)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("loss", ["triplet", "infonce"])
def test_two_gloo_processes_match_one_process(synthetic, tmp_path, loss):
    single = _trainer(synthetic, tmp_path / "single", DistContext(), loss)
    batch = single.batcher.batches(0)[0]
    assert len(batch) >= 4
    record = single._step(batch)

    result = tmp_path / "ddp.pt"
    run_processes(
        _worker, (2, _free_port(), str(synthetic), str(tmp_path / "ddp"), str(result), loss), nprocs=2, timeout=120
    )
    ddp = torch.load(result, weights_only=False)
    assert abs(ddp["loss"] - record["loss"]) < 1e-5
    for name, p in single.model.named_parameters():
        torch.testing.assert_close(
            ddp["grads"][name], p.grad, rtol=1e-3, atol=5e-7, msg=lambda m: f"gradient of {name}: {m}"
        )  # float noise of two summation orders
    # AdamW turns float noise in near-zero gradients into steps of up to lr: compare weights at that scale
    lr = single.optimizer.param_groups[0]["lr"]
    for name, p in single.model.state_dict().items():
        torch.testing.assert_close(ddp["state"][name], p, rtol=0, atol=1.01 * lr, msg=lambda m: f"{name}: {m}")
