"""BM25 over index texts and reciprocal rank fusion."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.config import IndexConfig
from graphtx.index.hybrid import BM25Index, rrf

TEXTS = [
    "A snowthrower with an auger housing and a discharge chute.",
    "A battery pack with lithium cells and a cooling plate.",
    "A valve with a seat, a stem and an actuator.",
    "Snow removal machine: auger, impeller and chutes.",
]


def test_rrf_sums_weighted_reciprocal_ranks_and_breaks_ties_by_id():
    fused = rrf({"dense": ["a", "b", "c"], "bm25": ["c", "a"]}, {"dense": 1.0, "bm25": 1.0}, rrf_k=60)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62) and scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [d for d, _ in fused] == ["a", "c", "b"]
    assert [d for d, _ in rrf({"x": ["b"], "y": ["a"]}, {}, 60)] == ["a", "b"]  # tie: by id
    assert [d for d, _ in rrf({"dense": ["a"], "bm25": ["b"]}, {"dense": 0.0, "bm25": 1.0}, 60)] == ["b"]


def test_bm25_ranks_by_terms_with_stemming_and_saves(tmp_path):
    bm25 = BM25Index.build(TEXTS, IndexConfig(), digest="d1")
    order, scores = bm25.top("chute for a snow thrower auger", k=3)
    assert set(order[:2].tolist()) == {0, 3} and (np.diff(scores) <= 0).all()  # "chutes" stems to "chute"
    assert len(bm25.top("no such words zzz", k=3)[0]) == 0
    assert 0 not in bm25.top("auger chute", k=3, exclude=np.array([0]))[0]
    bm25.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.digest == "d1" and BM25Index.saved_digest(tmp_path / "bm25") == "d1"
    np.testing.assert_allclose(loaded.scores("lithium cooling"), bm25.scores("lithium cooling"))
    assert BM25Index.load(tmp_path / "none") is None
