"""The searcher's protocol two ways: `graphtx eval citations --cutoff priority` scores BM25 and the learned ranker exactly as
a batch run of `graphtx search --topics` (id topics, the default cut-off) scored by `graphtx eval run`; rank-fit's pools
hold only what the cut-off lets through."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")

from graphtx.cli import main
from tests.index.fixtures import N_DOCS, doc_id
from tests.rank.conftest import write_citations


def date_of(i: int) -> str:
    return f"20{10 + i % 10}-01-0{1 + i % 9}"  # the dates of tests/index/fixtures.make_corpus


def earlier_same_class(queries) -> list[tuple[str, str]]:
    """Each query cites three documents of its IPC class published before it, and one published after it (unreachable)."""
    pairs = []
    for q in queries:
        same = [j for j in range(N_DOCS) if j != q and j % 7 == q % 7]
        before = [j for j in same if date_of(j) < date_of(q)][:3]
        after = [j for j in same if date_of(j) > date_of(q)][:1]
        pairs += [(doc_id(q), doc_id(j)) for j in before + after]
    return pairs


@pytest.mark.timeout(300)
def test_eval_citations_under_priority_equals_the_batch_route_for_bm25_and_the_learned_ranker(
    fitted, ranked, tmp_path, capsys
):
    queries = [q for q in range(60, 100) if date_of(q) >= "2013"]  # queries with earlier documents to find
    cites = write_citations(tmp_path / "cites.tsv", earlier_same_class(queries))
    typed = [doc_id(q).replace("-", "") if q % 2 else doc_id(q) for q in queries]  # mixed spellings: T00061 is T-00061
    (tmp_path / "topics.txt").write_text("".join(f"{t}\n" for t in typed))
    runs = []
    for ranker, k in (
        ("bm25", 150),
        ("learned", 30),
    ):  # the learned run: the ranker's pool depth (30), so both rank the same pool
        runs.append(str(tmp_path / f"{ranker}.trec"))
        assert (
            main(
                [
                    "search",
                    str(fitted),
                    "--topics",
                    str(tmp_path / "topics.txt"),
                    "--output",
                    runs[-1],
                    "-k",
                    str(k),
                    "--ranker",
                    ranker,
                    "--no-features",
                    "--quiet",
                ]
            )
            == 0
        )
    capsys.readouterr()
    assert (
        main(["eval", "run", *runs, "--qrels", cites, "--corpus", str(ranked["corpus"]), "--ndcg-k", "10", "--json"])
        == 0
    )
    via_runs = {r["name"]: r["metrics"] for r in json.loads(capsys.readouterr().out)["retrieval"]}
    assert (
        main(
            [
                "eval",
                "citations",
                str(ranked["corpus"]),
                "--citations",
                cites,
                "--index",
                str(fitted),
                "--graphs",
                str(ranked["graphs"]),
                "--query-kind",
                "description",  # an id query searches with the document's indexed (description) vector
                "--query-fields",
                "title,abstract,claims",
                "--candidate-fields",
                "title,abstract,claims,description",  # the index's BM25 text
                "--baselines",
                "bm25",
                "--rankers",
                "learned",
                "--protocols",
                "retrieval",
                "--ndcg-k",
                "10",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    later = sum(1 for q, d in earlier_same_class(queries) if date_of(int(d[2:])) > date_of(int(q[2:])))
    assert out["config"]["cutoff"] == "priority" and out["citations"]["pairs_unreachable"] == later > 0
    own = {r["name"]: r["metrics"] for r in out["retrieval"]}
    for name in ("bm25", "learned"):
        for metric in ("Recall@3", "nDCG@10"):
            assert math.isclose(via_runs[name][metric], own[name][metric], abs_tol=1e-12), (
                name,
                metric,
                via_runs[name],
                own[name],
            )
    assert own["bm25"]["Recall@3"] > 0 and own["learned"]["nDCG@10"] > 0
    # without the cut-off in `eval run`, the same runs score the same (they hold only documents that pass); eval citations
    # under none ranks later documents too, and the one later citation per query becomes findable
    assert (
        main(
            [
                "eval",
                "citations",
                str(ranked["corpus"]),
                "--citations",
                cites,
                "--baselines",
                "bm25",
                "--cutoff",
                "none",
                "--query-fields",
                "title,abstract,claims",
                "--candidate-fields",
                "title,abstract,claims,description",
                "--protocols",
                "retrieval",
                "--ndcg-k",
                "10",
                "--json",
            ]
        )
        == 0
    )
    none = json.loads(capsys.readouterr().out)
    assert (
        none["citations"]["pairs_unreachable"] == 0 and none["retrieval"][0]["metrics"]["R@100"] > own["bm25"]["R@100"]
    )


def test_eval_run_cuts_a_run_that_ignores_dates(ranked, tmp_path, capsys):
    """A run listing later documents and the query's own id is scored as if it had kept to the cut-off."""
    q = 75  # 2015-01-04
    later, earlier = doc_id(76), doc_id(74)  # 2016, 2014
    (tmp_path / "run.trec").write_text(
        f"{doc_id(q)} Q0 {later} 1 3.0 x\n{doc_id(q)} Q0 {doc_id(q)} 2 2.0 x\n{doc_id(q)} Q0 {earlier} 3 1.0 x\n"
    )
    cites = write_citations(tmp_path / "c.tsv", [(doc_id(q), earlier)])
    assert (
        main(
            [
                "eval",
                "run",
                str(tmp_path / "run.trec"),
                "--qrels",
                cites,
                "--corpus",
                str(ranked["corpus"]),
                "--k",
                "1",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["retrieval"][0]["metrics"]["Recall@1"] == 1.0 and out["runs"][0]["cut_off_hits"] == 2
    assert (
        main(
            [
                "eval",
                "run",
                str(tmp_path / "run.trec"),
                "--qrels",
                cites,
                "--corpus",
                str(ranked["corpus"]),
                "--k",
                "1",
                "--cutoff",
                "none",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["retrieval"][0]["metrics"]["Recall@1"] == 0.0
    assert (
        main(["eval", "run", str(tmp_path / "run.trec"), "--qrels", cites, "--cutoff", "priority"]) == 2
    )  # dates need --corpus
    assert "give --corpus" in capsys.readouterr().err


@pytest.mark.timeout(240)
def test_rank_fit_pools_hold_only_what_the_cut_off_lets_through(ranked):
    from graphtx.config import EvalConfig
    from graphtx.corpus.citations import read_citations
    from graphtx.eval.baselines import BM25System
    from graphtx.eval.data import EvalCorpus, judgements
    from graphtx.eval.systems import ModelSystem
    from graphtx.rank.fit import PoolSource, training_groups

    for policy in ("priority", "none"):
        cfg = EvalConfig(cutoff=policy)
        corpus = EvalCorpus.load(ranked["corpus"], cfg)
        judged = judgements(read_citations(ranked["train"]), corpus, cfg)
        source = PoolSource(corpus, BM25System.from_config(cfg), ModelSystem(ranked["model"], ranked["graphs"]))
        groups = training_groups(source, judged, 30, ("bm25", "dense"), progress=False)
        later = 0
        for g in groups:
            row = corpus.position[g.query]
            bm25, dense = source.scores(np.array([row]))
            pool = source.pool_inputs(row, bm25[0], dense[0], 30).candidates
            later += sum(date_of(int(corpus.ids[c][2:])) >= date_of(row) for c in pool)  # ids T-00042: row = the number
        assert (later == 0) == (policy == "priority"), (policy, later)
        if policy == "priority":  # T-00000 (2010-01-01) has nothing earlier: no pool, no group
            assert doc_id(0) in judged.relevant and doc_id(0) not in {g.query for g in groups}


def test_ranker_records_its_cut_off_and_drop_features_leaves_year_gap_out(ranked, tmp_path, capsys):
    cfg = tmp_path / "rank.yaml"
    cfg.write_text(
        "rank:\n  depth: 30\n  folds: 3\n  min_data_in_leaf: 5\n  num_leaves_grid: [3]\n  max_rounds: 20\n  bag: 1\n  drop_features: [year_gap]\n"
    )
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--model",
                str(ranked["model"]),
                "--graphs",
                str(ranked["graphs"]),
                "--citations",
                ranked["train"],
                "--out",
                str(tmp_path / "r"),
                "--config",
                str(cfg),
                "--cutoff",
                "year",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["cutoff"] == "year"
    meta = json.loads((tmp_path / "r" / "ranker.json").read_text())
    assert "year_gap" not in meta["features"]["learned"] and "code_group_jaccard" in meta["features"]["learned"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("rank:\n  drop_features: [year_gapp]\n")
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--model",
                str(ranked["model"]),
                "--graphs",
                str(ranked["graphs"]),
                "--citations",
                ranked["train"],
                "--config",
                str(bad),
            ]
        )
        == 2
    )
    assert "unknown feature(s) year_gapp" in capsys.readouterr().err


def test_eval_run_cut_reads_other_spellings_and_keeps_unknown_hits_in_place(ranked, tmp_path, capsys):
    q = 75  # 2015-01-04
    compact_later, earlier = doc_id(76).replace("-", ""), doc_id(74)  # T00076 (2016) is the corpus's T-00076: cut
    (tmp_path / "run.trec").write_text(
        f"{doc_id(q)} Q0 {compact_later} 1 4.0 x\n{doc_id(q)} Q0 X-OTHER-1 2 3.0 x\n{doc_id(q)} Q0 {earlier} 3 1.0 x\n"
    )
    cites = write_citations(tmp_path / "c.tsv", [(doc_id(q), earlier)])
    assert (
        main(
            [
                "eval",
                "run",
                str(tmp_path / "run.trec"),
                "--qrels",
                cites,
                "--corpus",
                str(ranked["corpus"]),
                "--k",
                "1",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0]["cut_off_hits"] == 1 and out["runs"][0]["hits_not_in_corpus"] == 1
    assert (
        out["retrieval"][0]["metrics"]["Recall@1"] == 0.0 and out["retrieval"][0]["metrics"]["MRR@10"] == 0.5
    )  # the unknown hit keeps rank 1
