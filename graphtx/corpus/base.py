"""What every reader shares: raw records, the error type, XML and text helpers.

A reader is two functions (see :mod:`graphtx.corpus.formats`):

* ``iter_raw(path, stream) -> Iterator[RawRecord]`` — cheap splitting of one opened binary
  stream into records, run in the main process so memory stays bounded (one record at a time);
* ``parse(raw) -> ParsedRecord`` — the expensive part, run in worker processes; raises
  :class:`RecordError` with a reason a person can act on.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from lxml import etree

from graphtx.corpus.schema import Citation, PatentDocument


@dataclass(frozen=True)
class RawRecord:
    format: str  # reader name: uspto | ep | marec | jsonl | parquet | citations
    file: str  # path of the input file as given
    position: str  # where in the file: "record 3 at byte 10452", "line 17", "row 5"
    payload: Any  # bytes for XML records, dict for tabular rows


@dataclass(frozen=True)
class ParsedRecord:
    document: PatentDocument | None  # None for pure citation rows (TSV)
    citations: tuple[Citation, ...] = ()


NOT_A_PATENT = "not a patent document"  # the start of a SkippedRecord reason for a record that is no patent


@dataclass(frozen=True)
class SkippedRecord:
    """An input record that is not written, with the reason; one line of errors.jsonl.

    Readers may yield one from ``iter_raw`` for a record they recognise but never parse
    (a sequence listing inside a weekly grant file, say).
    """

    file: str
    position: str
    reason: str
    id: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {"file": self.file, "position": self.position, "id": self.id, "reason": self.reason}, ensure_ascii=False
        )

    @property
    def not_a_patent(self) -> bool:
        """A record that is no patent document (a sequence listing): accounted for, not a failure to read a patent."""
        return self.reason.startswith(NOT_A_PATENT)


class RecordError(Exception):
    """A record that cannot be turned into a document; ``str(err)`` is the reason.

    ``doc_id`` is set when the id was read before the record failed, so the error log names it.
    """

    def __init__(self, reason: str, doc_id: str = ""):
        super().__init__(reason)
        self.doc_id = doc_id


# --- text ------------------------------------------------------------------------

_WS = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """Unicode NFC, entities resolved, whitespace runs collapsed to one space."""
    if not text:
        return ""
    text = html.unescape(text)
    text = unicodedata.normalize("NFC", text)
    return _WS.sub(" ", text).strip()


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8 decoding with a reason that names the offending byte offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        bad = data[err.start : err.start + 4].hex(" ")
        raise RecordError(f"non-UTF-8 bytes at offset {err.start} ({bad}): {err.reason}") from None


# --- XML -------------------------------------------------------------------------

_DOCTYPE = re.compile(rb"<!DOCTYPE[^>\[]*(\[[^\]]*\])?\s*>", re.S)


def parse_xml(data: bytes) -> etree._Element:
    """Parse one XML record as split from its file, without touching the network (DTDs are ignored).

    Bare ampersands are repaired (:func:`escape_bare_ampersands`). Raises :class:`RecordError` for
    malformed XML or invalid encoding, with the line and column lxml reports.
    """
    head = data.lstrip()[:200]
    if not head:
        raise RecordError("empty XML record")
    # The bytes must be valid in the declared encoding; lxml would otherwise
    # fail with a less helpful message deep inside the document. Checked before
    # any repair, so the offset in the reason is the record's own.
    if b"encoding" not in head or re.search(rb'encoding=["\']utf-?8["\']', head, re.I):
        decode_utf8(data)
    data = _DOCTYPE.sub(b"", escape_bare_ampersands(data.lstrip()), count=1)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, recover=False)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        where = "" if re.search(r"line \d+, column \d+", err.msg) else f" (line {err.lineno}, column {err.offset})"
        raise RecordError(f"malformed XML: {err.msg}{where}") from None


def element_text(el: etree._Element | None) -> str:
    """All text below ``el`` in document order (tags dropped, processing instructions and
    comments skipped; a child's tail comes after the child's own text)."""
    if el is None:
        return ""
    return clean_text(" ".join(el.itertext()))


def paragraphs_text(el: etree._Element | None, tags: tuple[str, ...] = ("p", "heading")) -> str:
    """Text of a description-like element, one line per paragraph or heading."""
    if el is None:
        return ""
    lines = [element_text(p) for p in el.iter(*tags)]
    lines = [line for line in lines if line]
    return "\n".join(lines) if lines else element_text(el)


def iso_date(yyyymmdd: str) -> str:
    """``"20120103" -> "2012-01-03"``; ``""`` for anything else (``"19290200"`` -> ``"1929-02"``)."""
    s = (yyyymmdd or "").strip().replace("-", "")
    if not s.isdigit() or len(s) < 4:
        return ""
    year, month, day = s[:4], s[4:6], s[6:8]
    if month in ("", "00"):
        return year
    if day in ("", "00"):
        return f"{year}-{month}"
    return f"{year}-{month}-{day}"


def earliest_date(dates: Iterable[str]) -> str:
    """The earliest of ISO dates (``""`` and partial dates such as ``"1929-02"`` take part; "" when none)."""
    known = [d for d in dates if d]
    return min(known) if known else ""


def party_name(el: etree._Element | None) -> str:
    """The name in a party's ``addressbook``: organisation, else "first last", else ``<name>``/``<snm>``."""
    if el is None:
        return ""
    book = el.find("addressbook")
    book = el if book is None else book
    org = clean_text(book.findtext("orgname", "") or "")
    if org:
        return org
    person = " ".join(clean_text(book.findtext(tag, "") or "") for tag in ("first-name", "last-name")).strip()
    return person or clean_text(book.findtext("name", "") or book.findtext("snm", "") or "")


def unique_names(names: Iterable[str]) -> tuple[str, ...]:
    """Names in order, blanks and repeats (ignoring case and punctuation) dropped."""
    seen: set[str] = set()
    out = []
    for name in names:
        key = re.sub(r"[\W_]+", "", name.casefold())
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out)


def multiline_text(text: str) -> str:
    """Like :func:`clean_text`, but keeps one line per non-empty input line (descriptions)."""
    lines = (clean_text(line) for line in (text or "").splitlines())
    return "\n".join(line for line in lines if line)


def by_language(elements: Iterable[etree._Element], preferred: Sequence[str]) -> etree._Element | None:
    """The element whose ``lang`` attribute comes first in ``preferred`` (case-insensitive),
    else the first element; None when there are none."""
    elements = list(elements)
    langs = [(el.get("lang") or "").lower() for el in elements]
    for lang in preferred:
        if lang and lang.lower() in langs:
            return elements[langs.index(lang.lower())]
    return elements[0] if elements else None


_BARE_AMP = re.compile(rb"&(?!#?\w+;)")


def escape_bare_ampersands(data: bytes) -> bytes:
    """``"Kador & Partner"`` -> ``"Kador &amp; Partner"``: a lossless repair of a common slip
    in hand-edited patent XML (an ``&`` that starts no entity can only mean itself)."""
    return _BARE_AMP.sub(b"&amp;", data) if b"&" in data else data


# --- streams ---------------------------------------------------------------------


def split_stream(stream: BinaryIO, marker: bytes = b"<?xml", chunk_size: int = 1 << 20) -> Iterator[tuple[int, bytes]]:
    """Split a binary stream before every line that starts with ``marker``.

    Yields ``(byte offset, piece)``; text before the first marker is a piece of its own (a
    file without XML declaration is one piece) and whitespace-only pieces are dropped. Reads
    ``chunk_size`` bytes at a time, so memory is bounded by the largest piece, not the file.
    """
    sep = b"\n" + marker
    buf = b""
    base = 0  # file offset of buf[0]
    scan = 0  # first index of buf where a separator may still begin
    start = 0
    while True:
        chunk = stream.read(chunk_size)
        buf += chunk
        start = 0
        while (i := buf.find(sep, scan)) >= 0:
            piece = buf[start : i + 1]
            if piece and not piece.isspace():
                yield base + start, piece
            start = scan = i + 1
        if not chunk:
            break
        buf, base = buf[start:], base + start
        scan = max(0, len(buf) - len(sep) + 1)
    tail = buf[start:]
    if tail and not tail.isspace():
        yield base + start, tail


# --- documents -------------------------------------------------------------------


def require_text(doc: PatentDocument) -> PatentDocument:
    """``doc`` unchanged, or :class:`RecordError` when it has nothing to build graphs from."""
    if not (doc.claims or doc.abstract or doc.description or doc.title):
        raise RecordError("no text: no title, claims, abstract or description", doc.id)
    return doc
