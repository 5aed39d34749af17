"""Fitting the convex and learned rankers on training citations (``graphtx rank-fit``): training work, beside the
rankers it fits. The command's wiring (reading the corpus and the citations, the systems, the report) is
``graphtx.eval.ranker.run_rank_fit``; the evaluation of a fitted ranker is ``graphtx.eval.ranker.RankerSystem``.

Fitting and evaluating both go through :meth:`PoolSource.pool_inputs` and :meth:`graphtx.rank.store.Ranker.score`
(which calls the one feature function, :func:`graphtx.rank.features.pool_features`), so the rows a ranker is fitted
on are the rows it ranks at evaluation time. ``corpus``, ``bm25`` and ``dense`` are the evaluation's corpus and
systems, read through what they offer (``candidate_mask``, ``year``, ``codes``, ``ids``, ``rows``; ``scores``,
``retriever``, ``fitted_tokens``), so this module imports none of them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from graphtx.rank.config import RankConfig
from graphtx.rank.convex import NORMS, Group, fit_weight
from graphtx.rank.features import GRAPH_GROUPS, LexicalStats, PoolInputs, candidate_pool, feature_names
from graphtx.rank.pool import apply_cutoff
from graphtx.rank.store import Ranker


class PoolSource:
    """BM25 and dense scores of a corpus's documents, and what the features read of them."""

    def __init__(self, corpus, bm25, dense, late=None):
        """``late``: HOOK for a late-interaction scorer, ``late(query_row, candidate_rows (n,)) -> (n,)`` scores
        (the ``late`` feature group; without it those features are missing)."""
        self.corpus, self.bm25, self.dense, self.late = corpus, bm25, dense, late
        for s in (bm25, dense):
            if s is not None and s.corpus is not corpus:
                s.fit(corpus)
        self.stats = LexicalStats.from_bm25s(bm25.retriever)
        _, query_tokens = bm25.fitted_tokens
        self.query_terms = [self.stats.term_ids(t) for t in query_tokens]

    def scores(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(bm25 (q, c), dense (q, c) or None); the candidates the corpus's cut-off rules out -inf, so no pool takes them."""
        mask = self.corpus.candidate_mask(rows)  # (q, c) bool or None
        bm25 = apply_cutoff(self.bm25.scores(rows), mask)
        return bm25, None if self.dense is None else apply_cutoff(
            np.asarray(self.dense.scores(rows), dtype=np.float64), mask
        )

    def pool_inputs(
        self,
        row: int,
        bm25_row: np.ndarray,
        dense_row: np.ndarray | None,
        depth: int,
        exclude_self: bool = True,
        year: bool = True,
    ) -> PoolInputs:
        pool = candidate_pool(bm25_row, dense_row, depth, row if exclude_self else None)  # (n,)
        c = self.corpus
        return PoolInputs(
            candidates=pool,
            bm25=bm25_row[pool],
            dense=None if dense_row is None else dense_row[pool],
            query_terms=self.query_terms[row],
            query_year=c.year(row) if year else math.nan,
            candidate_years=np.array([c.year(int(r)) for r in pool], dtype=np.float64),
            query_codes=c.codes[row],
            candidate_codes=[c.codes[int(r)] for r in pool],
            late=None if self.late is None else np.asarray(self.late(row, pool), dtype=np.float64),
        )


def training_groups(
    source: PoolSource,
    judged,
    depth: int,
    names: Sequence[str],
    date_dropout: float = 0.0,
    seed: int = 0,
    chunk: int = 256,
    progress: bool | None = None,
) -> list[Group]:
    """One :class:`Group` per judged query with a non-empty pool: pool scores, gains, ideal gains, features (``names``)."""
    from graphtx.progress import progress_bar
    from graphtx.rank.features import pool_features

    queries = judged.query_ids
    rows = source.corpus.rows(queries)
    no_year = (
        np.random.default_rng(seed + 31).random(len(queries)) < date_dropout
    )  # (Q,) queries fitted without their year
    groups = []
    for start in progress_bar(
        range(0, len(rows), chunk), desc="ranker features", unit="chunk", enabled=progress, leave=False
    ):
        part = rows[start : start + chunk]
        bm25, dense = source.scores(part)
        for i, row in enumerate(part):
            q = queries[start + i]
            inputs = source.pool_inputs(
                int(row), bm25[i], None if dense is None else dense[i], depth, year=not no_year[start + i]
            )
            if not len(inputs.candidates):  # the cut-off leaves this query nothing to rank (nothing earlier in the set)
                continue
            rel = judged.relevant[q]
            gains = np.array([rel.get(source.corpus.ids[int(r)], 0.0) for r in inputs.candidates], dtype=np.float64)
            ideal = np.array(sorted(rel.values(), reverse=True), dtype=np.float64)
            feats = pool_features(inputs, source.stats, names) if names else None
            groups.append(Group(q, inputs.bm25, inputs.dense, gains, ideal, feats))
    return groups


def fit_ranker(
    source: PoolSource, judged, cfg: RankConfig, model_fingerprint: str, seed: int = 0, progress: bool | None = None
) -> Ranker:
    """Convex weight (per ``cfg.norm``, or the best normalisation) and LightGBM models on ``judged``'s queries."""
    from graphtx.rank.learned import fit_bag

    t0 = time.time()
    groups_all = feature_names(cfg.groups, cfg.drop_features)
    if source.dense is None:
        raise ValueError("rank-fit needs a graph model (--model or --run): the rankers combine it with BM25")
    groups = training_groups(source, judged, cfg.depth, groups_all, cfg.date_dropout, seed, progress=progress)
    norms = NORMS if cfg.norm == "auto" else (cfg.norm,)
    convex_trials = {}
    for norm in norms:
        weight, table = fit_weight(groups, norm, cfg.ndcg_k)
        convex_trials[norm] = {"weight": weight, "train_ndcg": max(t["ndcg"] for t in table), "grid": table[::10]}
    norm = max(norms, key=lambda n: convex_trials[n]["train_ndcg"])
    pooled = sum(int((g.gains > 0).sum()) for g in groups)
    report = {
        "queries": len(groups),
        "queries_without_pool": len(judged.relevant) - len(groups),
        "pairs": judged.pairs,
        "pairs_in_pool": pooled,
        "pool_recall": pooled / max(judged.pairs, 1),
        "mean_pool_size": float(np.mean([len(g.gains) for g in groups])),
        "convex_trials": convex_trials,
    }
    features, boosters = {}, {}
    booster, report["learned"] = fit_bag(groups, groups_all, cfg, seed)
    features["learned"], boosters["learned"] = groups_all, booster
    if cfg.lexical_model:
        lexical_groups = tuple(g for g in cfg.groups if g not in GRAPH_GROUPS)
        names = feature_names(lexical_groups, cfg.drop_features)
        keep = [groups_all.index(n) for n in names]
        lex = [Group(g.query, g.bm25, g.dense, g.gains, g.ideal, g.features[:, keep]) for g in groups]
        booster, report["lexical"] = fit_bag(lex, names, cfg, seed)
        features["lexical"], boosters["lexical"] = names, booster
    report["seconds"] = round(time.time() - t0, 1)
    from graphtx.rank.registry import fittable_rankers

    plugins = {r.name: r.fit(groups, cfg) for r in fittable_rankers()}  # registered rankers with a fit of their own
    return Ranker(
        model_fingerprint,
        cfg.depth,
        {"norm": norm, "weight": convex_trials[norm]["weight"]},
        features,
        boosters,
        report,
        plugins=plugins,
    )
