"""The searcher's cut-off: which candidates a query document may retrieve (``eval.cutoff``, ``--cutoff``).

A patent searcher looks only at documents published before the application's priority date, and
``graphtx search --id`` lets only those through by default (:mod:`graphtx.index.filters`). An
evaluation that ranks every document of the set measures something else: a ranker can learn that
later documents are never cited. The policies, applied to every system of a run alike (text baselines,
graphtx, the fused, re-ranked and learned rankers and their candidate pools):

* ``none`` — every document but the query itself (the paper's protocol, Björkqvist & Kallio 2023);
* ``priority`` — what ``graphtx search --id`` lets through: documents published strictly before the
  query's priority date (its publication date when no priority date is known). A date known only to
  the year or month counts as its last day for a candidate ("2009" = 2009-12-31: it passes only when
  surely before) and as its first day for the query's cut-off ("2009" = before 2009-01-01), so on a set
  dated by years only, a candidate passes when its year is before the query's. A candidate without a
  date never passes; a query without a date has no date cut-off. The query's family (``family_id``,
  else the same number under another kind code) is left out, as search leaves it out;
* ``year`` — a candidate passes when its year is not after the query's year (same-year documents
  pass): the inclusive reading of year-only dates. Undated candidates never pass; the query's family
  is left out.

A judged pair whose cited document the cut-off removes stays in the judgements and counts as a miss
(as in a run of ``graphtx search --topics`` scored by ``graphtx eval run``); :func:`unreachable_pairs`
counts them so the report can say how many.

Example::

    cut = CandidateCutoff.build("priority", dates=("2008", "2007-05-01"), priority=("", ""), families=("A", "B"))
    cut.mask(np.array([0]))   # [[False, True]]: the query itself out, a 2007 document in
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from graphtx.index.filters import cutoff_start, date_end, iso_cutoff  # the search's date rules, shared

CUTOFFS = ("none", "priority", "year")
DESCRIPTIONS = {
    "none": "none (the paper's protocol): every document of the set but the query",
    "priority": "priority (the searcher's protocol, as `graphtx search --id`): candidates published strictly before the query's priority "
    "date (else its publication date); a date known only to the year or month counts as its last day (a query's cut-off as its first); "
    "undated candidates never pass; the query's family left out",
    "year": "year: candidates whose year is not after the query's year (same-year documents pass); undated candidates never pass; "
    "the query's family left out",
}


def check_cutoff(policy: str) -> str:
    if policy not in CUTOFFS:
        raise ValueError(f"eval.cutoff must be one of {', '.join(CUTOFFS)}, got {policy!r}")
    return policy


def _day(iso: str) -> int:
    """ "2009-06-30" -> 20090630 (a full ISO date); 0 for ""."""
    return int(iso.replace("-", "")) if iso else 0


def _iso(date: str) -> str:
    """A stored date -> ISO, partial dates kept partial ("2009", "2009-06"); "" when it is no date."""
    date = (date or "").strip()[:10]
    if not date:
        return ""
    try:
        return iso_cutoff(date)
    except ValueError:
        return ""


@dataclass(frozen=True, eq=False)
class CandidateCutoff:
    """One policy over one corpus's documents (rows in the corpus's id order)."""

    policy: str
    ends: np.ndarray  # (c,) int64 YYYYMMDD: the last day each document's date may mean; 0 unknown
    starts: (
        np.ndarray
    )  # (c,) int64 YYYYMMDD: the first day of each document's cut-off as a query (priority, else date); 0: none
    years: np.ndarray  # (c,) int64 year of each document's date; 0 unknown
    query_years: np.ndarray  # (c,) int64 year of each document's cut-off date as a query; 0: none
    families: np.ndarray  # (c,) int64 family code: documents of one family share it

    @classmethod
    def build(
        cls, policy: str, dates: Sequence[str], priority: Sequence[str], families: Sequence[str]
    ) -> CandidateCutoff:
        """``dates`` publication dates, ``priority`` priority dates ("" unknown), ``families`` family keys, one per document."""
        check_cutoff(policy)
        iso = [_iso(d) for d in dates]
        query_iso = [_iso(p) or d for p, d in zip(priority or [""] * len(iso), iso)]
        _, family_codes = np.unique(np.asarray(families, dtype=str), return_inverse=True)
        return cls(
            policy=policy,
            ends=np.array([_day(date_end(d)) for d in iso], dtype=np.int64),
            starts=np.array([_day(cutoff_start(d)) if d else 0 for d in query_iso], dtype=np.int64),
            years=np.array([int(d[:4]) if d else 0 for d in iso], dtype=np.int64),
            query_years=np.array([int(d[:4]) if d else 0 for d in query_iso], dtype=np.int64),
            families=family_codes.astype(np.int64).reshape(-1),
        )

    @property
    def active(self) -> bool:
        return self.policy != "none"

    def mask(self, rows: np.ndarray) -> np.ndarray | None:
        """(q, c) bool: the candidates each query row may retrieve (never itself); None under ``none`` (all but the query)."""
        if not self.active:
            return None
        rows = np.asarray(rows, dtype=np.int64)
        if self.policy == "priority":
            start = self.starts[rows][:, None]  # (q, 1)
            dated = (self.ends[None, :] > 0) & (self.ends[None, :] < start)  # (q, c)
            allowed = np.where(start > 0, dated, True)
        else:  # year
            qyear = self.query_years[rows][:, None]  # (q, 1)
            dated = (self.years[None, :] > 0) & (self.years[None, :] <= qyear)
            allowed = np.where(qyear > 0, dated, True)
        allowed &= self.families[None, :] != self.families[rows][:, None]  # the query's family (and the query) out
        return allowed

    def describe(self) -> str:
        return DESCRIPTIONS[self.policy]


def unreachable_pairs(
    cutoff: CandidateCutoff, relevant: Mapping[str, Mapping[str, float]], position: Mapping[str, int]
) -> int:
    """Judged (query, cited) pairs whose cited document the cut-off removes (scored as misses)."""
    if not cutoff.active or not relevant:
        return 0
    queries, out = list(relevant), 0
    for start in range(0, len(queries), 256):  # (256, c) masks at a time
        part = queries[start : start + 256]
        mask = cutoff.mask(np.array([position[q] for q in part]))
        out += sum(int(not mask[i, position[d]]) for i, q in enumerate(part) for d in relevant[q])
    return out


__all__ = ["CUTOFFS", "CandidateCutoff", "check_cutoff", "unreachable_pairs"]
