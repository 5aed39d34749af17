"""The live id map of an index: FAISS id (int64) <-> document id, with where each document's row is stored.

``IdMap`` is what search resolves hits and typed ids with; ``resolve_live`` computes it from all
committed document versions (the latest version of each doc id, unless removed). Its file in the
index directory is named by ``store.ids_file_name``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

IDS_SCHEMA = pa.schema([("faiss_id", pa.int64()), ("doc_id", pa.string()), ("part", pa.int32()), ("row", pa.int32())])


def ids_digest(faiss_ids: np.ndarray) -> str:
    """sha1 of a sorted int64 id array: says whether a shard or BM25 index is still current."""
    return hashlib.sha1(np.ascontiguousarray(faiss_ids, dtype=np.int64).tobytes()).hexdigest()


class DocumentNotFound(KeyError):
    """A document id that is not (or no longer) in the index; ``suggestions``: the closest indexed ids."""

    def __init__(self, message: str, suggestions: list[str] | tuple[str, ...] = ()):
        super().__init__(message)
        self.suggestions = list(suggestions)


@dataclass
class IdMap:
    """Live documents, sorted by FAISS id.

    faiss_id (n,) int64 ascending; doc_id list of n strings; part (n,) int32; row (n,) int32.
    """

    faiss_id: np.ndarray
    doc_id: list[str]
    part: np.ndarray
    row: np.ndarray

    def __post_init__(self) -> None:
        self._position = {d: i for i, d in enumerate(self.doc_id)}
        self._resolver = None  # graphtx.corpus.ids.IdResolver, built on the first id that is not exact

    def __len__(self) -> int:
        return len(self.doc_id)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._position

    def position_of(self, doc_id: str) -> int:
        try:
            return self._position[doc_id]
        except KeyError:
            raise DocumentNotFound(f"document {doc_id!r} is not in the index") from None

    def resolve(self, typed: str) -> str:
        """The indexed id a typed one names (``US8418590B2``, ``US 8,418,590 B2``, ``US-8418590`` -> ``US-8418590-B2``);
        DocumentNotFound with the closest ids when none (or several) match."""
        from graphtx.corpus.ids import IdResolver, not_found_message

        if typed in self._position:
            return typed
        if self._resolver is None:
            self._resolver = IdResolver(self.doc_id)
        found = self._resolver.resolve(typed)
        if len(found) == 1:
            return found[0]
        if found:
            raise DocumentNotFound(
                f"document {typed!r} names {len(found)} indexed publications ({', '.join(found[:5])}): give the kind code",
                found[:5],
            )
        suggestions = self._resolver.suggest(typed)
        raise DocumentNotFound(not_found_message(typed, suggestions), suggestions)

    def positions_of_faiss(self, faiss_ids: np.ndarray) -> np.ndarray:
        """Positions of FAISS ids (any shape); -1 where an id is not live (or is FAISS's -1 padding)."""
        shape = np.shape(faiss_ids)
        if not len(self.faiss_id):
            return np.full(shape, -1, dtype=np.int64)
        flat = np.asarray(faiss_ids, dtype=np.int64).reshape(-1)
        pos = np.minimum(np.searchsorted(self.faiss_id, flat), len(self.faiss_id) - 1)
        return np.where(self.faiss_id[pos] == flat, pos, -1).reshape(shape)

    def to_table(self) -> pa.Table:
        return pa.table(
            {"faiss_id": self.faiss_id, "doc_id": self.doc_id, "part": self.part, "row": self.row}, schema=IDS_SCHEMA
        )

    @classmethod
    def from_table(cls, table: pa.Table) -> IdMap:
        table = table.sort_by("faiss_id")
        return cls(
            table.column("faiss_id").to_numpy().astype(np.int64),
            table.column("doc_id").to_pylist(),
            table.column("part").to_numpy().astype(np.int32),
            table.column("row").to_numpy().astype(np.int32),
        )


def resolve_live(versions: pa.Table, removed: set[int]) -> IdMap:
    """From all committed versions (faiss_id, doc_id, part, row): each doc id's latest, unless removed."""
    if versions.num_rows == 0:
        return IdMap.from_table(IDS_SCHEMA.empty_table())
    latest = versions.group_by("doc_id").aggregate([("faiss_id", "max")]).column("faiss_id_max")
    keep = pc.is_in(versions.column("faiss_id"), value_set=latest)
    if removed:
        gone = pc.is_in(versions.column("faiss_id"), value_set=pa.array(sorted(removed), pa.int64()))
        keep = pc.and_(keep, pc.invert(gone))
    return IdMap.from_table(versions.filter(keep))
