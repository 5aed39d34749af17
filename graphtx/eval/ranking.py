"""Score rows → rankings, with the evaluation's tie rule: higher score first, then smaller id.

A score row holds one query's scores over all documents of an :class:`~graphtx.eval.data.EvalCorpus`
(id order). The query's own column is left out; a candidate a system cannot score (no vector)
has score ``-inf`` and ranks after every scored candidate, ties again by id. ``nan`` is an error.

``top_k`` gives the ranking's head (what the metrics read); ``ranks_of`` gives the exact 1-based
rank of any candidate, found or not in the head (first relevant rank, metric-vs-k curves,
per-query error analysis). Both follow one order, so ``ranks_of(top_k(...)) == 1, 2, 3, ...``.
Ids are sorted in an EvalCorpus, so "smaller id" is "smaller column". A column the evaluation's
cut-off rules out (``allowed`` False, :mod:`graphtx.eval.cutoff`) is no candidate: it is neither
ranked nor counted.
"""

from __future__ import annotations

import numpy as np


def _check(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(f"a score row must be 1-d, got shape {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores contain nan")
    return scores


def top_k(scores: np.ndarray, k: int, exclude: int | None = None, allowed: np.ndarray | None = None) -> np.ndarray:
    """Columns of the ``k`` best candidates (score desc, column asc), ``exclude`` left out, and every
    column ``allowed`` (c,) bool rules out (the evaluation's cut-off: they are no candidates at all).

    scores: (c,) over columns in id order.
    """
    scores = _check(scores)
    if exclude is not None or allowed is not None:
        scores = scores.copy()
        if allowed is not None:
            scores[~np.asarray(allowed, dtype=bool)] = np.nan  # sorts last below; never compared as a score
        if exclude is not None:
            scores[exclude] = np.nan
    valid = ~np.isnan(scores)
    n = int(valid.sum())
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    filled = np.where(valid, scores, -np.inf)
    if k < n:
        cut = np.partition(-filled[valid], k - 1)[k - 1]  # -(k-th largest score)
        pool = np.flatnonzero(valid & (-filled <= cut))  # every candidate at or above the k-th score
    else:
        pool = np.flatnonzero(valid)
    order = pool[np.lexsort((pool, -filled[pool]))]  # score desc, then column (= id) asc
    return order[:k]


def ranks_of(
    scores: np.ndarray, columns: np.ndarray, exclude: int | None = None, allowed: np.ndarray | None = None
) -> np.ndarray:
    """Exact 1-based ranks of ``columns`` under :func:`top_k`'s order (``exclude`` and what ``allowed`` rules out not counted)."""
    scores = _check(scores)
    columns = np.asarray(columns, dtype=np.int64)
    out = np.empty(len(columns), dtype=np.int64)
    keep = np.ones(len(scores), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool).copy()
    if exclude is not None:
        keep[exclude] = False
    idx = np.arange(len(scores))
    for j, c in enumerate(columns):
        if not keep[c]:
            raise ValueError("an excluded column has no rank")
        s = scores[c]
        ahead = keep & ((scores > s) | ((scores == s) & (idx < c)))
        out[j] = int(ahead.sum()) + 1
    return out
