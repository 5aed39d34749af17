"""The claim chart's rule for "found by the model" and the calibration behind it (made by graphtx/index/calibration.py)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

QUANTILES = 201  # stored points of the null distribution (0, 0.5, ..., 100 %)


@dataclass(frozen=True)
class FoundCalibration:
    null: tuple[float, ...]  # QUANTILES quantiles of a feature's best cosine in an unrelated document, ascending
    false_rate: float  # share of unrelated-document matches allowed to count as found
    threshold: float  # the (1 - false_rate) quantile: found by the model at or above it
    pairs: int  # (query feature, unrelated document) pairs measured
    documents: int  # documents sampled

    def confidence(self, similarity: float) -> float:
        """Share of unrelated-document matches below ``similarity`` (0..1, interpolated between stored quantiles)."""
        q = self.null
        if similarity <= q[0]:
            return 0.0
        if similarity >= q[-1]:
            return 1.0
        i = bisect_left(q, similarity)
        lo, hi = q[i - 1], q[i]
        frac = 0.0 if hi <= lo else (similarity - lo) / (hi - lo)
        return ((i - 1) + frac) / (len(q) - 1)

    def to_json(self) -> dict:
        return {
            "threshold": round(self.threshold, 4),
            "false_rate": self.false_rate,
            "pairs": self.pairs,
            "documents": self.documents,
            "median_unrelated": round(self.null[len(self.null) // 2], 4),
        }


@dataclass(frozen=True)
class FoundRule:
    """How a claim chart decides "found by the model": a cosine threshold, the calibration behind it (for each match's
    confidence), and which feature texts hold a word the index knows (a feature of unknown words is never found by the model)."""

    threshold: float
    calibration: FoundCalibration | None = None
    known: Callable[[str], bool] | None = None

    def found(self, text: str, similarity: float) -> bool:
        return similarity >= self.threshold and (self.known is None or self.known(text))

    def confidence(self, similarity: float) -> float | None:
        return None if self.calibration is None else self.calibration.confidence(similarity)


def _quantiles(values: list[float], n: int = QUANTILES) -> tuple[float, ...]:
    ordered = sorted(values)
    last = len(ordered) - 1
    return tuple(ordered[round(i * last / (n - 1))] for i in range(n))
