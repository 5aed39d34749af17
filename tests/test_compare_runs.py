"""benchmarks/compare_runs.py: seeds' per-query CSVs grouped by system, labels with commas included."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compare_runs():
    spec = importlib.util.spec_from_file_location("compare_runs", ROOT / "benchmarks" / "compare_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_comma_splits_files_only_where_a_csv_path_follows(compare_runs):
    assert compare_runs.split_specs("a.csv,b.csv:bm25,c.csv") == ["a.csv", "b.csv:bm25", "c.csv"]
    assert compare_runs.split_specs("a.csv:learned, no graph,b.csv:learned, no graph") == [
        "a.csv:learned, no graph",
        "b.csv:learned, no graph",
    ]
    assert compare_runs.split_specs("a.csv:x, y;b.csv:x, y;") == ["a.csv:x, y", "b.csv:x, y"]
    assert compare_runs.split_specs("run0.tsv,run1.tsv") == ["run0.tsv", "run1.tsv"]


def test_groups_average_seeds_query_by_query_and_pick_the_named_system(compare_runs, tmp_path):
    fields = ["system", "query", "relevant", "hits@3", "Recall@3", "nDCG@150"]
    paths = []
    for seed, (hits, ndcg) in enumerate([(1, 0.2), (2, 0.6)]):
        path = tmp_path / f"s{seed}.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerow(
                {
                    "system": "learned, no graph features (graphtx + BM25)",
                    "query": "Q1",
                    "relevant": 2,
                    "hits@3": hits,
                    "Recall@3": hits / 2,
                    "nDCG@150": ndcg,
                }
            )
            w.writerow(
                {
                    "system": "BM25 (k1 1.5, b 0.75)",
                    "query": "Q1",
                    "relevant": 2,
                    "hits@3": 0,
                    "Recall@3": 0,
                    "nDCG@150": 0.1,
                }
            )
        paths.append(path)
    rows, recalls, ndcgs, label = compare_runs.group_rows(
        compare_runs.split_specs(f"{paths[0]}:learned, no,{paths[1]}:learned, no")
    )
    assert label.startswith("learned, no graph") and recalls == [0.5, 1.0] and ndcgs == [0.2, 0.6]
    assert rows == [{"query": "Q1", "hits@3": 1.5, "relevant": 2.0, "Recall@3": 0.75, "nDCG@150": pytest.approx(0.4)}]
