import math

import numpy as np
import torch

from graphtx.metrics import dense_rankings, ndcg_at_k, rank_by_scores, recall_at_k


def test_recall_counts_pairs_not_queries():
    rankings = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y", "z"]}
    relevant = {"q1": {"a": 1, "d": 1, "e": 1}, "q2": {"y": 1}}
    # q1: a in top 3 (d at rank 4, e absent); q2: y in top 3 -> 2 of 4 pairs
    assert recall_at_k(rankings, relevant, 3) == 0.5
    assert recall_at_k(rankings, relevant, 1) == 0.25  # only a


def test_ndcg_hand_computed():
    rankings = {"q": ["a", "b", "c"]}
    relevant = {"q": {"b": 1, "c": 1}}
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    ideal = 1 + 1 / math.log2(3)
    assert math.isclose(ndcg_at_k(rankings, relevant, 3), dcg / ideal)
    assert math.isclose(ndcg_at_k(rankings, relevant, 1), 0.0)


def test_queries_without_relevant_are_not_scored():
    assert math.isnan(recall_at_k({"q": ["a"]}, {"q": {}}, 3))
    assert ndcg_at_k({"q": ["a"], "r": ["b"]}, {"q": {"a": 1}, "r": {}}, 3) == 1.0


def test_rank_by_scores_breaks_ties_by_id_and_excludes():
    scores = np.array([0.5, 0.9, 0.5, 0.1])
    assert rank_by_scores(scores, ["d", "a", "b", "c"], 3) == ["a", "b", "d"]
    assert rank_by_scores(scores, ["d", "a", "b", "c"], 3, exclude={"a"}) == ["b", "d", "c"]


def test_dense_rankings_leave_query_out_and_match_brute_force():
    g = torch.Generator().manual_seed(0)
    cand = torch.nn.functional.normalize(torch.randn(50, 8, generator=g), dim=-1)
    ids = [f"d{i:02d}" for i in range(50)]
    out = dense_rankings(ids[:5], cand[:5], ids, cand, k=10)
    for i, q in enumerate(ids[:5]):
        assert q not in out[q] and len(out[q]) == 10
        s = (cand @ cand[i]).numpy()
        s[i] = -np.inf
        assert out[q] == [ids[j] for j in np.argsort(-s)[:10]]


def test_dense_rankings_ties_by_id():
    cand = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    out = dense_rankings(["q"], torch.tensor([[1.0, 0.0]]), ["z", "b", "a"], cand, k=2)
    assert out["q"] == ["b", "z"]
