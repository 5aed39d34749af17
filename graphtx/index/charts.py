"""Claim charts of an open index: which of a query's features each document shows, with the calibrated rule for when
the model has "found" one (graphtx/index/calibration.py), and the warnings a searcher should read before trusting a
chart. The explanation side of :class:`~graphtx.index.search.Index`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

import numpy as np

from graphtx.index.explain import Explanation, explain_hits
from graphtx.index.found import FoundRule
from graphtx.index.query import Query
from graphtx.index.rankers import elapsed_ms
from graphtx.index.reader import DocumentReader
from graphtx.index.results import Hit

CALIBRATION_DOCUMENTS = 64  # documents sampled for the calibration (each against 4 others)


class ClaimCharts:
    """Node matches between a query graph and indexed documents.

    ``bm25``: () -> the index's BM25 state when it is at hand (loaded, or persisted and current), else None: a dense-only
    search never builds BM25 for a chart's word gate.
    """

    def __init__(self, reader: DocumentReader, model, tokenizer, config, fingerprint: str, bm25: Callable):
        self.reader, self.model, self.tokenizer, self.config = reader, model, tokenizer, config
        self.fingerprint, self._bm25 = fingerprint, bm25
        self._found_rule: FoundRule | None = None  # made at the first chart, once per open index
        self._found_lock = threading.Lock()  # one calibration at a time

    def found_rule(self) -> FoundRule:
        """The rule for "found by the model": ``search.found_similarity`` when set, else the threshold calibrated on a
        seeded sample of this index's documents (in memory, once per open index)."""
        from graphtx.index.calibration import calibrate_found

        if self._found_rule is not None:
            return self._found_rule
        with self._found_lock:  # one calibration, however many requests ask at once
            if self._found_rule is not None:
                return self._found_rule

            def known(text: str) -> bool:
                return self.knows_words(text) is not False  # unknown (no BM25 at hand): no gate

            if self.config.found_similarity is not None:
                rule = FoundRule(self.config.found_similarity, None, known)
            else:
                seed = int(self.fingerprint[:8], 16) if self.fingerprint else 0
                ids = self.reader.ids
                graphs = self.reader.graphs([str(ids.doc_id[p]) for p in self.calibration_sample(seed)])
                calibration = calibrate_found(self.model, self.tokenizer, graphs, self.config.found_false_rate, seed)
                fallback = 0.9  # too few documents to calibrate on: the old fixed cosine
                rule = FoundRule(calibration.threshold if calibration else fallback, calibration, known)
            self._found_rule = rule
        return rule

    def calibration_sample(self, seed: int) -> list[int]:
        """``CALIBRATION_DOCUMENTS`` seeded positions from as few parts as hold them (each part read, and hashed, once)."""
        ids = self.reader.ids
        rng = np.random.default_rng(seed)
        parts = np.unique(ids.part)
        rng.shuffle(parts)
        chosen: list[int] = []
        for part in parts:
            rows = np.flatnonzero(ids.part == part)
            take = min(len(rows), CALIBRATION_DOCUMENTS - len(chosen))
            chosen += rng.choice(rows, size=take, replace=False).tolist()
            if len(chosen) >= CALIBRATION_DOCUMENTS:
                break
        return sorted(chosen)

    def knows_words(self, text: str) -> bool | None:
        """Whether ``text`` holds a word (after BM25's stemming and stop words) some indexed document holds; None when
        no BM25 state is at hand."""
        bm25 = self._bm25()
        if bm25 is None:
            return None
        return bool(bm25.retriever.get_tokens_ids(bm25.tokens(text)))

    def query_warnings(self, q: Query) -> list[str]:
        """What a searcher should know before trusting a claim chart: a query with almost no features, or no word the
        index knows."""
        warnings = []
        if q.graph is not None and q.source != "id":
            features = sum(1 for t in q.graph.node_type if t == "feature")
            if features < 2:
                warnings.append(
                    f"the query yields {features} invention feature{'s' if features != 1 else ''}: describe the invention "
                    "in more words (a claim names its parts) for the claim chart to say much"
                )
            if q.text.strip() and self.knows_words(q.text) is False:
                warnings.append(
                    "none of the query's words occurs in the indexed documents: the hits are only the model's guesses"
                )
        return warnings

    def explain(self, q: Query, doc_ids: list[str]) -> list[Explanation]:
        """Node matches between the query and the given indexed documents (any, not only hits)."""
        return explain_hits(
            self.model,
            self.tokenizer,
            q.graph,
            self.reader.graphs(doc_ids),
            self.config.explain_rows,
            self.found_rule(),
        )

    def chart_hits(self, q: Query, hits: list[Hit], timings: dict) -> list[Hit]:
        """``hits`` with their claim charts (``hit.explanation``)."""
        if q.graph is None:
            raise ValueError("this query has no graph to explain")
        t0 = time.perf_counter()
        explanations = self.explain(q, [h.doc_id for h in hits]) if hits else []
        timings["explain"] = elapsed_ms(t0)
        return [dataclasses.replace(h, explanation=e) for h, e in zip(hits, explanations)]
