"""Retrieval protocol and PaECTER samples on hand-built scores, checked against hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphtx.config import EvalConfig
from graphtx.corpus.schema import Citation, PatentDocument
from graphtx.eval.baselines import BM25System
from graphtx.eval.data import EvalCorpus, citation_graph, judgements
from graphtx.eval.protocols import evaluate_paecter, evaluate_retrieval, load_samples, sample_paecter, save_samples
from tests.eval.conftest import MatrixSystem, synthetic_corpus

CFG = EvalConfig(recall_k=2, ndcg_k=3, mrr_k=2, recall_ks=(1, 4), depth=5)


def corpus_of(ids):
    return EvalCorpus.from_documents([PatentDocument(i, "test", "-", abstract=i) for i in ids])


def test_retrieval_metrics_hand_computed():
    corpus = corpus_of(["a", "b", "c", "d", "e", "q"])
    # q's row: its own column is the best (left out); b and c tie (b first by id); e unscorable
    system = MatrixSystem(np.zeros((6, 6)))
    system.matrix[5] = [0.1, 0.5, 0.5, 0.9, -np.inf, 1.0]  # ranking of q: d, b, c, a, e
    system.fit(corpus)
    judged = judgements([Citation("q", "c"), Citation("q", "e")], corpus)
    result = evaluate_retrieval(system, corpus, judged, CFG)
    (row,) = result.per_query
    assert row["top3"] == "d b c" and row["cited_ranks"] == "c:3 e:5" and row["first_relevant_rank"] == 3
    m = result.metrics
    assert m["Recall@2"] == 0.0  # neither c nor e in the top 2
    assert m["nDCG@3"] == pytest.approx((1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert m["MAP"] == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert m["MRR@2"] == 0.0 and m["R@1"] == 0.0 and m["R@4"] == 0.5
    assert result.queries == 1 and result.pairs == 2 and result.candidates == 5


def test_query_can_be_kept_in_its_ranking():
    corpus = corpus_of(["a", "q"]).with_cutoff("none")  # a query kept in its ranking: no cut-off (which leaves it out)
    system = MatrixSystem([[0, 0], [0.5, 1.0]]).fit(corpus)
    judged = judgements([Citation("q", "a")], corpus)
    cfg = EvalConfig(recall_k=1, ndcg_k=2, recall_ks=(2,), mrr_k=2, depth=2, cutoff="none")
    assert evaluate_retrieval(system, corpus, judged, cfg).metrics["Recall@1"] == 1.0
    kept = EvalConfig(recall_k=1, ndcg_k=2, recall_ks=(2,), mrr_k=2, depth=2, leave_out_self=False, cutoff="none")
    assert evaluate_retrieval(system, corpus, judged, kept).metrics["Recall@1"] == 0.0  # q ranks itself first


def test_curves_match_the_metrics_at_their_cut_offs(synthetic):
    docs, citations = synthetic
    corpus = EvalCorpus.from_documents(docs)
    cfg = EvalConfig(gains={"X": 3}, ndcg_k=20, recall_ks=(10,), depth=30)
    judged = judgements(citations, corpus, cfg)
    result = evaluate_retrieval(BM25System().fit(corpus), corpus, judged, cfg)
    curve = dict(zip(result.curves["k"], zip(result.curves["Recall"], result.curves["nDCG"])))
    assert curve[3][0] == pytest.approx(result.metrics["Recall@3"], abs=1e-12)
    assert curve[20][1] == pytest.approx(result.metrics["nDCG@20"], abs=1e-12)
    assert all(np.diff(result.curves["Recall"]) >= 0)


# --- PaECTER -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def paecter_setup():
    docs, citations = synthetic_corpus(per_field=40, seed=1)
    # older documents cite others too: the hard negatives of a focal are what its cited documents cite
    extra = [
        Citation(f"D-{f}-{i:02d}", f"D-{f}-{j:02d}")
        for f in ("battery", "snow", "valve")
        for i in range(4, 40)
        for j in (i + 7, i + 13, i + 21)
        if j < 40
    ]
    corpus = EvalCorpus.from_documents(docs)
    return corpus, judgements(citations, corpus), citation_graph(citations + extra)


def test_paecter_samples_follow_the_recipe(paecter_setup):
    corpus, judged, cites = paecter_setup
    cfg = EvalConfig(paecter_samples=8)
    samples = sample_paecter(corpus, judged, cites, cfg, seed=3)
    assert (
        len(samples.samples) == 8 and samples.meta["eligible_focals"] == 12
    )  # 4 citing documents x 3 fields, 6 cited each
    for s in samples.samples:
        field = s.focal.split("-")[1]
        assert len(s.cited) == 5 and set(s.cited) <= set(judged.relevant[s.focal])
        assert len(s.hard) + len(s.easy) == 25 and len(s.candidates) == 30 and s.focal not in s.candidates
        cited_any = set(judged.relevant[s.focal]) | cites.get(s.focal, set())
        assert not (set(s.hard) | set(s.easy)) & cited_any  # negatives are never cited by the focal
        second_order = {d for c in cited_any for d in cites.get(c, ())}
        assert set(s.hard) <= second_order
        assert s.easy_pool == "same CPC " + {"battery": "H01M", "snow": "E01H", "valve": "F16K"}[field]
        assert all(d.split("-")[1] == field for d in s.easy)
    again = sample_paecter(corpus, judged, cites, cfg, seed=3)
    assert again.samples == samples.samples
    assert sample_paecter(corpus, judged, cites, cfg, seed=4).samples != samples.samples


def test_paecter_without_cpc_draws_easy_negatives_from_the_corpus():
    docs, citations = synthetic_corpus(per_field=12, with_cpc=False)
    corpus = EvalCorpus.from_documents(docs)
    samples = sample_paecter(corpus, judgements(citations, corpus), citation_graph(citations), EvalConfig(), seed=0)
    assert samples.samples and all(s.easy_pool == "any document (focal has no CPC)" for s in samples.samples)
    assert all(
        len(s.hard) + s.hard_short == 10 and len(s.easy) == 15 + s.hard_short for s in samples.samples
    )  # short hard pool: easy fill in
    assert samples.meta["hard_short_samples"] == sum(1 for s in samples.samples if s.hard_short) > 0


def test_paecter_samples_round_trip_and_are_checked(paecter_setup, tmp_path):
    corpus, judged, cites = paecter_setup
    samples = sample_paecter(corpus, judged, cites, EvalConfig(paecter_samples=5), seed=0)
    path = save_samples(samples, tmp_path / "s.json")
    loaded = load_samples(path, corpus)
    assert loaded.samples == samples.samples and loaded.meta["seed"] == 0 and loaded.meta["loaded_from"] == str(path)
    with pytest.raises(ValueError, match="not documents"):
        load_samples(path, corpus_of(["x"]))


def test_paecter_metrics_hand_computed(paecter_setup):
    corpus, judged, cites = paecter_setup
    samples = sample_paecter(corpus, judged, cites, EvalConfig(paecter_samples=1), seed=0)
    (s,) = samples.samples
    matrix = np.zeros((len(corpus), len(corpus)))
    row = corpus.position[s.focal]
    negatives = sorted((*s.hard, *s.easy))
    # cited documents at ranks 2, 3, 13, 14, 30: one negative, two cited, ten negatives, two cited, ...
    order = [
        negatives[0],
        s.cited[0],
        s.cited[1],
        *negatives[1:9],
        negatives[9],
        s.cited[2],
        s.cited[3],
        *negatives[10:],
        s.cited[4],
    ]
    assert len(order) == 30
    for rank, doc_id in enumerate(order):
        matrix[row, corpus.position[doc_id]] = 100 - rank
    result = evaluate_paecter(MatrixSystem(matrix).fit(corpus), corpus, samples, EvalConfig())
    (r,) = result.per_sample
    assert r["cited_ranks"] == "2 3 13 14 30" and r["RFR"] == 2
    assert r["AP"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 13 + 4 / 14 + 5 / 30) / 5)
    assert r["RR@10"] == 0.5 and result.metrics == {"RFR": 2.0, "MAP": r["AP"], "MRR@10": 0.5}
