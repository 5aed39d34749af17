"""The first stage of a search in an open index: the pool each registered ranker (``graphtx.rank.registry``) orders,
built from the dense model (FAISS, filtered) and BM25, and the hits it returns.

``FirstStage`` is a part :class:`~graphtx.index.search.Index` composes: it is handed what it reads (the documents'
reader, the FAISS shards and their spec, the search settings, the BM25 state) and holds the fitted ranker of
``graphtx rank-fit`` and the late-scorer hook; ``search.py`` runs a search (query, filters, late re-ranking, charts,
paging) and this file decides which documents come first.

Every ranker returns the best first, ties by document id; ``exclude``: ids left out; ``mask`` (count,) bool:
the documents the filters let through (None: all).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

import numpy as np

from graphtx.index import faiss_index
from graphtx.index.faiss_index import IndexSpec
from graphtx.index.query import Query
from graphtx.index.reader import DocumentReader
from graphtx.index.results import Hit, assemble_hits
from graphtx.index.store import DISPLAY_FIELDS, META_FIELDS
from graphtx.rank.features import top_rows
from graphtx.rank.pool import make_pool
from graphtx.rank.registry import available_rankers, get_ranker


def elapsed_ms(t0: float) -> float:
    """Milliseconds since ``t0`` (a ``time.perf_counter()``), as the timings of a search report them."""
    return round((time.perf_counter() - t0) * 1000, 2)


class FirstStage:
    """Which documents come first, for every registered ranker."""

    def __init__(
        self,
        reader: DocumentReader,
        shards: list,
        spec: IndexSpec,
        on_gpu: bool,
        config,
        dim: int,
        live_digest: str,
        bm25: Callable,
        ranker=None,
        model_profile=None,
    ):
        """``bm25``: () -> the index's BM25 state (loaded or built at first use); ``ranker``: the fitted ranker directory
        (graphtx.rank.store.Ranker) or None; ``model_profile``: the term profile of the corpus the model learned on
        (graphtx.text.field.FieldProfile) or None."""
        self.reader, self.ids, self.store = reader, reader.ids, reader.store
        self.shards, self.spec, self.on_gpu, self.config = shards, spec, on_gpu, config
        self.dim, self.live_digest, self.bm25 = dim, live_digest, bm25
        self.ranker, self.model_profile = ranker, model_profile
        self.late_scorer = None  # HOOK: late(query: Query, positions (n,)) -> (n,) late-interaction scores for the rankers' "late" features
        self._rank_cache: dict = {}
        self._rank_lock = threading.Lock()
        self._field_check: list = []  # [FieldCheck | None] once computed

    @property
    def count(self) -> int:
        return len(self.ids)

    def run(
        self,
        q: Query,
        kind: str,
        depth: int,
        excluded: frozenset[str],
        mask: np.ndarray | None,
        timings: dict,
        explain: bool = False,
    ) -> list[Hit]:
        """The ranker's top ``depth`` among the documents ``mask`` lets through (all when None); ``explain``: with
        the ranker's explanation of each hit's score (when it gives one).

        Every ranker of the registry runs the same way: the top of each signal it names (the dense model through
        FAISS, BM25), their union as its pool (graphtx.rank.pool), its scores, ordered by (score desc, document id).
        """
        ranker = get_ranker(kind)
        fitted = self.ranker
        n = ranker.depth(depth, self.config, fitted)
        dense: list[tuple[str, float]] = []
        lexical = top_lex = None
        if "dense" in ranker.signals:
            t0 = time.perf_counter()
            dense = self._dense(q.vector, n, excluded, mask)
            timings["search"] = elapsed_ms(t0)
        if "bm25" in ranker.signals:
            t0 = time.perf_counter()
            lexical = self._bm25_all(q, excluded, mask)  # (count,)
            top_lex = top_rows(np.where(lexical > 0, lexical, -np.inf), n)  # (<= n,) positions
            top_lex = np.array(
                sorted(top_lex, key=lambda p: (-lexical[p], self.ids.doc_id[p])), dtype=np.int64
            )  # best first, ties by id
            timings["bm25"] = elapsed_ms(t0)
        t0 = time.perf_counter()
        pool = make_pool(
            lambda p: self.ids.doc_id[p],
            np.array([self.ids.position_of(d) for d, _ in dense], dtype=np.int64)
            if "dense" in ranker.signals
            else None,
            np.array([s for _, s in dense], dtype=np.float64),
            top_lex,
            lexical,
            features=lambda positions, bm25: self._pool_inputs(q, positions, bm25),
        )
        if not len(pool):  # no document passes the filters (or every one is excluded): nothing to rank
            return []
        scores = np.asarray(ranker.score(pool, self.config, fitted), dtype=np.float64)  # (n,)
        kept = [i for i in range(len(pool)) if np.isfinite(scores[i])]  # -inf / nan: the ranker leaves it out
        order = sorted(kept, key=lambda i: (-scores[i], pool.doc_ids[i]))[:depth]
        ranked = [(pool.doc_ids[i], float(scores[i])) for i in order]
        if len(ranker.signals) > 1:
            timings["rank"] = elapsed_ms(t0)
        dense_of = {
            d: (float(pool.dense[i]), int(pool.dense_rank[i])) for i, d in enumerate(pool.doc_ids) if pool.dense_rank[i]
        }
        if pool.has_fitted_inputs:  # the fitted rankers computed every candidate's exact cosine
            exact = pool.fitted_inputs()[0].dense
            dense_of |= {pool.doc_ids[i]: (float(exact[i]), None) for i in order if pool.doc_ids[i] not in dense_of}
        bm25_of = None
        if lexical is not None:
            bm25_of = {pool.doc_ids[i]: (float(pool.bm25[i]), int(pool.bm25_rank[i]) or None) for i in order}
        hits = self.hits(ranked, dense=dense_of, bm25=bm25_of, query_vector=q.vector)
        if explain and hits:
            t0 = time.perf_counter()
            why = ranker.explain(pool, self.config, fitted, np.asarray(order, dtype=np.int64))
            if why is not None:
                hits = [dataclasses.replace(h, ranker_explanation=e) for h, e in zip(hits, why)]
                timings["explain_ranker"] = elapsed_ms(t0)
        return hits

    def resolve_ranker(self, ranker: str | None = None, hybrid: bool | None = None) -> str:
        """The ranker a search uses: ``ranker``, else hybrid when asked, else ``search.ranker`` (auto: learned when present)."""
        kind = ranker or ("hybrid" if hybrid else None) or self.config.ranker
        if kind == "auto":
            kind = (
                "learned"
                if self.ranker is not None and "learned" in self.ranker.kinds
                else "hybrid"
                if self.config.hybrid
                else "dense"
            )
            if kind == "learned" and "lexical" in self.ranker.kinds and self.other_field():
                kind = "learned-lexical"  # its graph features cost outside the field it was fitted on
        get_ranker(kind)  # unknown: says which are known
        if kind not in self.available_rankers():
            raise ValueError(
                f"index {self.store.dir} has no {kind} ranker (`graphtx rank-fit` fits one into the model's or the index's ranker/); "
                f"the rankers it has: {', '.join(self.available_rankers())}"
            )
        return kind

    def available_rankers(self) -> list[str]:
        """The registered rankers this index can search with: those that need no fit, and the fitted ones its ranker holds."""
        return available_rankers(self.ranker)

    # --- the fields of the fitted ranker and of the model (graphtx.text.field) ---------------
    def field_check(self):
        """The index's documents against the corpus its fitted ranker was fitted on and the one its model learned on
        (``IndexField``), computed once from the index's BM25; None without a fitted ranker, when it recorded no
        profile, or with search.same_field 0."""
        if self.ranker is None or not self.ranker.corpus_profile or self.config.same_field <= 0:
            return None
        if not self._field_check:  # computed outside the rank lock: the BM25 may be built in memory first (minutes)
            from graphtx.text.field import FieldProfile, IndexField, check_field

            bm25 = self.bm25()
            here = FieldProfile.from_bm25s(bm25.retriever, bm25.engine.tokens.describe())
            limit = self.config.same_field
            found = IndexField(
                check_field(
                    FieldProfile.from_json(self.ranker.corpus_profile), here, limit, "the ranker was fitted on"
                ),
                check_field(self.model_profile, here, limit, "the model learned on") if self.model_profile else None,
            )
            with self._rank_lock:
                if not self._field_check:
                    self._field_check.append(found)
        return self._field_check[0]

    def other_field(self) -> bool:
        """Whether auto leaves the graph features out: the ranker is of another field, the model not known to be of this one."""
        found = self.field_check()
        return found is not None and found.leave_out_graph

    def ranker_warnings(self, kind: str) -> list[str]:
        """What to know about ranking with ``kind`` here: a learned ranker fitted on another field."""
        if kind not in ("learned", "learned-lexical"):
            return []  # before field_check: a dense or BM25 search must not build the BM25 state for it
        found = self.field_check()
        if found is None or not found.ranker_elsewhere:
            return []
        if not found.leave_out_graph:  # the model learned on this corpus: the graph features stay (they helped there)
            if kind != "learned":
                return []
            return [
                f"the learned ranker was fitted on another field ({found.ranker.describe()}) over a model that learned on "
                f"this one ({found.model.describe()}): its graph features are kept, as a ranker from another field gained "
                "from them over a model adapted to the new corpus (benchmarks/results/transfer.md)"
            ]
        evidence = (
            "outside the field it was fitted on, a ranker's graph features cost over a model not adapted to the new corpus "
            "(benchmarks/results/transfer.md)"
        )
        if kind == "learned-lexical":
            return [
                f"ranked by learned-lexical, the fitted ranker without its graph features: {found.describe()}; {evidence}. "
                "--ranker learned keeps them; a ranker fitted on this corpus's citations (graphtx rank-fit), or a model "
                "adapted to it (graphtx adapt, which records its corpus), is used with them"
            ]
        if "lexical" not in self.ranker.kinds:
            return [
                f"the learned ranker was fitted on another field: {found.describe()}; {evidence}. Its directory holds no "
                "fit without them (rank.lexical_model was off): --ranker hybrid, or fit it again with graphtx rank-fit"
            ]
        return [
            f"the learned ranker was fitted on another field: {found.describe()}; {evidence}. "
            "--ranker learned-lexical leaves them out (search.ranker auto does)"
        ]

    def _dense(
        self, vector: np.ndarray, k: int, exclude: frozenset[str], mask: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        """[(doc id, cosine)] best first, ties by id; ``exclude`` left out, and what ``mask`` (count,) bool rules out.

        With a mask, FAISS is asked for more neighbours until k pass: first k / (share passing), then
        doubling, up to the whole index; an approximate index (IVF-PQ, HNSW) that still returns too
        few is completed by exact cosines over the passing documents.
        """
        if mask is None:
            return self._dense_top(vector, k + len(exclude), exclude)[:k]
        passing = int(mask.sum())
        if passing == 0:
            return []
        want = min(k, passing)
        depth = min(self.count, int(np.ceil(k * self.count / passing * 1.2)) + len(exclude))
        while True:
            found = self._dense_top(vector, depth, exclude)
            out = [(d, s) for d, s in found if mask[self.ids.position_of(d)]]
            if len(out) >= want or depth >= self.count:
                break
            depth = min(self.count, depth * 2)
        if len(out) < want:  # an approximate index did not reach every passing document: exact cosines
            positions = np.flatnonzero(mask)
            vectors = np.array(
                [r["vector"] for r in self.reader.rows(positions.tolist(), ["vector"])], np.float32
            ).reshape(len(positions), -1)  # (passing, dim)
            scores = vectors @ np.asarray(vector, np.float32)
            out = [
                (self.ids.doc_id[p], float(s)) for p, s in zip(positions, scores) if self.ids.doc_id[p] not in exclude
            ]
            out.sort(key=lambda item: (-item[1], item[0]))
        return out[:k]

    def _dense_top(self, vector: np.ndarray, depth: int, exclude: frozenset[str]) -> list[tuple[str, float]]:
        scores, fids = faiss_index.search_shards(self.shards, vector[None, :], depth, self.spec, self.on_gpu)
        positions = self.ids.positions_of_faiss(fids[0])
        out = [(self.ids.doc_id[p], float(s)) for p, s in zip(positions, scores[0]) if p >= 0]
        out = [(d, s) for d, s in out if d not in exclude]
        out.sort(key=lambda item: (-item[1], item[0]))
        return out

    def _bm25_all(self, q: Query, exclude: frozenset[str], mask: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every document (count,), the excluded ones and those ``mask`` rules out 0."""
        bm25 = self.bm25()
        scores = bm25.scores(q.text) if q.text.strip() else np.zeros(self.count, np.float32)
        for d in exclude:
            if d in self.ids:
                scores[self.ids.position_of(d)] = 0.0
        if mask is not None:
            scores = np.where(mask, scores, 0.0).astype(scores.dtype)
        return scores

    def _rank_data(self):
        """(LexicalStats of the BM25 index, vectors (count, dim) float32, years (count,), codes): loaded once, for the rankers."""
        with self._rank_lock:
            cached = self._rank_cache.get(self.live_digest)
        if cached is not None:
            return cached
        from graphtx.rank.features import LexicalStats

        stats = LexicalStats.from_bm25s(self.bm25().retriever)
        vectors = np.zeros((self.count, self.dim), np.float32)
        years = np.full(self.count, np.nan)
        codes: list[tuple] = [()] * self.count
        positions = np.arange(self.count)
        for seq in np.unique(self.ids.part):
            at = positions[self.ids.part == seq]
            rows = self.store.read_rows(
                [(int(seq), int(self.ids.row[p])) for p in at], ["vector", "date", "ipc", "cpc"]
            )
            for p, row in zip(at, rows):
                vectors[p] = np.asarray(row["vector"], np.float32)
                date = row["date"] or ""
                years[p] = float(date[:4]) if date[:4].isdigit() else np.nan
                codes[p] = tuple(row["cpc"] or ()) or tuple(row["ipc"] or ())
        cached = (stats, vectors, years, codes)
        with self._rank_lock:
            self._rank_cache = {self.live_digest: cached}
        return cached

    def _pool_inputs(self, q: Query, positions: np.ndarray, bm25: np.ndarray):
        """(PoolInputs, LexicalStats) of the fitted rankers' features for a pool of ``positions`` (n,) with BM25 scores (n,)."""
        from graphtx.rank.features import PoolInputs

        stats, vectors, years, codes = self._rank_data()
        cos = vectors[positions] @ np.asarray(q.vector, np.float32)  # (n,) exact cosines (unit vectors)
        query_year = years[self.ids.position_of(q.doc_id)] if q.doc_id else np.nan
        inputs = PoolInputs(
            candidates=positions,
            bm25=np.asarray(bm25, dtype=np.float64),
            dense=cos.astype(np.float64),
            query_terms=stats.term_ids(self.bm25().tokens(q.text)),
            query_year=float(query_year),
            candidate_years=years[positions],
            query_codes=codes[self.ids.position_of(q.doc_id)] if q.doc_id else (),
            candidate_codes=[codes[p] for p in positions],
            late=None if self.late_scorer is None else np.asarray(self.late_scorer(q, positions), dtype=np.float64),
        )
        return inputs, stats

    def hits(
        self, ranked: list[tuple[str, float]], dense: dict, bm25: dict | None, query_vector: np.ndarray | None = None
    ) -> list[Hit]:
        """Hits of ``ranked`` [(doc id, score)] with their index rows (graphtx.index.results.assemble_hits)."""
        positions = [self.ids.position_of(d) for d, _ in ranked]
        columns = [*META_FIELDS, *DISPLAY_FIELDS]
        missing_dense = query_vector is not None and any(d not in dense for d, _ in ranked)
        if missing_dense:
            columns.append("vector")
        return assemble_hits(
            ranked,
            self.reader.rows(positions, columns),
            dense,
            bm25,
            query_vector if missing_dense else None,
            self.config.link_template,
        )
