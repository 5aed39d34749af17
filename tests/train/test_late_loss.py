"""Training the late-interaction head: its loss falls on a fixed batch; the stage loop trains and saves it."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from graphtx.config import load_config
from graphtx.graphs.graph import InventionGraph
from graphtx.model import GraphEncoder
from graphtx.model.batch import collate
from graphtx.model.io import load_model
from graphtx.model.late import late_score_matrix
from graphtx.train.loss import contrastive_loss_from_scores, triplet_loss_from_distances
from graphtx.train.run import train
from tests.model import HashTokenizer, lamp, single_node, snowthrower, tiny_config


def _pump() -> InventionGraph:
    return InventionGraph(
        "US9",
        "description",
        "abstract",
        ("pump", "impeller", "impeller of the pump"),
        ("feature", "feature", "relation"),
        (1, 2),
        (0, 1),
        ("part_of", "functional"),
    )


def _late_loss(model, batch, kind: str) -> torch.Tensor:
    out = model(batch, return_details=True)
    q = batch.node_graph < 2  # graphs 0, 1 are anchors; 2, 3 their positives
    s = late_score_matrix(
        out.late_vectors[q],
        out.late_weights[q],
        batch.node_graph[q],
        2,
        out.late_vectors[~q],
        batch.node_graph[~q] - 2,
        2,
    )
    positive, allowed = torch.arange(2), ~torch.eye(2, dtype=torch.bool)
    if kind == "infonce":
        total, denom, _ = contrastive_loss_from_scores(s, positive, allowed, 0.1)
    else:
        total, denom, _ = triplet_loss_from_distances(1 - s, positive, allowed, torch.full((2,), 0.5), "all")
    return total / denom.clamp(min=1)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["infonce", "triplet"])
def test_late_loss_decreases_on_a_fixed_batch(kind):
    torch.manual_seed(0)
    model = GraphEncoder(tiny_config(reduced_dim=0, late_dim=8), seed=0)
    tok = HashTokenizer(model.config.vocab_size)
    # anchors: the snowthrower and the lamp; their "positives" are unrelated graphs, so the model must move
    batch = collate([snowthrower(), lamp(), single_node(), _pump()], tok, model.config.max_tokens_per_node)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss = _late_loss(model, batch, kind)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0], losses


@pytest.mark.timeout(120)
def test_stage_trains_the_late_head_and_saves_it(synthetic, tmp_path):
    config = load_config(synthetic / "tiny.yaml")
    config = dataclasses.replace(
        config,
        model=dataclasses.replace(config.model, late_dim=8),
        train=dataclasses.replace(
            config.train,
            stages=("base",),
            max_steps=6,
            evals_per_epoch=1,
            late_interaction_weight=0.5,
            select_rerank_depth=10,
        ),
    )
    out = tmp_path / "run"
    train(
        config,
        str(synthetic / "corpus"),
        str(synthetic / "graphs"),
        str(out),
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    log = [json.loads(line) for line in (out / "base" / "log.jsonl").read_text().splitlines()]
    assert all("late_loss" in r for r in log) and all(r["late_loss"] > 0 for r in log if r["active_triplets"])
    loaded_dir = load_model(out / "model")
    model, cfg = loaded_dir.model, loaded_dir.config
    assert cfg.late_dim == 8 and model.late is not None
    fresh = GraphEncoder(cfg.as_base(), seed=0)
    assert not torch.equal(model.late.proj.weight, fresh.late.proj.weight)  # trained, not the initial head


def test_late_interaction_weight_is_checked():
    from graphtx.train.config import TrainConfig

    with pytest.raises(ValueError, match="late_interaction_weight"):
        TrainConfig(late_interaction_weight=1.0)


def test_evaluator_rerank_reorders_only_the_dense_top_n(synthetic):
    from graphtx.corpus.citations import read_citations
    from graphtx.text.bpe import PatentTokenizer
    from graphtx.train.data import GraphStore
    from graphtx.train.evaluate import CitationEvaluator

    cites = read_citations(synthetic / "valid.tsv")
    store = GraphStore.load(synthetic / "graphs")
    tok = PatentTokenizer.load(synthetic / "tokens")
    model = GraphEncoder(
        dataclasses.replace(
            load_config(synthetic / "tiny.yaml").model, late_dim=8, reduced_dim=0, vocab_size=tok.vocab_size
        ),
        seed=0,
    )
    plain = CitationEvaluator(cites, store, "first_claim", "description", 3, 10)
    late = CitationEvaluator(cites, store, "first_claim", "description", 3, 10, rerank_depth=10)
    from graphtx.metrics import dense_rankings

    q = model.encode(plain.query_graphs, tok)
    c = model.encode(plain.candidate_graphs, tok)
    before = dense_rankings(plain.query_ids, q, plain.candidate_ids, c, k=10)
    after = late._rerank_late(model, tok, before)
    for query in before:
        assert set(after[query]) == set(before[query]) and len(after[query]) == 10
    assert any(after[q_] != before[q_] for q_ in before)  # the late order is not the dense one
    assert 0 <= late(model, tok).recall <= 1


@pytest.mark.timeout(180)
def test_fit_late_head_keeps_the_dense_model_and_learns_a_head(synthetic, tmp_path, capsys):
    from graphtx.cli import main
    from graphtx.train.data import GraphStore

    base = tmp_path / "base"
    assert (
        main(
            [
                "init-model",
                "--config",
                str(synthetic / "tiny.yaml"),
                "--tokens",
                str(synthetic / "tokens"),
                "--out",
                str(base),
                "--quiet",
            ]
        )
        == 0
    )
    from graphtx.model.io import record_corpus_profile
    from graphtx.text.field import FieldProfile, read_model_profile

    learned_on = FieldProfile(40, {"batteri": 30, "cell": 20}, "stop words en, stemmer english")
    record_corpus_profile(base, learned_on)  # as if it had learned on a corpus
    (tmp_path / "head.yaml").write_text(
        f"extends: {synthetic / 'tiny.yaml'}\ntrain:\n  late_head_epochs: 4\n  select_rerank_depth: 20\n  max_pairs_per_batch: 32\n"
    )
    out = tmp_path / "late"
    args = [
        "fit-late-head",
        "--model",
        str(base),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--citations",
        str(synthetic / "train.tsv"),
        "--valid-citations",
        str(synthetic / "valid.tsv"),
        "--out",
        str(out),
        "--late-dim",
        "8",
        "--config",
        str(tmp_path / "head.yaml"),
        "--json",
    ]
    capsys.readouterr()
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [h["epoch"] for h in summary["history"]][:2] == [0, 1] and summary["history"][1]["loss"] > 0
    a = load_model(base).model
    loaded_dir = load_model(out)
    b, cfg = loaded_dir.model, loaded_dir.config
    assert cfg.late_dim == 8 and b.late is not None
    assert read_model_profile(out) == learned_on  # the frozen backbone keeps the corpus it learned on
    g = [GraphStore.load(synthetic / "graphs").get("T00-0", "description")]
    from graphtx.text.bpe import PatentTokenizer

    tok = PatentTokenizer.load(out)
    torch.testing.assert_close(a.encode(g, tok), b.encode(g, tok))  # the dense model is unchanged
    assert (out / "late_head.json").exists()
