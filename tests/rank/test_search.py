"""rank-fit, then search with the learned ranker: k hits, the default when present; train's ranker hold-out."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")

from graphtx.cli import main


@pytest.mark.timeout(240)
def test_search_learned_returns_k_hits(fitted, capsys):
    from graphtx.index.search import Index

    index = Index.open(fitted)
    assert index.resolve_ranker() == "learned"  # the default when the index has a ranker
    for kind in ("learned", "convex", "bm25", "hybrid", "dense"):
        result = index.search("A zorblat3 device comprising a battery cell and a cooling plate.", k=5, ranker=kind)
        assert len(result) == 5 and result.ranker == kind
        assert [h.rank for h in result] == [1, 2, 3, 4, 5]
        assert all(a.score >= b.score for a, b in zip(result.hits, result.hits[1:]))
    by_id = index.search(doc_id="T-00003", k=4, ranker="learned")
    assert len(by_id) == 4 and "T-00003" not in {h.doc_id for h in by_id}
    capsys.readouterr()
    assert (
        main(
            [
                "search",
                "--index",
                str(fitted),
                "--id",
                "T-00010",
                "-k",
                "3",
                "--ranker",
                "learned",
                "--json",
                "--quiet",
                "--before",
                "none",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert (
        out["ranker"] == "learned" and len(out["hits"]) == 3 and all(h["bm25_score"] is not None for h in out["hits"])
    )
    # by default an id query keeps to documents published before it: T-00010 (2010-01-02) has two, T-00000 and T-00090
    assert (
        main(
            ["search", "--index", str(fitted), "--id", "T-00010", "-k", "3", "--ranker", "learned", "--json", "--quiet"]
        )
        == 0
    )
    assert [h["doc_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["T-00000", "T-00090"]


@pytest.mark.timeout(240)
def test_learned_and_convex_rankers_filter_selectively(fitted):
    """IPC class 3 published in 2010 (T-00010, T-00080 of 120: under 2%): k hits when k exist, all of them when fewer."""
    from graphtx.index.filters import SearchFilters
    from graphtx.index.search import Index

    index = Index.open(fitted)
    text = "A zorblat5 device comprising a battery cell and a cooling plate."
    for kind in ("learned", "convex"):
        assert (
            len({h.doc_id for h in index.search(text, k=2, ranker=kind)} & {"T-00010", "T-00080"}) < 2
        )  # the filter must reach further
        result = index.search(text, k=2, ranker=kind, filters=SearchFilters(ipc=("H01M 3/",), before="2011"))
        assert {h.doc_id for h in result} == {"T-00010", "T-00080"} and result.ranker == kind
        assert len(index.search(text, k=5, ranker=kind, filters=SearchFilters(ipc=("H01M 3/",), before="2011"))) == 2
        grouped = index.search(text, k=5, ranker=kind, filters=SearchFilters(group_by_family=True))
        assert len(grouped) == 5  # ids without a kind code: each document is its own family
        nothing = index.search(text, k=3, ranker=kind, filters=SearchFilters(cpc=("Y02E",)), explain=True)
        assert nothing.hits == () and nothing.filters["passing"] == 0  # no document passes: no hits, not an error


@pytest.mark.timeout(240)
def test_ranker_of_another_model_refused(fitted, ranked, tmp_path, capsys):
    from tests.index.fixtures import make_model

    other = make_model(tmp_path, seed=5)
    rc = main(
        [
            "search",
            "--index",
            str(fitted),
            "--model",
            str(other),
            "--text",
            "a battery",
            "--ranker-dir",
            str(fitted / "ranker"),
            "--quiet",
        ]
    )
    assert rc == 2  # the model itself differs from the index's: refused before the ranker
    from graphtx.index.search import Index
    from graphtx.model.io import fingerprint, load_model

    with pytest.raises(ValueError, match="fitted on model"):
        from graphtx.rank.store import load_ranker

        load_ranker(fitted / "ranker", fingerprint(load_model(other).model))
    assert Index.open(fitted, ranker_dir=fitted / "ranker").ranker is not None


def test_rank_fit_refuses_validation_queries(ranked, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "valid_citations.tsv").write_text(open(ranked["valid"]).read())
    rc = main(
        [
            "rank-fit",
            str(ranked["corpus"]),
            "--run",
            str(run),
            "--model",
            str(ranked["model"]),
            "--graphs",
            str(ranked["graphs"]),
            "--citations",
            ranked["valid"],
            "--quiet",
        ]
    )
    assert rc == 2 and "validation queries" in capsys.readouterr().err


def test_ranker_holdout_moves_whole_citing_documents():
    from graphtx.corpus.schema import Citation
    from graphtx.train.run import PreparedData, hold_out_for_ranker

    train = [Citation(f"Q{i}", f"D{j}", "X") for i in range(200) for j in range(3)]
    data = hold_out_for_ranker(PreparedData(train, [], [], []), 0.3, {}, seed=0)
    held, kept = {c.citing_id for c in data.ranker}, {c.citing_id for c in data.train}
    assert not held & kept and len(data.ranker) + len(data.train) == 600
    assert 0.2 < len(held) / 200 < 0.4 and len(data.ranker) == 3 * len(held)
    assert hold_out_for_ranker(PreparedData(train, [], [], []), 0.0, {}, seed=0).ranker == []


def test_rank_fit_writes_a_bag_of_rank_bag_fits(fitted):
    """The CLI's ranker holds rank.bag (default 5) LightGBM fits per kind, each reported, and reads back as that many members."""
    from graphtx.rank.config import RankConfig
    from graphtx.rank.store import load_ranker

    bag = RankConfig().bag
    meta = json.loads((fitted / "ranker" / "ranker.json").read_text())
    assert len(meta["report"]["learned"]["bag"]) == bag and len(meta["report"]["lexical"]["bag"]) == bag
    ranker = load_ranker(fitted / "ranker", meta["model_fingerprint"])
    assert {kind: len(b.members) for kind, b in ranker.boosters.items()} == {"learned": bag, "lexical": bag}
