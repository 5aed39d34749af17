"""benchmarks/teacher_alone.py: a teacher's vectors scored by the evaluation's own protocol and cut-off."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus, Judgements
from graphtx.eval.protocols import evaluate_retrieval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
teacher_alone = pytest.importorskip("teacher_alone")

IDS = ("A", "B", "LATE", "Q")
VECTORS = {"Q": [1.0, 0.0], "A": [0.8, 0.6], "B": [0.0, 1.0], "LATE": [1.0, 0.0]}  # LATE is the query's twin


class FixedTeacher(teacher_alone.TeacherSystem):
    """The system with hand-set vectors in place of a teacher directory (LATE left without one when asked)."""

    def __init__(self, without=()):
        super().__init__("unused")
        self.without = set(without)

    def fit(self, corpus):
        super(teacher_alone.TeacherSystem, self).fit(corpus)
        vectors = np.array([VECTORS[d] for d in corpus.ids])
        known = np.array([d not in self.without for d in corpus.ids])
        self.set_vectors(vectors, vectors, known, known)
        return self


def scored(policy: str, relevant: dict, without=()) -> dict:
    cfg = EvalConfig(cutoff=policy)
    corpus = EvalCorpus(ids=IDS, query_texts=IDS, candidate_texts=IDS, codes=((),) * 4, dates=("2005", "2006", "2012", "2010-01-01"),
                        priority=("", "", "", "2009-06-01"), cutoff_policy=policy)  # fmt: skip
    judged = Judgements(relevant, sum(map(len, relevant.values())), {})
    return evaluate_retrieval(FixedTeacher(without).fit(corpus), corpus, judged, cfg).per_query[0]


def test_the_cut_off_removes_later_documents_and_the_query():
    row = scored("priority", {"Q": {"A": 1.0, "B": 1.0}})
    assert row["hits@3"] == 2 and row["nDCG@150"] == pytest.approx(1.0)
    assert "LATE" not in row["top3"].split() and "Q" not in row["top3"].split()


def test_without_the_cut_off_a_later_twin_outranks_the_cited():
    row = scored("none", {"Q": {"B": 1.0}})  # LATE (cosine 1), A (0.8), then B (0)
    assert row["top3"].split() == ["LATE", "A", "B"]
    assert row["nDCG@150"] == pytest.approx(1 / math.log2(4))


def test_a_document_without_a_teacher_vector_ranks_below_every_scored_one():
    row = scored("none", {"Q": {"B": 1.0}}, without={"LATE"})  # the query's twin, but no vector: last
    assert row["top3"].split() == ["A", "B", "LATE"]
    assert row["hits@3"] == 1
