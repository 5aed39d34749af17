"""hybrid: reciprocal rank fusion of the dense and the BM25 rankings (Cormack, Clarke & Buettcher 2009)::

    score(d) = w_dense / (rrf_k + dense rank) + w_bm25 / (rrf_k + BM25 rank)

over the top ``search.candidates`` of each (a document outside one list gets nothing from it, one in no list with a
weight is not ranked); no fit needed.
"""

from __future__ import annotations

import numpy as np

from graphtx.metrics import rrf_score
from graphtx.rank.explain import explain_rrf
from graphtx.rank.pool import PoolRanker


class HybridRanker(PoolRanker):
    name = "hybrid"
    summary = "reciprocal rank fusion of dense and BM25 (no fit)"
    signals = ("dense", "bm25")

    def depth(self, k, settings, fitted):
        return max(settings.candidates, k)

    def score(self, pool, settings, fitted):
        fused = np.zeros(len(pool))  # (n,)
        for ranks, weight in ((pool.dense_rank, settings.dense_weight), (pool.bm25_rank, settings.bm25_weight)):
            if weight:
                fused += np.where(ranks > 0, rrf_score(np.maximum(ranks, 1), settings.rrf_k, weight), 0.0)
        return np.where(fused > 0, fused, -np.inf)  # in no weighted list: not ranked

    def explain(self, pool, settings, fitted, rows):
        def rank(r):
            return int(r) if r > 0 else None

        return [
            explain_rrf(
                rank(pool.dense_rank[i]),
                rank(pool.bm25_rank[i]),
                settings.dense_weight,
                settings.bm25_weight,
                settings.rrf_k,
            )
            for i in rows
        ]
