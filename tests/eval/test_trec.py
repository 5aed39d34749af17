"""Run files scored like built-in systems (graphtx/eval/trec.py): reading, judgements, the same numbers, `graphtx eval run`."""

from __future__ import annotations

import json
import math

import pytest

from graphtx.cli import main
from graphtx.config import EvalConfig
from graphtx.eval.trec import evaluate_runs, read_qrels, read_run
from tests.eval.conftest import synthetic_corpus, write_files


def test_run_order_is_score_then_rank_then_id_and_bad_lines_name_their_line(tmp_path):
    (tmp_path / "r.trec").write_text(
        "q1 Q0 b 2 0.5 t\nq1 Q0 a 3 0.5 t\nq1 Q0 c 1 0.9 t\nq1 Q0 d 4 0.5 t\nq1 Q0 d 5 0.1 t\nq2 Q0 z 1 1 t\n"
    )
    run = read_run(tmp_path / "r.trec")
    assert (
        run.rankings == {"q1": ["c", "b", "a", "d"], "q2": ["z"]}
        and run.duplicates == 1
        and run.depth == 4
        and run.tags == ("t",)
    )
    (tmp_path / "bad.trec").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4\n")
    with pytest.raises(ValueError, match=r"bad.trec line 2: a TREC run line has 6 fields"):
        read_run(tmp_path / "bad.trec")
    (tmp_path / "nan.trec").write_text("q1 Q0 a one 0.5 t\n")
    with pytest.raises(ValueError, match="line 1: rank 'one' must be a whole number"):
        read_run(tmp_path / "nan.trec")


def test_qrels_rel_zero_and_self_pairs_are_not_scored_and_gains_follow_rel(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq1 0 q1 1\nq2 0 x 1\n")
    judged = read_qrels(tmp_path / "qrels.txt")
    assert judged.relevant == {"q1": {"a": 1.0, "b": 1.0}, "q2": {"x": 1.0}} and judged.pairs == 3
    assert judged.skipped == {"not relevant (rel 0 or gain 0)": 1, "self-citation": 1}
    assert read_qrels(tmp_path / "qrels.txt", rel_gains={"2": 3.0}).relevant["q1"] == {"a": 1.0, "b": 3.0}
    (tmp_path / "c.tsv").write_text("citing_id\tcited_id\tcategory\nq1\ta\tX\n")
    assert read_qrels(tmp_path / "c.tsv").relevant == {"q1": {"a": 1.0}}


def test_every_judged_query_is_scored_missing_ones_as_zero(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 c 1\n")
    (tmp_path / "one.trec").write_text("q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\nq9 Q0 a 1 1.0 x\n")  # q2 missing, q9 unjudged
    (tmp_path / "two.trec").write_text("q1 Q0 a 1 2.0 y\nq2 Q0 c 1 2.0 y\n")
    report = evaluate_runs([tmp_path / "one.trec", tmp_path / "two.trec"], tmp_path / "qrels.txt", EvalConfig())
    one, two = report.results
    assert one.metrics["Recall@3"] == 0.5 and one.metrics["MRR@10"] == 0.25 and one.metrics["MAP"] == 0.25
    assert two.metrics["Recall@3"] == 1.0 and two.metrics["MRR@10"] == 1.0
    assert report.runs[0]["judged_missing"] == ["q2"] and report.runs[0]["unjudged"] == 1 and report.baseline == "one"
    rows = {r["query"]: r for r in one.per_query}
    assert (
        rows["q2"]["first_relevant_rank"] == ""
        and rows["q2"]["cited_ranks"] == "c:-"
        and rows["q1"]["cited_ranks"] == "a:2"
    )
    assert json.loads(json.dumps(report.to_json()))["retrieval"][1]["ratio_to_baseline"]["Recall@3"] == 2.0


def test_a_run_spelling_ids_its_own_way_is_scored_on_the_judged_ids(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 US-8418590-B2 1\nq2 0 EP-1000000-B1 1\n")
    (tmp_path / "ours.trec").write_text(
        "q1 Q0 US-1-B2 1 3.0 x\nq1 Q0 US-8418590-B2 2 2.0 x\nq2 Q0 EP-1000000-B1 1 1.0 x\n"
    )
    # another system's spelling: compact, zero-padded; a repeat in the other spelling counts once
    (tmp_path / "theirs.trec").write_text(
        "q1 Q0 US1B2 1 3.0 y\nq1 Q0 US08418590B2 2 2.0 y\nq1 Q0 US-8418590-B2 3 1.0 y\nq2 Q0 EP1000000B1 1 1.0 y\n"
    )
    report = evaluate_runs([tmp_path / "ours.trec", tmp_path / "theirs.trec"], tmp_path / "qrels.txt", EvalConfig())
    ours, theirs = report.results
    assert theirs.metrics == ours.metrics and theirs.metrics["MRR@10"] == 0.75
    assert report.runs[0]["ids_normalised"] == 0 and report.runs[1]["ids_normalised"] == 2
    assert main(["eval", "run", str(tmp_path / "theirs.trec"), "--qrels", str(tmp_path / "qrels.txt")]) == 0
    assert "2 ids read as the judgements write them" in capsys.readouterr().out


def test_a_run_of_eval_s_own_rankings_scores_the_same(tmp_path):
    """BM25 as `eval citations` ranks it, written as a run file, gives the same metrics, rows and curves."""
    from graphtx.corpus.citations import read_citations
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.data import EvalCorpus, judgements
    from graphtx.eval.protocols import evaluate_retrieval, rank_queries

    docs_path, cites_path = write_files(tmp_path, *synthetic_corpus(per_field=10))
    cfg = EvalConfig()
    corpus = EvalCorpus.load(docs_path, cfg)
    judged = judgements(read_citations(cites_path), corpus, cfg)
    system = make_baseline("bm25", cfg, None).fit(corpus)
    direct = evaluate_retrieval(system, corpus, judged, cfg)
    rankings, _ = rank_queries(system, corpus, judged, cfg)
    (tmp_path / "bm25.trec").write_text(
        "".join(f"{q} Q0 {d} {r} {1.0 / r!r} bm25\n" for q, ids in rankings.items() for r, d in enumerate(ids, 1))
    )
    [via_run] = evaluate_runs([tmp_path / "bm25.trec"], cites_path, cfg).results
    assert via_run.metrics == direct.metrics
    assert [{k: v for k, v in r.items() if k != "cited_ranks"} for r in via_run.per_query] == [
        {k: v for k, v in r.items() if k != "cited_ranks"} for r in direct.per_query
    ]
    assert via_run.curves == direct.curves


@pytest.mark.timeout(240)
def test_round_trip_search_topics_run_file_eval_equals_eval_s_own_system(tmp_path, capsys):
    """graphtx search --topics -> run file -> graphtx eval run == graphtx eval citations --index (same model, same queries)."""
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(30))
    graphs = make_graphs(tmp_path, range(30), corpus=corpus)
    build_index(make_model(tmp_path), graphs, tmp_path / "index", IndexConfig(), progress=False)
    pairs = [(q, c) for q in (1, 4, 9, 17) for c in (q + 2, q + 5, (q * 7) % 30) if c != q]
    (tmp_path / "cites.tsv").write_text(
        "citing_id\tcited_id\n" + "".join(f"{doc_id(q)}\t{doc_id(c)}\n" for q, c in pairs)
    )
    (tmp_path / "topics.txt").write_text("".join(f"{doc_id(q)}\n" for q in (1, 4, 9, 17)))

    main(["search", "--help"])
    unfiltered = (
        ["--before", "none", "--include-family"] if "--before" in capsys.readouterr().out else []
    )  # eval's systems filter nothing
    assert (
        main(
            [
                "search",
                str(tmp_path / "index"),
                "--topics",
                str(tmp_path / "topics.txt"),
                "--output",
                str(tmp_path / "graphtx.trec"),
                "-k",
                "29",
                "--ranker",
                "dense",
                "--no-features",
                "--quiet",
                *unfiltered,
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "run",
                str(tmp_path / "graphtx.trec"),
                "--qrels",
                str(tmp_path / "cites.tsv"),
                "--corpus",
                str(corpus),
                "--json",
            ]
        )
        == 0
    )
    via_run = json.loads(capsys.readouterr().out)["retrieval"][0]["metrics"]
    assert (
        main(
            [
                "eval",
                "citations",
                str(corpus),
                "--citations",
                str(tmp_path / "cites.tsv"),
                "--index",
                str(tmp_path / "index"),
                "--graphs",
                str(graphs),
                "--query-kind",
                "description",
                "--baselines",
                "none",
                "--protocols",
                "retrieval",
                "--json",
            ]
        )
        == 0
    )
    own = json.loads(capsys.readouterr().out)["retrieval"][0]["metrics"]
    assert (
        own["nDCG@150"] > 0
        and set(via_run) == set(own)
        and all(math.isclose(via_run[m], own[m], abs_tol=1e-9) for m in own)
    ), (via_run, own)


def test_cli_table_has_ratios_to_the_named_baseline_and_bad_baseline_exits_2(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 c 1\n")
    (tmp_path / "one.trec").write_text("q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\nq2 Q0 c 1 1.0 x\n")
    (tmp_path / "two.trec").write_text("q1 Q0 a 1 2.0 y\nq2 Q0 c 1 2.0 y\n")
    out = tmp_path / "res"
    assert (
        main(
            [
                "eval",
                "run",
                str(tmp_path / "one.trec"),
                str(tmp_path / "two.trec"),
                "--qrels",
                str(tmp_path / "qrels.txt"),
                "--baseline",
                "two",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "ratio to two" in text
        and "| one (one.trec, x) | 1.0000 (1.00x) |" in text
        and "Ratio to two with its paired-bootstrap" in text
    )
    assert json.loads((out / "results.json").read_text())["baseline"] == "two" and (out / "per_query.csv").exists()
    assert (
        main(["eval", "run", str(tmp_path / "one.trec"), "--qrels", str(tmp_path / "qrels.txt"), "--baseline", "three"])
        == 2
    )
    assert "--baseline 'three' names none of the runs (one)" in capsys.readouterr().err
    assert main(["eval", "run", str(tmp_path / "none.trec"), "--qrels", str(tmp_path / "qrels.txt")]) == 2
    assert "run file" in capsys.readouterr().err
