"""Rankers are plug-ins: one interface (graphtx.rank.pool.PoolRanker), one registry that search, the service's schema
and `eval citations --rankers` all read. A toy ranker registered here, in one file, is offered by all three; the
built-in hybrid ranker is reciprocal rank fusion of the pool's ranks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.index.config import SearchConfig
from graphtx.rank.pool import PoolRanker, make_pool
from graphtx.rank.registry import available_rankers, get_ranker, ranker_names, register, unregister
from tests.rank.conftest import planted_citations, write_citations


class HalfBm25(PoolRanker):
    """The toy: BM25's order, at half its score (so its hits are told apart from BM25's by their scores)."""

    name = "toy-half-bm25"
    summary = "half of BM25 (a test's toy)"
    signals = ("bm25",)

    def score(self, pool, settings, fitted):
        return 0.5 * pool.bm25


@pytest.fixture
def toy():
    ranker = register(HalfBm25())
    try:
        yield ranker
    finally:
        unregister(ranker.name)
    assert ranker.name not in ranker_names()


def test_hybrid_is_reciprocal_rank_fusion_of_the_pools_ranks_and_a_zero_weight_drops_its_list():
    # positions 0..4; dense ranks 0 (1st), 2 (2nd); BM25 ranks 2 (1st), 4 (2nd)
    pool = make_pool(
        lambda p: f"d{p}", np.array([0, 2]), np.array([0.9, 0.8]), np.array([2, 4]), np.array([0.0, 0.0, 5.0, 0.0, 3.0])
    )
    assert (
        pool.doc_ids == ["d0", "d2", "d4"]
        and pool.dense_rank.tolist() == [1, 2, 0]
        and pool.bm25_rank.tolist() == [0, 1, 2]
    )
    assert math.isnan(pool.dense[2]) and pool.bm25.tolist() == [0.0, 5.0, 3.0]
    hybrid = get_ranker("hybrid")
    scores = hybrid.score(pool, SearchConfig(), None)
    assert scores.tolist() == pytest.approx([1 / 61, 1 / 62 + 1 / 61, 1 / 62])
    only_bm25 = hybrid.score(pool, SearchConfig(dense_weight=0.0), None)
    assert only_bm25[0] == -np.inf and only_bm25[1:].tolist() == pytest.approx(
        [1 / 61, 1 / 62]
    )  # d0 is in no weighted list
    why = hybrid.explain(pool, SearchConfig(), None, np.array([1]))[0]
    assert why.signals == pytest.approx({"dense": 1 / 62, "bm25": 1 / 61}) and why.total == pytest.approx(scores[1])


def test_a_ranker_needs_a_word_for_a_name_known_signals_and_a_free_name():
    for bad in ("", "auto", "two words"):
        with pytest.raises(ValueError, match="a word"):
            register(type("Bad", (HalfBm25,), {"name": bad})())
    with pytest.raises(ValueError, match="signals"):
        register(type("Bad", (HalfBm25,), {"name": "odd", "signals": ("tfidf",)})())
    with pytest.raises(ValueError, match="registered already"):
        register(type("Again", (HalfBm25,), {"name": "hybrid"})())
    with pytest.raises(ValueError, match="built in"):
        unregister("dense")
    assert available_rankers(None) == ["dense", "bm25", "hybrid"]  # convex and learned need a fitted directory


@pytest.mark.timeout(300)
def test_a_toy_ranker_in_one_file_is_offered_by_search_the_service_and_eval(toy, fitted, ranked, tmp_path, capsys):
    # search: the CLI's --ranker choices and the Python API
    query = ["search", "--index", str(fitted), "--id", "T-00010", "-k", "4", "--before", "none", "--json", "--quiet"]
    assert main([*query, "--ranker", "bm25"]) == 0
    bm25 = json.loads(capsys.readouterr().out)["hits"]
    assert main([*query, "--ranker", toy.name]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ranker"] == toy.name and [h["doc_id"] for h in out["hits"]] == [h["doc_id"] for h in bm25]
    assert [h["score"] for h in out["hits"]] == pytest.approx([0.5 * h["score"] for h in bm25])

    # the service: in the schema's ranker enum, and answered
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from graphtx.config import ServeConfig
    from graphtx.index.search import Index
    from graphtx.serve.app import create_app

    with TestClient(create_app(Index.open(fitted), ServeConfig()), base_url="http://localhost") as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]
        enum = json.dumps(schema["SearchIn"]["properties"]["ranker"])
        assert toy.name in enum and "learned" in enum
        answer = client.post("/search", json={"id": "T-00010", "k": 4, "before": "none", "ranker": toy.name})
        assert answer.status_code == 200 and [h["doc_id"] for h in answer.json()["hits"]] == [h["doc_id"] for h in bm25]
        assert client.post("/search", json={"id": "T-00010", "ranker": "nope"}).status_code == 422

    # eval citations --rankers: the toy's row ranks as BM25's does
    cites = write_citations(tmp_path / "cites.tsv", planted_citations(range(60, 80)))
    command = [
        "eval",
        "citations",
        str(ranked["corpus"]),
        "--citations",
        cites,
        "--baselines",
        "bm25",
        "--protocols",
        "retrieval",
    ]
    assert (
        main(
            [
                *command,
                "--rankers",
                f"{toy.name},hybrid",
                "--index",
                str(fitted),
                "--graphs",
                str(ranked["graphs"]),
                "--json",
            ]
        )
        == 0
    )
    rows = {r["name"]: r["metrics"] for r in json.loads(capsys.readouterr().out)["retrieval"]}
    assert rows[toy.name] == pytest.approx(rows["bm25"]) and "hybrid" in rows
    assert main([*command, "--rankers", "nope", "--quiet"]) == 2
    assert "known: dense, bm25, hybrid, convex, learned, learned-lexical, toy-half-bm25" in capsys.readouterr().err


class ScaledBm25(PoolRanker):
    """A toy with a fit of its own: BM25 times a scale it learns from the training pools (their number)."""

    name = "toy-scaled-bm25"
    summary = "BM25 times a fitted scale (a test's toy)"
    signals = ("bm25",)

    def fit(self, groups, config):
        return {"scale": float(len(groups))}

    def score(self, pool, settings, fitted):
        return pool.bm25 * fitted.plugins[self.name]["scale"]


@pytest.mark.timeout(300)
def test_a_plugin_with_its_own_fit_is_fitted_by_rank_fit_and_offered_where_fitted(fitted, ranked, tmp_path, capsys):
    from graphtx.index.search import Index

    toy = register(ScaledBm25())
    try:
        assert toy.fits and toy.name not in Index.open(fitted).available_rankers()  # no fit of it yet
        with pytest.raises(ValueError, match="rank-fit"):
            Index.open(fitted).search(doc_id="T-00010", k=3, ranker=toy.name)
        config = tmp_path / "rank.yaml"
        config.write_text(
            "rank:\n  depth: 30\n  folds: 3\n  min_data_in_leaf: 5\n  num_leaves_grid: [3]\n  max_rounds: 30\n"
        )
        out = tmp_path / "ranker"
        fit = ["rank-fit", str(ranked["corpus"]), "--model", str(ranked["model"]), "--graphs", str(ranked["graphs"])]
        assert main([*fit, "--citations", ranked["train"], "--out", str(out), "--config", str(config), "--quiet"]) == 0
        capsys.readouterr()
        scale = json.loads((out / "ranker.json").read_text())["plugins"][toy.name]["scale"]
        assert scale > 1
        index = Index.open(fitted, ranker_dir=out)
        assert toy.name in index.available_rankers()
        mine, bm25 = (index.search(doc_id="T-00010", k=4, ranker=r, filters=None) for r in (toy.name, "bm25"))
        assert [h.doc_id for h in mine] == [h.doc_id for h in bm25]
        assert [h.score for h in mine] == pytest.approx([scale * h.score for h in bm25])
        cites = write_citations(tmp_path / "cites.tsv", planted_citations(range(60, 80)))
        evaluate = ["eval", "citations", str(ranked["corpus"]), "--citations", cites, "--baselines", "bm25"]
        evaluate += ["--index", str(fitted), "--graphs", str(ranked["graphs"]), "--ranker-dir", str(out)]
        assert main([*evaluate, "--rankers", toy.name, "--protocols", "retrieval", "--json"]) == 0
        rows = {r["name"]: r["metrics"] for r in json.loads(capsys.readouterr().out)["retrieval"]}
        assert rows[toy.name] == pytest.approx(rows["bm25"])
    finally:
        unregister(toy.name)
