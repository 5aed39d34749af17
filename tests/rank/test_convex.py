"""The convex weight is found where the planted relevance puts it; normalisations behave."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.rank.convex import Group, convex_scores, fit_weight, ndcg, normalise


def test_normalisations():
    x = np.array([1.0, 3.0, 5.0])
    assert normalise(x, "minmax").tolist() == [0.0, 0.5, 1.0]
    assert normalise(x, "tmm", lower=0.0).tolist() == pytest.approx([0.2, 0.6, 1.0])
    assert normalise(x, "zscore").mean() == pytest.approx(0.0)
    assert normalise(np.array([2.0, 2.0]), "minmax").tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="normalisation"):
        normalise(x, "rank")


def test_ndcg_of_a_pool():
    gains = np.array([0.0, 1.0, 0.0])
    assert ndcg(np.array([0.0, 1.0, 0.5]), gains, np.array([1.0]), 3) == pytest.approx(1.0)
    assert ndcg(np.array([1.0, 0.0, 0.5]), gains, np.array([1.0, 1.0]), 3) == pytest.approx(
        (1 / np.log2(4)) / (1 + 1 / np.log2(3))
    )


@pytest.mark.parametrize("weight", [0.3, 0.7])
def test_fitted_weight_recovers_the_planted_one(weight):
    """Relevant = the single best candidate by weight * bm25 + (1 - weight) * dense (min-max): the fit finds weight."""
    rng = np.random.default_rng(0)
    groups = []
    for q in range(300):
        bm25, dense = rng.random(50) * 10, rng.random(50) * 2 - 1
        truth = convex_scores(bm25, dense, weight, "minmax")
        gains = (truth == truth.max()).astype(float)
        groups.append(Group(f"q{q}", bm25, dense, gains, np.array([1.0])))
    fitted, table = fit_weight(groups, "minmax", ndcg_k=1)
    assert abs(fitted - weight) <= 0.05
    assert len(table) == 101 and max(t["ndcg"] for t in table) > 0.9
