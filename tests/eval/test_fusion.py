"""FusionSystem: reciprocal rank fusion of two systems' rankings, by hand on a tiny corpus."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.eval.data import EvalCorpus
from graphtx.eval.fusion import FusionSystem, ranks_by_row
from graphtx.eval.systems import System


class Fixed(System):
    """Scores from a fixed (corpus x corpus) matrix."""

    def __init__(self, name: str, matrix):
        super().__init__()
        self.name = self.label = name
        self.matrix = np.asarray(matrix, dtype=np.float64)

    def scores(self, rows):
        return self.matrix[rows].copy()


def _corpus(n: int) -> EvalCorpus:
    ids = tuple(f"D{i:02d}" for i in range(n))  # sorted as strings
    return EvalCorpus(ids, ids, ids, tuple(() for _ in ids))


def test_ranks_by_row_breaks_ties_by_column_and_puts_minus_inf_last():
    s = np.array([[0.5, 0.9, 0.5, -np.inf], [1.0, 1.0, 1.0, 1.0]])
    assert ranks_by_row(s).tolist() == [[2, 1, 3, 4], [1, 2, 3, 4]]


def test_fused_scores_are_hand_computed_rrf_with_the_query_left_out():
    a = Fixed("a", [[9, 3, 2, 1], [0, 9, 1, 2], [0, 0, 9, 0], [0, 0, 0, 9]])
    b = Fixed("b", [[9, 1, 3, 2], [2, 9, 0, 1], [0, 0, 9, 0], [0, 0, 0, 9]])
    fusion = FusionSystem([a, b], rrf_k=10, depth=2).fit(_corpus(4))
    s = fusion.scores(np.array([0, 1]))
    # query 0, own column left out: a ranks D1, D2, D3; b ranks D2, D3, D1 (only the top 2 count)
    assert s[0, 0] == -np.inf
    assert s[0, 1] == pytest.approx(1 / 11)  # a: rank 1; b: rank 3 > depth
    assert s[0, 2] == pytest.approx(1 / 12 + 1 / 11)
    assert s[0, 3] == pytest.approx(1 / 12)  # b: rank 2; a: rank 3 > depth
    # query 1: a ranks D3, D2, D0; b ranks D0, D3, D2
    assert s[1].tolist() == pytest.approx([1 / 11, -np.inf, 1 / 12, 1 / 11 + 1 / 12])
    assert fusion.label == "a + b (RRF)"


def test_a_system_fused_with_itself_keeps_its_order():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(30, 30))
    a = Fixed("a", m)
    fusion = FusionSystem([a, a], depth=30).fit(_corpus(30))
    rows = np.arange(30)
    own, fused = a.scores(rows), fusion.scores(rows)
    for q in rows:
        keep = np.arange(30) != q
        assert np.argsort(-own[q][keep], kind="stable").tolist() == np.argsort(-fused[q][keep], kind="stable").tolist()


def test_bad_arguments():
    a = Fixed("a", np.eye(2))
    with pytest.raises(ValueError, match="two systems"):
        FusionSystem([a])
    with pytest.raises(ValueError, match="one weight"):
        FusionSystem([a, a], weights=[1.0])
