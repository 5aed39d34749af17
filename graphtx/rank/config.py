"""RankConfig: ``graphtx rank-fit`` and the rankers of search, eval and the service (the ``rank:`` section)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RankConfig:
    """``graphtx rank-fit`` and the rankers of search / eval / the service (graphtx/rank/)."""

    depth: int = 200  # candidate pool: the top this many of BM25 and of the dense model (union)
    norm: str = "auto"  # convex: tmm | minmax | zscore, or auto (the best on the training queries)
    ndcg_k: int = 150  # the fit's objective: nDCG at this cut-off (the paper's nDCG@150)
    groups: tuple[str, ...] = ("lexical", "meta", "dense", "late")  # feature groups of the learned ranker
    drop_features: tuple[
        str, ...
    ] = ()  # single features of those groups left out of the learned rankers (e.g. year_gap: benchmarks/results/quality-cutoff.md)
    lexical_model: bool = True  # also fit the ranker without graph features (BM25 + lexical + meta): the ablation, and learned-lexical, what search auto ranks with on another field
    num_leaves_grid: tuple[int, ...] = (3, 7)  # LightGBM leaves tried by grouped cross-validation
    min_data_in_leaf: int = 50  # rows per leaf: about 10^3 queries do not support smaller leaves
    learning_rate: float = 0.1  # LightGBM shrinkage per tree
    lambda_l2: float = 1.0  # LightGBM L2 penalty on leaf values
    feature_fraction: float = 0.8  # share of the features each tree may use
    truncation: int = 20  # lambdarank: pairs are formed with the top this many of each pool (cost grows with it; the top matters most)
    max_rounds: int = 300  # trees at most; early stopping on the held-out folds picks fewer
    early_stopping: int = 30  # rounds without a held-out nDCG gain before cross-validation stops
    folds: int = 5  # cross-validation folds, whole queries each
    bag: int = 5  # LightGBM fits averaged, seeds seed .. seed + bag - 1 (each its own folds): steadier on ~10^3 queries (benchmarks/results/lexical-channel-rankers.md)
    monotone: bool = True  # score rises with BM25 / cosine / matched terms, falls with their ranks
    date_dropout: float = (
        0.25  # share of training queries fitted without their year (a text query at search time has none)
    )

    def __post_init__(self) -> None:
        from graphtx.rank.convex import NORMS
        from graphtx.rank.features import GROUPS

        if self.norm not in (*NORMS, "auto"):
            raise ValueError(f"rank.norm must be auto or one of {NORMS}, got {self.norm!r}")
        bad = [g for g in self.groups if g not in GROUPS]
        if bad or not self.groups:
            raise ValueError(f"rank.groups must be a non-empty subset of {tuple(GROUPS)}, got {self.groups}")
        from graphtx.rank.features import feature_names

        unknown = [f for f in self.drop_features if f not in {n for names in GROUPS.values() for n in names}]
        if unknown:
            raise ValueError(f"rank.drop_features: unknown feature(s) {', '.join(unknown)}")
        from graphtx.rank.features import GRAPH_GROUPS

        if not feature_names(self.groups, self.drop_features):
            raise ValueError("rank.drop_features leaves the ranker no feature")
        if self.lexical_model and not feature_names(
            [g for g in self.groups if g not in GRAPH_GROUPS], self.drop_features
        ):
            raise ValueError(
                "rank.drop_features leaves the ranker without graph features (rank.lexical_model) no feature"
            )
        if (
            min(
                self.depth,
                self.ndcg_k,
                self.min_data_in_leaf,
                self.max_rounds,
                self.early_stopping,
                self.bag,
                *self.num_leaves_grid,
            )
            < 1
            or self.folds < 2
        ):
            raise ValueError(
                "rank.depth, ndcg_k, min_data_in_leaf, max_rounds, early_stopping, bag and num_leaves_grid must be >= 1, folds >= 2"
            )
        if not 0 <= self.date_dropout < 1 or not 0 < self.feature_fraction <= 1 or self.learning_rate <= 0:
            raise ValueError("rank.date_dropout must be in [0, 1), feature_fraction in (0, 1], learning_rate > 0")
