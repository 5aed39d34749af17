"""Paired bootstrap of metric ratios: the point ratio is the evaluation's, the interval covers it and tightens with queries."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.eval.bootstrap import paired_ratio


def _rows(hits, relevant, ndcg):
    return [
        {"query": f"q{i}", "hits@3": h, "relevant": r, "nDCG@150": n}
        for i, (h, r, n) in enumerate(zip(hits, relevant, ndcg))
    ]


def test_point_ratio_is_the_ratio_of_the_evaluations_metrics():
    a = _rows([1, 0, 2, 1], [2, 1, 3, 2], [0.5, 0.0, 0.9, 0.3])
    b = _rows([0, 1, 1, 0], [2, 1, 3, 2], [0.2, 0.4, 0.6, 0.1])
    recall = paired_ratio(a, b, "Recall@3", "hits@3")
    assert recall.ratio == pytest.approx((4 / 8) / (2 / 8))  # Recall@3 over pairs: the denominators cancel
    ndcg = paired_ratio(a, b, "nDCG@150")
    assert ndcg.ratio == pytest.approx(np.mean([0.5, 0.0, 0.9, 0.3]) / np.mean([0.2, 0.4, 0.6, 0.1]))
    assert recall.low <= recall.ratio <= recall.high


def test_identical_systems_give_a_degenerate_interval_at_one():
    a = _rows([1, 0, 2], [1, 1, 2], [0.5, 0.1, 0.7])
    ci = paired_ratio(a, a, "nDCG@150")
    assert ci.ratio == ci.low == ci.high == 1.0 and not ci.above_one


def test_a_consistently_better_system_is_above_one_and_a_noisy_one_is_not():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 0.5, 300)
    better = _rows([0] * 300, [1] * 300, base * 1.2)
    noisy = _rows([0] * 300, [1] * 300, base * rng.uniform(0.4, 1.6, 300))
    ref = _rows([0] * 300, [1] * 300, base)
    assert paired_ratio(better, ref, "nDCG@150").above_one
    ci = paired_ratio(noisy, ref, "nDCG@150")
    assert ci.low < 1.0 < ci.high


def test_runs_on_different_queries_are_refused():
    a = _rows([1], [1], [0.5])
    b = [{"query": "other", "hits@3": 1, "relevant": 1, "nDCG@150": 0.5}]
    with pytest.raises(ValueError, match="same queries"):
        paired_ratio(a, b, "nDCG@150")
