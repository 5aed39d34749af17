"""Ranker explanations: each signal's contribution, summing to the ranker's score (hybrid, convex, learned)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")

from graphtx.rank.explain import explain_rrf

QUERY = "A zorblat3 device comprising a battery cell and a cooling plate."


def test_rrf_terms_sum_to_the_fused_score():
    e = explain_rrf(dense_rank=2, bm25_rank=None, dense_weight=1.0, bm25_weight=0.5, rrf_k=60)
    assert e.signals == {"dense": pytest.approx(1 / 62), "bm25": 0.0} and e.total == pytest.approx(e.score)
    e = explain_rrf(dense_rank=1, bm25_rank=3, dense_weight=1.0, bm25_weight=0.5, rrf_k=60)
    assert e.score == pytest.approx(1 / 61 + 0.5 / 63)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", ["learned", "convex", "hybrid"])
def test_ranker_explanation_sums_to_the_score(fitted, kind):
    from graphtx.index.search import Index

    index = Index.open(fitted)
    result = index.search(QUERY, k=6, ranker=kind, explain=True)
    assert len(result) == 6
    for hit in result:
        e = hit.ranker_explanation
        assert e is not None and e.ranker == kind
        assert e.score == pytest.approx(hit.score, rel=1e-6, abs=1e-9)  # the explained score is the ranking's
        assert e.total == pytest.approx(hit.score, rel=1e-5, abs=1e-6)  # base + signals = score
        assert set(e.signals) <= {"bm25", "dense", "late", "meta"} and "bm25" in e.signals
        if kind == "learned":
            assert tuple(e.features) == index.ranker.features["learned"]  # one SHAP value a feature
            assert sum(e.features.values()) + e.base == pytest.approx(hit.score, rel=1e-5, abs=1e-6)
            assert "dense" in e.signals  # the graph model's features are grouped as "dense"
        assert hit.to_json()["ranker_explanation"]["ranker"] == kind
    plain = index.search(QUERY, k=3, ranker=kind)
    assert all(h.ranker_explanation is None for h in plain)  # only asked for with explain


@pytest.mark.timeout(240)
def test_cli_explain_prints_signal_contributions(fitted, capsys):
    from graphtx.cli import main

    assert (
        main(
            [
                "search",
                "--index",
                str(fitted),
                "--text",
                QUERY,
                "-k",
                "2",
                "--ranker",
                "learned",
                "--explain",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "learned score" in out
        and "largest feature contributions:" in out
        and ("not found:" in out or "query features found" in out)
    )
    assert (
        main(
            [
                "search",
                "--index",
                str(fitted),
                "--text",
                QUERY,
                "-k",
                "2",
                "--ranker",
                "convex",
                "--explain",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)["hits"]
    for h in hits:
        e = h["ranker_explanation"]
        assert np.isclose(e["base"] + sum(e["signals"].values()), h["score"], atol=1e-5)
        assert "not_found" in h["explanation"]


def test_explanation_says_what_year_gap_read():
    from graphtx.rank.explain import RankerExplanation

    e = RankerExplanation(
        "learned", 0.7, 0.5, {"meta": 0.15, "bm25": 0.05}, {"year_gap": 0.15, "bm25_z": 0.05}, {"year_gap": 3.0}
    )
    assert "year_gap +0.1500 (hit 3 years before the query" in e.lines()[1] and e.lines()[1].endswith("bm25_z +0.0500")
    assert (
        "(hit 1 year after"
        in RankerExplanation("learned", 0.0, 0.0, {}, {"year_gap": -0.1}, {"year_gap": -1.0}).lines()[1]
    )
