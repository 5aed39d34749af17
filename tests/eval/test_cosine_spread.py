"""benchmarks/studies/cosine_spread.py: each part's share of the fused cosine's spread."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import cosine_spread  # noqa: E402  (our own script: it imports or the test fails, never skips)


def _vectors(graph: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    return np.hstack([graph, lexical]).astype(np.float32)


@pytest.mark.timeout(30)
def test_a_constant_graph_part_carries_none_of_the_spread():
    rng = np.random.default_rng(0)
    s = cosine_spread.part_spreads(_vectors(np.ones((6, 4)), rng.normal(size=(6, 8))), graph_dim=4, lexical_weight=0.4)
    assert s["graph_mean"] == pytest.approx(1.0) and s["graph_std"] == pytest.approx(0.0, abs=1e-6)
    assert s["graph_share"] == pytest.approx(0.0, abs=1e-6) and s["lexical_std"] > 0


@pytest.mark.timeout(30)
def test_equal_parts_split_the_spread_by_the_lexical_weight_and_correlate_fully():
    part = np.random.default_rng(1).normal(size=(7, 5))
    s = cosine_spread.part_spreads(
        _vectors(part, 3 * part), graph_dim=5, lexical_weight=0.4
    )  # same directions, other scale
    assert s["graph_std"] == pytest.approx(s["lexical_std"]) and s["correlation"] == pytest.approx(1.0)
    assert s["graph_share"] == pytest.approx(0.6)


@pytest.mark.timeout(30)
def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="graph part and a lexical part"):
        cosine_spread.part_spreads(np.ones((5, 4)), graph_dim=4, lexical_weight=0.4)
    with pytest.raises(ValueError, match=">= 3 vectors"):
        cosine_spread.part_spreads(np.ones((2, 4)), graph_dim=2, lexical_weight=0.4)
