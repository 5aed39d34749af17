"""Paired bootstrap of a system's metric ratio to a reference (BM25) over the same queries.

Queries are resampled with replacement (the same resample for both systems: paired), and each
metric is recomputed as the evaluation computes it: Recall@k over (query, cited) pairs is
Σ hits / Σ relevant, so its ratio of two systems is Σ hits_a / Σ hits_b on the resampled
queries; the other metrics are means over queries, so the ratio is Σ value_a / Σ value_b.
The percentile interval of those ratios is the 95% interval (Efron & Tibshirani 1993, ch. 13;
the paired design of Sakai 2006 for IR evaluation).

Example::

    ci = paired_ratio(system.per_query, bm25.per_query, "Recall@3", "hits@3")
    ci.ratio, ci.low, ci.high    # 1.12, 0.97, 1.29: not shown to beat BM25
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RatioInterval:
    metric: str
    ratio: float  # on the queries as they are
    low: float  # 2.5th percentile of the resampled ratios
    high: float  # 97.5th percentile
    resamples: int
    queries: int

    @property
    def above_one(self) -> bool:
        return self.low > 1.0

    def __str__(self) -> str:
        return f"{self.ratio:.2f}x [{self.low:.2f}, {self.high:.2f}]"


def _column(rows: Sequence[dict], name: str, queries: Sequence[str]) -> np.ndarray:
    by_query = {r["query"]: float(r[name]) for r in rows}
    missing = [q for q in queries if q not in by_query]
    if missing:
        raise ValueError(
            f"{len(missing)} queries lack {name!r} (e.g. {missing[0]}): the two runs were not on the same queries"
        )
    return np.nan_to_num(np.array([by_query[q] for q in queries], dtype=np.float64))  # (Q,)


def paired_ratio(
    system_rows: Sequence[dict],
    reference_rows: Sequence[dict],
    metric: str,
    sum_column: str | None = None,
    resamples: int = 10_000,
    seed: int = 0,
) -> RatioInterval:
    """Ratio system / reference of ``metric`` with its paired-bootstrap 95% interval.

    Rows are per-query dicts (``query`` plus metric columns, as ``graphtx eval`` writes them).
    ``sum_column`` names the per-query numerator of a pair-level metric (``hits@3`` for Recall@3);
    without it the metric is a mean over queries.
    """
    queries = sorted(r["query"] for r in reference_rows)
    column = sum_column or metric
    a, b = _column(system_rows, column, queries), _column(reference_rows, column, queries)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(queries), np.full(len(queries), 1.0 / len(queries)), size=resamples).astype(
        np.float64
    )  # (R, Q)
    num, den = weights @ a, weights @ b  # (R,)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = np.where(den > 0, num / den, np.nan)
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    ratio = float(a.sum() / b.sum()) if b.sum() > 0 else float("nan")
    return RatioInterval(metric, ratio, float(low), float(high), resamples, len(queries))


def intervals_to_reference(
    system_rows: Sequence[dict], reference_rows: Sequence[dict], recall_k: int, ndcg_k: int, seed: int = 0
) -> list[RatioInterval]:
    """The paper's two headline metrics, Recall@k (over pairs) and nDCG@k, against the reference."""
    return [
        paired_ratio(system_rows, reference_rows, f"Recall@{recall_k}", f"hits@{recall_k}", seed=seed),
        paired_ratio(system_rows, reference_rows, f"nDCG@{ndcg_k}", seed=seed),
    ]
