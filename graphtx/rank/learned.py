"""LightGBM lambdarank over the pool features (:mod:`graphtx.rank.features`).

Fitted on training queries only: folds are whole queries (seeded), and the cross-validation picks
the number of leaves from ``RankConfig.num_leaves_grid`` and the number of trees (early stopping on
the held-out folds' nDCG@``ndcg_k``); the final model is refitted on every training query with them.
Models stay small (few leaves, many rows per leaf, L2) and, with ``monotone``, the score can only
rise with BM25, the dense cosine and the matched-term share and fall with their ranks: about 10^3
training queries do not support more freedom.

Queries without a cited document in their pool teach lambdarank nothing and are left out of the fit
(they are counted in the fit report).

:func:`fit_bag` repeats the whole fit ``RankConfig.bag`` times with seeds ``seed, seed + 1, ...`` (each
its own fold split, leaves and rounds) and averages the members' scores (:class:`BoosterBag`): on ~10^3
queries one fit's choices vary from seed to seed, and the average is steadier (benchmarks/results/lexical-channel-rankers.md).

Example::

    bag, report = fit_bag(groups, names, RankConfig(), seed=0)
    scores = bag.predict(features)                # (n,) for one pool: the mean of the members' scores
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphtx.rank.config import RankConfig
from graphtx.rank.convex import Group


def lightgbm():
    """The lightgbm module, or a clear error naming the extra that installs it."""
    try:
        import lightgbm as lgb
    except ImportError:
        raise ValueError(
            "the learned ranker needs lightgbm: pip install 'graphtx[rank]' (or use --ranker convex / hybrid)"
        ) from None
    return lgb


def lightgbm_version() -> str:
    return lightgbm().__version__


RISING = {
    "bm25",
    "bm25_z",
    "bm25_minmax",
    "bm25_of_best",
    "terms_matched_share",
    "idf_matched_share",
    "dense",
    "dense_z",
    "dense_minmax",
    "late",
    "late_z",
}
FALLING = {"bm25_log_rank", "dense_log_rank", "late_log_rank"}


MEMBER_SEPARATOR = (
    "\n### graphtx ranker: next bag member ###\n"  # between the members' LightGBM model texts in one file
)


class BoosterBag:
    """LightGBM boosters whose predictions are averaged; one member predicts exactly as its booster.

    ``predict(x, pred_contrib=True)`` averages the members' per-feature contributions, which stay an exact
    additive decomposition of the averaged score (graphtx/rank/explain.py)."""

    def __init__(self, members: Sequence):
        if not members:
            raise ValueError("a ranker bag needs at least one LightGBM model")
        self.members = list(members)

    def predict(self, x: np.ndarray, **kwargs) -> np.ndarray:
        """(n, F) -> (n,) mean score (or (n, F + 1) mean contributions with ``pred_contrib=True``)."""
        return np.mean([np.asarray(m.predict(x, **kwargs), dtype=np.float64) for m in self.members], axis=0)

    def model_to_string(self) -> str:
        return MEMBER_SEPARATOR.join(m.model_to_string() for m in self.members)

    @classmethod
    def from_string(cls, text: str) -> BoosterBag:
        """The members of a saved bag; a plain LightGBM model file (one member) reads as a bag of one."""
        lgb = lightgbm()
        return cls([lgb.Booster(model_str=part) for part in text.split(MEMBER_SEPARATOR)])


def fit_bag(groups: Sequence[Group], names: Sequence[str], cfg: RankConfig, seed: int = 0) -> tuple[BoosterBag, dict]:
    """(BoosterBag of ``cfg.bag`` fits with seeds seed, seed + 1, ..., report): the data counts all members share,
    each member's chosen leaves / rounds / cross-validated nDCG and its trials, and the gain importances averaged."""
    members, reports = [], []
    for i in range(cfg.bag):
        booster, report = fit_lambdarank(groups, names, cfg, seed + i)
        members.append(booster)
        reports.append(report)
    shared = {k: reports[0][k] for k in ("queries", "queries_fitted", "rows", "folds")}
    bag = [r["chosen"] | {"trials": r["trials"]} for r in reports]
    importance = {n: round(float(np.mean([r["gain_importance"][n] for r in reports])), 4) for n in names}
    return BoosterBag(members), shared | {"bag": bag, "gain_importance": importance}


def monotone_constraints(names: Sequence[str]) -> list[int]:
    return [1 if n in RISING else -1 if n in FALLING else 0 for n in names]


def _params(cfg: RankConfig, names: Sequence[str], num_leaves: int, seed: int) -> dict:
    params = {
        "objective": "lambdarank",
        "metric": "ndcg",
        "eval_at": [cfg.ndcg_k],
        "num_leaves": num_leaves,
        "min_data_in_leaf": cfg.min_data_in_leaf,
        "learning_rate": cfg.learning_rate,
        "lambda_l2": cfg.lambda_l2,
        "feature_fraction": cfg.feature_fraction,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "lambdarank_truncation_level": cfg.truncation,
        "seed": seed,
        "deterministic": True,
        "num_threads": 1,
        "verbosity": -1,
    }
    if cfg.monotone:
        params |= {"monotone_constraints": monotone_constraints(names), "monotone_constraints_method": "basic"}
    return params


def _dataset(groups: Sequence[Group]):
    lgb = lightgbm()
    x = np.concatenate([g.features for g in groups])  # (rows, F)
    y = np.concatenate([np.rint(g.gains).clip(0, 30).astype(np.int32) for g in groups])  # (rows,)
    return lgb.Dataset(x, y, group=[len(g.gains) for g in groups], free_raw_data=False), x, y


def fit_lambdarank(groups: Sequence[Group], names: Sequence[str], cfg: RankConfig, seed: int = 0):
    """(lightgbm.Booster, report) fitted on ``groups`` (each with ``features`` of ``names``)."""
    lgb = lightgbm()
    usable = [g for g in groups if g.features is not None and (g.gains > 0).any()]
    if len(usable) < cfg.folds * 2:
        raise ValueError(
            f"only {len(usable)} training queries have a cited document in their pool: too few to fit a ranker (need {cfg.folds * 2})"
        )
    data, _, _ = _dataset(usable)
    rng = np.random.default_rng(seed)
    fold_of_query = rng.permutation(len(usable)) % cfg.folds  # (queries,)
    row_fold = np.repeat(fold_of_query, [len(g.gains) for g in usable])  # (rows,)
    folds = [(np.flatnonzero(row_fold != f), np.flatnonzero(row_fold == f)) for f in range(cfg.folds)]
    trials = []
    for leaves in cfg.num_leaves_grid:
        res = lgb.cv(
            _params(cfg, names, leaves, seed),
            data,
            num_boost_round=cfg.max_rounds,
            folds=folds,
            callbacks=[lgb.early_stopping(cfg.early_stopping, verbose=False)],
        )
        curve = res[f"valid ndcg@{cfg.ndcg_k}-mean"]
        best = int(np.argmax(curve))
        trials.append(
            {
                "num_leaves": leaves,
                "rounds": best + 1,
                "cv_ndcg": float(curve[best]),
                "cv_ndcg_sd": float(res[f"valid ndcg@{cfg.ndcg_k}-stdv"][best]),
            }
        )
    chosen = max(trials, key=lambda t: (t["cv_ndcg"], -t["num_leaves"]))
    booster = lgb.train(_params(cfg, names, chosen["num_leaves"], seed), data, num_boost_round=chosen["rounds"])
    gain = booster.feature_importance("gain")
    importance = {n: round(float(v / gain.sum()), 4) if gain.sum() else 0.0 for n, v in zip(names, gain)}
    report = {
        "queries": len(groups),
        "queries_fitted": len(usable),
        "rows": int(data.num_data()),
        "folds": cfg.folds,
        "trials": trials,
        "chosen": chosen,
        "gain_importance": importance,
    }
    return booster, report
