"""`graphtx rank-fit --peer`: the same ranker over a peer text embedder's cosines, the competitor without graphtx."""

from __future__ import annotations

import json

import pytest

import graphtx.eval.baselines as baselines
from graphtx.cli import main


class _FakePeer(baselines.TfidfSystem):
    """Stands in for all-MiniLM-L6-v2 (no weights in the default suite): TF-IDF cosines under the peer's name."""

    name = "minilm"

    def __init__(self):
        super().__init__()
        self.label = "fake peer"

    @property
    def fingerprint(self) -> str:
        return "minilm:fake"

    def coverage(self) -> dict:  # as every dense system says (DenseSystem): TF-IDF scores every document
        return {"queries_without_vector": 0, "candidates_without_vector": 0}


@pytest.fixture
def fake_peer(monkeypatch):
    real = baselines.make_baseline
    monkeypatch.setattr(
        baselines,
        "make_baseline",
        lambda name, cfg, tokens_dir=None, peer_vectors=None: (
            _FakePeer() if name == "minilm" else real(name, cfg, tokens_dir, peer_vectors)
        ),
    )


@pytest.mark.timeout(120)
def test_a_peer_ranker_is_fitted_and_evaluated_beside_graphtx(ranked, tmp_path, fake_peer, capsys):
    cfg = tmp_path / "rank.yaml"
    cfg.write_text(
        "rank:\n  depth: 30\n  folds: 3\n  min_data_in_leaf: 5\n  num_leaves_grid: [3]\n  max_rounds: 30\n  bag: 1\n"
    )
    out = tmp_path / "peer-ranker"
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--peer",
                "minilm",
                "--citations",
                ranked["train"],
                "--out",
                str(out),
                "--config",
                str(cfg),
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "dense features: fake peer cosines in place of a graph model's" in printed
    meta = json.loads((out / "ranker.json").read_text())
    assert meta["model_fingerprint"] == "minilm:fake" and meta["report"]["peer"] == "minilm"
    assert (
        main(
            [
                "eval",
                "citations",
                str(ranked["corpus"]),
                "--citations",
                ranked["valid"],
                "--baselines",
                "bm25",
                "--model",
                str(ranked["model"]),
                "--graphs",
                str(ranked["graphs"]),
                "--rankers",
                "none",
                "--ranker-peer",
                "minilm",
                str(out),
                "--protocols",
                "retrieval",
                "--config",
                str(cfg),
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["retrieval"]}
    assert {"graphtx", "bm25", "learned-minilm", "minilm"} <= set(rows)
    assert rows["learned-minilm"]["system"] == "learned (LightGBM) (fake peer + BM25)"


def test_peer_fit_arguments_are_checked(ranked, tmp_path, fake_peer, capsys):
    base = ["rank-fit", str(ranked["corpus"]), "--peer", "minilm", "--quiet"]
    assert (
        main([*base, "--model", str(ranked["model"]), "--citations", ranked["train"], "--out", str(tmp_path / "r")])
        == 2
    )
    assert "not --run or --model" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "r")]) == 2
    assert "give --citations and --out" in capsys.readouterr().err
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--model",
                str(ranked["model"]),
                "--citations",
                ranked["train"],
                "--quiet",
            ]
        )
        == 2
    )
    assert "--graphs is needed" in capsys.readouterr().err
