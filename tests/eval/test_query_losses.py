"""benchmarks/studies/query_losses.py: per-query wins and losses against BM25 and the rare-word groups."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import query_losses  # noqa: E402  (our own script: it imports or the test fails, never skips)


@pytest.mark.timeout(60)
def test_losses_are_counted_per_query_and_grouped_by_shared_rare_words(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    ids = ["Q1", "Q2", "C1", "C2", "X1"]
    texts = ["bragg grating sensor", "device", "bragg grating fiber", "device part", "device other"]
    pq.write_table(
        pa.table({"id": ids, "title": texts, "abstract": [""] * 5, "description": [""] * 5}),
        corpus / "documents.parquet",
    )
    (tmp_path / "c.tsv").write_text("citing_id\tcited_id\nQ1\tC1\nQ2\tC2\n")
    (tmp_path / "pq.csv").write_text(
        "system,query,nDCG@150\ngraphtx (x),Q1,0.2\ngraphtx (x),Q2,0.5\ngraphtx (x) + BM25 (RRF),Q1,0.9\n"
        "BM25 (k1 1.5),Q1,1.0\nBM25 (k1 1.5),Q2,0.5\n"
    )
    argv = [str(tmp_path / "pq.csv"), str(corpus), str(tmp_path / "c.tsv"), "--rare-df", "2"]
    assert query_losses.main(argv) == 0
    out = capsys.readouterr().out
    assert "queries 2: BM25 above 1, below 0, level 1" in out and "net loss 0.80" in out
    # Q1 shares "bragg" and "grating" (each in 2 documents) with C1; Q2 shares only words of 3+ documents
    assert "rare shared words 0-0: 1 queries, mean loss 0.000" in out
    assert "rare shared words 1-2: 1 queries, mean loss 0.800" in out
    assert "Spearman(rare shared words, loss) +1.00" in out  # Q1: 2 rare words, loss 0.8; Q2: none, no loss
