"""The claim chart's "found by the model": calibrated on the index's own documents, with a confidence per match."""

from __future__ import annotations

import pytest

from graphtx.index.calibration import calibrate_found
from graphtx.index.found import FoundCalibration, FoundRule, _quantiles


def test_confidence_is_the_share_of_unrelated_matches_below():
    values = [i / 1000 for i in range(1001)]  # 0.000 .. 1.000, evenly
    cal = FoundCalibration(_quantiles(values), 0.01, 0.99, len(values), 10)
    assert cal.confidence(-1.0) == 0.0 and cal.confidence(2.0) == 1.0
    assert cal.confidence(0.25) == pytest.approx(0.25, abs=0.01) and cal.confidence(0.9) == pytest.approx(0.9, abs=0.01)
    grid = [cal.confidence(x / 100) for x in range(101)]
    assert grid == sorted(grid)  # never falls as the similarity rises


def test_a_rule_never_lets_a_feature_of_unknown_words_be_found_by_the_model():
    rule = FoundRule(0.5, None, known=lambda text: "qwerty" not in text)
    assert rule.found("battery cell", 0.6) and not rule.found("battery cell", 0.4)
    assert not rule.found("qwerty zzzz", 0.99)
    assert rule.confidence(0.7) is None  # no calibration behind a fixed threshold


@pytest.fixture(scope="module")
def index(tiny_index):
    from graphtx.index.search import Index

    return Index.open(tiny_index)


def test_the_calibrated_threshold_lets_through_the_chosen_share_of_unrelated_matches(index):
    from graphtx.index.store import GRAPH_FIELDS, row_to_graph

    positions = list(range(40))
    graphs = [
        row_to_graph(r, index.ids.doc_id[p], index.manifest["kind"])
        for r, p in zip(index._rows(positions, list(GRAPH_FIELDS)), positions)
    ]
    cal = calibrate_found(index.model, index.tokenizer, graphs, false_rate=0.05, seed=3)
    assert cal is not None and cal.pairs >= 50 and cal.documents == 40
    assert cal.confidence(cal.threshold) == pytest.approx(0.95, abs=0.02)
    assert (
        calibrate_found(index.model, index.tokenizer, graphs, false_rate=0.05, seed=3) == cal
    )  # seeded: the same sample
    assert calibrate_found(index.model, index.tokenizer, graphs[:1]) is None  # nothing to compare with


def test_without_bm25_at_hand_the_known_word_check_says_unknown_and_gates_nothing(tiny_index, monkeypatch):
    from graphtx.index.hybrid import BM25Index
    from graphtx.index.search import Index

    fresh = Index.open(tiny_index)
    monkeypatch.setattr(
        BM25Index, "saved_digest", staticmethod(lambda directory: None)
    )  # as an index without persisted BM25 state
    assert fresh.knows_words("qwerty zzzz") is None and fresh.bm25_state.loaded is None
    assert fresh.found_rule().known("qwerty zzzz")  # unknown: the similarity alone decides
    fresh.bm25()
    assert fresh.knows_words("qwerty zzzz") is False and fresh.knows_words("battery cell") is True


def test_an_index_calibrates_once_and_a_fixed_cosine_overrides(index, tiny_index):
    from graphtx.config import SearchConfig
    from graphtx.index.search import Index

    rule = index.found_rule()
    assert rule.calibration is not None and rule.threshold == rule.calibration.threshold and index.found_rule() is rule
    fixed = Index.open(tiny_index, search=SearchConfig(found_similarity=0.5)).found_rule()
    assert fixed.threshold == 0.5 and fixed.calibration is None


def test_a_nonsense_query_finds_no_feature_and_is_warned_about(index, capsys):
    index.bm25()  # the known-word check reads BM25's vocabulary when it is at hand (loaded, or persisted and current)
    result = index.search("qwerty zzzz", k=10, explain=True)
    assert result.hits and all(h.explanation.elements for h in result.hits)
    assert all(not e.found for h in result.hits for e in h.explanation.elements)
    assert any("none of the query's words occurs in the indexed documents" in w for w in result.warnings)
    assert any("invention feature" in w for w in result.warnings) and "warnings" in result.to_json()


def test_model_matches_carry_their_confidence_and_word_matches_are_certain(index):
    hit = index.search(
        "1. A zorblat3 device comprising a battery cell, a cooling plate and a charging circuit.", k=5, explain=True
    )[0]
    rule = index.found_rule()
    judged = [e for e in hit.explanation.elements if e.found != "words" and e.hit_node >= 0]
    assert judged, "the query must leave some features to the model"
    for e in hit.explanation.elements:
        if e.found == "words":
            assert e.confidence is None  # certain, and not a calibrated share
    for e in judged:
        assert e.confidence == pytest.approx(rule.calibration.confidence(e.similarity)) and (
            e.found == "model"
        ) == rule.found(e.text, e.similarity)
