"""Score rows -> rankings: score desc, ties by id (= column), the query left out, -inf last."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.eval.ranking import ranks_of, top_k
from graphtx.metrics import rank_by_scores


def test_top_k_breaks_ties_by_column_and_leaves_out_the_query():
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.5])
    assert top_k(scores, 3).tolist() == [1, 0, 2]
    assert top_k(scores, 3, exclude=1).tolist() == [0, 2, 4]
    assert top_k(scores, 10, exclude=0).tolist() == [1, 2, 4, 3]  # k larger than the candidates
    assert top_k(scores, 0).tolist() == []


def test_unscorable_candidates_rank_last_by_id():
    scores = np.array([-np.inf, 0.2, -np.inf, 0.3])
    assert top_k(scores, 4).tolist() == [3, 1, 0, 2]
    assert ranks_of(scores, np.array([0, 2, 3])).tolist() == [3, 4, 1]
    with pytest.raises(ValueError, match="nan"):
        top_k(np.array([0.1, np.nan]), 1)


def test_ranks_of_agrees_with_top_k_and_with_rank_by_scores():
    rng = np.random.default_rng(0)
    ids = [f"d{i:03d}" for i in range(200)]  # sorted ids: column order = id order
    for trial in range(5):
        scores = rng.integers(0, 20, size=200).astype(float)  # many ties
        exclude = int(rng.integers(0, 200))
        ranking = top_k(scores, 199, exclude)
        assert exclude not in ranking and len(ranking) == 199
        assert ranks_of(scores, ranking, exclude).tolist() == list(range(1, 200))
        assert [ids[i] for i in top_k(scores, 50, exclude)] == rank_by_scores(scores, ids, 50, exclude={ids[exclude]})
    with pytest.raises(ValueError, match="excluded"):
        ranks_of(scores, np.array([exclude]), exclude)
