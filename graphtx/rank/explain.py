"""Why a ranker gave a hit its score: which signal contributed what.

Each explanation splits the ranker's score exactly: ``score = base + sum(signals.values())``.

==========  ==================================================================================
hybrid      RRF: ``w_dense / (rrf_k + dense rank) + w_bm25 / (rrf_k + BM25 rank)``; a ranking that
            did not hold the hit contributes 0
convex      ``a * norm(BM25) + (1 - a) * norm(cosine)``: the two terms
learned     LightGBM's per-feature SHAP values (``predict(pred_contrib=True)``, TreeSHAP): one
            contribution per feature plus the model's expected value (``base``); signals are the
            sums over each feature group (``bm25`` = the lexical group, ``dense``, ``late``, ``meta``).
            ``year_gap`` (meta) is the query's year less the hit's: how old cited prior art tends to
            be. It is no cut-off: the date filter of a search removes later documents before the ranker
            (and rank-fit fits on pools cut the same way, ``eval.cutoff``), so it cannot learn one
==========  ==================================================================================

Example::

    e = explain_pool(ranker, "learned", inputs, stats, rows=np.array([3, 7]))[0]
    e.signals            # {"bm25": 0.41, "dense": -0.05, "late": 0.0, "meta": 0.02}
    e.lines()            # printable, largest first
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphtx.metrics import rrf_score
from graphtx.rank.convex import LOWER_BOUND, normalise
from graphtx.rank.features import GROUPS, LexicalStats, PoolInputs, pool_features

SIGNAL_OF_GROUP = {"lexical": "bm25", "dense": "dense", "late": "late", "meta": "meta"}
SIGNAL_LABEL = {
    "bm25": "BM25 / query terms",
    "dense": "dense (graph model)",
    "late": "late interaction",
    "meta": "dates and classes",
}


@dataclass(frozen=True)
class RankerExplanation:
    ranker: str  # hybrid | convex | learned | learned-lexical
    score: float  # the ranker's score of the hit
    base: float  # the part no signal owns (learned: the model's expected value; else 0)
    signals: dict[str, float]  # signal -> contribution (bm25, dense, late, meta); base + sum = score
    features: dict[str, float] = field(default_factory=dict)  # learned: feature -> SHAP contribution
    inputs: dict = field(default_factory=dict)  # what each signal read: ranks, scores, normalised values

    @property
    def total(self) -> float:
        return self.base + sum(self.signals.values())

    def to_json(self) -> dict:
        out = {
            "ranker": self.ranker,
            "score": round(self.score, 6),
            "base": round(self.base, 6),
            "signals": {k: round(v, 6) for k, v in self.signals.items()},
        }
        if self.features:
            out["features"] = {k: round(v, 6) for k, v in self.features.items()}
        if self.inputs:
            out["inputs"] = {k: round(v, 6) if isinstance(v, float) else v for k, v in self.inputs.items()}
        return out

    def lines(self, features: int = 6) -> list[str]:
        """Printable rows: the score, each signal's part (largest first), the largest feature contributions."""
        head = f"    {self.ranker} score {self.score:+.4f} = "
        parts = ([f"base {self.base:+.4f}"] if self.base else []) + [
            f"{name} {v:+.4f}" for name, v in _largest(self.signals) if abs(v) > 1e-12
        ]
        lines = [head + " ".join(parts)]
        if self.features:
            top = _largest(self.features)[:features]
            lines.append(
                "    largest feature contributions: " + ", ".join(f"{n} {v:+.4f}{self._reading(n)}" for n, v in top)
            )
        return lines

    def _reading(self, feature: str) -> str:
        """What a feature's value was, where a number alone would not say it."""
        if feature == "year_gap" and "year_gap" in self.inputs:
            gap = self.inputs["year_gap"]
            if gap == 0:
                return " (hit of the query's year: how old cited prior art tends to be)"
            # the date cut-off is a filter of its own: this feature only says how old cited prior art tends to be
            return f" (hit {abs(gap):g} year{'s' if abs(gap) != 1 else ''} {'before' if gap >= 0 else 'after'} the query: how old cited prior art tends to be)"
        return ""


def _largest(values: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(values.items(), key=lambda item: (-abs(item[1]), item[0]))


def explain_rrf(
    dense_rank: int | None, bm25_rank: int | None, dense_weight: float, bm25_weight: float, rrf_k: int
) -> RankerExplanation:
    """The RRF score of one hit split into its two rankings' terms (ranks from 1; None: not in that ranking)."""
    signals = {
        "dense": rrf_score(dense_rank, rrf_k, dense_weight) if dense_rank is not None and dense_weight else 0.0,
        "bm25": rrf_score(bm25_rank, rrf_k, bm25_weight) if bm25_rank is not None and bm25_weight else 0.0,
    }
    return RankerExplanation(
        "hybrid",
        sum(signals.values()),
        0.0,
        signals,
        inputs={"dense_rank": dense_rank, "bm25_rank": bm25_rank, "rrf_k": rrf_k},
    )


def explain_pool(
    ranker, kind: str, inputs: PoolInputs, stats: LexicalStats, rows: np.ndarray
) -> list[RankerExplanation]:
    """Explanations of the pool candidates at ``rows`` (positions in ``inputs.candidates``) under ``ranker``'s ``kind``.

    Pool-relative features (z-scores, min-max, ranks) are computed over the whole pool, as when scoring.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if kind == "convex":
        a, norm = float(ranker.convex["weight"]), ranker.convex["norm"]
        nb = normalise(inputs.bm25, norm, LOWER_BOUND["bm25"])  # (n,)
        nd = normalise(inputs.dense, norm, LOWER_BOUND["dense"])  # (n,)
        out = []
        for r in rows:
            signals = {"bm25": a * float(nb[r]), "dense": (1 - a) * float(nd[r])}
            ins = {
                "weight": a,
                "norm": norm,
                "bm25": float(inputs.bm25[r]),
                "bm25_normalised": float(nb[r]),
                "dense": float(inputs.dense[r]),
                "dense_normalised": float(nd[r]),
            }
            out.append(RankerExplanation("convex", sum(signals.values()), 0.0, signals, inputs=ins))
        return out
    if kind not in ranker.boosters:
        raise ValueError(f"ranker {ranker.directory or ''} has no {kind!r} model; it has: {', '.join(ranker.kinds)}")
    names = ranker.features[kind]
    x = pool_features(inputs, stats, names)  # (n, F), over the whole pool
    booster = ranker.boosters[kind]
    contrib = np.asarray(booster.predict(x[rows], pred_contrib=True, num_threads=1), dtype=np.float64).reshape(
        len(rows), len(names) + 1
    )  # (r, F + 1)
    scores = np.asarray(booster.predict(x[rows], num_threads=1), dtype=np.float64).reshape(len(rows))  # (r,)
    group_of = {name: SIGNAL_OF_GROUP[g] for g, cols in GROUPS.items() for name in cols}
    out = []
    for i in range(len(rows)):
        features = {n: float(contrib[i, j]) for j, n in enumerate(names)}
        signals: dict[str, float] = {}
        for n, v in features.items():
            signals[group_of.get(n, "other")] = signals.get(group_of.get(n, "other"), 0.0) + v
        values = {n: float(x[rows[i], j]) for j, n in enumerate(names)}
        ins = {
            k: values[k]
            for k in ("bm25", "dense", "late", "terms_matched_share", "year_gap")
            if k in values and np.isfinite(values[k])
        }
        out.append(RankerExplanation(kind, float(scores[i]), float(contrib[i, -1]), signals, features, ins))
    return out
