"""Stage pretrain: section-view pairs, BM25 soft targets, both losses learning, and fine-tuning from it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from graphtx.cli import main
from graphtx.config import load_config
from graphtx.graphs.graph import InventionGraph
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder
from graphtx.model.io import load_model
from graphtx.train.config import TrainConfig
from graphtx.train.data import GraphStore
from graphtx.train.loss import contrastive_loss
from graphtx.train.pretrain_graph import (
    Bm25Teacher,
    PretrainPool,
    crop_graph,
    distill_loss,
    pretrain_step_inputs,
    soft_targets,
    view_documents,
    view_pairs,
)


def _g(doc: str, kind: str, nodes: list[str]) -> InventionGraph:
    n = len(nodes)
    return InventionGraph(
        doc, kind, kind, tuple(nodes), ("feature",) * n, tuple(range(n - 1)), tuple(range(1, n)), ("part_of",) * (n - 1)
    )


def test_crop_is_a_contiguous_span_with_its_own_edges():
    g = _g("D", "first_claim", [f"part {i}" for i in range(10)])
    for seed in range(20):
        c = crop_graph(g, 0.3, 0.6, np.random.default_rng(seed))
        assert 3 <= c.num_nodes <= 6 and c.doc_id == "D" and c.kind == "first_claim"
        start = g.node_text.index(c.node_text[0])
        assert c.node_text == g.node_text[start : start + c.num_nodes]
        assert c.num_edges == c.num_nodes - 1 and all(
            0 <= s < c.num_nodes and 0 <= d < c.num_nodes for s, d, _ in c.edges()
        )


def test_view_pairs_positive_is_own_document_and_never_a_negative():
    store = GraphStore(
        [
            _g("A", "first_claim", ["rotor"]),
            _g("A", "description", ["rotor", "vane"]),
            _g("B", "first_claim", ["valve"]),
            _g("B", "description", ["valve", "spring"]),
            _g("C", "first_claim", ["shaft", "gear"]),
            _g("C", "description", ["shaft", "gear"]),
        ]
    )
    # C is abstract-only (both views one graph): no section-view pair
    assert view_documents(store, store.doc_ids, "first_claim", "description") == {"A", "B"}
    candidates = ["B", "C", "A", "X"]
    positive, allowed = view_pairs(["A", "B"], candidates)
    assert positive.tolist() == [2, 0]
    assert allowed.tolist() == [[True, True, False, True], [False, True, True, True]]
    assert not allowed[torch.arange(2), positive].any()
    with pytest.raises(ValueError, match="own candidate graph"):
        view_pairs(["Z"], candidates)


def test_bm25_soft_targets_sum_to_one_and_follow_bm25_order():
    docs = ["quarzite rotor vane housing", "quarzite rotor spring", "velmite valve lever", "plate"]
    teacher = Bm25Teacher(["a", "b", "c", "d"], docs)
    scores = torch.from_numpy(teacher.scores(["quarzite rotor vane", "zzz unknownword"]))  # (2, 4)
    targets, valid = soft_targets(scores, temperature=0.2)
    assert valid.tolist() == [True, False]
    assert torch.allclose(targets[0].sum(), torch.tensor(1.0)) and targets[1].sum() == 0
    order_bm25 = torch.argsort(scores[0], descending=True, stable=True)
    assert torch.all(targets[0][order_bm25][:-1] >= targets[0][order_bm25][1:])  # same order
    assert int(targets[0].argmax()) == 0 and targets[0][0] > targets[0][1] > targets[0][2]
    sharper, _ = soft_targets(scores, temperature=0.05)
    assert sharper[0, 0] > targets[0, 0]  # lower temperature: closer to BM25's top-1


def _tiny_model(seed=0):
    return GraphEncoder(
        ModelConfig(
            vocab_size=64,
            token_dim=8,
            node_dim=16,
            heads=2,
            layers=1,
            ffn_mult=2,
            base_dim=16,
            reduced_dim=0,
            dropout=0.0,
            attention_dropout=0.0,
            embedding_dropout=0.0,
        ),
        seed=seed,
    )


class _CharTokenizer:
    def encode_batch(self, texts):
        return [[1 + (ord(ch) % 63) for ch in t[:32]] for t in texts]


def _fixed_batch():
    words = ["rotor", "vane", "valve", "spring", "shaft", "gear", "lever", "plate", "pump", "cell"]
    store = GraphStore(
        [
            g
            for i in range(8)
            for g in (
                _g(f"D{i}", "first_claim", [words[i % 10], words[(i + 1) % 10]]),
                _g(f"D{i}", "description", [words[i % 10], words[(i + 1) % 10], words[(i + 3) % 10]]),
            )
        ]
    )
    cfg = TrainConfig(
        pretrain_batch_docs=8, pretrain_bm25_candidates=2, pretrain_query_min_share=0.5, pretrain_query_max_share=1.0
    )
    pool = PretrainPool(store, cfg)
    return pool, pretrain_step_inputs(pool, pool.batch_docs(0, 0), np.random.default_rng(0))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("objective", ["views", "bm25"])
def test_each_loss_decreases_on_a_fixed_batch(objective):
    torch.manual_seed(0)
    pool, inp = _fixed_batch()
    assert len(inp["anchors"]) == 8 and len(inp["spans"]) == 8 and inp["valid"].all()
    assert torch.allclose(inp["targets"].sum(1), torch.ones(8))
    model, tok = _tiny_model(), _CharTokenizer()
    from graphtx.model.batch import collate

    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    cands_b = collate(inp["candidate_graphs"], tok, 32)
    first = last = None
    for _ in range(30):
        cands = model(cands_b)
        if objective == "views":
            positive, allowed = view_pairs(inp["anchors"], inp["candidates"])
            total, denom, _ = contrastive_loss(
                model(collate(inp["anchor_graphs"], tok, 32)), cands, positive, allowed, 0.1
            )
        else:
            total, denom = distill_loss(model(collate(inp["spans"], tok, 32)), cands, inp["targets"], inp["valid"], 0.1)
        loss = total / denom
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = float(loss.detach()) if first is None else first
        last = float(loss.detach())
    assert last < 0.7 * first


def test_distill_loss_is_zero_when_student_equals_teacher():
    q = torch.nn.functional.normalize(torch.randn(3, 4), dim=1)
    c = torch.nn.functional.normalize(torch.randn(5, 4), dim=1)
    t = torch.softmax(q @ c.T / 0.1, dim=1)
    total, denom = distill_loss(q, c, t, torch.tensor([True, True, False]), 0.1)
    assert abs(float(total)) < 1e-5 and float(denom) == 2


def test_config_checks_stages_and_pretrain_keys():
    assert TrainConfig(stages=("pretrain", "base")).stages == ("pretrain", "base")
    for bad in [("base", "pretrain"), ("pretrain", "pretrain"), ("warmup",)]:
        with pytest.raises(ValueError, match="train.stages"):
            TrainConfig(stages=bad)
    with pytest.raises(ValueError, match="pretrain_query"):
        TrainConfig(pretrain_query_min_share=0.8, pretrain_query_max_share=0.5)
    with pytest.raises(ValueError, match="not all 0"):
        TrainConfig(pretrain_views_weight=0, pretrain_bm25_weight=0)


@pytest.mark.timeout(240)
def test_pretrain_stage_then_fine_tuning_starts_from_its_weights(synthetic, tmp_path, capsys):
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
    ]
    pre = tmp_path / "pre"
    assert main(["train", *base, "--tokens", str(synthetic / "tokens"), "--stages", "pretrain", "--out", str(pre)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["final_stage"] == "pretrain" and summary["stages"]["pretrain"]["documents"] == 96
    log = [json.loads(x) for x in (pre / "pretrain" / "log.jsonl").read_text().splitlines()]
    assert len(log) == load_config(synthetic / "tiny.yaml").train.pretrain_steps
    assert all(
        r["spans"] == 32 and r["view_anchors"] == 32 for r in log
    )  # synthetic: first claim ≠ description for every document
    evals = [json.loads(x) for x in (pre / "pretrain" / "evals.jsonl").read_text().splitlines()]
    assert len(evals) == 5 and not any(e["reference"] for e in evals)
    pretrained = load_model(pre / "model").model

    # fine-tuning --init from it: the base stage's step-0 reference evaluation is the pretrained model's score
    fine = tmp_path / "fine"
    assert (
        main(["train", *base, "--init", str(pre / "model"), "--stages", "base", "--max-steps", "2", "--out", str(fine)])
        == 0
    )
    capsys.readouterr()
    start = json.loads((fine / "base" / "evals.jsonl").read_text().splitlines()[0])
    assert start["reference"] and start["step"] == 0
    best_pre = next(e for e in evals if e["step"] == summary["stages"]["pretrain"]["best_step"])
    assert (start["recall"], start["ndcg"]) == pytest.approx((best_pre["recall"], best_pre["ndcg"]))
    fine_summary = json.loads(
        (fine / "summary.json").read_text()
    )  # the start competes: RUN/model is whichever scored best
    assert fine_summary["stages"]["init"]["best_recall"] == pytest.approx(start["recall"])
    shipped = "init" if start["recall"] > fine_summary["stages"]["base"]["best_recall"] else "base"
    assert fine_summary["final_stage"] == shipped
    shipped_dir = (pre / "model") if shipped == "init" else (fine / "base" / "best")
    assert (fine / "model" / "fingerprint.txt").read_text() == (shipped_dir / "fingerprint.txt").read_text()
    # fine-tuning that wrecks the model (lr 3.0) ships the --init model, not the wreck, and leaves the start's ranker behind
    wreck = tmp_path / "wreck"
    (pre / "model" / "ranker").mkdir()
    config = load_config(synthetic / "tiny.yaml")
    config = dataclasses.replace(
        config, train=dataclasses.replace(config.train, finetune_lr=3.0, warmup_steps=0, stages=("base",), max_steps=2)
    )
    from graphtx.train.run import train as run_train

    wrecked = run_train(
        config,
        str(synthetic / "corpus"),
        str(synthetic / "graphs"),
        str(wreck),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        init_model_dir=str(pre / "model"),
        progress=False,
    )
    assert wrecked["stages"]["base"]["best_recall"] < start["recall"] and wrecked["final_stage"] == "init"
    assert (wreck / "model" / "fingerprint.txt").read_text() == (pre / "model" / "fingerprint.txt").read_text()
    assert not (wreck / "model" / "ranker").exists()
    from graphtx.train.run import summary_lines

    assert any(
        line.startswith("start (--init") and "no stage beat it" in line for line in summary_lines(wrecked, wreck)
    )
    (pre / "model" / "ranker").rmdir()
    # unlabelled pre-training on the planted topics alone finds citations better than the untrained model
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
    assert untrained["reference"] and summary["stages"]["pretrain"]["best_recall"] > untrained["recall"]
    # train.init_from does the same as --init
    config = load_config(synthetic / "tiny.yaml")
    config = dataclasses.replace(
        config, train=dataclasses.replace(config.train, init_from=str(pre / "model"), stages=("base",), max_steps=1)
    )
    from graphtx.train.run import train

    fine2 = tmp_path / "fine2"
    train(
        config,
        str(synthetic / "corpus"),
        str(synthetic / "graphs"),
        str(fine2),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    assert json.loads((fine2 / "base" / "evals.jsonl").read_text().splitlines()[0])["ndcg"] == pytest.approx(
        start["ndcg"]
    )
    assert pretrained.swem.embedding.weight.shape[0] == load_model(fine / "model").model.swem.embedding.weight.shape[0]


def test_bad_pretrain_graphs_and_init_give_clear_errors(synthetic, tmp_path, capsys):
    base = [
        "train",
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
        "--out",
        str(tmp_path / "r"),
    ]
    assert (
        main([*base, "--tokens", str(synthetic / "tokens"), "--stages", "pretrain", "--pretrain-graphs", str(tmp_path)])
        != 0
    )
    assert "not a graphs directory" in capsys.readouterr().err
    assert main([*base, "--init", str(tmp_path)]) != 0
    assert "not a model directory" in capsys.readouterr().err
    assert main(base) != 0
    assert "--tokens" in capsys.readouterr().err
