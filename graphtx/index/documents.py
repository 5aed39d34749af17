"""Per-document metadata and BM25 text for the index, looked up in a corpus directory.

The index copies what a search shows (title, date, IPC and CPC classes, abstract, first claim,
applicants, priority and application dates, family id, kind, country, language: the
``DISPLAY_FIELDS`` a corpus has; older corpora lack some and give empty values) and the text BM25
ranks (title, abstract, claims, description, cut at ``bm25_max_chars``) into its own
parts, so nothing outside the index directory is read at query time.

Lookup is by row position: the corpus's ``id`` column is read once (a few bytes a
document), then each chunk of graphs reads only the row groups holding its documents; since
``graphtx parse`` keeps corpus order, each row group is read about once.

Without a corpus the metadata is empty and BM25 ranks the graph's node texts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from graphtx.corpus.store import documents_path
from graphtx.graphs.graph import InventionGraph
from graphtx.index.store import DISPLAY_FIELDS, LIST_FIELDS
from graphtx.text.bm25 import bm25_text  # the text an index's BM25 reads, one owner

_COLUMNS = ["title", "abstract", "claims", "description", "ipc", "cpc", "date"]
_OPTIONAL = [f for f in DISPLAY_FIELDS if f not in ("abstract", "first_claim")]  # read when the corpus has them


def empty_display() -> dict:
    """The display and document fields of a document the corpus says nothing about."""
    return {f: [] if f in LIST_FIELDS else "" for f in DISPLAY_FIELDS} | {"claims": [], "description": "", "cites": []}


def claim_rows(claims) -> list[dict]:
    """Every claim of a corpus row: {number, text, independent}, in order (numbered 1, 2, ... where the corpus has no numbers)."""
    out = []
    for i, c in enumerate(c for c in claims or () if c.get("text")):
        out.append({"number": int(c.get("num") or i + 1), "text": c["text"], "independent": bool(c.get("independent"))})
    return out


def citations_of(corpus_dir: str | Path) -> dict[str, list[str]]:
    """citing id -> the ids it cites, from the corpus's citations.parquet ({} when it has none)."""
    from graphtx.corpus.store import CITATIONS_FILE

    path = Path(corpus_dir) / CITATIONS_FILE
    if not path.exists():
        return {}
    table = pq.read_table(path, columns=["citing_id", "cited_id"])
    seen: dict[str, dict[str, None]] = {}  # insertion-ordered sets: the corpus's order, each cited id once
    for citing, cited in zip(table.column("citing_id").to_pylist(), table.column("cited_id").to_pylist()):
        if citing and cited:
            seen.setdefault(citing, {})[cited] = None
    return {citing: list(cited) for citing, cited in seen.items()}


def first_claim(claims) -> str:
    """Text of the first independent claim of a corpus row's claims (the first claim when none is marked)."""
    claims = [c for c in claims or () if c.get("text")]
    chosen = next((c for c in claims if c.get("independent")), claims[0] if claims else None)
    return chosen["text"] if chosen else ""


def graph_text(graph: InventionGraph, max_chars: int) -> str:
    """BM25 text when there is no corpus: the graph's node texts."""
    return "\n".join(graph.node_text)[:max_chars]


class CorpusLookup:
    """Metadata rows of a corpus directory by document id (row-group reads, a small cache)."""

    def __init__(self, corpus_dir: str | Path, max_chars: int, document_max_chars: int = 60_000):
        self.path = documents_path(corpus_dir)
        self.max_chars = max_chars
        self.document_max_chars = document_max_chars  # description kept for the document's page; 0: none
        self.cites = citations_of(corpus_dir)
        self._file = pq.ParquetFile(self.path)
        present = set(self._file.schema_arrow.names)
        self._columns = _COLUMNS + [c for c in _OPTIONAL if c in present]
        ids = pq.read_table(self.path, columns=["id"]).column("id").to_pylist()
        self._position = {}
        for i, doc_id in enumerate(ids):
            self._position.setdefault(doc_id, i)  # ingest refuses duplicates; first wins if one slipped in
        meta = self._file.metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)  # (groups + 1,)
        self._cache: dict[int, list[dict]] = {}

    def __len__(self) -> int:
        return len(self._position)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._position

    def _group(self, g: int) -> list[dict]:
        if g not in self._cache:
            if len(self._cache) >= 4:  # a chunk spans few row groups; keep memory bounded
                self._cache.pop(next(iter(self._cache)))
            self._cache[g] = self._file.read_row_group(g, columns=self._columns).to_pylist()
        return self._cache[g]

    def row(self, doc_id: str) -> dict | None:
        """The metadata fields of ``doc_id`` (title, date, ipc, cpc, text, DISPLAY_FIELDS), or None when not in the corpus."""
        i = self._position.get(doc_id)
        if i is None:
            return None
        g = int(np.searchsorted(self._starts, i, side="right") - 1)
        row = self._group(g)[i - int(self._starts[g])]
        return {
            "title": row["title"] or "",
            "date": row["date"] or "",
            "ipc": list(row["ipc"] or ()),
            "cpc": list(row["cpc"] or ()),
            "text": bm25_text(row, self.max_chars),
            **empty_display(),
            **{f: list(row[f] or ()) if f in LIST_FIELDS else row[f] or "" for f in _OPTIONAL if f in row},
            "abstract": row["abstract"] or "",
            "first_claim": first_claim(row["claims"]),
            "claims": claim_rows(row["claims"]) if self.document_max_chars else [],
            "description": (row["description"] or "")[: self.document_max_chars],
            "cites": self.cites.get(doc_id, []),
        }


def metadata_rows(graphs: list[InventionGraph], lookup: CorpusLookup | None, max_chars: int) -> tuple[list[dict], int]:
    """(one metadata dict per graph, how many were not found in the corpus)."""
    rows, missing = [], 0
    for g in graphs:
        row = lookup.row(g.doc_id) if lookup is not None else None
        if row is None:
            missing += lookup is not None
            row = {"title": "", "date": "", "ipc": [], "cpc": [], "text": graph_text(g, max_chars), **empty_display()}
        rows.append(row)
    return rows, missing
