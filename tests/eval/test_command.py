"""`graphtx eval citations` / `graphtx eval paecter` end to end on the synthetic corpus."""

from __future__ import annotations

import csv
import json

import pytest

from graphtx.cli import main
from graphtx.corpus.schema import Citation
from tests.eval.conftest import synthetic_corpus, write_files


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    docs, citations = synthetic_corpus(per_field=12)
    extra = [
        Citation(f"D-{f}-{i:02d}", f"D-{f}-{i + 1:02d}") for f in ("battery", "snow", "valve") for i in range(4, 11)
    ]
    root = tmp_path_factory.mktemp("cli")
    docs_path, cites_path = write_files(root, docs, citations)
    (root / "train.tsv").write_text("citing_id\tcited_id\n" + "".join(f"{c.citing_id}\t{c.cited_id}\n" for c in extra))
    return root, docs_path, cites_path


def test_citations_table_json_per_query_and_plot(files, tmp_path, capsys):
    root, docs, cites = files
    out = tmp_path / "res"
    args = [
        "eval",
        "citations",
        str(docs),
        "--citations",
        str(cites),
        "--extra-citations",
        str(root / "train.tsv"),
        "--quiet",
    ]
    assert main([*args, "--out", str(out), "--per-query", str(tmp_path / "pq.csv"), "--tune", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    names = [r["system"] for r in summary["retrieval"]]
    assert names[0] == "BM25 (k1 1.5, b 0.75)" and names[1].startswith("BM25 tuned") and names[2] == "TF-IDF cosine"
    bm25 = summary["retrieval"][0]
    assert set(bm25["metrics"]) == {"Recall@3", "nDCG@150", "MAP", "MRR@10", "R@100", "R@500", "R@1000"}
    assert (
        bm25["ratio_to_bm25"]["Recall@3"] == 1.0
        and bm25["queries"] == 12
        and bm25["pairs"] == 72
        and bm25["candidates"] == 35
    )
    assert summary["tuning"]["tuned_on_evaluated_queries"] and len(summary["tuning"]["grid"]) == 36
    assert bm25["bootstrap_to_bm25"] == []  # the reference itself has no interval; every other system has two
    tfidf = summary["retrieval"][2]["bootstrap_to_bm25"]
    assert [i["metric"] for i in tfidf] == ["Recall@3", "nDCG@150"] and all(
        i["low"] <= i["ratio"] <= i["high"] for i in tfidf
    )
    assert tfidf[1]["ratio"] == pytest.approx(summary["retrieval"][2]["ratio_to_bm25"]["nDCG@150"])
    assert [p["system"] for p in summary["paecter"]] == names and summary["paecter_samples"]["samples_drawn"] == 12
    with open(tmp_path / "pq.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 12 and {
        "system",
        "query",
        "first_relevant_rank",
        "Recall@3",
        "AP",
        "cited_ranks",
        "top3",
    } <= set(rows[0])
    for name in ("results.json", "per_query.csv", "per_sample.csv", "metric_vs_k.png", "paecter_samples.json"):
        assert (out / name).is_file(), name
    assert (out / "metric_vs_k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the saved samples are read back, not drawn again: same PaECTER numbers under another seed
    assert (
        main(
            [
                *args,
                "--paecter-samples",
                str(out / "paecter_samples.json"),
                "--seed",
                "9",
                "--protocols",
                "paecter",
                "--json",
            ]
        )
        == 0
    )
    again = json.loads(capsys.readouterr().out)
    assert again["retrieval"] == [] and again["paecter"][0]["metrics"] == summary["paecter"][0]["metrics"]
    assert again["paecter_samples"]["loaded_from"] == str(out / "paecter_samples.json")

    assert main(args) == 0
    text = capsys.readouterr().out
    assert "| BM25 (k1 1.5, b 0.75) | " in text and "(1.00x)" in text and "| RFR | MAP | MRR@10 |" in text
    assert "paired-bootstrap 95% interval" in text and "| TF-IDF cosine | " in text


def test_gains_cutoffs_and_baseline_choice(files, capsys):
    root, docs, cites = files
    assert (
        main(
            [
                "eval",
                "citations",
                str(docs),
                "--citations",
                str(cites),
                "--baselines",
                "tfidf",
                "--gains",
                "X=3,A=0",
                "--k",
                "5",
                "--ndcg-k",
                "20",
                "--protocols",
                "retrieval",
                "--quiet",
                "--json",
            ]
        )
        == 3
    )  # A pairs: not scored
    summary = json.loads(capsys.readouterr().out)
    (r,) = summary["retrieval"]
    assert (
        r["system"] == "TF-IDF cosine"
        and "Recall@5" in r["metrics"]
        and "nDCG@20" in r["metrics"]
        and r["ratio_to_bm25"] == {}
    )
    assert summary["citations"]["skipped"]["category gain 0"] > 0 and summary["citations"]["gains"] == {
        "X": 3.0,
        "A": 0.0,
    }


def test_paecter_command(files, tmp_path, capsys):
    root, docs, cites = files
    samples = tmp_path / "s.json"
    assert (
        main(
            [
                "eval",
                "paecter",
                str(docs),
                "--citations",
                str(cites),
                "--baselines",
                "bm25",
                "--samples",
                str(samples),
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["retrieval"] == []
        and summary["paecter"][0]["samples"] == 12
        and json.loads(samples.read_text())["seed"] == 0
    )


def test_ingested_corpus_directory_uses_its_own_citations(files, tmp_path, capsys):
    root, docs, cites = files
    assert main(["ingest", str(docs), str(cites), "--out", str(tmp_path / "corpus"), "--quiet"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "citations",
                str(tmp_path / "corpus"),
                "--baselines",
                "bm25",
                "--protocols",
                "retrieval",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["retrieval"][0]["pairs"] == 72


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--baselines", "bm26"], "unknown baseline"),
        (["--baselines", "fasttext-avg"], "--tokens"),
        (["--baselines", "none"], "nothing to evaluate"),
        (["--protocols", "trec"], "unknown protocol"),
        (["--gains", "X:3"], "CATEGORY=GAIN"),
        (["--gains", "Q=3"], "unknown citation"),
        (["--model", "m"], "--graphs"),
        (["--vectors", "v.parquet", "--model", "m"], "one graphtx system"),
        (["--query-vectors", "q.parquet"], "--candidate-vectors"),
        (["--vectors", "nope.parquet"], "does not exist"),
    ],
)
def test_bad_usage_is_exit_2_with_a_reason(files, capsys, extra, message):
    root, docs, cites = files
    assert main(["eval", "citations", str(docs), "--citations", str(cites), "--quiet", *extra]) == 2
    assert message in capsys.readouterr().err


def test_documents_file_needs_citations(files, capsys):
    root, docs, cites = files
    assert main(["eval", "citations", str(docs), "--quiet"]) == 2
    assert "--citations" in capsys.readouterr().err


def test_phrases_protocol_is_still_there():
    from graphtx.cli import build_parser

    args = build_parser().parse_args(["eval", "phrases", "--tokens", "t", "--train", "a.csv", "--valid", "b.csv"])
    assert args.protocol == "phrases"


def test_a_cut_off_deeper_than_the_default_depth_ranks_deeper(files, capsys):
    root, docs, cites = files
    assert (
        main(
            [
                "eval",
                "citations",
                str(docs),
                "--citations",
                str(cites),
                "--baselines",
                "bm25",
                "--ndcg-k",
                "2000",
                "--protocols",
                "retrieval",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["depth"] == 2000 and "nDCG@2000" in summary["retrieval"][0]["metrics"]


def test_known_item_judges_each_document_by_itself(files, tmp_path, capsys):
    root, docs, _ = files
    own = tmp_path / "own.tsv"
    own.write_text(
        "citing_id\tcited_id\tcategory\n"
        + "".join(f"D-{f}-0{i}\tD-{f}-0{i}\ttrivial\n" for f in ("snow", "valve") for i in (1, 2))
    )
    args = ["eval", "citations", str(docs), "--citations", str(own), "--baselines", "bm25", "--quiet"]
    assert main(args) == 2  # without --known-item self-pairs are not judged: nothing left to score
    assert "none of the 4 citation pairs" in capsys.readouterr().err
    assert main([*args, "--known-item", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (bm25,) = summary["retrieval"]
    # the query stays among its candidates (36, not 35), and a document's own text finds it first
    assert (bm25["queries"], bm25["pairs"], bm25["candidates"]) == (4, 4, 36)
    assert bm25["metrics"]["MRR@10"] == 1.0 and summary["paecter"] == []
    assert summary["config"]["query_fields"] == ["first_claim"] and summary["config"]["candidate_fields"] == [
        "claims",
        "description",
    ]
    assert main([*args, "--known-item", "--protocols", "paecter"]) == 2
    assert "needs real citations" in capsys.readouterr().err


def test_hybrid_adds_a_fused_row_and_bm25(files, capsys, tmp_path):
    root, docs, cites = files
    vectors = tmp_path / "vectors.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx.eval.data import EvalCorpus

    ids = EvalCorpus.load(docs).ids
    rng = __import__("numpy").random.default_rng(0)
    from graphtx.model.embed import vectors_schema

    flat = pa.array(rng.normal(size=(len(ids), 8)).astype("float32").reshape(-1))
    table = pa.table(
        {"doc_id": list(ids), "kind": ["description"] * len(ids), "vector": pa.FixedSizeListArray.from_arrays(flat, 8)},
        schema=vectors_schema(8, "random"),
    )
    pq.write_table(table, vectors)
    assert (
        main(
            [
                "eval",
                "citations",
                str(docs),
                "--citations",
                str(cites),
                "--vectors",
                str(vectors),
                "--name",
                "random",
                "--baselines",
                "tfidf",
                "--hybrid",
                "--protocols",
                "retrieval",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    names = [r["system"] for r in json.loads(capsys.readouterr().out)["retrieval"]]
    assert names == ["random", "random + BM25 (k1 1.5, b 0.75) (RRF)", "TF-IDF cosine", "BM25 (k1 1.5, b 0.75)"]
    assert main(["eval", "citations", str(docs), "--citations", str(cites), "--hybrid", "--quiet"]) == 2
    assert "give a graphtx system" in capsys.readouterr().err
