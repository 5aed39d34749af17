"""The pinned numbers of benchmarks/expected_metrics.yaml, recomputed on ../shared/data (slow)."""

from __future__ import annotations

import json

import pytest
import yaml

from graphtx.cli import main
from tests.conftest import REPO

EXPECTED = yaml.safe_load((REPO / "benchmarks" / "expected_metrics.yaml").read_text())


def _check(results: list, expected: dict, tolerance: float) -> None:
    by_name = {r["system"]: r for r in results}
    label = {"bm25": "BM25 (k1 1.5, b 0.75)", "tfidf": "TF-IDF cosine"}
    for name, metrics in expected.items():
        if not isinstance(metrics, dict):
            continue
        got = by_name[label[name]]["metrics"]
        for metric, value in metrics.items():
            assert got[metric] == pytest.approx(value, abs=tolerance), (name, metric)


@pytest.mark.slow
def test_ev_battery_validation(shared_data, capsys):
    spec = EXPECTED["ev-battery-validation"]
    data = shared_data / "citations-ev-battery"
    args = [
        "eval",
        "citations",
        str(shared_data / spec["corpus"]),
        "--citations",
        str(shared_data / spec["citations"]),
        "--extra-citations",
        *(str(shared_data / p) for p in spec["extra_citations"]),
        "--baselines",
        "bm25,tfidf",
        "--cutoff",
        "none",
        "--quiet",
        "--json",
    ]
    if not data.is_dir():
        pytest.skip("../shared/data/citations-ev-battery not present")
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    bm25 = summary["retrieval"][0]
    assert (bm25["queries"], bm25["pairs"], bm25["candidates"]) == (spec["queries"], spec["pairs"], spec["candidates"])
    _check(summary["retrieval"], spec["retrieval"], spec["tolerance"])
    assert summary["paecter"][0]["samples"] == spec["paecter"]["samples"]
    _check(summary["paecter"], spec["paecter"], spec["tolerance"])
    for metric, value in spec["published"]["bm25"].items():  # the reference figures, as published (4 decimals)
        assert round(bm25["metrics"][metric], 4) == value


@pytest.mark.slow
def test_ev_battery_validation_on_the_ingested_corpus(shared_data, tmp_path, capsys):
    spec = EXPECTED["ev-battery-validation-ingested"]
    data = shared_data / "citations-ev-battery"
    if not data.is_dir():
        pytest.skip("../shared/data/citations-ev-battery not present")
    assert (
        main(
            [
                "ingest",
                str(data / "docs.jsonl"),
                str(data / "citations_validation.tsv"),
                "--out",
                str(tmp_path / "corpus"),
                "--quiet",
            ]
        )
        == 0
    )
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
                "--cutoff",
                "none",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    _check(json.loads(capsys.readouterr().out)["retrieval"], spec["retrieval"], spec["tolerance"])
    searcher = EXPECTED["ev-battery-validation-searcher"]
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
    out = json.loads(capsys.readouterr().out)
    assert (
        out["config"]["cutoff"] == "priority" and out["citations"]["pairs_unreachable"] == searcher["pairs_unreachable"]
    )
    _check(out["retrieval"], searcher["retrieval"], searcher["tolerance"])
