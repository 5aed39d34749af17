"""Ranking metrics for citation retrieval: pure functions over rankings and relevance.

Used by training (validation Recall@3 / nDCG@150) and by ``graphtx.eval``. No stage
imports: only numpy (and torch's tensors, passed in).

Conventions (the paper's protocol, Björkqvist & Kallio 2023):
- ``rankings``: query id → candidate ids, best first (the query itself already left out).
- ``relevant``: query id → {cited id: gain}; binary gain = 1.0 for every cited document.
- Recall@k is over (query, cited) **pairs**: the share of all pairs whose cited document
  is in the query's top k (a query with many citations weighs more).
- nDCG@k is the mean over queries, gain / log2(rank + 1), ideal from the query's own gains.
- Queries without relevant documents are not scored.
- Binary measures (Recall, AP, RR) count a document as relevant when its gain is > 0.

Per-query measures of the trec_eval family (SciBERT-triplet and PaECTER protocols) are
plain means over queries: ``average_precision`` (AP, denominator = all relevant documents
of the query, found or not), ``reciprocal_rank`` (RR@k), ``recall_of_query`` (R@k).
``mean_average_precision``, ``mrr_at_k`` and ``mean_recall_at_k`` average them; they agree
with ``ir-measures`` (pytrec_eval) on a run whose scores have no ties
(tests/eval/test_ir_measures_agreement.py).

``pearson_spearman`` (scipy.stats) scores predicted against expert similarity (graphtx eval phrases).

Ties in scores are broken by candidate id (``rank_by_scores``) so rankings are
deterministic whatever the index order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # only tensors' methods are used: importing torch would cost every CLI command a second
    import torch


def rrf_score(rank, rrf_k: int, weight: float = 1.0):
    """Reciprocal rank fusion's share of one ranking for a document at 1-based ``rank`` (Cormack, Clarke & Buettcher
    2009): ``weight / (rrf_k + rank)``. The one place the formula is written: search's hybrid ranker, the evaluation's
    fusion, the claim-set merge and the explanations all call it. ``rank``: an int or an array of ranks."""
    return weight / (rrf_k + rank)


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


def rank_by_scores(
    scores: np.ndarray, candidate_ids: Sequence[str], k: int, exclude: set[str] | None = None
) -> list[str]:
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


# --- per-query measures (trec_eval family) -----------------------------------------


def _is_relevant(relevant: Mapping[str, float]) -> set[str]:
    return {d for d, g in relevant.items() if g > 0}


def relevant_ranks(ranking: Sequence[str], relevant: Mapping[str, float]) -> list[int]:
    """1-based ranks of the relevant documents found in ``ranking``, ascending."""
    rel = _is_relevant(relevant)
    return [i + 1 for i, d in enumerate(ranking) if d in rel]


def average_precision(ranking: Sequence[str], relevant: Mapping[str, float], k: int | None = None) -> float:
    """AP over the top ``k`` (all of ``ranking`` when None): Σ precision@rank of each relevant hit / |relevant|.

    Relevant documents not in the top ``k`` count as misses (trec_eval's ``map``).
    """
    n_rel = len(_is_relevant(relevant))
    if not n_rel:
        return float("nan")
    ranks = relevant_ranks(ranking[:k] if k else ranking, relevant)
    return sum((i + 1) / r for i, r in enumerate(ranks)) / n_rel


def reciprocal_rank(ranking: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """1 / rank of the first relevant document in the top ``k`` (0 if none there)."""
    if not _is_relevant(relevant):
        return float("nan")
    ranks = relevant_ranks(ranking[:k], relevant)
    return 1.0 / ranks[0] if ranks else 0.0


def recall_of_query(ranking: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Share of the query's relevant documents in its top ``k``."""
    rel = _is_relevant(relevant)
    if not rel:
        return float("nan")
    return len(rel.intersection(ranking[:k])) / len(rel)


def _mean_over_queries(
    fn, rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], *args
) -> float:
    scores = [fn(rankings.get(q, ()), rel, *args) for q, rel in relevant.items() if _is_relevant(rel)]
    return float(np.mean(scores)) if scores else float("nan")


def mean_average_precision(
    rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], k: int | None = None
) -> float:
    """MAP: mean AP over queries with relevant documents."""
    return _mean_over_queries(average_precision, rankings, relevant, k)


def mrr_at_k(rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], k: int) -> float:
    """MRR@k: mean reciprocal rank of the first relevant document within the top ``k``."""
    return _mean_over_queries(reciprocal_rank, rankings, relevant, k)


def mean_recall_at_k(
    rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Mapping[str, float]], k: int
) -> float:
    """R@k as trec_eval reports it: the mean over queries of each query's recall (cf. :func:`recall_at_k`, over pairs)."""
    return _mean_over_queries(recall_of_query, rankings, relevant, k)


def per_query_metrics(
    ranking: Sequence[str],
    relevant: Mapping[str, float],
    recall_k: int = 3,
    ndcg_k: int = 150,
    mrr_k: int = 10,
    recall_ks: Sequence[int] = (100, 500, 1000),
    ap_k: int | None = None,
) -> dict[str, float]:
    """Every measure of one query, keyed as in :func:`metric_names` (plus ``hits@recall_k`` and ``relevant``)."""
    rel = _is_relevant(relevant)
    out = {
        "relevant": float(len(rel)),
        f"hits@{recall_k}": float(len(rel.intersection(ranking[:recall_k]))),
        f"Recall@{recall_k}": recall_of_query(ranking, relevant, recall_k),
        f"nDCG@{ndcg_k}": ndcg_of_query(ranking, relevant, ndcg_k),
        "AP": average_precision(ranking, relevant, ap_k),
        f"RR@{mrr_k}": reciprocal_rank(ranking, relevant, mrr_k),
    }
    for k in recall_ks:
        out[f"R@{k}"] = recall_of_query(ranking, relevant, k)
    return out


def metric_names(
    recall_k: int = 3, ndcg_k: int = 150, mrr_k: int = 10, recall_ks: Sequence[int] = (100, 500, 1000)
) -> list[str]:
    """Column names of :func:`aggregate_metrics`, in table order."""
    return [f"Recall@{recall_k}", f"nDCG@{ndcg_k}", "MAP", f"MRR@{mrr_k}", *(f"R@{k}" for k in recall_ks)]


def aggregate_metrics(
    rankings: Mapping[str, Sequence[str]],
    relevant: Mapping[str, Mapping[str, float]],
    recall_k: int = 3,
    ndcg_k: int = 150,
    mrr_k: int = 10,
    recall_ks: Sequence[int] = (100, 500, 1000),
    ap_k: int | None = None,
) -> dict[str, float]:
    """The paper's Recall@k (over pairs) and nDCG@k, then MAP, MRR@k and R@k (means over queries)."""
    relevant = {
        q: {d: g for d, g in rel.items() if g > 0} for q, rel in relevant.items()
    }  # gain 0 = not relevant, for every measure
    out = {
        f"Recall@{recall_k}": recall_at_k(rankings, relevant, recall_k),
        f"nDCG@{ndcg_k}": ndcg_at_k(rankings, relevant, ndcg_k),
        "MAP": mean_average_precision(rankings, relevant, ap_k),
        f"MRR@{mrr_k}": mrr_at_k(rankings, relevant, mrr_k),
    }
    for k in recall_ks:
        out[f"R@{k}"] = mean_recall_at_k(rankings, relevant, k)
    return out


def pearson_spearman(pred: Sequence[float] | np.ndarray, gold: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Pearson and Spearman correlation (scipy.stats) over all pairs; nan where either side is constant."""
    from scipy import stats

    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if pred.ndim != 1 or pred.shape != gold.shape:
        raise ValueError(f"pred and gold must be 1-d and of one length, got {pred.shape} and {gold.shape}")
    if len(pred) < 2 or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return math.nan, math.nan
    return float(stats.pearsonr(pred, gold).statistic), float(stats.spearmanr(pred, gold).statistic)
