"""The corpus directory: streaming Parquet writers, the error log and the manifest.

Layout of a corpus directory::

    documents.parquet   one row per document (DOCUMENT_SCHEMA)
    citations.parquet   one row per (citing, cited, category) (CITATION_SCHEMA)
    errors.jsonl        one JSON object per skipped record: file, position, id, reason
    manifest.json       counts, sources, versions, time; written last (graphtx/atomic.py)

The files are written into ``.partial/`` inside the directory and moved in only when
ingest completes, so a re-run that is interrupted or meets a full disk leaves the
previous corpus byte-identical, and a manifest is never written for a partial corpus.

Rows are buffered and flushed as Parquet row groups, so memory does not grow
with corpus size (only the set of ids seen, for duplicate detection, does).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from graphtx.atomic import StagedDir, interrupted_run
from graphtx.corpus.base import SkippedRecord
from graphtx.corpus.schema import (
    CITATION_SCHEMA,
    DOCUMENT_SCHEMA,
    Citation,
    PatentDocument,
    citation_to_row,
    document_from_row,
    document_to_row,
)

DOCUMENTS_FILE = "documents.parquet"
CITATIONS_FILE = "citations.parquet"
ERRORS_FILE = "errors.jsonl"
MANIFEST_FILE = "manifest.json"


class TableWriter:
    """Buffers rows and writes them as row groups of ``rows_per_group``."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_group: int):
        self.path, self.schema, self.rows_per_group = path, schema, rows_per_group
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")
        self._rows: list[dict] = []
        self.count = 0

    def add(self, row: dict) -> None:
        self._rows.append(row)
        self.count += 1
        if len(self._rows) >= self.rows_per_group:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
            self._rows = []

    def close(self) -> None:
        self.flush()
        self._writer.close()

    def abort(self) -> None:
        """Close without the buffered rows (the file is being discarded)."""
        self._rows = []
        try:
            self._writer.close()
        except OSError:
            pass


class CorpusWriter:
    """Writes one corpus directory; use as a context manager.

    ``add_document`` refuses a repeated id (the first one wins) and returns the
    skip record for the caller to report; citations are de-duplicated on
    (citing, cited, category). Leaving the ``with`` block by an exception (Ctrl-C
    included) discards the new files and keeps the directory as it was.
    """

    def __init__(self, out_dir: str | Path, rows_per_group: int = 512):
        self.out_dir = Path(out_dir)
        self._staged = StagedDir(
            self.out_dir, "`graphtx ingest`", (DOCUMENTS_FILE, CITATIONS_FILE, ERRORS_FILE)
        ).__enter__()
        try:
            self.documents = TableWriter(self._staged.path(DOCUMENTS_FILE), DOCUMENT_SCHEMA, rows_per_group)
            self.citations = TableWriter(self._staged.path(CITATIONS_FILE), CITATION_SCHEMA, rows_per_group * 16)
            self._errors = open(self._staged.path(ERRORS_FILE), "w", encoding="utf-8")
        except BaseException as err:
            self._staged.__exit__(type(err), err, err.__traceback__)
            raise
        self._first_seen: dict[str, str] = {}  # id -> "file position"
        self._citation_keys: set[tuple[str, str, str]] = set()
        self.skipped = 0
        self.not_patents = 0  # of the skipped: records that are no patent (sequence listings)
        self.duplicate_citations = 0
        self.started = time.time()

    def __enter__(self) -> "CorpusWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.close()
            return
        if not self._errors.closed:
            self._errors.close()
            self.documents.abort()
            self.citations.abort()
        self._staged.__exit__(exc_type, exc, tb)  # removes the partial; a full disk becomes DiskFull

    def skip(self, record: SkippedRecord) -> None:
        self._errors.write(record.to_json() + "\n")
        self.skipped += 1
        self.not_patents += record.not_a_patent

    def add_document(self, doc: PatentDocument, citations: tuple[Citation, ...], file: str, position: str) -> bool:
        where = f"{file} {position}"
        if doc.id in self._first_seen:
            self.skip(
                SkippedRecord(
                    file, position, f"duplicate id {doc.id} (kept the first, {self._first_seen[doc.id]})", doc.id
                )
            )
            return False
        self._first_seen[doc.id] = where
        self.documents.add(document_to_row(doc))
        self.add_citations(citations)
        return True

    def add_citations(self, citations: tuple[Citation, ...]) -> None:
        for c in citations:
            key = (c.citing_id, c.cited_id, c.category)
            if key in self._citation_keys:
                self.duplicate_citations += 1
                continue
            self._citation_keys.add(key)
            self.citations.add(citation_to_row(c))

    def close(self, extra_manifest: dict | None = None) -> dict:
        if self._errors.closed:
            return {}
        self.documents.close()
        self.citations.close()
        self._errors.close()
        manifest = {
            "documents": self.documents.count,
            "citations": self.citations.count,
            "duplicate_citations_dropped": self.duplicate_citations,
            "skipped": self.skipped,
            "not_patents": self.not_patents,
            "seconds": round(time.time() - self.started, 2),
            "pyarrow": pa.__version__,
            **(extra_manifest or {}),
        }
        try:
            self._staged.commit(manifest)
        except BaseException as err:
            self._staged.__exit__(type(err), err, err.__traceback__)
            raise
        self._staged.__exit__(None, None, None)  # committed: the directory's lock is released
        return manifest


# --- reading back ----------------------------------------------------------------


def documents_path(corpus_dir: str | Path) -> Path:
    path = Path(corpus_dir) / DOCUMENTS_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{corpus_dir} is not a corpus directory: {DOCUMENTS_FILE} is missing{interrupted_run(corpus_dir)} (run `graphtx ingest` first)"
        )
    return path


def iter_documents(
    corpus_dir: str | Path, batch_size: int = 256, columns: list[str] | None = None
) -> Iterator[PatentDocument]:
    """Stream the documents of a corpus directory, one row group batch at a time."""
    for batch in pq.ParquetFile(documents_path(corpus_dir)).iter_batches(batch_size=batch_size, columns=columns):
        for row in batch.to_pylist():
            yield document_from_row(row)


def read_rows(path: str | Path, start: int, stop: int, columns: list[str] | None = None) -> list[dict]:
    """Rows ``start .. stop - 1`` of a Parquet file (only the row groups that hold them are read)."""
    f = pq.ParquetFile(path)
    rows: list[dict] = []
    at = 0
    for group in range(f.num_row_groups):
        n = f.metadata.row_group(group).num_rows
        if at < stop and at + n > start:
            first = max(start, at)
            rows.extend(
                f.read_row_group(group, columns=columns).slice(first - at, min(stop, at + n) - first).to_pylist()
            )
        at += n
        if at >= stop:
            break
    return rows


def count_documents(corpus_dir: str | Path) -> int:
    return pq.ParquetFile(documents_path(corpus_dir)).metadata.num_rows


def read_errors(directory: str | Path) -> list[dict]:
    path = Path(directory) / ERRORS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
