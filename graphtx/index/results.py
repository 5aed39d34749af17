"""What a search returns: ranked hits, the result of one query, an indexed document's record,
and how they are assembled from the rows the index stores.

``Hit`` and ``DocumentRecord`` carry the readable fields of a document (abstract, first claim,
applicants, dates, family, link), empty where the corpus had none and then left out of their JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from graphtx.graphs.graph import InventionGraph
from graphtx.index.explain import Explanation
from graphtx.index.late import LateExplanation
from graphtx.index.query import Query
from graphtx.index.store import DISPLAY_FIELDS, LIST_FIELDS, row_to_graph
from graphtx.links import hit_link
from graphtx.rank.explain import RankerExplanation


@dataclass(frozen=True, kw_only=True)
class Readable:
    """The readable fields of a document (keyword-only, after a record's own fields): "" / () where the corpus had
    none, and then left out of the record's JSON (:func:`readable_json`)."""

    abstract: str = ""
    first_claim: str = ""
    applicants: tuple[str, ...] = ()
    priority_date: str = ""
    application_date: str = ""
    family_id: str = ""
    kind: str = ""
    country: str = ""
    lang: str = ""
    link: str = ""  # from search.link_template


@dataclass(frozen=True)
class Hit(Readable):
    rank: int  # 1 = best
    doc_id: str
    score: float  # what the ranking is by: cosine (dense), BM25, the fused RRF score (hybrid), the ranker's score (convex, learned)
    title: str = ""
    date: str = ""
    ipc: tuple[str, ...] = ()
    cpc: tuple[str, ...] = ()
    dense_score: float | None = (
        None  # cosine of query and document vectors (FAISS's; exact where FAISS did not rank it)
    )
    dense_rank: int | None = None  # rank in the dense candidates (hybrid), None if not among them
    bm25_score: float | None = None  # hybrid only
    bm25_rank: int | None = None  # rank in the BM25 candidates (hybrid), None if not among them
    late_score: float | None = None  # rerank late: the node-level late-interaction score (= score)
    first_stage_rank: int | None = None  # rerank late: the hit's rank before re-ranking (dense or hybrid)
    explanation: Explanation | LateExplanation | None = None
    ranker_explanation: RankerExplanation | None = (
        None  # explain under hybrid / convex / learned: what each signal contributed
    )

    def to_json(self) -> dict:
        out = {
            "rank": self.rank,
            "doc_id": self.doc_id,
            "score": round(self.score, 6),
            "title": self.title,
            "date": self.date,
            "ipc": list(self.ipc),
            "cpc": list(self.cpc),
        }
        if self.dense_score is not None or self.bm25_score is not None:
            out |= {
                "dense_score": None if self.dense_score is None else round(self.dense_score, 6),
                "dense_rank": self.dense_rank,
                "bm25_score": None if self.bm25_score is None else round(self.bm25_score, 4),
                "bm25_rank": self.bm25_rank,
            }
        if self.late_score is not None:
            out |= {"late_score": round(self.late_score, 6), "first_stage_rank": self.first_stage_rank}
        out |= readable_json(self)
        if self.explanation is not None:
            out["explanation"] = self.explanation.to_json()
        if self.ranker_explanation is not None:
            out["ranker_explanation"] = self.ranker_explanation.to_json()
        return out


READABLE_FIELDS = tuple(f.name for f in fields(Readable))


def readable_json(record) -> dict:
    """The readable fields a hit or document has (empty ones left out, not shown as blanks)."""
    out = {}
    for name in READABLE_FIELDS:
        value = getattr(record, name)
        if value:
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


def readable_of(row: dict, doc_id: str, link_template: str) -> dict:
    """Hit / DocumentRecord keyword arguments of an index row's display fields (None: a part older than them)."""
    out = {f: tuple(row.get(f) or ()) if f in LIST_FIELDS else row.get(f) or "" for f in DISPLAY_FIELDS}
    out["link"] = hit_link(link_template, doc_id, country=out["country"], kind=out["kind"], family_id=out["family_id"])
    return out


@dataclass(frozen=True)
class SearchResult:
    query: Query
    hits: tuple[Hit, ...]
    hybrid: bool  # BM25 took part (hybrid, convex, learned)
    timings_ms: dict = field(default_factory=dict)  # parse, encode, search, bm25, rank, late, explain, total
    ranker: str = "dense"  # dense | bm25 | hybrid | convex | learned | learned-lexical (or a plug-in)
    rerank: str = "none"  # none | late
    filters: dict = field(default_factory=dict)  # the filters in force (before: the cut-off used), {} when none
    warnings: tuple[str, ...] = ()  # what to know before trusting the claim charts (Index.query_warnings)

    def __iter__(self):
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]

    def to_json(self) -> dict:
        out = {
            "query": self.query.to_json(),
            "ranker": self.ranker,
            "hybrid": self.hybrid,
            "rerank": self.rerank,
            "hits": [h.to_json() for h in self.hits],
            "timings_ms": self.timings_ms,
        }
        if self.filters:
            out["filters"] = self.filters
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True)
class DocumentRecord(Readable):
    doc_id: str
    faiss_id: int
    title: str
    date: str
    ipc: tuple[str, ...]
    cpc: tuple[str, ...]
    graph: InventionGraph
    claims: tuple[dict, ...] = ()  # every claim: {number, text, independent}; () for an index built without its corpus
    description: str = ""  # cut at index.document_max_chars
    cites: tuple[str, ...] = ()  # what the corpus says it cites (any id)
    cited_in_index: tuple[tuple[str, str], ...] = ()  # (id, title) of the documents it cites that the index holds
    citing_in_index: tuple[tuple[str, str], ...] = ()  # (id, title) of indexed documents that cite it

    @classmethod
    def from_row(cls, row: dict, doc_id: str, faiss_id: int, kind: str, link_template: str) -> DocumentRecord:
        """The record of an index row read with META_FIELDS, DISPLAY_FIELDS, DOCUMENT_FIELDS and GRAPH_FIELDS (graph of ``kind``)."""
        return cls(
            doc_id,
            faiss_id,
            row["title"] or "",
            row["date"] or "",
            tuple(row["ipc"] or ()),
            tuple(row["cpc"] or ()),
            row_to_graph(row, doc_id, kind),
            tuple(row.get("claims") or ()),
            row.get("description") or "",
            tuple(row.get("cites") or ()),
            **readable_of(row, doc_id, link_template),
        )

    def to_json(self, graph: bool = True) -> dict:
        out = {
            "doc_id": self.doc_id,
            "faiss_id": self.faiss_id,
            "title": self.title,
            "date": self.date,
            "ipc": list(self.ipc),
            "cpc": list(self.cpc),
        }
        out |= readable_json(self)
        out |= {
            "claims": [dict(c) for c in self.claims],
            "description": self.description,
            "cited": [{"doc_id": d, "title": t} for d, t in self.cited_in_index],
            "citing": [{"doc_id": d, "title": t} for d, t in self.citing_in_index],
        }
        if graph:
            g = self.graph
            out["graph"] = {
                "kind": g.kind,
                "text_source": g.text_source,
                "node_text": list(g.node_text),
                "node_type": list(g.node_type),
                "edges": [[s, d, t] for s, d, t in g.edges()],
            }
        return out


def assemble_hits(
    ranked: list[tuple[str, float]],
    rows: list[dict],
    dense: dict,
    bm25: dict | None,
    query_vector: np.ndarray | None,
    link_template: str,
) -> list[Hit]:
    """Hits ranked 1.. of ``ranked`` [(doc id, score)], best first, from their index rows (META_FIELDS, DISPLAY_FIELDS).

    ``dense`` / ``bm25``: doc id -> (score, rank) of the rankers that took part (``bm25`` None: a dense-only
    search, whose hits carry no per-ranker scores). ``query_vector`` (dim,): given when some hit lacks a dense
    score; it is then the cosine with the row's ``"vector"``.
    """
    hits = []
    for rank, ((doc_id, score), row) in enumerate(zip(ranked, rows), 1):
        d_score, d_rank = dense.get(doc_id, (None, None))
        if d_score is None and query_vector is not None:
            d_score = float(np.dot(np.asarray(row["vector"], np.float32), query_vector))
        b_score, b_rank = bm25.get(doc_id, (None, None)) if bm25 is not None else (None, None)
        hits.append(
            Hit(
                rank=rank,
                doc_id=doc_id,
                score=score,
                title=row["title"] or "",
                date=row["date"] or "",
                ipc=tuple(row["ipc"] or ()),
                cpc=tuple(row["cpc"] or ()),
                dense_score=d_score if bm25 is not None else None,
                dense_rank=d_rank if bm25 is not None else None,
                bm25_score=b_score,
                bm25_rank=b_rank,
                **readable_of(row, doc_id, link_template),
            )
        )
    return hits
