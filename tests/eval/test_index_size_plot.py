"""benchmarks/studies/index_size_plot.py: ratios to BM25 of the same index, read by size from a regression JSON."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import index_size_plot  # noqa: E402  (our own script: it imports or the test fails, never skips)


def ratio(r, lo, hi):
    return {"nDCG@150": {"ratio": r, "low": lo, "high": hi}, "Recall@3": {"ratio": r / 2, "low": lo / 2, "high": hi}}


SYSTEMS = {
    "BM25, 2,000": {"vs": {}},
    "BM25, 10,000": {"vs": {}},
    "BM25 (title + abstract)": {"vs": {}},
    "the teacher alone, 2,000": {"vs": {"BM25, 2,000": ratio(1.2, 1.0, 1.4)}},
    "the teacher alone, 10,000": {"vs": {"BM25, 10,000": ratio(1.1, 0.9, 1.3), "BM25, 2,000": ratio(9, 9, 9)}},
    "the teacher alone": {"vs": {"BM25 (title + abstract)": ratio(0.9, 0.8, 1.0)}},
    "graphtx built on its sample, 2,000": {"vs": {"BM25, 2,000": ratio(0.8, 0.7, 0.9)}},
    "graphtx built on its sample": {"vs": {"BM25 (title + abstract)": ratio(0.7, 0.5, 0.8)}},
}


def test_each_size_is_read_against_bm25_of_the_same_index():
    assert index_size_plot.sizes_of(SYSTEMS) == [2000, 10000]
    series = index_size_plot.points({"systems": SYSTEMS}, "nDCG@150", whole=42356)
    teacher, graphtx, fused = series.values()
    assert teacher == [
        (2000, 1.2, 1.0, 1.4),
        (10000, 1.1, 0.9, 1.3),
        (42356, 0.9, 0.8, 1.0),
    ]  # not vs BM25, 2,000 at 10k
    assert graphtx == [(2000, 0.8, 0.7, 0.9), (42356, 0.7, 0.5, 0.8)]  # a size its run lacks is left out
    assert fused == []
    assert index_size_plot.points({"systems": SYSTEMS}, "Recall@3", whole=42356)[next(iter(series))][0][1] == 0.6


@pytest.mark.timeout(120)
def test_main_prints_the_table_and_draws_a_png(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"name": "toy", "seeds": [0], "systems": SYSTEMS}))
    out = tmp_path / "img" / "curve.png"
    assert index_size_plot.main([str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        "| the teacher alone (mpnet, reads every document) | 1.20x [1.00, 1.40] | 1.10x [0.90, 1.30] | 0.90x" in printed
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path.write_text(json.dumps({"systems": {"BM25": {"vs": {}}}}))
    with pytest.raises(SystemExit, match="no system named by index size"):
        index_size_plot.main([str(path)])
