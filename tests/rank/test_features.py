"""pool_features on hand-built pools, and the same numbers at fit time and at ranking time."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphtx.rank.features import GROUPS, LexicalStats, PoolInputs, candidate_pool, feature_names, pool_features


class _Retriever:
    """What LexicalStats reads of a bm25s.BM25: the CSC score matrix and the vocabulary."""

    def __init__(self, docs: list[set[int]], vocab: int):
        cols = [[d for d, terms in enumerate(docs) if t in terms] for t in range(vocab)]
        self.scores = {
            "num_docs": len(docs),
            "indices": np.array([d for c in cols for d in c]),
            "indptr": np.cumsum([0] + [len(c) for c in cols]),
        }
        self.vocab_dict = {f"t{t}": t for t in range(vocab)}


def test_features_by_hand():
    stats = LexicalStats.from_bm25s(_Retriever([{0, 1}, {1}, {2, 3}, {0, 1, 2, 3}], 4))
    assert stats.doc_terms_count.tolist() == [2, 1, 2, 4]
    q = stats.term_ids(["t0", "t1", "t1", "unknown"])
    assert q.tolist() == [0, 1]
    inputs = PoolInputs(
        candidates=np.array([0, 2, 3]),
        bm25=np.array([2.0, 0.0, 4.0]),
        dense=np.array([0.5, 0.9, 0.1]),
        query_terms=q,
        query_year=2010.0,
        candidate_years=np.array([2005.0, math.nan, 2012.0]),
        query_codes=("H01M 10/44",),
        candidate_codes=[("H01M 10/50",), (), ("H01M 10/44", "B60L 1/00")],
    )
    names = feature_names(("lexical", "meta", "dense", "late"))
    x = pool_features(inputs, stats, names)
    col = {n: x[:, i] for i, n in enumerate(names)}
    assert x.shape == (3, len(names)) and x.dtype == np.float32
    assert col["terms_matched"].tolist() == [2, 0, 2]
    assert col["idf_matched_share"][0] == pytest.approx(1.0) and col["idf_matched_share"][1] == 0
    assert np.exp(col["bm25_log_rank"]).round().tolist() == [2, 3, 1]
    assert np.exp(col["dense_log_rank"]).round().tolist() == [2, 1, 3]
    assert col["bm25_minmax"].tolist() == [0.5, 0.0, 1.0]
    assert col["year_gap"][0] == 5 and np.isnan(col["year_gap"][1]) and col["year_gap"][2] == -2
    assert (
        col["code_subclass_jaccard"][0] == 1.0
        and np.isnan(col["code_subclass_jaccard"][1])
        and col["code_subclass_jaccard"][2] == 0.5
    )
    assert np.isnan(col["late"]).all()  # no late-interaction model: missing, not zero


def test_dense_features_need_dense_scores():
    stats = LexicalStats.from_bm25s(_Retriever([{0}, {1}], 2))
    inputs = PoolInputs(np.array([0, 1]), np.array([1.0, 0.0]), None, np.array([0]))
    assert pool_features(inputs, stats, GROUPS["lexical"]).shape == (2, len(GROUPS["lexical"]))
    with pytest.raises(ValueError, match="dense"):
        pool_features(inputs, stats, GROUPS["dense"])


def test_pool_is_union_of_both_tops_without_the_query():
    bm25 = np.array([0.0, 5.0, 4.0, 0.0, 1.0, 9.0])
    dense = np.array([0.9, 0.1, 0.2, 0.8, 0.0, 0.95])
    assert candidate_pool(bm25, dense, 2, exclude=5).tolist() == [0, 1, 2, 3]
    assert candidate_pool(bm25, None, 10).tolist() == [1, 2, 4, 5]  # BM25 score 0 is no candidate


@pytest.mark.timeout(240)
def test_features_identical_at_fit_and_ranking_time(ranked):
    """The rows rank-fit learns from are the rows the fitted ranker scores when it ranks the same query."""
    pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")
    from graphtx.config import EvalConfig, RankConfig
    from graphtx.corpus.citations import read_citations
    from graphtx.eval.baselines import BM25System
    from graphtx.eval.data import EvalCorpus, judgements
    from graphtx.eval.ranker import RankerSystem
    from graphtx.eval.systems import ModelSystem
    from graphtx.rank.fit import PoolSource, fit_ranker, training_groups

    cfg = EvalConfig()
    corpus = EvalCorpus.load(ranked["corpus"], cfg)
    judged = judgements(read_citations(ranked["train"]), corpus, cfg)
    bm25, dense = BM25System.from_config(cfg), ModelSystem(ranked["model"], ranked["graphs"])
    source = PoolSource(corpus, bm25, dense)
    rank_cfg = RankConfig(depth=30, folds=3, min_data_in_leaf=5, num_leaves_grid=(3,), max_rounds=30, date_dropout=0.0)
    ranker = fit_ranker(source, judged, rank_cfg, dense.fingerprint)
    names = ranker.features["learned"]
    groups = training_groups(source, judged, rank_cfg.depth, names)
    system = RankerSystem(ranker, "learned", bm25, dense).fit(corpus)
    for g in groups[:5]:
        row = corpus.position[g.query]
        inputs = source.pool_inputs(
            row, *[s[0] if s is not None else None for s in source.scores(np.array([row]))], rank_cfg.depth
        )
        np.testing.assert_array_equal(pool_features(inputs, source.stats, names), g.features)
        scores = system.scores(np.array([row]))[0]  # (c,)
        np.testing.assert_allclose(
            scores[inputs.candidates], ranker.boosters["learned"].predict(g.features), rtol=0, atol=0
        )
