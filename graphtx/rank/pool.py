"""What a ranker is handed: one query's candidate pool, and the interface every ranker implements.

The index (``graphtx.index.rankers``) and the evaluation (``graphtx.eval.pool_system``) build the pool the same way:
the top ``depth`` of each first-stage signal a ranker names (``signals``: the dense model's cosines, BM25), their
union, each candidate's scores and its 1-based rank in each signal's list (0 outside it). A ranker turns the pool into
one score a candidate, higher = better; the caller orders by (score desc, document id) and keeps what it asked for.

A new ranker is one module: a ``PoolRanker`` subclass, registered with :func:`graphtx.rank.registry.register`
(or listed in ``BUILT_IN`` there). ``search --ranker``, the service's schema and ``eval citations --rankers`` offer
every registered ranker.

Example::

    class Bm25Squared(PoolRanker):
        name, summary, signals = "bm25-squared", "BM25 squared (a toy)", ("bm25",)

        def score(self, pool, settings, fitted):
            return pool.bm25**2

    register(Bm25Squared())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SIGNALS = ("dense", "bm25")  # the first-stage lists a pool can be made of


@dataclass
class Pool:
    """One query's candidates: the union of the top ``depth`` of each signal the ranker asked for."""

    doc_ids: list[str]  # (n,) candidate ids
    positions: np.ndarray  # (n,) int64 rows of the candidates in the caller's collection, ascending
    dense: np.ndarray  # (n,) float64 cosines with the query; nan where the dense list did not reach
    bm25: np.ndarray  # (n,) float64 BM25 scores (0: no query term in the document); 0 when BM25 was not asked for
    dense_rank: np.ndarray  # (n,) int64 1-based rank in the dense top ``depth``, 0 outside it
    bm25_rank: np.ndarray  # (n,) int64 1-based rank in the BM25 top ``depth`` (positive scores), 0 outside it
    features: Callable[[], tuple[Any, Any]] | None = (
        None  # -> (PoolInputs, LexicalStats) of the fitted rankers, on demand
    )
    _features: tuple | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def has_fitted_inputs(self) -> bool:
        """Whether a ranker asked for (and so computed) the fitted rankers' inputs, exact cosines included."""
        return self._features is not None

    def fitted_inputs(self) -> tuple[Any, Any]:
        """(PoolInputs, LexicalStats) for the fitted rankers' features (graphtx.rank.features), computed once."""
        if self._features is None:
            if self.features is None:
                raise ValueError("this pool carries no ranker features (the caller gave no features())")
            self._features = self.features()
        return self._features


def ranks_in(order: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(n,) 1-based rank of each of ``positions`` in ``order`` (best first), 0 when absent."""
    rank_of = {int(p): r for r, p in enumerate(order, 1)}
    return np.array([rank_of.get(int(p), 0) for p in positions], dtype=np.int64)


def make_pool(
    doc_id_of: Callable[[int], str],
    dense_order: np.ndarray | None,
    dense_scores: np.ndarray | None,
    bm25_order: np.ndarray | None,
    bm25_all: np.ndarray | None,
    features: Callable[[np.ndarray, np.ndarray], tuple[Any, Any]] | None = None,
) -> Pool:
    """The pool of one query from each signal's top list.

    ``dense_order`` (d,) positions best first with their cosines ``dense_scores`` (d,); ``bm25_order`` (b,)
    positions best first; ``bm25_all`` (count,) BM25 score of every position (None: BM25 not asked for);
    ``features(positions, bm25)`` -> (PoolInputs, LexicalStats) for the fitted rankers.
    """
    parts = [np.asarray(o, dtype=np.int64) for o in (dense_order, bm25_order) if o is not None]
    positions = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)  # (n,) ascending
    n = len(positions)
    dense = np.full(n, np.nan)
    dense_rank = np.zeros(n, np.int64)
    if dense_order is not None and len(dense_order):
        dense_rank = ranks_in(np.asarray(dense_order), positions)
        at = dense_rank > 0
        dense[at] = np.asarray(dense_scores, dtype=np.float64)[dense_rank[at] - 1]
    bm25 = np.asarray(bm25_all, dtype=np.float64)[positions] if bm25_all is not None else np.zeros(n)
    bm25_rank = ranks_in(np.asarray(bm25_order), positions) if bm25_order is not None else np.zeros(n, np.int64)
    pool = Pool([doc_id_of(int(p)) for p in positions], positions, dense, bm25, dense_rank, bm25_rank)
    if features is not None:
        pool.features = lambda: features(positions, bm25)
    return pool


class PoolRanker:
    """A ranker: orders one query's pool. Subclasses set the class attributes and ``score``; ``depth``,
    ``explain`` and ``fit`` are optional.

    ``settings``: the search settings (``rrf_k``, ``dense_weight``, ``bm25_weight``, ``candidates``: an
    ``IndexConfig``'s search section or the evaluation's equivalent); ``fitted``: the fitted ranker directory
    of ``graphtx rank-fit`` (``graphtx.rank.store.Ranker``) or None.
    """

    name: str = ""
    summary: str = ""  # one line for --help, the service's schema and the docs
    signals: tuple[str, ...] = SIGNALS  # the first-stage lists the pool is made of
    fitted_kind: str | None = None  # a kind the fitted ranker directory must hold; None: always offered

    def depth(self, k: int, settings, fitted) -> int:
        """How many of each signal's best the pool takes to return ``k`` hits."""
        return k

    def score(self, pool: Pool, settings, fitted) -> np.ndarray:
        """(n,) float scores of the pool's candidates, higher = better."""
        raise NotImplementedError

    def explain(self, pool: Pool, settings, fitted, rows: np.ndarray) -> list | None:
        """What each signal contributed to the score of the pool rows ``rows`` (RankerExplanation), or None."""
        return None

    def fit(self, groups: list, config) -> dict:
        """Optional: what this ranker learns from training citations, as JSON. ``graphtx rank-fit`` calls it with the
        training queries' pools (``graphtx.rank.convex.Group``: each pool's BM25 and dense scores, gains, features)
        and the ``rank:`` config, and saves the result in the ranker directory; ``score`` then finds it in
        ``fitted.plugins[self.name]``. A ranker that defines it is offered only where a directory holds its fit."""
        raise NotImplementedError

    @property
    def fits(self) -> bool:
        """Whether this ranker defines its own ``fit``."""
        return type(self).fit is not PoolRanker.fit

    def available(self, fitted) -> bool:
        """Whether an index or a model with this fitted ranker directory (None: none) can rank with it."""
        if self.fitted_kind is not None:
            return fitted is not None and self.fitted_kind in fitted.kinds
        if self.fits:
            return fitted is not None and self.name in getattr(fitted, "plugins", {})
        return True


def apply_cutoff(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``scores`` (q, c) with the candidates ``mask`` (q, c) rules out set to -inf (a copy; the same array when mask is None):
    a candidate the cut-off removes takes no place in any pool (graphtx.eval.cutoff decides the mask)."""
    if mask is None:
        return scores
    return np.where(mask, np.asarray(scores, dtype=np.float64), -np.inf)
