"""Late-interaction node vectors in the index: storage round trips, exact scores, re-ranking, explanations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtx.config import IndexConfig, SearchConfig
from graphtx.graphs.parse import iter_graphs
from graphtx.index.build import build_index
from graphtx.index.late import dequantize, late_scores, quantize
from graphtx.index.search import Index
from graphtx.model.io import load_model
from graphtx.model.late import late_score_brute_force
from graphtx.text.bpe import PatentTokenizer
from tests.index.fixtures import doc_id, make_graph, make_model


@pytest.fixture(scope="module")
def late_model(tiny):
    return make_model(tiny["root"], name="late-model", late_dim=12)


@pytest.fixture(scope="module", params=["int8", "fp16"])
def late_index(request, tiny, late_model, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"late-{request.param}") / "index"
    build_index(late_model, tiny["graphs"], out, IndexConfig(chunk_size=32, late_storage=request.param), progress=False)
    return request.param, Index.open(out, search=SearchConfig(k=5))


def _reference(late_model, tiny, query_graph, ids):
    """Brute force in float64 from freshly encoded (unquantised) node vectors."""
    model = load_model(late_model).model
    tok = PatentTokenizer.load(late_model)
    u, w, _ = model.encode_nodes([query_graph], tok)
    graphs = {g.doc_id: g for g in iter_graphs(tiny["graphs"], kind="description")}
    out = []
    for d in ids:
        v, _, _ = model.encode_nodes([graphs[d]], tok)
        out.append(late_score_brute_force(u.double(), w.double(), v.double()))
    return np.array(out)


@pytest.mark.parametrize("storage,tol", [("int8", 0.02), ("fp16", 2e-3)])
def test_quantised_vectors_keep_their_cosines(storage, tol):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 32)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    codes, scales = quantize(v, storage)
    assert codes.dtype == (np.int8 if storage == "int8" else np.float16)
    back = dequantize(codes, scales)
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)
    assert np.abs(back @ v.T - v @ v.T).max() < tol


def test_numpy_late_scores_equal_brute_force_with_empty_documents():
    rng = np.random.default_rng(1)
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    u, w = unit(rng.normal(size=(4, 6))), rng.dirichlet(np.ones(4))
    docs = [unit(rng.normal(size=(n, 6))) for n in (3, 0, 1, 7)]
    s = late_scores(u, w, docs)
    assert s[1] == 0.0
    for d, got in zip(docs, s):
        assert got == pytest.approx(late_score_brute_force(u, w, d), abs=1e-6)


def test_index_late_scores_equal_brute_force_within_storage_tolerance(late_index, late_model, tiny):
    storage, index = late_index
    q = index.query(graph=make_graph(7, "first_claim"))
    ids = [doc_id(i) for i in (7, 3, 50, 99, 119)]
    got = index.late_scores(q, ids)
    want = _reference(late_model, tiny, make_graph(7, "first_claim"), ids)
    np.testing.assert_allclose(got, want, atol=0.02 if storage == "int8" else 2e-3)
    summary = index.manifest["late"]
    assert summary["storage"] == storage and summary["dim"] == 12
    assert summary["bytes_per_node"] == (14 if storage == "int8" else 24) and summary["gb_per_million_docs"] > 0


@pytest.mark.parametrize("hybrid", [False, True])
def test_rerank_late_returns_k_hits_ordered_by_the_late_score(late_index, hybrid):
    _, index = late_index
    first = index.search(graph=make_graph(11, "first_claim"), k=20, hybrid=hybrid)
    result = index.search(graph=make_graph(11, "first_claim"), k=5, hybrid=hybrid, rerank="late", rerank_depth=20)
    assert len(result) == 5 and result.rerank == "late"
    scores = [h.score for h in result]
    assert scores == sorted(scores, reverse=True) and all(h.late_score == h.score for h in result)
    assert {h.doc_id for h in result} <= {h.doc_id for h in first}  # re-ranked from the first stage's top 20
    exact = index.late_scores(result.query, [h.doc_id for h in result])
    np.testing.assert_allclose(scores, exact, atol=1e-9)
    every = index.late_scores(result.query, [h.doc_id for h in first])
    assert scores[0] == pytest.approx(every.max())  # the best of the 20 comes first
    assert {"late", "total"} <= set(result.timings_ms)
    assert result.to_json()["hits"][0]["first_stage_rank"] >= 1


def test_late_explanation_sums_exactly_to_the_score(late_index):
    _, index = late_index
    result = index.search(graph=make_graph(3, "first_claim"), k=4, rerank="late", rerank_depth=30, explain=True)
    for hit in result:
        e = hit.explanation
        assert e.score == pytest.approx(hit.score, abs=1e-9)
        assert sum(t.contribution for t in e.terms) == pytest.approx(e.score, abs=1e-6)
        assert len(e.terms) == make_graph(3, "first_claim").num_nodes  # every query node, not a sample
        assert sum(t.weight for t in e.terms) == pytest.approx(1.0, abs=1e-5)
        for t in e.terms:
            assert t.contribution == pytest.approx(t.weight * t.similarity, abs=1e-9) and 0 <= t.hit_node
        assert any("= late score" in line for line in e.table())
        assert e.to_json()["kind"] == "late"
        features = [i for i, t in enumerate(e.query_graph.node_type) if t == "feature"]
        assert [el.query_node for el in e.elements] == features  # the claim chart: every query feature, numbered
        assert e.to_json()["not_found"] == [el.number for el in e.elements if not el.found]


def test_rerank_late_without_a_late_model_is_a_clear_error(tiny_index):
    index = Index.open(tiny_index)
    with pytest.raises(ValueError, match="late_dim"):
        index.search(graph=make_graph(1, "first_claim"), k=3, rerank="late")
    assert not index.has_late


@pytest.mark.timeout(120)
def test_cli_search_rerank_late_with_explain(late_index, capsys):
    from graphtx.cli import main

    _, index = late_index
    assert (
        main(
            [
                "search",
                "--index",
                str(index.store.dir),
                "--id",
                doc_id(5),
                "-k",
                "3",
                "--rerank",
                "late",
                "--rerank-depth",
                "15",
                "--explain",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["rerank"] == "late" and len(out["hits"]) == 3
    for h in out["hits"]:
        terms = h["explanation"]["terms"]
        assert sum(t["contribution"] for t in terms) == pytest.approx(h["score"], abs=1e-4)
