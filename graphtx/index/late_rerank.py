"""Late interaction in an open index: a query's node vectors against the stored ones of its candidates, to re-rank the
first stage's top (``search --rerank late``) and to chart each hit by its exact per-node terms. The late side of
:class:`~graphtx.index.search.Index`; the storage is ``late.py``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from graphtx.index.found import FoundRule
from graphtx.index.late import NodeVectorStore, explain_late, late_scores
from graphtx.index.query import Query
from graphtx.index.rankers import elapsed_ms
from graphtx.index.reader import DocumentReader
from graphtx.index.results import Hit

# late-interaction charts compare late-head vectors, not the projected node states the bar is calibrated on: words only there
LATE_FOUND = FoundRule(float("inf"))


class LateInteraction:
    def __init__(self, reader: DocumentReader, model, tokenizer, stores_late: bool, explain_rows: int):
        self.reader, self.model, self.tokenizer = reader, model, tokenizer
        self.stores_late, self.explain_rows = stores_late, explain_rows
        self._store: NodeVectorStore | None = None

    @property
    def available(self) -> bool:
        """Whether the index can re-rank by late interaction (a late head in the model, node vectors stored)."""
        return getattr(self.model, "late", None) is not None and self.stores_late

    def require(self) -> NodeVectorStore:
        """The node vectors, or a clear error naming what is missing."""
        directory = self.reader.store.dir
        if getattr(self.model, "late", None) is None:
            raise ValueError(
                f"the model of index {directory} has no late-interaction head (model.late_dim: 0): rerank late needs one"
            )
        if not self.stores_late:
            raise ValueError(
                f"index {directory} stores no late-interaction node vectors: rebuild it with index.late_storage int8 or fp16"
            )
        if self._store is None:
            self._store = NodeVectorStore(directory)
        return self._store

    def query_nodes(self, q: Query) -> tuple[np.ndarray, np.ndarray]:
        """The query graph's late-interaction node vectors (m, L) and weights (m,)."""
        u, w, _ = self.model.encode_nodes([q.graph], self.tokenizer)
        return u.numpy(), w.numpy()

    def scores(self, q: Query, doc_ids: list[str]) -> np.ndarray:
        """(len(doc_ids),) float64: the late-interaction score of ``q`` and each indexed document."""
        store = self.require()
        u, w = self.query_nodes(q)
        ids = self.reader.ids
        docs = store.nodes(self.reader.locations([ids.position_of(d) for d in doc_ids]))
        return late_scores(u, w, docs)

    def rerank(self, q: Query, hits: list[Hit], k: int, timings: dict) -> list[Hit]:
        """The best ``k`` of ``hits`` by the late-interaction score (ties: first-stage order)."""
        t0 = time.perf_counter()
        scores = self.scores(q, [h.doc_id for h in hits]) if hits else np.zeros(0)
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:k]
        timings["late"] = elapsed_ms(t0)
        return [
            dataclasses.replace(
                hits[i], rank=r, score=float(scores[i]), late_score=float(scores[i]), first_stage_rank=hits[i].rank
            )
            for r, i in enumerate(order, 1)
        ]

    def chart_hits(self, q: Query, hits: list[Hit], timings: dict) -> list[Hit]:
        """``hits`` with their late-interaction charts (each query node's best document node and its term)."""
        t0 = time.perf_counter()
        store = self.require()
        u, w = self.query_nodes(q)
        doc_ids = [h.doc_id for h in hits]
        graphs = self.reader.graphs(doc_ids)
        docs = store.nodes(self.reader.locations([self.reader.ids.position_of(d) for d in doc_ids]))
        out = [
            dataclasses.replace(h, explanation=explain_late(q.graph, u, w, g, v, self.explain_rows, LATE_FOUND))
            for h, g, v in zip(hits, graphs, docs)
        ]
        timings["explain"] = elapsed_ms(t0)
        return out
