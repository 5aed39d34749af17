"""Features of (query, candidate) pairs of one query's candidate pool.

:func:`pool_features` is the only place features are computed: ``graphtx rank-fit`` calls it on
training queries (through :mod:`graphtx.rank.fit`) and ``graphtx search`` / the service / ``graphtx
eval`` call it on every query they rank, so a ranker sees at query time exactly the numbers it was
fitted on (tests/rank/test_features.py checks that).

Inputs of one query (:class:`PoolInputs`): the pool's BM25 scores and dense cosines, the query's
BM25 terms and the candidates' rows in a :class:`LexicalStats` (the BM25 index's own term matrix, so
IDF and term matches are those of the BM25 that ranked them), years and CPC/IPC codes where known.

Feature groups (``GROUPS``), each a list of columns:

==========  ========================================================================================
lexical     BM25 score, its rank in the pool (log), z-score and min-max over the pool, share of the pool's
            best; query terms matched by the candidate (count, share, IDF-weighted share, largest
            matched IDF); candidate length (distinct terms, log)
meta        year gap (query - candidate; nan when unknown), CPC/IPC overlap at subclass and group level
            (Jaccard; nan when either side has no codes)
dense       the graph model: cosine, its rank in the pool (log), z-score and min-max over the pool
late        a late-interaction score, its rank and z-score; nan when no late score is given. HOOK: a
            late-interaction model fills ``PoolInputs.late`` through ``graphtx.rank.fit.PoolSource(late=...)`` (fit and eval)
            and ``Index.late_scorer`` (search); refit the ranker once it does
==========  ========================================================================================

Missing values are ``nan`` (LightGBM learns where they go). Shapes: n = candidates in the pool.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GROUPS: dict[str, tuple[str, ...]] = {
    "lexical": (
        "bm25",
        "bm25_log_rank",
        "bm25_z",
        "bm25_minmax",
        "bm25_of_best",
        "terms_matched",
        "terms_matched_share",
        "idf_matched_share",
        "idf_matched_max",
        "candidate_log_terms",
    ),
    "meta": ("year_gap", "code_subclass_jaccard", "code_group_jaccard"),
    "dense": ("dense", "dense_log_rank", "dense_z", "dense_minmax"),
    "late": ("late", "late_log_rank", "late_z"),
}
GRAPH_GROUPS = ("dense", "late")  # what the graph model contributes (left out by the "without graph" ablation)


def feature_names(groups: Sequence[str], drop: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns of ``groups`` in GROUPS order, less the single features named in ``drop``."""
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ValueError(f"unknown feature group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    return tuple(name for g in GROUPS if g in groups for name in GROUPS[g] if name not in drop)


# --- lexical statistics of the candidate collection --------------------------------


@dataclass(frozen=True, eq=False)
class LexicalStats:
    """Which BM25 terms each document holds, and their IDF (Lucene's, as bm25s scores with)."""

    doc_terms: object  # scipy.sparse.csr_matrix (docs, vocab), 1 where the document holds the term
    idf: np.ndarray  # (vocab,) float64
    doc_terms_count: np.ndarray  # (docs,) distinct terms of each document
    vocab: dict  # term -> column

    @classmethod
    def from_bm25s(cls, retriever) -> LexicalStats:
        """From a fitted ``bm25s.BM25`` (its CSC score matrix: indptr over terms, indices = documents)."""
        import scipy.sparse as sp

        s = retriever.scores
        n, indptr = int(s["num_docs"]), np.asarray(s["indptr"], dtype=np.int64)
        vocab_size = len(indptr) - 1
        csc = sp.csc_matrix(
            (np.ones(len(s["indices"]), np.float32), np.asarray(s["indices"], np.int64), indptr), shape=(n, vocab_size)
        )
        df = np.diff(indptr).astype(np.float64)  # (vocab,)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        csr = csc.tocsr()
        return cls(csr, idf, np.diff(csr.indptr).astype(np.float64), dict(retriever.vocab_dict))

    def term_ids(self, terms: Sequence[str]) -> np.ndarray:
        """Distinct known terms of a tokenised query -> (t,) int64 columns, sorted."""
        return np.array(sorted({self.vocab[t] for t in terms if t in self.vocab}), dtype=np.int64)


# --- one query's pool --------------------------------------------------------------


@dataclass(frozen=True)
class PoolInputs:
    candidates: np.ndarray  # (n,) int64 rows of the candidates in LexicalStats (and in the caller's corpus)
    bm25: np.ndarray  # (n,) float64
    dense: np.ndarray | None  # (n,) float64 cosines, None without a graph model
    query_terms: np.ndarray  # (t,) int64 LexicalStats columns of the query's distinct terms
    query_year: float = math.nan
    candidate_years: np.ndarray | None = None  # (n,) float64, nan where unknown
    query_codes: tuple[str, ...] = ()
    candidate_codes: Sequence[tuple[str, ...]] | None = None  # n tuples
    late: np.ndarray | None = None  # (n,) float64 late-interaction scores (HOOK)


def _log_rank(x: np.ndarray) -> np.ndarray:
    """log(1-based rank) within the pool, higher score first, ties share the better rank."""
    order = np.sort(x)[::-1]
    return np.log(np.searchsorted(-order, -x, side="left") + 1.0)


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else math.nan


def _code_sets(codes: Sequence[str]) -> tuple[set, set]:
    """(subclass set "H01M", group set "H01M10") of CPC/IPC codes; spaces ignored."""
    clean = [c.replace(" ", "").upper() for c in codes if c]
    return {c[:4] for c in clean if len(c) >= 4}, {c.split("/")[0] for c in clean if len(c) >= 4}


def pool_features(inputs: PoolInputs, stats: LexicalStats, names: Sequence[str]) -> np.ndarray:
    """(n, len(names)) float32 features of the pool's candidates, columns in ``names`` order."""
    n = len(inputs.candidates)
    cols: dict[str, np.ndarray] = {}
    need = set(names)
    bm25 = np.asarray(inputs.bm25, dtype=np.float64)
    if need & set(GROUPS["lexical"]):
        best = bm25.max() if n else 0.0
        cols |= {
            "bm25": bm25,
            "bm25_log_rank": _log_rank(bm25),
            "bm25_z": _z(bm25),
            "bm25_minmax": _minmax(bm25),
            "bm25_of_best": bm25 / best if best > 0 else np.zeros(n),
        }
        q = inputs.query_terms
        if len(q) and n:
            held = stats.doc_terms[inputs.candidates][:, q].toarray() > 0  # (n, t)
            idf = stats.idf[q]  # (t,)
            cols["terms_matched"] = held.sum(1).astype(np.float64)
            cols["terms_matched_share"] = cols["terms_matched"] / len(q)
            cols["idf_matched_share"] = (held * idf).sum(1) / idf.sum()
            cols["idf_matched_max"] = np.where(held, idf, 0.0).max(1)
        else:
            for name in ("terms_matched", "terms_matched_share", "idf_matched_share", "idf_matched_max"):
                cols[name] = np.zeros(n)
        cols["candidate_log_terms"] = np.log1p(stats.doc_terms_count[inputs.candidates])
    if need & set(GROUPS["meta"]):
        years = np.full(n, np.nan) if inputs.candidate_years is None else np.asarray(inputs.candidate_years, np.float64)
        cols["year_gap"] = inputs.query_year - years
        qsub, qgroup = _code_sets(inputs.query_codes)
        codes = inputs.candidate_codes or [()] * n
        sets = [_code_sets(c) for c in codes]
        cols["code_subclass_jaccard"] = np.array([_jaccard(qsub, s) for s, _ in sets], dtype=np.float64).reshape(n)
        cols["code_group_jaccard"] = np.array([_jaccard(qgroup, g) for _, g in sets], dtype=np.float64).reshape(n)
    if need & set(GROUPS["dense"]):
        if inputs.dense is None:
            raise ValueError("this ranker uses dense (graph model) features, but no dense scores were given")
        d = np.asarray(inputs.dense, dtype=np.float64)
        cols |= {"dense": d, "dense_log_rank": _log_rank(d), "dense_z": _z(d), "dense_minmax": _minmax(d)}
    if need & set(GROUPS["late"]):
        if inputs.late is None:
            cols |= {k: np.full(n, np.nan) for k in GROUPS["late"]}
        else:
            late = np.asarray(inputs.late, dtype=np.float64)
            cols |= {"late": late, "late_log_rank": _log_rank(late), "late_z": _z(late)}
    missing = [c for c in names if c not in cols]
    if missing:
        raise ValueError(f"unknown feature(s) {', '.join(missing)}")
    return np.stack([cols[c] for c in names], axis=1).astype(np.float32) if n else np.zeros((0, len(names)), np.float32)


# --- the pool ------------------------------------------------------------------------


def top_rows(scores: np.ndarray, depth: int, exclude: int | None = None) -> np.ndarray:
    """Rows of the ``depth`` best scores (> -inf), ties by row; ``exclude`` left out. (depth',) int64."""
    s = np.asarray(scores, dtype=np.float64).copy()
    if exclude is not None:
        s[exclude] = -np.inf
    valid = np.flatnonzero(np.isfinite(s))
    if len(valid) > depth:
        valid = valid[np.argpartition(-s[valid], depth - 1)[:depth]]
    return valid[np.lexsort((valid, -s[valid]))]


def candidate_pool(bm25: np.ndarray, dense: np.ndarray | None, depth: int, exclude: int | None = None) -> np.ndarray:
    """Union of the top ``depth`` of BM25 (score > 0) and of the dense ranking, sorted rows. (n,) int64."""
    b = np.asarray(bm25, dtype=np.float64)
    lexical = top_rows(np.where(b > 0, b, -np.inf), depth, exclude)
    if dense is None:
        return np.sort(lexical)
    return np.union1d(lexical, top_rows(dense, depth, exclude))
