"""The live documents of an open index, read back: rows by position, graphs, titles, whole documents and who cites
whom. The store's side of :class:`~graphtx.index.search.Index` (which hands it the id map and the store); the
rankers, the claim charts and late interaction read documents only through it.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pyarrow as pa

from graphtx.graphs.graph import InventionGraph
from graphtx.index.idmap import IdMap
from graphtx.index.results import DocumentRecord
from graphtx.index.store import DISPLAY_FIELDS, DOCUMENT_FIELDS, GRAPH_FIELDS, META_FIELDS, IndexStore, row_to_graph


class DocumentReader:
    """Rows of the live documents by id-map position, read under one lock (the parts' readers are not thread-safe)."""

    def __init__(self, store: IndexStore, ids: IdMap, kind: str, link_template: str):
        self.store, self.ids, self.kind, self.link_template = store, ids, kind, link_template
        self._read_lock = threading.Lock()
        self._citing: dict | None = None  # cited id -> indexed documents citing it, read at the first document page
        self._citing_lock = threading.Lock()

    def locations(self, positions) -> list[tuple[int, int]]:
        """(part, row) of each id-map position."""
        return [(int(self.ids.part[p]), int(self.ids.row[p])) for p in positions]

    def rows(self, positions: list[int], columns: list[str]) -> list[dict]:
        locations = self.locations(positions)
        with self._read_lock:
            return self.store.read_rows(locations, columns)

    def graphs(self, doc_ids: list[str]) -> list[InventionGraph]:
        """The indexed graph of each document."""
        rows = self.rows([self.ids.position_of(d) for d in doc_ids], list(GRAPH_FIELDS))
        return [row_to_graph(r, d, self.kind) for r, d in zip(rows, doc_ids)]

    def titles(self, doc_ids: list[str]) -> dict[str, str]:
        rows = self.rows([self.ids.position_of(d) for d in doc_ids], ["title"]) if doc_ids else []
        return {d: (r["title"] or "") for d, r in zip(doc_ids, rows)}

    def document(self, doc_id: str) -> DocumentRecord:
        """The whole indexed document (an id the index holds): metadata, every claim, the description, its graph, and the
        indexed documents it cites and that cite it."""
        pos = self.ids.position_of(doc_id)
        row = self.rows([pos], [*META_FIELDS, *DISPLAY_FIELDS, *DOCUMENT_FIELDS, *GRAPH_FIELDS])[0]
        record = DocumentRecord.from_row(row, doc_id, int(self.ids.faiss_id[pos]), self.kind, self.link_template)
        cited = [d for d in record.cites if d in self.ids]
        citing = sorted(self.citing_map().get(doc_id, ()))
        titles = self.titles([*cited, *citing])
        return dataclasses.replace(
            record,
            cited_in_index=tuple((d, titles[d]) for d in cited),
            citing_in_index=tuple((d, titles[d]) for d in citing),
        )

    def citing_map(self) -> dict[str, list[str]]:
        """cited id -> the indexed documents that cite it (the live rows' ``cites`` columns, read once)."""
        import pyarrow.compute as pc

        if self._citing is not None:
            return self._citing
        with self._citing_lock:
            if self._citing is not None:
                return self._citing
            citing: dict[str, list[str]] = {}
            for seq in np.unique(self.ids.part).tolist():
                if "cites" not in self.store.part_columns(seq):
                    continue
                rows = self.ids.row[self.ids.part == seq]  # the live rows of this part
                table = self.store.read_part_columns(seq, ["doc_id", "cites"]).take(pa.array(rows))
                cites = table.column("cites").combine_chunks()
                flat = pc.list_flatten(cites)
                if not len(flat):
                    continue
                owners = pc.take(table.column("doc_id").combine_chunks(), pc.list_parent_indices(cites))
                for cited, doc in zip(flat.to_pylist(), owners.to_pylist()):
                    if cited in self.ids:
                        citing.setdefault(cited, []).append(doc)
            self._citing = citing
        return self._citing
