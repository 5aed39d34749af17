"""Explanations: node-pair contributions decompose the score; rendering keeps matched nodes."""

from __future__ import annotations

import pytest
import torch

from graphtx.index.explain import _focus, explain_hits, explain_pair, render_explanation
from graphtx.model.io import load_model
from graphtx.text.bpe import PatentTokenizer
from tests.index.fixtures import make_graph


@pytest.fixture(scope="module")
def model(tiny):
    model, _ = load_model(tiny["model"])
    with torch.no_grad():
        model.pool.score.weight.normal_(0, 0.5, generator=torch.Generator().manual_seed(0))  # non-uniform pooling weights
    return model, PatentTokenizer.load(tiny["model"])


def test_contributions_sum_to_the_score_when_the_projection_has_no_bias(model):
    encoder, tokenizer = model
    with torch.no_grad():
        bias = encoder.proj.bias.clone()
        encoder.proj.bias.zero_()
    try:
        exp = explain_pair(encoder, tokenizer, make_graph(1), make_graph(2), rows=100)
    finally:
        with torch.no_grad():
            encoder.proj.bias.copy_(bias)
    # base model without bias: score = cos(W sum p x, W sum q y) = sum of all pair contributions
    assert exp.total == pytest.approx(exp.score, abs=1e-5)
    assert len(exp.matches) == make_graph(1).num_nodes  # one row per query node when rows allow
    assert sum(m.query_weight for m in exp.matches) == pytest.approx(1.0, abs=1e-5)
    assert exp.matches == tuple(sorted(exp.matches, key=lambda m: -m.contribution))


def test_batched_explanations_equal_one_by_one(model):
    encoder, tokenizer = model
    hits = [make_graph(i) for i in (3, 4, 5)]
    batched = explain_hits(encoder, tokenizer, make_graph(0), hits, rows=4)
    for b, h in zip(batched, hits):
        single = explain_pair(encoder, tokenizer, make_graph(0), h, rows=4)
        assert b.score == pytest.approx(single.score, abs=1e-5) and [m.hit_node for m in b.matches] == [m.hit_node for m in single.matches]
    assert batched[0].table()[0].lstrip().startswith("query feature")


def test_focus_keeps_matched_nodes_and_render_writes_one_png(model, tmp_path):
    encoder, tokenizer = model
    big = make_graph(7)
    cut, high, note = _focus(big, {big.num_nodes - 1: 0.9}, max_nodes=3)
    assert cut.num_nodes == 3 and big.num_nodes - 1 not in high and high == {2: 0.9} and "of" in note
    assert cut.node_text[2] == big.node_text[-1]
    exp = explain_pair(encoder, tokenizer, make_graph(1), big, rows=3)
    path = render_explanation(exp, tmp_path / "x" / "01.png", max_nodes=4, rank=1)
    assert path.exists() and path.read_bytes()[:4] == b"\x89PNG"
