"""benchmarks/teacher_alone.py: a teacher's vectors ranked under the evaluation's cut-off, scored as the eval scores."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
teacher_alone = pytest.importorskip("teacher_alone")

from graphtx.eval.cutoff import CandidateCutoff  # noqa: E402

IDS = ["Q", "A", "B", "LATE"]
VECTORS = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)  # LATE is the query's twin


def cutoff(policy: str) -> CandidateCutoff:
    return CandidateCutoff.build(policy, dates=["2010-01-01", "2005", "2006", "2012"], priority=["2009-06-01", "", "", ""],
                                 families=IDS)  # fmt: skip


def test_the_cut_off_removes_later_documents_and_the_query():
    rows = teacher_alone.score_queries(VECTORS, IDS, cutoff("priority"), {"Q": {"A", "B"}})
    assert rows == [{"query": "Q", "relevant": 2, "hits@3": 2, "Recall@3": 1.0, "nDCG@150": pytest.approx(1.0)}]


def test_without_the_cut_off_a_later_twin_outranks_the_cited():
    rows = teacher_alone.score_queries(VECTORS, IDS, cutoff("none"), {"Q": {"B"}})
    # LATE (cosine 1) then A (0.8) then B (0): B at rank 3, the query itself never ranked
    assert rows[0]["hits@3"] == 1
    assert rows[0]["nDCG@150"] == pytest.approx(1 / math.log2(4))


def test_a_query_outside_the_corpus_is_skipped(capsys):
    assert teacher_alone.score_queries(VECTORS, IDS, cutoff("priority"), {"MISSING": {"A"}}) == []
    assert "skipped query MISSING" in capsys.readouterr().err
