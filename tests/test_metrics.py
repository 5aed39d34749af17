import math

import numpy as np
import torch

from graphtx.metrics import (
    aggregate_metrics,
    average_precision,
    dense_rankings,
    mean_average_precision,
    mean_recall_at_k,
    metric_names,
    mrr_at_k,
    ndcg_at_k,
    per_query_metrics,
    rank_by_scores,
    recall_at_k,
    recall_of_query,
    reciprocal_rank,
    relevant_ranks,
)


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


# --- per-query measures (trec_eval family), hand-computed ------------------------


def test_average_precision_hand_computed():
    ranking = ["a", "b", "c", "d", "e"]
    relevant = {"b": 1, "d": 1, "z": 1}  # z never retrieved: still in the denominator
    assert relevant_ranks(ranking, relevant) == [2, 4]
    assert math.isclose(average_precision(ranking, relevant), (1 / 2 + 2 / 4) / 3)
    assert math.isclose(average_precision(ranking, relevant, k=3), (1 / 2) / 3)  # d (rank 4) cut off
    assert average_precision(["x"], {"a": 1}) == 0.0
    assert math.isnan(average_precision(ranking, {}))


def test_reciprocal_rank_and_recall_of_query():
    ranking = ["a", "b", "c", "d"]
    assert reciprocal_rank(ranking, {"c": 1, "d": 1}, 10) == 1 / 3
    assert reciprocal_rank(ranking, {"d": 1}, 3) == 0.0  # first relevant beyond the cut
    assert recall_of_query(ranking, {"a": 1, "d": 1, "z": 1}, 2) == 1 / 3
    assert recall_of_query(ranking, {"a": 1, "d": 1, "z": 1}, 4) == 2 / 3


def test_gain_zero_is_not_relevant():
    ranking = ["a", "b"]
    assert relevant_ranks(ranking, {"a": 0.0, "b": 2.0}) == [2]
    assert reciprocal_rank(ranking, {"a": 0.0, "b": 2.0}, 10) == 0.5
    m = aggregate_metrics({"q": ranking}, {"q": {"a": 0.0, "b": 1.0}}, recall_k=1, ndcg_k=2, mrr_k=10, recall_ks=(1,))
    assert m["Recall@1"] == 0.0 and m["MAP"] == 0.5 and m["R@1"] == 0.0


def test_means_over_queries_differ_from_pairs():
    rankings = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y", "z"]}
    relevant = {"q1": {"a": 1, "d": 1, "e": 1}, "q2": {"y": 1}, "q3": {}}  # q3: no relevant, not scored
    assert recall_at_k(rankings, relevant, 3) == 0.5  # 2 of 4 pairs
    assert math.isclose(mean_recall_at_k(rankings, relevant, 3), (1 / 3 + 1) / 2)  # per query
    assert math.isclose(mrr_at_k(rankings, relevant, 10), (1 + 1 / 2) / 2)
    assert math.isclose(mean_average_precision(rankings, relevant), ((1 + 2 / 4) / 3 + 1 / 2) / 2)


def test_aggregate_and_per_query_metrics_agree():
    rankings = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y", "z"]}
    relevant = {"q1": {"a": 1, "d": 2}, "q2": {"y": 1}}
    agg = aggregate_metrics(rankings, relevant, recall_k=3, ndcg_k=4, mrr_k=10, recall_ks=(2,))
    assert list(agg) == metric_names(3, 4, 10, (2,))
    rows = [per_query_metrics(rankings[q], relevant[q], 3, 4, 10, (2,)) for q in rankings]
    assert agg["Recall@3"] == sum(r["hits@3"] for r in rows) / sum(r["relevant"] for r in rows)  # pairs
    for per, total in (("nDCG@4", "nDCG@4"), ("AP", "MAP"), ("RR@10", "MRR@10"), ("R@2", "R@2")):
        assert math.isclose(agg[total], np.mean([r[per] for r in rows]))


def test_reciprocal_rank_fusion_is_written_once():
    """Every RRF score in graphtx comes from graphtx.metrics.rrf_score: no other module divides by (rrf_k + rank)."""
    import ast
    from pathlib import Path

    from graphtx.metrics import rrf_score

    assert rrf_score(1, 60) == 1 / 61 and rrf_score(3, 60, 2.0) == 2 / 63
    root = Path(__file__).resolve().parents[1] / "graphtx"
    written = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Div)
                and isinstance(node.right, ast.BinOp)
                and isinstance(node.right.op, ast.Add)
            ):
                names = {
                    n.id if isinstance(n, ast.Name) else n.attr
                    for n in ast.walk(node.right)
                    if isinstance(n, (ast.Name, ast.Attribute))
                }
                if "rrf_k" in names:
                    written.append(str(path.relative_to(root)))
    assert written == ["metrics.py"], written  # one division, in rrf_score
