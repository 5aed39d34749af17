"""BM25-mined negatives: lexically closest, never the anchor, its known citations or its family."""

from __future__ import annotations

import dataclasses

from graphtx.config import load_config
from graphtx.model.embed import init_model
from graphtx.text.pretrain import load_tokens
from graphtx.train.data import GraphStore
from graphtx.train.negatives import bm25_negatives
from graphtx.train.run import Documents, build_training_set, split_citations

TEXT = {
    "A": "lithium battery cooling plate with coolant channel",
    "B": "battery cooling plate coolant channel for lithium cells",  # cited by A
    "C": "coolant channel in a cooling plate of a lithium battery pack",  # A's family
    "D": "lithium battery cooling with coolant plate",  # the best uncited hit
    "E": "electric motor inverter gate driver",
    "F": "seat belt buckle",
}


def test_top_hits_skip_self_known_and_family():
    family = {"A": "f1", "C": "f1"}
    out = bm25_negatives(["A"], list(TEXT), TEXT, {"A": {"B"}}, family, per_anchor=2)
    assert out["A"] == ["D"]  # B is cited, C is of its family, E and F share no word: one negative, not two


def test_only_documents_with_a_shared_term_and_deterministic():
    out = bm25_negatives(["F"], list(TEXT), TEXT, {}, {}, per_anchor=3)
    assert "F" not in out  # nothing shares a word with the seat belt: no negative rather than a random one
    assert bm25_negatives(["A", "E"], list(TEXT), TEXT, {}, {}, 2) == bm25_negatives(
        ["E", "A"], list(TEXT)[::-1], TEXT, {}, {}, 2
    )


def test_training_set_gets_bm25_negatives_for_citing_documents_only(synthetic):
    config = load_config(synthetic / "tiny.yaml")
    cfg = dataclasses.replace(config.train, bm25_negatives=2)
    _, tokenizer = init_model(config.model.as_base(), synthetic / "tokens", seed=0)
    _, vectors = load_tokens(synthetic / "tokens")
    docs, store = Documents.read(synthetic / "corpus"), GraphStore.load(synthetic / "graphs")
    prepared = split_citations(
        cfg, docs, 0, str(synthetic / "train.tsv"), str(synthetic / "valid.tsv"), None, str(synthetic / "corpus")
    )
    data, _, _ = build_training_set(cfg, docs, store, prepared, 0, tokenizer, vectors)
    citing = {p.citing for p in data.pairs if p.category != "trivial"}
    assert data.extra_negatives and set(data.extra_negatives) <= citing
    for anchor, negatives in data.extra_negatives.items():
        assert len(negatives) <= 2 and anchor not in negatives and not set(negatives) & data.known[anchor]
        # the synthetic topics share their invented words: BM25's best uncited hits are of the anchor's topic
        assert all(n.split("-")[0] == anchor.split("-")[0] for n in negatives)
