"""Tabular inputs: JSON lines and Parquet documents.

Documents are rows with an ``id`` and any of ``title``, ``abstract``, ``claims``,
``description``, ``ipc``, ``cpc``, ``family_id``, ``date``, ``priority_date``,
``application_date``, ``applicants``, ``country``, ``kind``, ``lang`` (common alternative
column names are accepted, see ``_ALIASES``: ``earliest_priority_date``, ``filing_date``,
``assignee``, ``country_code``, ``kind_code``, ``language``, ...). Fields under any other
name are kept in the document's ``extra`` map (stored as JSON), never dropped. Ids are kept
exactly as given. ``claims`` may be one string ("1. A ... 2. The ... of claim 1"), a list of
strings, or a list of ``{"num", "text", "independent"}`` objects. ``applicants`` may be a
string (several separated by ";"), a list of strings or a list of ``{"name": ...}`` objects;
every applicant/assignee column present is read.

Citation files (TSV/CSV) are read by :mod:`graphtx.corpus.citations`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import pyarrow.parquet as pq

from graphtx.corpus.base import (
    ParsedRecord,
    RawRecord,
    RecordError,
    clean_text,
    decode_utf8,
    iso_date,
    multiline_text,
    require_text,
    unique_names,
)
from graphtx.corpus.claims import (
    MAX_CLAIM_NUMBER,
    claim_number,
    claim_references,
    make_claims,
    split_claims,
    strip_own_number,
)
from graphtx.corpus.codes import country_of, kind_of, normalise_cpc, normalise_ipc, unique_codes
from graphtx.corpus.schema import Claim, PatentDocument

# canonical field -> names it is also found under (first present wins)
_ALIASES = {
    "id": ("id", "patent_id", "publication_number", "doc_id", "ucid"),
    "title": ("title", "invention_title"),
    "abstract": ("abstract",),
    "claims": ("claims",),
    "description": ("description",),
    "ipc": ("ipc", "ipc_codes", "classifications_ipc", "classifications_ipcr"),
    "cpc": ("cpc", "cpc_codes", "classifications_cpc"),
    "family_id": ("family_id", "family"),
    "date": ("date", "publication_date", "pub_date"),
    "lang": ("lang", "language"),
    "kind": ("kind", "kind_code"),
    "priority_date": ("priority_date", "earliest_priority_date", "priority"),
    "application_date": ("application_date", "filing_date", "app_date"),
    "applicants": ("applicants", "applicant", "assignees", "assignee", "applicant_name", "assignee_name"),
    "country": ("country", "country_code"),
}
_MERGED = {"applicants"}  # fields read from every alias present (an applicant and an assignee column both count)
_PARQUET_BATCH_ROWS = 1024


# --- JSON lines ------------------------------------------------------------------


def iter_raw_jsonl(path: str, data_stream: BinaryIO) -> Iterator[RawRecord]:
    """One record per non-blank line; the line's bytes are decoded in :func:`parse_jsonl`,
    so a bad line fails alone."""
    for n, line in enumerate(data_stream, 1):
        if line.strip():
            yield RawRecord("jsonl", path, f"line {n}", line)


def parse_jsonl(raw: RawRecord) -> ParsedRecord:
    text = decode_utf8(raw.payload).strip()
    try:
        row = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"invalid JSON: {re.sub(r'[: ]+at$', '', err.msg)} at column {err.colno}") from None
    except ValueError as err:  # an integer of over 4,300 digits: Python's limit on reading one
        raise RecordError(f"invalid JSON: {str(err).split(';')[0]}") from None
    except RecursionError:  # lists or objects nested about a thousand deep
        raise RecordError("invalid JSON: nested too deeply to read") from None
    if not isinstance(row, dict):
        raise RecordError(f"invalid JSON: expected an object, got {type(row).__name__}")
    return ParsedRecord(_document(row, "jsonl", raw.file))


# --- Parquet ---------------------------------------------------------------------


def iter_raw_parquet(path: str, data_stream: BinaryIO) -> Iterator[RawRecord]:
    """Rows as dicts, read one record batch at a time (the stream must be seekable)."""
    n = 0
    for batch in pq.ParquetFile(data_stream).iter_batches(batch_size=_PARQUET_BATCH_ROWS):
        for row in batch.to_pylist():
            n += 1
            yield RawRecord("parquet", path, f"row {n}", row)


def parse_parquet(raw: RawRecord) -> ParsedRecord:
    return ParsedRecord(_document(raw.payload, "parquet", raw.file))


# --- rows -> documents -----------------------------------------------------------


def _document(row: dict[str, Any], fmt: str, file: str) -> PatentDocument:
    _check_storable(row)
    fields, used = {}, set()
    for name, keys in _ALIASES.items():
        present = [k for k in keys if row.get(k) not in (None, "", [])]
        taken = present if name in _MERGED else present[:1]
        used.update(taken)
        fields[name] = [row[k] for k in taken] if name in _MERGED else (row[taken[0]] if taken else None)
    doc_id = fields["id"]
    if doc_id is None or not str(doc_id).strip():
        raise RecordError(f"missing id: none of the fields {', '.join(_ALIASES['id'])}")
    if fields["date"] is None and row.get("year") not in (None, ""):
        used.add("year")
    doc_id = str(doc_id).strip()
    doc = PatentDocument(
        id=doc_id,
        source=fmt,
        source_file=file,
        title=clean_text(_string(fields["title"])),
        abstract=multiline_text(_string(fields["abstract"])),
        claims=_claims(fields["claims"]),
        description=multiline_text(_string(fields["description"])),
        ipc=_codes(fields["ipc"], normalise_ipc),
        cpc=_codes(fields["cpc"], normalise_cpc),
        family_id=_string(fields["family_id"]).strip(),
        date=_date(fields["date"], row.get("year")),
        lang=_string(fields["lang"]).strip().lower(),
        kind=_string(fields["kind"]).strip().upper() or kind_of(doc_id),
        priority_date=_date(fields["priority_date"], None),
        application_date=_date(fields["application_date"], None),
        applicants=unique_names(name for value in fields["applicants"] for name in _names(value)),
        country=_string(fields["country"]).strip().upper() or country_of(doc_id),
        extra={
            k: v for k, v in row.items() if k not in used and v not in (None, "", [], {})
        },  # unknown fields: kept, never dropped
    )
    return require_text(doc)


_MAX_DEPTH = (
    64  # lists/objects nested deeper in one row are no patent data, and Python's recursion would give out writing them
)
_SURROGATE = re.compile(
    "[\ud800-\udfff]"
)  # half of a UTF-16 pair: JSON's "\ud800" alone reads as a str no UTF-8 file can hold


def _check_storable(row: dict[str, Any]) -> None:
    """RecordError for a row the corpus cannot hold: lists or objects nested deeper than ``_MAX_DEPTH``,
    or a string with a lone surrogate. Iterative: the check itself must not recurse."""
    stack = [(row, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and (m := _SURROGATE.search(value)):
                raise RecordError(
                    f"a lone UTF-16 surrogate {ascii(m.group())} in a string (half of a character, no text)"
                )
        elif isinstance(value, (dict, list, tuple)):
            if depth == _MAX_DEPTH:
                raise RecordError(f"lists or objects nested more than {_MAX_DEPTH} deep")
            stack.extend(
                (v, depth + 1) for v in ([*value.keys(), *value.values()] if isinstance(value, dict) else value)
            )


def _names(value: Any) -> list[str]:
    """Applicant names of one field: "A; B", ["A", "B"] or [{"name": "A"}, ...]."""
    if isinstance(value, str):
        return [clean_text(v) for v in value.split(";")]
    if isinstance(value, dict):
        return [
            clean_text(
                _string(
                    next((value[k] for k in ("name", "orgname", "organization", "organisation") if value.get(k)), "")
                )
            )
        ]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _names(v)]
    return [clean_text(str(value))] if value is not None else []


def _string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(_string(v) for v in value)
    return str(value)


def _claims(value: Any) -> tuple[Claim, ...]:
    if not value:
        return ()
    if isinstance(value, str):
        return make_claims(split_claims(value))
    if not isinstance(value, list):
        raise RecordError(f"claims must be a string or a list, not {type(value).__name__}")
    if all(isinstance(v, str) for v in value):
        return make_claims(enumerate(value, 1))
    return tuple(c for i, item in enumerate(value, 1) if (c := _claim_object(item, i)) is not None)


def _claim_object(item: Any, position: int) -> Claim | None:
    """``{"num": 2, "text": "...", "independent": false}``; what is missing is inferred."""
    if not isinstance(item, dict):
        raise RecordError(f"claim {position}: expected a string or an object, got {type(item).__name__}")
    num = claim_number(item.get("num"), position)
    text = strip_own_number(clean_text(_string(item.get("text"))), num)
    if not text:
        return None
    given = item.get("depends_on")
    refs = _given_refs(given, position) if given is not None else claim_references(text, num)
    independent = item.get("independent")
    return Claim(num, text, not refs if independent is None else bool(independent), refs)


def _given_refs(given: Any, position: int) -> tuple[int, ...]:
    """``"depends_on": [1, 2]``: the claim numbers as given; RecordError for anything else (``"1"``, ``[":"]``, ``[2**31]``)."""
    try:
        refs = tuple(int(n) for n in given) if isinstance(given, list) else (0,)
    except (TypeError, ValueError, OverflowError):  # an element that is a list or object, a text, an infinite float
        refs = (0,)
    if not all(0 < n <= MAX_CLAIM_NUMBER for n in refs):
        raise RecordError(
            f"claim {position}: depends_on must be a list of claim numbers (1 to {MAX_CLAIM_NUMBER:,}), not {given!r:.40}"
        )
    return refs


def _codes(value: Any, normalise) -> tuple[str, ...]:
    """A list of codes, or one string of codes separated by ";" or ","; any other value (a number, a date) is one code."""
    if not value:
        return ()
    if isinstance(value, str):
        items = re.split(r"[;,]", value)
    elif isinstance(value, (list, tuple, dict)):  # a dict: its keys
        items = [str(v) for v in value if v]
    else:  # a number, a date, bytes: one code, which normalise drops unless its text is one
        items = [str(value)]
    return unique_codes(normalise(item) for item in items)


def _date(value: Any, year: Any) -> str:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.strftime("%Y-%m-%d")
    if value:
        return iso_date(str(value)[:10])
    return str(year).strip() if year not in (None, "") else ""
