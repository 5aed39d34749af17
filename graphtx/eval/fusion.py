"""Reciprocal rank fusion of evaluated systems: the hybrid ranking of ``graphtx search --hybrid``.

For a query q and candidate d, with rank_s(d) the 1-based rank of d in system s's ranking of
q's candidates (score desc, then id: the evaluation's tie rule; the query itself is left out
first when the evaluation leaves it out)::

    score(q, d) = sum over systems s of  w_s / (rrf_k + rank_s(d))   if rank_s(d) <= depth, else 0

(Cormack, Clarke & Buettcher 2009), the same rule as :func:`graphtx.index.hybrid.rrf` with the
search's defaults (k 60, the top 100 of each ranker). Fused scores are ranked like any
system's, so ties again fall to the smaller id.

Example::

    hybrid = FusionSystem.from_config([graphtx, bm25], cfg, label="graphtx + BM25 (RRF)")
    report = evaluate_citations(corpus, citations, [graphtx, bm25, hybrid], cfg)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import System
from graphtx.metrics import rrf_score


def ranks_by_row(scores: np.ndarray) -> np.ndarray:
    """(q, c) scores -> (q, c) 1-based ranks, score desc then column asc (-inf last)."""
    q, c = scores.shape
    columns = np.broadcast_to(np.arange(c), (q, c))
    order = np.lexsort((columns, -scores), axis=-1)  # (q, c): columns best first
    ranks = np.empty((q, c), dtype=np.int64)
    np.put_along_axis(ranks, order, np.arange(1, c + 1)[None, :].repeat(q, 0), axis=-1)
    return ranks


class FusionSystem(System):
    name = "hybrid"

    def __init__(
        self,
        members: Sequence[System],
        weights: Sequence[float] | None = None,
        rrf_k: int = 60,
        depth: int = 100,
        leave_out_self: bool = True,
        label: str = "",
    ):
        super().__init__()
        if len(members) < 2:
            raise ValueError("fusion needs at least two systems")
        self.members = list(members)
        self.weights = [1.0] * len(members) if weights is None else [float(w) for w in weights]
        if len(self.weights) != len(self.members) or min(self.weights) < 0:
            raise ValueError("one weight >= 0 per fused system")
        if rrf_k < 0 or depth < 1:
            raise ValueError("rrf_k must be >= 0 and depth >= 1")
        self.rrf_k, self.depth, self.leave_out_self = rrf_k, depth, leave_out_self
        self.fixed_label = label
        self.label = label or "hybrid (RRF)"

    @classmethod
    def from_config(cls, members: Sequence[System], cfg: EvalConfig, label: str = "") -> FusionSystem:
        """Equal weights, ``cfg.rrf_k`` and ``cfg.rrf_depth``, and the evaluation's leave-out rule."""
        return cls(members, rrf_k=cfg.rrf_k, depth=cfg.rrf_depth, leave_out_self=cfg.leave_out_self, label=label)

    def fit(self, corpus: EvalCorpus) -> FusionSystem:
        for m in self.members:
            if m.corpus is not corpus:
                m.fit(corpus)
        self.corpus = corpus
        self.label = (
            self.fixed_label or " + ".join(m.label for m in self.members) + " (RRF)"
        )  # members know their labels once fitted
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:
        from graphtx.rank.pool import apply_cutoff

        fused = np.zeros((len(rows), len(self.corpus)), dtype=np.float64)  # (q, c)
        mask = self.corpus.candidate_mask(rows)  # (q, c) bool or None: the evaluation's cut-off
        for member, weight in zip(self.members, self.weights):
            s = apply_cutoff(np.array(member.scores(rows), dtype=np.float64), mask)  # (q, c); cut-off candidates -inf
            if self.leave_out_self:
                s[np.arange(len(rows)), rows] = -np.inf  # the query is no candidate: it takes no rank
            ranks = ranks_by_row(s)  # (q, c)
            contributes = (
                ranks <= self.depth if mask is None else (ranks <= self.depth) & mask
            )  # a cut-off candidate takes no rank
            fused += np.where(contributes, rrf_score(ranks, self.rrf_k, weight), 0.0)
        if self.leave_out_self:
            fused[np.arange(len(rows)), rows] = -np.inf
        return apply_cutoff(fused, mask)

    def info(self) -> dict:
        return {
            "members": [m.label for m in self.members],
            "weights": self.weights,
            "rrf_k": self.rrf_k,
            "depth": self.depth,
        }
