"""The first-stage rankers of an open index: dense (FAISS, filtered), BM25, RRF hybrid, and the pools the
convex / learned rankers (``graphtx.rank``) order.

``Rankers`` is a part of :class:`~graphtx.index.search.Index` (its base class) kept apart so that each file
holds one idea: ``search.py`` opens an index and runs a search (query, filters, late re-ranking,
explanations), this file decides which documents come first. It uses the Index's ``ids``, ``shards``,
``spec``, ``on_gpu``, ``config``, ``ranker``, ``late_scorer``, ``store``, ``manifest``, ``count``, ``dim``,
``bm25()``, ``_hits()`` and ``_rows()``.

Every ranker returns the best first, ties by document id; ``exclude``: ids left out; ``mask`` (count,) bool:
the documents the filters let through (None: all).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from graphtx.index import faiss_index
from graphtx.index.hybrid import rrf
from graphtx.index.query import Query
from graphtx.index.results import Hit
from graphtx.rank.explain import explain_pool


def elapsed_ms(t0: float) -> float:
    """Milliseconds since ``t0`` (a ``time.perf_counter()``), as the timings of a search report them."""
    return round((time.perf_counter() - t0) * 1000, 2)


class Rankers:
    """The ranking half of :class:`~graphtx.index.search.Index`."""

    def _first_stage(
        self, q: Query, kind: str, depth: int, excluded: frozenset[str], mask: np.ndarray | None, timings: dict, explain: bool = False
    ) -> list[Hit]:
        """The ranker's top ``depth`` among the documents ``mask`` lets through (all when None); ``explain``: with
        the convex / learned ranker's explanation of each hit's score."""
        if kind == "hybrid":
            return self._hybrid(q, depth, excluded, timings, mask)
        if kind in ("convex", "learned"):
            return self._reranked(q, depth, excluded, timings, kind, mask, explain=explain)
        if kind == "bm25":
            return self._lexical(q, depth, excluded, timings, mask)
        t0 = time.perf_counter()
        ranked = self._dense(q.vector, depth, excluded, mask)
        timings["search"] = elapsed_ms(t0)
        return self._hits(ranked, dense={d: (s, r) for r, (d, s) in enumerate(ranked, 1)}, bm25=None)

    def resolve_ranker(self, ranker: str | None = None, hybrid: bool | None = None) -> str:
        """The ranker a search uses: ``ranker``, else hybrid when asked, else ``search.ranker`` (auto: learned when present)."""
        from graphtx.rank import RANKERS

        kind = ranker or ("hybrid" if hybrid else None) or self.config.ranker
        if kind == "auto":
            kind = "learned" if self.ranker is not None and "learned" in self.ranker.kinds else "hybrid" if self.config.hybrid else "dense"
        if kind not in RANKERS:
            raise ValueError(f"unknown ranker {kind!r}; known: {', '.join(RANKERS)}")
        if kind not in self.available_rankers():
            raise ValueError(
                f"index {self.store.dir} has no {kind} ranker (`graphtx rank-fit` fits one into the model's or the index's ranker/); "
                f"the rankers it has: {', '.join(self.available_rankers())}"
            )
        return kind

    def available_rankers(self) -> list[str]:
        """The rankers this index can search with: dense, bm25 and hybrid always, convex and learned when a fitted ranker holds them."""
        fitted = set(self.ranker.kinds) if self.ranker is not None else set()
        return ["dense", "bm25", "hybrid"] + [k for k in ("convex", "learned") if k in fitted]

    def _dense(self, vector: np.ndarray, k: int, exclude: frozenset[str], mask: np.ndarray | None = None) -> list[tuple[str, float]]:
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
            vectors = np.array([r["vector"] for r in self._rows(positions.tolist(), ["vector"])], np.float32).reshape(
                len(positions), -1
            )  # (passing, dim)
            scores = vectors @ np.asarray(vector, np.float32)
            out = [(self.ids.doc_id[p], float(s)) for p, s in zip(positions, scores) if self.ids.doc_id[p] not in exclude]
            out.sort(key=lambda item: (-item[1], item[0]))
        return out[:k]

    def _dense_top(self, vector: np.ndarray, depth: int, exclude: frozenset[str]) -> list[tuple[str, float]]:
        scores, fids = faiss_index.search_shards(self.shards, vector[None, :], depth, self.spec, self.on_gpu)
        positions = self.ids.positions_of_faiss(fids[0])
        out = [(self.ids.doc_id[p], float(s)) for p, s in zip(positions, scores[0]) if p >= 0]
        out = [(d, s) for d, s in out if d not in exclude]
        out.sort(key=lambda item: (-item[1], item[0]))
        return out

    def _hybrid(self, q: Query, k: int, exclude: frozenset[str], timings: dict, mask: np.ndarray | None = None) -> list[Hit]:
        n = max(self.config.candidates, k)
        t0 = time.perf_counter()
        dense = self._dense(q.vector, n, exclude, mask)
        timings["search"] = elapsed_ms(t0)
        t0 = time.perf_counter()
        all_scores = self._bm25_all(q, exclude, mask)  # (count,)
        cand = np.flatnonzero(all_scores > 0)
        if len(cand) > n:
            cand = cand[np.argpartition(-all_scores[cand], n - 1)[:n]]
        lexical = [(self.ids.doc_id[p], float(all_scores[p])) for p in cand]
        lexical.sort(key=lambda item: (-item[1], item[0]))
        timings["bm25"] = elapsed_ms(t0)
        fused = rrf(
            {"dense": [d for d, _ in dense], "bm25": [d for d, _ in lexical]},
            {"dense": self.config.dense_weight, "bm25": self.config.bm25_weight},
            self.config.rrf_k,
        )[:k]
        dense_of = {d: (s, r) for r, (d, s) in enumerate(dense, 1)}
        bm25_of = {d: (s, r) for r, (d, s) in enumerate(lexical, 1)}
        for d, _ in fused:  # BM25 score of hits outside its candidates: from the full score vector
            if d not in bm25_of:
                bm25_of[d] = (float(all_scores[self.ids.position_of(d)]), None)
        return self._hits(fused, dense=dense_of, bm25=bm25_of, query_vector=q.vector)

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

    def _lexical(self, q: Query, k: int, exclude: frozenset[str], timings: dict, mask: np.ndarray | None = None) -> list[Hit]:
        t0 = time.perf_counter()
        from graphtx.rank.features import top_rows

        scores = self._bm25_all(q, exclude, mask)
        top = top_rows(np.where(scores > 0, scores, -np.inf), k)
        ranked = [(self.ids.doc_id[p], float(scores[p])) for p in top]
        ranked.sort(key=lambda item: (-item[1], item[0]))
        timings["bm25"] = elapsed_ms(t0)
        return self._hits(ranked, dense={}, bm25={d: (s, r) for r, (d, s) in enumerate(ranked, 1)}, query_vector=q.vector)

    def _rank_data(self):
        """(LexicalStats of the BM25 index, vectors (count, dim) float32, years (count,), codes): loaded once, for the rankers."""
        with self._bm25_lock:
            cached = self._rank_cache.get(self.manifest["live_digest"])
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
            rows = self.store.read_rows([(int(seq), int(self.ids.row[p])) for p in at], ["vector", "date", "ipc", "cpc"])
            for p, row in zip(at, rows):
                vectors[p] = np.asarray(row["vector"], np.float32)
                date = row["date"] or ""
                years[p] = float(date[:4]) if date[:4].isdigit() else np.nan
                codes[p] = tuple(row["cpc"] or ()) or tuple(row["ipc"] or ())
        cached = (stats, vectors, years, codes)
        with self._bm25_lock:
            self._rank_cache = {self.manifest["live_digest"]: cached}
        return cached

    def _reranked(
        self, q: Query, k: int, exclude: frozenset[str], timings: dict, kind: str, mask: np.ndarray | None = None, explain: bool = False
    ) -> list[Hit]:
        """The ranker's order of the pool: the top ``depth`` of the dense model and of BM25 (graphtx/rank/)."""
        from graphtx.rank.features import PoolInputs, top_rows

        stats, vectors, years, codes = self._rank_data()
        depth = max(self.ranker.depth, k)
        t0 = time.perf_counter()
        dense = self._dense(q.vector, depth, exclude, mask)
        timings["search"] = elapsed_ms(t0)
        t0 = time.perf_counter()
        lexical = self._bm25_all(q, exclude, mask)  # (count,)
        top_lex = top_rows(np.where(lexical > 0, lexical, -np.inf), depth)
        timings["bm25"] = elapsed_ms(t0)
        t0 = time.perf_counter()
        pool = np.union1d(top_lex, np.array([self.ids.position_of(d) for d, _ in dense], dtype=np.int64))  # (n,) positions
        if not len(pool):  # no document passes the filters (or every one is excluded): nothing to rank
            timings["rank"] = elapsed_ms(t0)
            return []
        cos = vectors[pool] @ np.asarray(q.vector, np.float32)  # (n,) exact cosines (unit vectors)
        query_year = years[self.ids.position_of(q.doc_id)] if q.doc_id else np.nan
        inputs = PoolInputs(
            candidates=pool,
            bm25=lexical[pool].astype(np.float64),
            dense=cos.astype(np.float64),
            query_terms=stats.term_ids(self.bm25().tokens(q.text)),
            query_year=float(query_year),
            candidate_years=years[pool],
            query_codes=codes[self.ids.position_of(q.doc_id)] if q.doc_id else (),
            candidate_codes=[codes[p] for p in pool],
            late=None if self.late_scorer is None else np.asarray(self.late_scorer(q, pool), dtype=np.float64),
        )
        scores = self.ranker.score(kind, inputs, stats)  # (n,)
        ranked = sorted(((self.ids.doc_id[p], float(s)) for p, s in zip(pool, scores)), key=lambda item: (-item[1], item[0]))[:k]
        timings["rank"] = elapsed_ms(t0)
        bm25_rank = {int(p): r for r, p in enumerate(top_lex, 1)}
        dense_of = {d: (s, r) for r, (d, s) in enumerate(dense, 1)}
        for d, _ in ranked:
            if d not in dense_of:
                dense_of[d] = (float(cos[np.searchsorted(pool, self.ids.position_of(d))]), None)
        bm25_of = {d: (float(lexical[self.ids.position_of(d)]), bm25_rank.get(self.ids.position_of(d))) for d, _ in ranked}
        hits = self._hits(ranked, dense=dense_of, bm25=bm25_of, query_vector=q.vector)
        if explain and hits:
            t0 = time.perf_counter()
            rows = np.searchsorted(pool, [self.ids.position_of(h.doc_id) for h in hits])  # (k,) positions in the pool
            why = explain_pool(self.ranker, kind, inputs, stats, rows)
            hits = [dataclasses.replace(h, ranker_explanation=e) for h, e in zip(hits, why)]
            timings["explain_ranker"] = elapsed_ms(t0)
        return hits
