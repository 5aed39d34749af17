"""Tiny ranker fixtures: the index tests' corpus, graphs and model (no spaCy) with planted citations.

Query i (i < 60) cites the three documents after it that share its IPC class (i % 7): a ranker that
reads the class overlap beats BM25 and the untrained model, which only see random feature words.
"""

from __future__ import annotations

import pytest

from tests.index.fixtures import N_DOCS, doc_id


def planted_citations(queries: range) -> list[tuple[str, str]]:
    out = []
    for i in queries:
        cited = [j for j in range(N_DOCS) if j != i and j % 7 == i % 7 and j > i][:3]
        out += [(doc_id(i), doc_id(j)) for j in cited]
    return out


def write_citations(path, pairs) -> str:
    path.write_text("citing_id\tcited_id\tcategory\n" + "".join(f"{a}\t{b}\tX\n" for a, b in pairs))
    return str(path)


@pytest.fixture(scope="session")
def ranked(tiny, tmp_path_factory):
    """corpus, graphs, model (the shared ``tiny`` set), train/valid citation files."""
    root = tmp_path_factory.mktemp("rank")
    return {
        **tiny,
        "root": root,
        "train": write_citations(root / "train.tsv", planted_citations(range(0, 60))),
        "valid": write_citations(root / "valid.tsv", planted_citations(range(60, 80))),
    }


@pytest.fixture(scope="session")
def fitted(ranked, tmp_path_factory):
    """An index over the tiny set, and a ranker fitted into INDEX/ranker with the CLI."""
    from graphtx.cli import main
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index

    root = tmp_path_factory.mktemp("ranked_index")
    index = root / "index"
    build_index(ranked["model"], ranked["graphs"], index, IndexConfig(), progress=False)
    cfg = root / "rank.yaml"
    cfg.write_text("rank:\n  depth: 30\n  folds: 3\n  min_data_in_leaf: 5\n  num_leaves_grid: [3]\n  max_rounds: 30\n")
    rc = main(
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
            str(index / "ranker"),
            "--config",
            str(cfg),
            "--quiet",
        ]
    )
    assert rc == 0
    return index
