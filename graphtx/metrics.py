"""Ranking metrics for citation retrieval: pure functions over rankings and relevance.

Used by training (validation Recall@3 / nDCG@150) and by ``graphtx.eval``. No stage
imports: only numpy and torch.

Conventions (the paper's protocol, Björkqvist & Kallio 2023):
- ``rankings``: query id → candidate ids, best first (the query itself already left out).
- ``relevant``: query id → {cited id: gain}; binary gain = 1.0 for every cited document.
- Recall@k is over (query, cited) **pairs**: the share of all pairs whose cited document
  is in the query's top k (a query with many citations weighs more).
- nDCG@k is the mean over queries, gain / log2(rank + 1), ideal from the query's own gains.
- Queries without relevant documents are not scored.

Ties in scores are broken by candidate id (``rank_by_scores``) so rankings are
deterministic whatever the index order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch


def recall_at_k(rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], k: int) -> float:
    """Share of (query, cited) pairs with the cited document in the query's top ``k``."""
    hits = pairs = 0
    for query, cited in relevant.items():
        if not cited:
            continue
        top = set(rankings.get(query, ())[:k])
        pairs += len(cited)
        hits += sum(1 for c in cited if c in top)
    return hits / pairs if pairs else float("nan")


def dcg(gains: Sequence[float]) -> float:
    """Σ gain_i / log2(i + 2) over 0-based ranks i."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g)


def ndcg_at_k(rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], k: int) -> float:
    """Mean nDCG@k over queries that have relevant documents."""
    scores = [ndcg_of_query(rankings.get(q, ()), rel, k) for q, rel in relevant.items() if rel]
    return float(np.mean(scores)) if scores else float("nan")


def ndcg_of_query(ranking: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    ideal = dcg(sorted(relevant.values(), reverse=True)[:k])
    if ideal <= 0:
        return float("nan")
    return dcg([relevant.get(c, 0.0) for c in ranking[:k]]) / ideal


def rank_by_scores(scores: np.ndarray, candidate_ids: Sequence[str], k: int, exclude: set[str] | None = None) -> list[str]:
    """Top ``k`` candidate ids by score (higher first), ties broken by id, ``exclude`` left out.

    scores: (c,) over ``candidate_ids``.
    """
    order = np.lexsort((np.asarray(candidate_ids, dtype=object).astype(str), -scores))  # score desc, then id asc
    out: list[str] = []
    for i in order:
        cid = candidate_ids[i]
        if exclude and cid in exclude:
            continue
        out.append(cid)
        if len(out) == k:
            break
    return out


def dense_rankings(
    query_ids: Sequence[str],
    query_vectors: torch.Tensor,
    candidate_ids: Sequence[str],
    candidate_vectors: torch.Tensor,
    k: int,
    leave_out_self: bool = True,
    chunk: int = 256,
) -> dict[str, list[str]]:
    """Rankings by inner product of L2-normalised vectors (= cosine).

    query_vectors: (q, d); candidate_vectors: (c, d). A query's own id is left out of
    its ranking when ``leave_out_self``. Exact (brute force), chunked over queries.
    """
    rankings: dict[str, list[str]] = {}
    cand = candidate_vectors.float()
    ids_sorted = np.argsort(np.asarray(candidate_ids, dtype=str), kind="stable")  # tie order: id ascending
    id_rank = np.empty(len(candidate_ids), dtype=np.int64)
    id_rank[ids_sorted] = np.arange(len(candidate_ids))
    position = {c: i for i, c in enumerate(candidate_ids)}
    take = min(len(candidate_ids), k + 1)
    for start in range(0, len(query_ids), chunk):
        sims = query_vectors[start : start + chunk].float() @ cand.T  # (q', c)
        sims = sims.numpy().astype(np.float64)
        for row, qid in enumerate(query_ids[start : start + chunk]):
            s = sims[row]
            if leave_out_self and qid in position:
                s = s.copy()
                s[position[qid]] = -np.inf
            top = np.argpartition(-s, take - 1)[:take] if take < len(s) else np.arange(len(s))
            # exact ties at the cut are resolved by id over the whole candidate set
            cut = s[top].min()
            pool = np.flatnonzero(s >= cut)
            order = pool[np.lexsort((id_rank[pool], -s[pool]))]
            rankings[qid] = [candidate_ids[i] for i in order if s[i] > -np.inf][:k]
    return rankings
