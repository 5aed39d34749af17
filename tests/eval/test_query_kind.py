"""One graph kind for a query document, said aloud: claim-kind query graphs built from a fallback text are counted, and
when most documents have no claims the evaluation queries with the candidate kind, as `graphtx search --id` does."""

from __future__ import annotations

import dataclasses

import pytest

from graphtx.corpus.store import TableWriter
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import ModelSystem
from graphtx.graphs.graph import GRAPH_SCHEMA
from graphtx.graphs.parse import GRAPHS_FILE, graphs_path, iter_graphs
from tests.index.fixtures import make_corpus, make_graphs, make_model


def with_sources(src, dst, abstract_share: float):
    """A copy of the graphs directory whose first-claim graphs of the first ``abstract_share`` of documents say text_source abstract."""
    dst.mkdir()
    graphs = list(iter_graphs(src))
    ids = sorted({g.doc_id for g in graphs})
    fallback = set(ids[: int(len(ids) * abstract_share)])
    writer = TableWriter(dst / GRAPHS_FILE, GRAPH_SCHEMA, rows_per_group=64)
    for g in graphs:
        source = (
            "abstract"
            if g.kind == "first_claim" and g.doc_id in fallback
            else ("first_claim" if g.kind == "first_claim" else g.text_source)
        )
        writer.add(dataclasses.replace(g, text_source=source).to_row())
    writer.close()
    return dst


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    root = tmp_path_factory.mktemp("query_kind")
    corpus = make_corpus(root, range(20))
    graphs = make_graphs(root, range(20), corpus=corpus)
    return {"corpus": corpus, "graphs": graphs, "model": make_model(root), "root": root}


@pytest.mark.parametrize(
    "share, fixed, kind", [(0.75, False, "description"), (0.75, True, "first_claim"), (0.25, False, "first_claim")]
)
def test_fallback_query_graphs_are_counted_and_most_switch_the_kind(kinds, share, fixed, kind, tmp_path):
    graphs = with_sources(kinds["graphs"], tmp_path / "graphs", share)
    assert graphs_path(graphs).exists()
    corpus = EvalCorpus.load(kinds["corpus"], EvalConfig(cutoff="none"))
    system = ModelSystem(kinds["model"], graphs, "first_claim", "description", query_kind_fixed=fixed).fit(corpus)
    info = system.info()
    assert system.query_kind == info["query_kind"] == kind
    n = int(20 * share)
    assert info["query_kind_note"].startswith(
        f"{n} of 20 first_claim query graphs come from a fallback text (abstract {n})"
    )
    assert ("queried with description graphs instead" in info["query_kind_note"]) == (kind == "description")
