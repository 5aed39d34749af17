"""Citations: category labels, the citation-file dialect, and the one reader of citation pairs.

The type is :class:`~graphtx.corpus.schema.Citation` (``citing_id, cited_id, category, source``).
Every stage reads citation files through :func:`read_citations`: ingest (its TSV/CSV lines
through :func:`iter_raw_citations` / :func:`parse_citations`, one record a line), training
(``graphtx train --citations``) and evaluation (``graphtx eval``).

Files: a TSV/CSV of ``citing_id, cited_id[, category]`` per line (tab- or comma-separated, an
optional header line naming the columns, in any order), a ``citations.parquet``, or a corpus
directory (its ``citations.parquet``; none there: no citations). Category labels are mapped
onto ``CITATION_CATEGORIES`` (:func:`citation_category`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import pyarrow.parquet as pq

from graphtx.corpus.base import ParsedRecord, RawRecord, RecordError, clean_text, decode_utf8
from graphtx.corpus.schema import CITATION_CATEGORIES, Citation
from graphtx.corpus.store import CITATIONS_FILE, DOCUMENTS_FILE

# --- categories ------------------------------------------------------------------

_SEARCH_LETTERS = tuple(c for c in CITATION_CATEGORIES if len(c) == 1)


def citation_category(label: str | None) -> str:
    """Map a category label onto ``CITATION_CATEGORIES``.

    ``"x" -> "X"``, ``"X,Y" -> "X"`` (the first letter listed), ``"cited by examiner" ->
    "examiner"``, ``"cited by third party" -> "other"``; anything else ``"unknown"``.
    """
    text = clean_text(label or "")
    letters = re.sub(r"[\s,;/&+]", "", text).upper()
    if letters and len(letters) <= 4 and all(c in _SEARCH_LETTERS for c in letters):
        return letters[0]
    text = text.lower()
    for word, category in (
        ("examiner", "examiner"),
        ("applicant", "applicant"),
        ("third party", "other"),
        ("other", "other"),
    ):
        if word in text:
            return category
    return "unknown"


def unique_citations(citations: Iterable[Citation]) -> tuple[Citation, ...]:
    """Drop repeats of the same (cited id, source), keeping the first (and its category)."""
    seen: dict[tuple[str, str], Citation] = {}
    for c in citations:
        seen.setdefault((c.cited_id, c.source), c)
    return tuple(seen.values())


# --- the TSV/CSV dialect (one record a line; ingest reads files with these) ---------------

_COLUMNS = ("citing_id", "cited_id", "category")
_HEADER_NAMES = {
    "citing": "citing_id",
    "citing_id": "citing_id",
    "cited": "cited_id",
    "cited_id": "cited_id",
    "category": "category",
}


def iter_raw_citations(path: str, data_stream: BinaryIO) -> Iterator[RawRecord]:
    """One record per line; payload ``{"line": bytes, "columns": (names...)}``. A first
    line naming ``citing_id``/``cited_id`` is a header and sets the column order."""
    columns = _COLUMNS
    for n, line in enumerate(data_stream, 1):
        if not line.strip():
            continue
        if n == 1 and (header := _header(line)):
            columns = header
            continue
        yield RawRecord("citations", path, f"line {n}", {"line": line, "columns": columns})


def _header(line: bytes) -> tuple[str, ...] | None:
    names = [cell.strip().lower() for cell in _cells(line.decode("utf-8", "replace"))]
    if "citing_id" in names or "citing" in names:
        return tuple(_HEADER_NAMES.get(name, name) for name in names)
    return None


def _cells(line: str) -> list[str]:
    delimiter = "\t" if "\t" in line else ","
    return next(csv.reader([line.rstrip("\r\n")], delimiter=delimiter), [])


def parse_citations(raw: RawRecord) -> ParsedRecord:
    cells = dict(zip(raw.payload["columns"], (c.strip() for c in _cells(decode_utf8(raw.payload["line"])))))
    citing, cited = cells.get("citing_id", ""), cells.get("cited_id", "")
    if not citing or not cited:
        raise RecordError("expected citing_id and cited_id, tab- or comma-separated")
    citation = Citation(citing, cited, citation_category(cells.get("category")), "tsv")
    return ParsedRecord(None, (citation,))


# --- the reader ------------------------------------------------------------------------


def read_citations(path: str | Path) -> list[Citation]:
    """Citation pairs of a TSV/CSV file, a citations Parquet file, or a corpus directory, in file order.

    A malformed line of a text file is an error naming the file and the line (an evaluation must
    not silently score fewer pairs than its file holds, nor training learn from fewer).
    """
    path = Path(path)
    if path.is_dir():
        corpus = path / CITATIONS_FILE
        if not corpus.is_file():
            if not (path / DOCUMENTS_FILE).is_file():
                raise FileNotFoundError(
                    f"{path} is a directory but not a corpus directory (no {CITATIONS_FILE} or {DOCUMENTS_FILE}): "
                    "give a citations file (TSV/CSV: citing_id, cited_id[, category]) or a directory written by `graphtx ingest`"
                )
            return []  # a corpus without citations
        path = corpus
    if not path.is_file():
        raise FileNotFoundError(f"citations file {path} does not exist")
    if path.suffix == ".parquet":
        return _read_parquet(path)
    out = []
    with path.open("rb") as f:
        for raw in iter_raw_citations(str(path), f):
            try:
                out.extend(parse_citations(raw).citations)
            except RecordError as err:
                line = raw.payload["line"].decode("utf-8", "replace").rstrip("\r\n")
                raise ValueError(
                    f"{path}: {raw.position}: {err}, got {line[:200]!r}; mend or remove that line"
                ) from None
    return out


def _read_parquet(path: Path) -> list[Citation]:
    """Citations of a Parquet file with columns citing_id, cited_id and optionally category, source."""
    try:
        names = set(pq.read_schema(path).names)
        if not {"citing_id", "cited_id"} <= names:
            raise ValueError(f"its columns are {', '.join(sorted(names))}")
        table = pq.read_table(path, columns=[c for c in ("citing_id", "cited_id", "category", "source") if c in names])
    except Exception as err:  # pyarrow's errors on a file that is not Parquet, or the columns above
        reason = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"{path}: not a citations Parquet file (citing_id, cited_id[, category, source]): {reason}"
        ) from None
    return [
        Citation(r["citing_id"], r["cited_id"], citation_category(r.get("category")), r.get("source") or "")
        for r in table.to_pylist()
    ]
