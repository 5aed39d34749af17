"""convex, learned and learned-lexical: the rankers ``graphtx rank-fit`` fits on training citations (``MODEL/ranker``).

convex           score = a * norm(BM25) + (1 - a) * norm(cosine), a fitted (graphtx.rank.convex)
learned          LightGBM lambdarank over the pool's features (graphtx.rank.features, graphtx.rank.learned)
learned-lexical  the same fit without the graph model's features (BM25, lexical and date features): what
                 ``search.ranker: auto`` ranks with on an index of another field (graphtx.text.field)

All three order the union of the top ``depth`` (the fitted directory's) of the dense model and of BM25, and are offered
only where a fitted directory holds them.
"""

from __future__ import annotations

import dataclasses

from graphtx.rank.explain import explain_pool
from graphtx.rank.pool import PoolRanker


class FittedRanker(PoolRanker):
    signals = ("dense", "bm25")

    def depth(self, k, settings, fitted):
        return max(fitted.depth, k)

    def score(self, pool, settings, fitted):
        inputs, stats = pool.fitted_inputs()
        return fitted.score(self.fitted_kind, inputs, stats)

    def explain(self, pool, settings, fitted, rows):
        inputs, stats = pool.fitted_inputs()
        why = explain_pool(fitted, self.fitted_kind, inputs, stats, rows)
        if why is None or self.name == self.fitted_kind:
            return why
        return [dataclasses.replace(e, ranker=self.name) for e in why]  # learned-lexical, not the directory's "lexical"


class ConvexRanker(FittedRanker):
    name = fitted_kind = "convex"
    summary = "a fitted convex mix of normalised BM25 and cosine (rank-fit)"


class LearnedRanker(FittedRanker):
    name = fitted_kind = "learned"
    summary = "LightGBM over the pool's features (rank-fit)"


class LearnedLexicalRanker(FittedRanker):
    name = "learned-lexical"
    fitted_kind = "lexical"
    summary = "the learned ranker without the graph features (rank-fit): auto's choice on an index of another field"
