"""Convex combination of normalised BM25 and dense scores over a query's candidate pool.

    score(d) = a * norm(BM25(d)) + (1 - a) * norm(cos(d))

with the normalisation fitted per query over its pool (Bruch, Gai & Ingber, "An Analysis of Fusion
Functions for Hybrid Retrieval", TOIS 2023: a tuned convex combination beats RRF, and is robust
to the normalisation; their preferred one is the theoretical min-max, TMM):

=========  ==========================================================================
``tmm``    (s - lower bound) / (pool max - lower bound); lower bound 0 for BM25, -1 for cosine
``minmax`` (s - pool min) / (pool max - pool min)
``zscore`` (s - pool mean) / pool standard deviation
=========  ==========================================================================

``a`` is chosen on a grid (0, 0.01, ..., 1) by the mean of the objective over the TRAINING queries'
pools (nDCG@k, ideal from every relevant document of the query, pooled or not); among equal
values the grid point closest to 0.5 wins, so a flat objective does not pick an extreme.

Example::

    a, table = fit_weight(groups, "tmm", ndcg_k=150)
    scores = convex_scores(bm25, dense, a, "tmm")      # (n,) for one pool
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NORMS = ("tmm", "minmax", "zscore")
LOWER_BOUND = {"bm25": 0.0, "dense": -1.0}  # TMM: the least score each can give


def normalise(x: np.ndarray, method: str, lower: float = 0.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return x
    if method == "tmm":
        hi = x.max()
        return (x - lower) / (hi - lower) if hi > lower else np.zeros_like(x)
    if method == "minmax":
        lo, hi = x.min(), x.max()
        return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
    if method == "zscore":
        sd = x.std()
        return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)
    raise ValueError(f"unknown normalisation {method!r}; known: {', '.join(NORMS)}")


def convex_scores(bm25: np.ndarray, dense: np.ndarray, weight: float, norm: str) -> np.ndarray:
    """(n,) a * norm(bm25) + (1 - a) * norm(dense) over one pool."""
    return weight * normalise(bm25, norm, LOWER_BOUND["bm25"]) + (1.0 - weight) * normalise(
        dense, norm, LOWER_BOUND["dense"]
    )


# --- pool metrics ------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One training query's pool: what a fit needs."""

    query: str
    bm25: np.ndarray  # (n,)
    dense: np.ndarray | None  # (n,)
    gains: np.ndarray  # (n,) gain of each pooled candidate (0 = not cited)
    ideal: np.ndarray  # gains of every relevant document of the query, pooled or not, best first
    features: np.ndarray | None = None  # (n, F) pool_features, for the learned ranker


def order_of(scores: np.ndarray) -> np.ndarray:
    """Pool positions best first, ties by position (= row order, as the evaluation breaks ties by id)."""
    return np.lexsort((np.arange(len(scores)), -np.asarray(scores, dtype=np.float64)))


def ndcg(scores: np.ndarray, gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    top = gains[order_of(scores)[:k]]
    best = float((ideal[:k] * discount[: len(ideal[:k])]).sum())
    return float((top * discount[: len(top)]).sum()) / best if best > 0 else 0.0


def hits(scores: np.ndarray, gains: np.ndarray, k: int) -> int:
    return int((gains[order_of(scores)[:k]] > 0).sum())


def fit_weight(groups: Sequence[Group], norm: str, ndcg_k: int = 150, grid: int = 101) -> tuple[float, list[dict]]:
    """(best a, [{weight, ndcg}] over the grid) by mean nDCG@k over ``groups``."""
    if not groups:
        raise ValueError("no training queries to fit the convex weight on")
    normed = [
        (normalise(g.bm25, norm, LOWER_BOUND["bm25"]), normalise(g.dense, norm, LOWER_BOUND["dense"]), g)
        for g in groups
    ]
    table = []
    for a in np.linspace(0.0, 1.0, grid):
        value = float(np.mean([ndcg(a * b + (1 - a) * d, g.gains, g.ideal, ndcg_k) for b, d, g in normed]))
        table.append({"weight": round(float(a), 4), "ndcg": value})
    best = max(v["ndcg"] for v in table)
    winners = [v["weight"] for v in table if v["ndcg"] >= best - 1e-12]
    return min(winners, key=lambda a: (abs(a - 0.5), a)), table
