"""The searcher's cut-off (graphtx/eval/cutoff.py): hand-built dates, and every system and pool of a run held to it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphtx.corpus.schema import Citation, PatentDocument
from graphtx.eval.config import EvalConfig
from graphtx.eval.cutoff import CandidateCutoff, unreachable_pairs
from graphtx.eval.data import EvalCorpus, judgements
from graphtx.eval.protocols import evaluate_retrieval, rank_queries
from tests.eval.conftest import MatrixSystem


def cut(policy, dates, priority=None, families=None):
    n = len(dates)
    return CandidateCutoff.build(policy, dates, priority or [""] * n, families or [f"F{i}" for i in range(n)])


def allowed(c: CandidateCutoff, row: int) -> list[bool]:
    return c.mask(np.array([row]))[0].tolist()


def test_priority_full_dates_strictly_before_the_query_priority_date():
    # query 0: priority 2010-06-15, published 2011-12-01
    c = cut(
        "priority",
        ["2011-12-01", "2010-06-14", "2010-06-15", "2010-06-16", "2011-01-01"],
        priority=["2010-06-15", "", "", "", ""],
    )
    assert allowed(c, 0) == [
        False,
        True,
        False,
        False,
        False,
    ]  # itself out; the day before in; the same day and later out


def test_priority_falls_back_to_the_publication_date():
    c = cut("priority", ["2010-06-15", "2010-06-14", "2010-06-15"])
    assert allowed(c, 0) == [False, True, False]  # same-day publication does not pass


def test_year_only_dates_count_as_their_last_day_and_a_query_year_as_its_first_day():
    # EV-battery style, years only. Query of 2008: a 2007 document passes, a same-year 2008 one never does
    c = cut("priority", ["2008", "2007", "2008", "2009", "2007-12-31", "2008-01-01"])
    assert allowed(c, 0) == [False, True, False, False, True, False]
    # a full-dated query (2008-06-01): a candidate dated "2008" may be later, so it does not pass; "2008-05" ends 05-31 and passes
    c = cut("priority", ["2008-06-01", "2008", "2007", "2008-05", "2008-06"])
    assert allowed(c, 0) == [False, False, True, True, False]


def test_year_policy_lets_same_year_documents_through():
    c = cut("year", ["2008", "2007", "2008", "2009", "2008-12-31"])
    assert allowed(c, 0) == [False, True, True, False, True]
    c = cut(
        "year", ["2008-03-01", "2008-11-30", "2009-01-01"], priority=["2007-05-01", "", ""]
    )  # the query's year is its priority year
    assert allowed(c, 0) == [False, False, False]


def test_undated_candidates_never_pass_and_an_undated_query_has_no_date_cut_off():
    c = cut("priority", ["2010", "", "2001", "2015"])
    assert allowed(c, 0) == [False, False, True, False]
    assert allowed(c, 1) == [True, False, True, True]  # the undated query: no date cut-off, only itself out


def test_the_query_family_is_left_out_under_both_cut_offs_and_kept_under_none():
    families = ["A", "A", "B", "A"]
    for policy in ("priority", "year"):
        c = cut(policy, ["2010", "2001", "2001", "2002"], families=families)
        assert allowed(c, 0) == [False, False, True, False]
    assert cut("none", ["2010", "2001"]).mask(np.array([0])) is None


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="eval.cutoff must be one of none, priority, year"):
        EvalConfig(cutoff="before")
    with pytest.raises(ValueError, match="needs eval.cutoff none"):
        EvalConfig(leave_out_self=False)


# --- every system of a run under the cut-off ---------------------------------------------------------------


def dated_corpus(policy: str) -> EvalCorpus:
    """q (2008) and five candidates: a 2006, b 2007, c 2008, d 2009, e undated; f is of q's family (2005)."""
    dates = {"a": "2006", "b": "2007", "c": "2008", "d": "2009", "e": "", "f": "2005", "q": "2008"}
    docs = [
        PatentDocument(i, "test", "-", abstract=f"text {i}", date=dates[i], family_id="FQ" if i in "fq" else "")
        for i in sorted(dates)
    ]
    return EvalCorpus.from_documents(docs, EvalConfig(cutoff=policy))


def test_rankings_hold_only_what_the_cut_off_lets_through_and_removed_citations_are_misses():
    corpus = dated_corpus("priority")  # ids a b c d e f q
    row = np.zeros((7, 7))
    row[6] = [0.1, 0.2, 0.9, 0.8, 0.7, 0.95, 1.0]  # q's scores: c, d, e, f would lead without the cut-off
    system = MatrixSystem(row).fit(corpus)
    judged = judgements([Citation("q", "a"), Citation("q", "c")], corpus)
    cfg = EvalConfig(recall_k=1, ndcg_k=2, recall_ks=(2,), mrr_k=2, depth=5)
    rankings, cited = rank_queries(system, corpus, judged, cfg)
    assert rankings["q"] == ["b", "a"]  # c (same year), d (later), e (undated), f (family) are no candidates
    assert cited["q"] == {"a": 2, "c": math.inf}
    result = evaluate_retrieval(system, corpus, judged, cfg)
    (q,) = result.per_query
    assert q["cited_ranks"] == "a:2 c:-" and q["first_relevant_rank"] == 2
    assert (
        result.metrics["Recall@1"] == 0.0 and result.metrics["R@2"] == 0.5
    )  # c counts as a miss: 1 of 2 found in the top 2
    assert unreachable_pairs(corpus.cutoff, judged.relevant, corpus.position) == 1

    corpus_year = dated_corpus("year")
    rankings, cited = rank_queries(
        MatrixSystem(row).fit(corpus_year),
        corpus_year,
        judged,
        EvalConfig(recall_k=1, ndcg_k=2, recall_ks=(2,), mrr_k=2, depth=5, cutoff="year"),
    )
    assert rankings["q"] == ["c", "b", "a"] and cited["q"] == {"a": 3, "c": 1}


def test_a_corpus_under_another_cut_off_than_the_evaluation_is_refused():
    corpus = dated_corpus("none")
    judged = judgements([Citation("q", "a")], corpus)
    with pytest.raises(ValueError, match="loaded under the none cut-off, the evaluation asks for priority"):
        evaluate_retrieval(MatrixSystem(np.zeros((7, 7))).fit(corpus), corpus, judged, EvalConfig())


def test_fusion_and_late_first_stages_rank_only_the_candidates_that_pass():
    from graphtx.eval.fusion import FusionSystem

    corpus = dated_corpus("priority")
    a = np.zeros((7, 7))
    a[6] = [0.1, 0.2, 0.9, 0.8, 0.7, 0.95, 1.0]
    b = np.zeros((7, 7))
    b[6] = [0.5, 0.1, 0.9, 0.9, 0.9, 0.9, 1.0]
    fused = FusionSystem([MatrixSystem(a), MatrixSystem(b)], rrf_k=0, depth=2).fit(corpus)
    s = fused.scores(np.array([6]))[0]
    assert np.isneginf(s[2:]).all()  # c d e f and q: no candidates, no ranks
    assert s[0] == pytest.approx(1 / 2 + 1 / 1) and s[1] == pytest.approx(
        1 / 1 + 1 / 2
    )  # a and b ranked 1-2 among the two that pass


def test_paecter_samples_keep_their_candidates_under_a_cut_off():
    """A fused system cuts its members' scores under the cut-off, but never inside PaECTER's fixed samples."""
    from graphtx.eval.fusion import FusionSystem
    from graphtx.eval.protocols import PaecterSample, PaecterSamples, evaluate_paecter

    a = np.zeros((7, 7))
    a[6] = [0.1, 0.2, 0.9, 0.8, 0.7, 0.95, 1.0]
    b = np.zeros((7, 7))
    b[6] = [0.5, 0.1, 0.9, 0.9, 0.9, 0.9, 1.0]
    samples = PaecterSamples([PaecterSample("q", ("c",), ("d",), ("a", "b"))], {})
    cfg = EvalConfig(mrr_k=2, paecter_cited=1, paecter_hard=1, paecter_easy=2)
    results = []
    for policy in ("none", "priority"):
        corpus = dated_corpus(policy)
        fused = FusionSystem([MatrixSystem(a), MatrixSystem(b)], rrf_k=0, depth=6).fit(corpus)
        results.append(evaluate_paecter(fused, corpus, samples, cfg).per_sample)
        assert (
            corpus.candidate_mask(np.array([6])) is not None or policy == "none"
        )  # the cut-off is back after the protocol
    assert results[0] == results[1] and results[0][0]["RFR"] == 1  # c (same year as q) is ranked first either way
