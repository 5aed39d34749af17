"""Late-interaction re-ranking in `graphtx eval citations`: the system re-ranks exactly the first stage's top N."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtx.config import IndexConfig
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus
from graphtx.eval.late import LateRerankSystem, LateScorer
from graphtx.eval.systems import ModelSystem
from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

N = 40


@pytest.fixture(scope="module")
def tiny_late(tmp_path_factory):
    root = tmp_path_factory.mktemp("late-eval")
    corpus = make_corpus(root, range(N))
    graphs = make_graphs(root, range(N), corpus=corpus)
    model = make_model(root, name="model", late_dim=12)
    cites = root / "cites.tsv"
    cites.write_text(
        "citing_id\tcited_id\n" + "".join(f"{doc_id(i)}\t{doc_id((i * 7 + 3) % N)}\n" for i in range(0, N, 3))
    )
    return {"root": root, "corpus": corpus, "graphs": graphs, "model": model, "cites": cites}


def test_rerank_orders_the_first_stage_top_n_by_late_score_and_keeps_the_rest(tiny_late):
    corpus = EvalCorpus.load(tiny_late["corpus"], EvalConfig(cutoff="none"))  # every candidate: the re-ranking alone
    dense = ModelSystem(tiny_late["model"], tiny_late["graphs"]).fit(corpus)
    scorer = LateScorer(tiny_late["model"], tiny_late["graphs"], storage="float32")
    late = LateRerankSystem(dense, scorer, depth=10).fit(corpus)
    rows = np.array([0, 5, 17])
    first, got = dense.scores(rows), late.scores(rows)
    for k, row in enumerate(rows):
        first[k, row] = -np.inf
        order_first = sorted(range(N), key=lambda j: (-first[k, j], j))
        order_late = sorted(range(N), key=lambda j: (-got[k, j], j))
        top = order_first[:10]
        assert set(order_late[:10]) == set(top) and order_late[10:] == order_first[10:]
        assert got[k, row] == -np.inf  # the query stays out
        s = scorer.scores(corpus.ids[row], [corpus.ids[j] for j in order_late[:10]])
        assert list(s) == sorted(s, reverse=True)
    assert late.info()["late"]["storage"] == "float32" and late.info()["rerank_ms_per_query"] >= 0


@pytest.mark.timeout(120)
def test_eval_scorer_equals_the_index_late_scores(tiny_late, tmp_path):
    from graphtx.index.build import build_index
    from graphtx.index.search import Index

    build_index(
        tiny_late["model"], tiny_late["graphs"], tmp_path / "index", IndexConfig(late_storage="int8"), progress=False
    )
    index = Index.open(tmp_path / "index")
    corpus = EvalCorpus.load(tiny_late["corpus"])
    scorer = LateScorer(tiny_late["model"], tiny_late["graphs"], query_kind="description", storage="int8").fit(corpus)
    ids = [doc_id(i) for i in range(N)]
    want = index.late_scores(index.query(doc_id=doc_id(4)), ids)  # an id query is the document's description graph
    np.testing.assert_allclose(scorer.scores(doc_id(4), ids), want, atol=1e-6)


@pytest.mark.timeout(180)
def test_cli_late_rows_with_bootstrap_intervals(tiny_late, capsys):
    from graphtx.cli import main

    t = tiny_late
    args = [
        "eval",
        "citations",
        str(t["corpus"]),
        "--citations",
        str(t["cites"]),
        "--model",
        str(t["model"]),
        "--graphs",
        str(t["graphs"]),
        "--baselines",
        "bm25",
        "--protocols",
        "retrieval",
        "--hybrid",
        "--late",
        "--rerank-depth",
        "8",
        "--quiet",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    names = [r["system"] for r in out["retrieval"]]
    assert len(names) == 5 and sum("late re-rank (top 8)" in n for n in names) == 2
    late = next(r for r in out["retrieval"] if "late" in r["system"])
    assert late["bootstrap_to_bm25"] and "ratio_to_bm25" in late
    without_model = [a for a in args if a not in (str(t["model"]), "--model", "--hybrid")]
    assert main(without_model) == 2
    assert "--late re-ranks by the model's node vectors" in capsys.readouterr().err
