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
    model = load_model(tiny["model"]).model
    with torch.no_grad():
        model.pool.score.weight.normal_(
            0, 0.5, generator=torch.Generator().manual_seed(0)
        )  # non-uniform pooling weights
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
        assert b.score == pytest.approx(single.score, abs=1e-5) and [m.hit_node for m in b.matches] == [
            m.hit_node for m in single.matches
        ]
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


def _graph(doc_id, features, relations=()):
    from graphtx.graphs.graph import InventionGraph

    texts = (*features, *relations)
    types = ("feature",) * len(features) + ("relation",) * len(relations)
    return InventionGraph(doc_id, "first_claim", "claims", texts, types, (), (), ())


def test_claim_chart_lists_the_features_a_hit_lacks():
    import torch

    from graphtx.index.explain import Explanation, claim_elements

    query = _graph("q", ["battery cell", "cooling plate", "valve seat"], ["battery cell mounted on cooling plate"])
    hit = _graph("h", ["Battery cells", "pump housing"])
    elements = claim_elements(query, hit, None, 0.9)
    assert [(e.number, e.text, e.found) for e in elements] == [
        (1, "battery cell", "words"),
        (2, "cooling plate", ""),
        (3, "valve seat", ""),
    ]
    assert (
        elements[0].hit_text == "Battery cells"
    )  # plural and case do not hide a match; relation nodes are not elements
    sim = torch.tensor([[0.1, 0.2], [0.3, 0.5], [0.2, 0.95], [0.0, 0.0]])  # (query nodes, hit nodes)
    elements = claim_elements(query, hit, sim, 0.9)
    assert [e.found for e in elements] == ["words", "", "model"] and elements[2].hit_text == "pump housing"
    e = Explanation("h", 0.5, 0.5, (), query, hit, elements)
    assert e.not_found == (2,) and e.to_json()["not_found"] == [2]
    assert " ".join(line.strip() for line in e.chart()) == (
        "2 of 3 query features found; by the model: feature 3 (pump housing, sim 0.95); not found: feature 2 (cooling plate)"
    )
    assert Explanation("h", 0.5, 0.5, (), query, hit, claim_elements(query, query, None, 0.9)).chart() == [
        "    all 3 query features found"
    ]


def test_a_long_claim_chart_names_ten_missing_features_then_numbers_wrapped():
    from graphtx.index.explain import Element, chart_lines

    elements = tuple(Element(n, n, f"part {n}", -1, "", 0.0, "words" if n == 1 else "") for n in range(1, 61))
    lines = chart_lines(elements)
    assert lines[0].startswith("    1 of 60 query features found; not found: feature 2 (part 2), ")
    text = " ".join(line.strip() for line in lines)
    assert "feature 11 (part 11); also 12, 13," in text and text.endswith(", 59, 60") and "(part 12)" not in text
    assert all(len(line) <= 110 for line in lines) and all(line.startswith("      ") for line in lines[1:])


def test_search_explanations_carry_the_claim_chart(tiny_index):
    from graphtx.config import SearchConfig
    from graphtx.index.search import Index

    strict = Index.open(tiny_index, search=SearchConfig(found_similarity=1.0))
    hit = strict.search(doc_id="T-00003", k=1, explain=True)[0]
    elements = hit.explanation.elements
    assert [e.number for e in elements] == list(range(1, len(elements) + 1)) and elements
    from graphtx.index.explain import _words

    hit_nodes = [_words(t) for t in hit.explanation.hit_graph.node_text]
    for e in elements:  # with the model's similarity out of play (1.0), found = a hit node holds the feature's words
        assert e.found in ("words", "") and (e.found == "words") == any(_words(e.text) <= w for w in hit_nodes)
    assert hit.explanation.not_found == tuple(e.number for e in elements if not e.found)


def test_the_explain_table_says_how_its_parts_add_up_to_the_graph_score(tiny_index):
    import re

    from graphtx.index.search import Index

    hit = Index.open(tiny_index).search(doc_id="T-00003", k=1, explain=True)[0]
    exp = hit.explanation
    *rows, last = exp.table()
    shown, others, bias, score = (float(x) for x in re.findall(r"[-+]?\d+\.\d{4}", last))
    assert shown == pytest.approx(sum(m.contribution for m in exp.matches), abs=1e-4)
    assert shown + others == pytest.approx(exp.total, abs=2e-4) and shown + others + bias == pytest.approx(
        exp.score, abs=3e-4
    )
    assert score == pytest.approx(exp.score, abs=1e-4)
