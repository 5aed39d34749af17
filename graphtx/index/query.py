"""Query text → the first claim → an invention graph, with one spaCy pipeline loaded once.

A query is claim text as a searcher pastes it: one claim ("1. A snowthrower comprising ..."),
a whole claim set ("1. A ... 2. The snowthrower of claim 1, ..."), or any paragraph of
technical text. A claim set is split into claims the way ingest splits them, and the first
independent claim is kept (a search is for the invention, which the first claim defines);
text without claim numbering is used whole.

The graph is built with the parse settings the indexed graphs were built with (the graphs
directory's manifest, copied into the index manifest), so query and documents go through
the same rules. ``Query`` is what a search starts from, whatever it was given (text, an indexed
document, a graph).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from graphtx.corpus.claims import make_claims, split_claims
from graphtx.corpus.schema import Claim
from graphtx.graphs.config import ParseConfig
from graphtx.graphs.graph import InventionGraph


def independent_claims(text: str) -> tuple[Claim, ...]:
    """The independent claims of a claims text, in order (split as ingest splits claims); text without numbering is one
    claim. The one place a query text is split into claims: the first of these is what a search searches."""
    claims = make_claims(split_claims(text))
    if len(claims) <= 1:
        return claims
    return tuple(c for c in claims if c.independent) or claims[:1]


def first_claim_text(text: str) -> str:
    """The first independent claim of a claims text; the text itself when it has no numbered claims."""
    claims = independent_claims(text)
    return claims[0].text if claims else text.strip()


class QueryParser:
    """Builds query graphs; the spaCy pipeline is loaded at the first query and reused.

    Thread-safe: spaCy pipelines are not, so parsing is serialised by a lock. Memory-bounded:
    each query is parsed inside a spaCy memory zone, so the strings and lexemes of its new
    words are freed after it (a service otherwise grows with every word it has ever seen).
    """

    def __init__(self, cfg: ParseConfig, kind: str = "first_claim"):
        self.cfg = cfg
        self.kind = kind
        self._builder = None
        self._lock = threading.Lock()

    def graph(self, text: str, doc_id: str = "query") -> InventionGraph:
        """The invention graph of a query text's first independent claim."""
        return self.claim_graph(text, doc_id)[1]

    def claim_graph(self, text: str, doc_id: str = "query") -> tuple[str, InventionGraph]:
        """(the first independent claim of ``text``, its invention graph): the text is split into claims once, here."""
        if not text or not text.strip():
            raise ValueError("the query text is empty")
        claim = first_claim_text(text)
        with self._lock:
            if self._builder is None:
                from graphtx.graphs.builder import GraphBuilder

                self._builder = GraphBuilder(self.cfg)
            with self._builder.nlp.memory_zone():  # the graph holds plain strings only: safe to free the zone
                graph = self._builder.build_text(claim, doc_id=doc_id, kind=self.kind)
        if graph.num_nodes == 0:
            raise ValueError(
                "no invention features (noun phrases) found in the query text: give a claim or a sentence about the invention"
            )
        return claim, graph


@dataclass(frozen=True)
class Query:
    """What a search starts from: a graph (for explanations), its vector, the text BM25 reads, ids left out."""

    source: str  # "text" | "id" | "graph"
    graph: InventionGraph | None
    vector: np.ndarray  # (dim,) float32, L2-normalised
    text: str  # for BM25: the claim text, or the indexed document's text for an id query
    exclude: frozenset[str] = frozenset()  # an id query leaves its own document out
    doc_id: str | None = None

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "doc_id": self.doc_id,
            "text": self.text[:500] if self.source == "text" else None,
            "nodes": self.graph.num_nodes if self.graph else None,
            "edges": self.graph.num_edges if self.graph else None,
        }
