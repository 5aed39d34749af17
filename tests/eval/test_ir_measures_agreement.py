"""graphtx.metrics against ir-measures (pytrec_eval, trec_eval's code) on a random run: identical numbers.

trec_eval orders a query's documents by score and breaks ties by document id (descending); the
run here has no tied scores, so both sides see one order. Graded gains go to nDCG as qrel levels.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.metrics import (
    aggregate_metrics,
    average_precision,
    mean_recall_at_k,
    ndcg_of_query,
    recall_at_k,
    recall_of_query,
    reciprocal_rank,
)

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is not installed (pip install 'graphtx[eval]')")


def random_run(seed: int, queries: int = 40, docs: int = 300, depth: int = 120, graded: bool = False):
    rng = np.random.default_rng(seed)
    doc_ids = [f"D{i:04d}" for i in range(docs)]
    rankings, relevant = {}, {}
    for q in range(queries):
        qid = f"Q{q:03d}"
        order = rng.permutation(docs)[:depth]
        rankings[qid] = [doc_ids[i] for i in order]
        cited = rng.choice(docs, size=int(rng.integers(1, 12)), replace=False)  # some beyond the run's depth
        relevant[qid] = {doc_ids[i]: float(rng.integers(1, 4)) if graded else 1.0 for i in cited}
    return rankings, relevant


def as_trec(rankings, relevant):
    qrels = [ir_measures.Qrel(q, d, int(g)) for q, rel in relevant.items() for d, g in rel.items()]
    run = [
        ir_measures.ScoredDoc(q, d, float(len(r) - i)) for q, r in rankings.items() for i, d in enumerate(r)
    ]  # distinct scores
    return qrels, run


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_per_query_measures_equal_ir_measures(seed, graded):
    rankings, relevant = random_run(seed, graded=graded)
    qrels, run = as_trec(rankings, relevant)
    from ir_measures import AP, RR, R, nDCG

    measures = [nDCG @ 150, nDCG @ 10, AP, RR @ 10, R @ 3, R @ 100]
    theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    for q, ranking in rankings.items():
        rel = relevant[q]
        ours = {
            "nDCG@150": ndcg_of_query(ranking, rel, 150),
            "nDCG@10": ndcg_of_query(ranking, rel, 10),
            "AP": average_precision(ranking, rel),
            "RR@10": reciprocal_rank(ranking, rel, 10),
            "R@3": recall_of_query(ranking, rel, 3),
            "R@100": recall_of_query(ranking, rel, 100),
        }
        for name, value in ours.items():
            assert value == pytest.approx(theirs[(q, name)], abs=1e-12), (q, name)


def test_aggregates_equal_ir_measures():
    rankings, relevant = random_run(2, queries=60)
    qrels, run = as_trec(rankings, relevant)
    from ir_measures import AP, RR, R, nDCG

    theirs = {
        str(k): v for k, v in ir_measures.calc_aggregate([nDCG @ 150, AP, RR @ 10, R @ 100, R @ 3], qrels, run).items()
    }
    ours = aggregate_metrics(rankings, relevant, recall_k=3, ndcg_k=150, mrr_k=10, recall_ks=(100,))
    assert ours["nDCG@150"] == pytest.approx(theirs["nDCG@150"], abs=1e-12)
    assert ours["MAP"] == pytest.approx(theirs["AP"], abs=1e-12)
    assert ours["MRR@10"] == pytest.approx(theirs["RR@10"], abs=1e-12)
    assert ours["R@100"] == pytest.approx(theirs["R@100"], abs=1e-12)
    assert mean_recall_at_k(rankings, relevant, 3) == pytest.approx(theirs["R@3"], abs=1e-12)
    # the paper's Recall@3 is over pairs: ir-measures' per-query R@3 weighted by each query's relevant count
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc([R @ 3], qrels, run)}
    pairs = sum(len(r) for r in relevant.values())
    assert recall_at_k(rankings, relevant, 3) == pytest.approx(
        sum(per_query[q] * len(relevant[q]) for q in relevant) / pairs, abs=1e-12
    )
