"""A registered ranker (graphtx.rank.registry) as a row of ``graphtx eval citations --rankers``.

Each query's pool is built as the index builds it (graphtx.rank.pool.make_pool): the top ``depth`` of each signal
the ranker names (the graph model's cosines, BM25 scores > 0), the query itself and what the evaluation's cut-off
rules out left out; the ranker scores the pool, and the candidates outside it follow, by the ranker's first signal,
then by id. ``depth`` is the ranker's own for ``eval.rrf_depth`` hits (hybrid: ``eval.rrf_depth`` of each list, as
the evaluation's RRF fusion takes). The fitted rankers (convex, learned) are evaluated by
:class:`graphtx.eval.ranker.RankerSystem`, which reads their directory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphtx.eval.baselines import BM25System
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import System
from graphtx.rank.features import top_rows
from graphtx.rank.pool import PoolRanker, make_pool


@dataclass(frozen=True)
class PoolSettings:
    """The search settings a ranker reads (as the index's search section has them)."""

    rrf_k: int = 60
    dense_weight: float = 1.0
    bm25_weight: float = 1.0
    candidates: int = 100


def _scaled(x: np.ndarray) -> np.ndarray:
    """Finite values min-max scaled to [0, 1]; -inf stays (a candidate the cut-off rules out)."""
    finite = np.isfinite(x)
    if not finite.any():
        return np.where(finite, 0.0, -np.inf)
    lo, hi = x[finite].min(), x[finite].max()
    return np.where(finite, (x - lo) / (hi - lo) if hi > lo else 0.0, -np.inf)


class PoolRankerSystem(System):
    def __init__(
        self,
        ranker: PoolRanker,
        bm25: BM25System,
        dense: System | None,
        settings: PoolSettings,
        depth: int,
        leave_out_self: bool = True,
        fitted_dir=None,
    ):
        """``fitted_dir``: the ranker directory of ``graphtx rank-fit`` that holds this ranker's own fit (a ranker with a
        ``fit``), loaded once the graph model's fingerprint is known."""
        super().__init__()
        if ranker.fits and fitted_dir is None:
            raise ValueError(f"ranker {ranker.name} is fitted by `graphtx rank-fit`: give its --ranker-dir")
        self.fitted_dir, self.fitted = fitted_dir, None
        if "dense" in ranker.signals and dense is None:
            raise ValueError(
                f"ranker {ranker.name} reads the graph model's cosines: give --model (or --index) and --graphs"
            )
        self.ranker, self.bm25, self.dense, self.settings = ranker, bm25, dense, settings
        self.hits, self.leave_out_self = depth, leave_out_self
        self.name = ranker.name
        self.label = f"{ranker.name} (ranker)"

    def fit(self, corpus: EvalCorpus) -> PoolRankerSystem:
        from graphtx.rank.fit import PoolSource

        super().fit(corpus)
        self.source = PoolSource(corpus, self.bm25, self.dense if "dense" in self.ranker.signals else None)
        if self.fitted_dir is not None:
            from graphtx.rank.store import load_ranker

            self.fitted = load_ranker(self.fitted_dir, getattr(self.dense, "fingerprint", ""))
            if not self.ranker.available(self.fitted):
                raise ValueError(
                    f"ranker directory {self.fitted_dir} holds no fit of {self.ranker.name}: fit it with `graphtx rank-fit`"
                )
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:
        bm25, dense = self.source.scores(rows)  # (q, c) each; cut-off candidates -inf
        depth = self.ranker.depth(self.hits, self.settings, self.fitted)
        out = np.empty((len(rows), len(self.corpus)), dtype=np.float64)  # (q, c)
        for i, row in enumerate(rows):
            row = int(row)
            leave = row if self.leave_out_self else None
            dense_order = top_rows(dense[i], depth, leave) if "dense" in self.ranker.signals else None
            bm25_order = (
                top_rows(np.where(bm25[i] > 0, bm25[i], -np.inf), depth, leave)
                if "bm25" in self.ranker.signals
                else None
            )

            def features(positions, bm25_pool, i=i, row=row):
                inputs = self.source.pool_inputs(
                    row, bm25[i], None if dense is None else dense[i], depth, self.leave_out_self
                )
                return inputs, self.source.stats

            pool = make_pool(
                lambda r: self.corpus.ids[r],
                dense_order,
                None if dense_order is None else dense[i][dense_order],
                bm25_order,
                bm25[i] if bm25_order is not None else None,
                features,
            )
            s = np.asarray(self.ranker.score(pool, self.settings, self.fitted), dtype=np.float64)  # (n,)
            ranked = np.isfinite(s)
            base = (s[ranked].min() if ranked.any() else 0.0) - 2.0
            first = dense[i] if "dense" in self.ranker.signals else bm25[i]
            out[i] = base + _scaled(np.asarray(first, dtype=np.float64))  # after the pool, in [base, base + 1]
            out[i, pool.positions[ranked]] = s[ranked]
            if self.leave_out_self:
                out[i, row] = -np.inf
        return out

    def info(self) -> dict:
        return {
            "ranker": self.ranker.name,
            "signals": list(self.ranker.signals),
            "depth": self.ranker.depth(self.hits, self.settings, self.fitted),
        }
