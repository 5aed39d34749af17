"""dense: the graph model's cosine, the FAISS order (filtered)."""

from __future__ import annotations

from graphtx.rank.pool import PoolRanker


class DenseRanker(PoolRanker):
    name = "dense"
    summary = "the graph model's cosine (FAISS)"
    signals = ("dense",)

    def score(self, pool, settings, fitted):
        return pool.dense
