"""bm25: Okapi BM25 over the indexed documents' text (the lucene variant, stemmed, without stop words)."""

from __future__ import annotations

from graphtx.rank.pool import PoolRanker


class Bm25Ranker(PoolRanker):
    name = "bm25"
    summary = "BM25 over the documents' text"
    signals = ("bm25",)

    def score(self, pool, settings, fitted):
        return pool.bm25
