"""BM25 over index texts (reciprocal rank fusion: tests/rank/test_registry.py)."""

from __future__ import annotations

import numpy as np

from graphtx.config import IndexConfig
from graphtx.index.hybrid import BM25Index

TEXTS = [
    "A snowthrower with an auger housing and a discharge chute.",
    "A battery pack with lithium cells and a cooling plate.",
    "A valve with a seat, a stem and an actuator.",
    "Snow removal machine: auger, impeller and chutes.",
]


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
