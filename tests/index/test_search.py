"""Search through the Python API: ranking, id queries, hybrid fusion, explanations, documents."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.config import IndexConfig, SearchConfig
from graphtx.graphs.parse import iter_graphs
from graphtx.index.build import build_index, remove_documents, write_bm25
from graphtx.index.hybrid import BM25Index
from graphtx.index.search import Index
from graphtx.index.store import IndexStore
from tests.index.fixtures import N_DOCS, doc_id, make_graph, make_graphs, rare_word


@pytest.fixture(scope="module")
def index(tiny_index):
    return Index.open(tiny_index)


def test_a_documents_own_graph_finds_it_first_with_cosine_one(index):
    for i in (0, 42, 119):
        result = index.search(graph=make_graph(i), k=5, ranker="dense")
        assert result[0].doc_id == doc_id(i) and result[0].score == pytest.approx(1.0, abs=1e-5)
        assert [h.rank for h in result] == [1, 2, 3, 4, 5]
        assert all(a.score >= b.score for a, b in zip(result.hits, result.hits[1:]))


def test_ranking_equals_brute_force_over_the_stored_vectors(index, tiny_index):
    store = IndexStore(tiny_index)
    live = store.live()
    vectors = np.array(
        [r["vector"] for r in store.read_rows(list(zip(live.part.tolist(), live.row.tolist())), ["vector"])], np.float32
    )
    q = index.embed([make_graph(3, seed=9)])[0]
    scores = vectors @ q
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], live.doc_id[i]))[:20]
    result = index.search(graph=make_graph(3, seed=9), k=20, ranker="dense")
    assert [h.doc_id for h in result] == [live.doc_id[i] for i in order]
    np.testing.assert_allclose([h.score for h in result], scores[order], atol=1e-5)


def test_an_id_query_leaves_the_document_out_and_k_is_capped(index):
    result = index.search(doc_id=doc_id(10), k=N_DOCS + 50)
    ids = [h.doc_id for h in result]
    assert doc_id(10) not in ids and len(ids) == N_DOCS - 1 and result.query.source == "id"
    with pytest.raises(KeyError, match="not in the index"):
        index.search(doc_id="NOPE")
    with pytest.raises(ValueError, match="exactly one of text, doc_id or graph"):
        index.search("some text", doc_id=doc_id(1))
    with pytest.raises(ValueError, match="k must be at least 1"):
        index.search(graph=make_graph(1), k=0)


def test_without_a_fitted_ranker_auto_searches_hybrid(index):
    result = index.search(graph=make_graph(8), k=3)
    assert index.resolve_ranker() == "hybrid" and result.ranker == "hybrid"
    assert (
        result[0].doc_id == doc_id(8) and result[0].dense_rank == 1
    )  # its own graph: first in the dense list, first fused


def test_hits_carry_metadata(index):
    hit = index.search(graph=make_graph(8), k=1, ranker="dense")[0]
    assert hit.title.startswith(f"Title {rare_word(8)}") and hit.ipc == ("H01M 1/00",) and hit.date == "2018-01-09"
    js = hit.to_json()
    assert js["doc_id"] == doc_id(8) and "dense_score" not in js  # dense-only hits carry no fusion fields


def test_hybrid_fuses_bm25_and_dense(index):
    # the graph of doc 5 as the query: its node texts (the BM25 text of a graph query) hold doc 5's rare word
    graph = make_graph(5)
    result = index.search(graph=graph, k=10, hybrid=True)
    assert result.hybrid and result[0].doc_id == doc_id(5)
    assert result[0].dense_rank == 1 and result[0].bm25_rank == 1  # its node texts hold its rare word
    h = result[0].to_json()
    assert {"dense_score", "dense_rank", "bm25_score", "bm25_rank"} <= set(h)
    # every hybrid hit has a dense and a BM25 score even when outside a ranker's candidates
    assert all(x.dense_score is not None and x.bm25_score is not None for x in result)


def test_hybrid_without_bm25_state_builds_it_in_memory_and_writes_nothing(tiny, tmp_path, caplog):
    out = tmp_path / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(bm25=False), progress=False)
    assert not (out / "bm25").exists()
    before = sorted(p.name for p in out.iterdir())
    index = Index.open(out, search=SearchConfig(candidates=20))
    with caplog.at_level("WARNING", logger="graphtx.index.search"):
        result = index.search(doc_id=doc_id(4), k=5, hybrid=True)
    assert doc_id(4) not in [h.doc_id for h in result] and result[0].bm25_score is not None
    assert sorted(p.name for p in out.iterdir()) == before  # a reader never writes into the index
    assert "has no BM25 state" in caplog.text and f"graphtx index --out {out} --bm25" in caplog.text

    # the index command persists it; the next reader loads it without a warning
    write_bm25(out, progress=False)
    assert IndexStore(out).manifest()["bm25"]["digest"] == IndexStore(out).manifest()["live_digest"]
    caplog.clear()
    again = Index.open(out, search=SearchConfig(candidates=20))
    with caplog.at_level("WARNING", logger="graphtx.index.search"):
        assert [h.doc_id for h in again.search(doc_id=doc_id(4), k=5, hybrid=True)] == [h.doc_id for h in result]
    assert "BM25" not in caplog.text


def test_incremental_add_and_removal_keep_saved_bm25_current(tiny, tmp_path, caplog):
    out = tmp_path / "index"
    build_index(
        tiny["model"], make_graphs(tmp_path, range(0, 40), "a"), out, IndexConfig(chunk_size=16), progress=False
    )
    # later runs with bm25 off (or a removal with the index's own config) still refresh the saved state
    build_index(
        tiny["model"],
        make_graphs(tmp_path, range(40, 60), "b"),
        out,
        IndexConfig(chunk_size=16, bm25=False),
        progress=False,
    )
    remove_documents(out, [doc_id(3)], progress=False)
    manifest = IndexStore(out).manifest()
    assert BM25Index.saved_digest(out / "bm25") == manifest["live_digest"] and manifest["count"] == 59
    with caplog.at_level("WARNING", logger="graphtx.index.search"):
        hits = Index.open(out).search(text=None, graph=make_graph(50), k=3, hybrid=True)
    assert hits[0].doc_id == doc_id(50) and hits[0].bm25_rank == 1 and "BM25" not in caplog.text


def test_explain_lists_node_matches_whose_contributions_sum_to_the_total(index):
    result = index.search(graph=make_graph(20), k=3, explain=True)
    top = result[0].explanation
    assert top.doc_id == doc_id(20) and len(top.matches) <= index.config.explain_rows
    # the same graph: every query node's best match is a node with the same text
    assert all(m.query_text == m.hit_text and m.similarity == pytest.approx(1.0, abs=1e-4) for m in top.matches)
    assert all(h.explanation is not None for h in result)
    again = index.explain([doc_id(20), doc_id(3)], graph=make_graph(20))
    assert [e.doc_id for e in again] == [doc_id(20), doc_id(3)]
    assert again[0].total == pytest.approx(top.total, abs=1e-5)


def test_opened_without_mmap_gives_the_same_hits(tiny_index, index):
    plain = Index.open(tiny_index, mmap=False)
    g = make_graph(50, seed=3)
    assert [h.doc_id for h in plain.search(graph=g, k=8)] == [h.doc_id for h in index.search(graph=g, k=8)]


@pytest.mark.parametrize("index_type,refine", [("hnsw", ""), ("ivfpq", ""), ("ivfpq", "Flat")])
def test_approximate_index_types_search_and_remove(tiny, tmp_path, index_type, refine):
    from graphtx.index.build import remove_documents

    cfg = IndexConfig(index_type=index_type, pq_nbits=4, hnsw_m=8, ivf_refine=refine, chunk_size=40, bm25=False)
    out = tmp_path / index_type
    build_index(tiny["model"], tiny["graphs"], out, cfg, progress=False)
    index = Index.open(out)
    assert index.spec.index_type == index_type and len(index) == N_DOCS
    assert index.search(graph=make_graph(9), k=3)[0].doc_id == doc_id(9)
    assert sorted(h.doc_id for h in index.search(graph=make_graph(9), k=N_DOCS)) == sorted(
        doc_id(i) for i in range(N_DOCS)
    )
    assert remove_documents(out, [doc_id(9)]).count == N_DOCS - 1  # in place (IVF-PQ) or by rebuilding the shard
    assert doc_id(9) not in [h.doc_id for h in Index.open(out).search(graph=make_graph(9), k=N_DOCS)]


def test_the_graphs_of_the_index_are_the_documents(index, tiny):
    g = next(iter(iter_graphs(tiny["graphs"], kind="description")))
    assert index.document(g.doc_id).graph == g
    assert index.document(g.doc_id).to_json()["graph"]["node_text"] == list(g.node_text)
