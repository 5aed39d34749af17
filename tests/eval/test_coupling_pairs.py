"""benchmarks/studies/coupling_pairs.py: documents mentioning one outside patent become a (later, earlier) pair."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import coupling_pairs  # noqa: E402  (our own script: it imports or the test fails, never skips)

OUT = coupling_pairs.NOT_IN_CORPUS
DATES = {"A": "2010-01-01", "B": "2012-05-01", "C": "2014-03-01", "D": "2014-03-01", "E": "2011-01-01"}


def _m(doc: str, number: str, dropped: str | None = OUT) -> dict:
    return {"citing_id": doc, "number": number, "cited_id": None, "dropped": dropped}


@pytest.mark.timeout(30)
def test_pairs_are_ordered_later_to_earlier_and_only_outside_mentions_couple():
    mentions = [
        _m("A", "US1"),
        _m("B", "US1"),
        _m("C", "US1"),
        _m("A", "US2", "a related application (continuation)"),
        _m("E", "US2", "a related application (continuation)"),
        _m("E", "US3"),
        _m("NOT-IN-CORPUS", "US3"),
    ]
    pairs, dropped = coupling_pairs.coupling_pairs(mentions, DATES, set(), max_citers=20)
    assert pairs == {("B", "A"), ("C", "A"), ("C", "B")}  # a family mention (US2) and a lone citer (US3) give none
    assert not dropped


@pytest.mark.timeout(30)
def test_excluded_citations_in_either_direction_same_dates_and_generic_references_are_dropped():
    mentions = [_m(d, "US1") for d in ("A", "B", "C", "D")] + [_m(d, "US9") for d in ("A", "E")]
    pairs, dropped = coupling_pairs.coupling_pairs(mentions, DATES, {("A", "B")}, max_citers=20)
    assert ("B", "A") not in pairs and ("C", "D") not in pairs and ("D", "C") not in pairs
    assert dropped == {"an excluded citation": 1, "same date": 1}
    assert ("E", "A") in pairs
    few, _ = coupling_pairs.coupling_pairs(mentions, DATES, set(), max_citers=3)  # US1 has 4 citers: generic
    assert few == {("E", "A")}


@pytest.mark.timeout(30)
def test_the_validation_split_is_seeded_and_about_its_share():
    ids = [f"US-{i}" for i in range(2000)]
    valid = [d for d in ids if coupling_pairs.is_valid(d, 0.1, 0)]
    assert 150 < len(valid) < 250
    assert valid == [d for d in ids if coupling_pairs.is_valid(d, 0.1, 0)]
    assert valid != [d for d in ids if coupling_pairs.is_valid(d, 0.1, 1)]
    assert not any(coupling_pairs.is_valid(d, 0.0, 0) for d in ids)
