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

from graphtx.corpus.schema import Citation, Claim, PatentDocument, make_id


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
        return json.dumps({"file": self.file, "position": self.position, "id": self.id, "reason": self.reason}, ensure_ascii=False)


class RecordError(Exception):
    """A record that cannot be turned into a document; ``str(err)`` is the reason.

    ``doc_id`` is set when the id was read before the record failed, so the error log names it.
    """

    def __init__(self, reason: str, doc_id: str = ""):
        super().__init__(reason)
        self.doc_id = doc_id


# --- text ------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_CLAIM_NUMBER_PREFIX = re.compile(r"^\s*\d{1,3}\s*[.)]\s*")


def clean_text(text: str) -> str:
    """Unicode NFC, entities resolved, whitespace runs collapsed to one space."""
    if not text:
        return ""
    text = html.unescape(text)
    text = unicodedata.normalize("NFC", text)
    return _WS.sub(" ", text).strip()


def strip_claim_number(text: str) -> str:
    """``"1. A method ..." -> "A method ..."``."""
    return _CLAIM_NUMBER_PREFIX.sub("", text, count=1)


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
    """Parse one XML document without touching the network (DTDs are ignored).

    Raises :class:`RecordError` for malformed XML or invalid encoding, with the
    line and column lxml reports.
    """
    data = data.lstrip()
    if not data:
        raise RecordError("empty XML record")
    # The bytes must be valid in the declared encoding; lxml would otherwise
    # fail with a less helpful message deep inside the document.
    head = data[:200]
    if b"encoding" not in head or re.search(rb'encoding=["\']utf-?8["\']', head, re.I):
        decode_utf8(data)
    data = _DOCTYPE.sub(b"", data, count=1)
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, recover=False
    )
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


# --- ids and codes ---------------------------------------------------------------

_US_LETTER_NUMBER = re.compile(r"^(D|RE|PP|H|T)0*(\d+)$")  # design, reissue, plant, SIR, defensive


def publication_id(country: str, number: str, kind: str = "") -> str:
    """:func:`make_id` after bringing ``number`` to the MAREC/CLEF-IP ucid convention.

    So that one publication written by different offices gets one id:
    ``("WO", "03/008444") -> "WO-2003008444"`` (year + 6-digit serial),
    ``("US", "2008 197 955", "A1") -> "US-20080197955-A1"`` (EPO drops the serial's zero),
    ``("US", "D0607542", "S1") -> "US-D607542-S1"``, ``("WO", "WO 98/51827")`` -> the country
    prefix is dropped.
    """
    country = country.strip().upper()
    number = re.sub(r"\s+", "", number.upper())
    number = re.sub(rf"^{re.escape(country)}-?(?=\d)", "", number) if country else number
    if country == "WO":
        number = _wo_number(number)
    elif country == "US":
        if m := _US_LETTER_NUMBER.match(number):
            number = m.group(1) + m.group(2)
        elif len(number) == 10 and number.isdigit() and number[:2] in ("19", "20"):
            number = f"{number[:4]}0{number[4:]}"
    return make_id(country, number, kind)


def _wo_number(number: str) -> str:
    """``"95/34526" -> "1995034526"``, ``"9106571" -> "1991006571"``; anything else unchanged."""
    if m := re.fullmatch(r"(\d{2}|\d{4})/(\d{1,6})", number):
        year, serial = m.groups()
    elif number.isdigit() and len(number) in (7, 8):  # YY + 5-digit (to 2001) or 6-digit serial
        year, serial = number[:2], number[2:]
    else:
        return number
    if len(year) == 2:
        year = ("19" if year >= "78" else "20") + year  # PCT publications began in 1978
    return f"{year}{int(serial):06d}"


_CPC = re.compile(r"^\s*([A-HY])\s*(\d{2})\s*([A-Z])\s*(\d{1,4})\s*/\s*(\d{1,6})")


def normalise_cpc(code: str) -> str | None:
    """Like :func:`~graphtx.corpus.schema.normalise_ipc`, but also accepts CPC section Y
    (``"Y02T10/70" -> "Y02T 10/70"``)."""
    m = _CPC.match(code.upper())
    if not m:
        return None
    section, cls, sub, group, subgroup = m.groups()
    return f"{section}{cls}{sub} {int(group)}/{subgroup}"


def unique_codes(codes: Iterable[str | None]) -> tuple[str, ...]:
    """Normalised classification codes in first-seen order, each once, Nones dropped."""
    return tuple(dict.fromkeys(c for c in codes if c))


# --- claims ----------------------------------------------------------------------

_CLAIM_WORD = r"(?:claims?|(?:patent)?anspr(?:uch|uchs|üche|üchen)|revendications?)"
_NUMBER_LIST = r"\d{1,3}(?:\s*(?:,|-|–|to|through|bis|à|and|or|und|oder|et|ou)\s*\d{1,3})*"
_CLAIM_REF = re.compile(rf"\b{_CLAIM_WORD}\s+(?:nos?\.?\s*)?({_NUMBER_LIST})", re.I)
_RANGE_WORDS = {"-", "–", "to", "through", "bis", "à"}
_PRECEDING = re.compile(
    r"\b(?:preceding|previous|foregoing|above|vorhergehenden|vorangehenden|vorgehenden|vorherigen|vorstehenden)\s+" + _CLAIM_WORD
    + r"|\brevendications?\s+précédentes?",
    re.I,
)
_ORDINALS = {
    word: n
    for n, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
        " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
}
_ORDINAL = "(?:" + "|".join(_ORDINALS) + ")"
# "according to the first or second claim" (translations, mostly from Spanish)
_ORDINAL_REF = re.compile(rf"\bthe\s+({_ORDINAL}(?:\s*(?:,|or|and)\s*{_ORDINAL})*)\s+claims?\b", re.I)
_CLAIM_ONE_OCR = re.compile(r"\b((?i:claims?)\s+)[Il]\b")  # "as claimed in claim I" (OCR)
_MAX_RANGE = 500  # "claims 1 to 100000" in a garbled text must not allocate a huge tuple


def claim_references(text: str, num: int) -> tuple[int, ...]:
    """Numbers of the earlier claims that claim ``num`` refers to, sorted.

    ``"The method of any one of claims 1 to 3 or 5"`` -> ``(1, 2, 3, 5)``; "any preceding
    claim" refers to all claims before ``num``. English, German and French wording.
    """
    refs: set[int] = set()
    text = _CLAIM_ONE_OCR.sub(r"\g<1>1", text)
    for m in _CLAIM_REF.finditer(text):
        tokens = re.findall(r"\d+|[^\d\s,]+", m.group(1))
        prev, ranging = None, False
        for token in tokens:
            if token.isdigit():
                n = int(token)
                if ranging and prev is not None and 0 <= n - prev <= _MAX_RANGE:
                    refs.update(range(prev, n + 1))
                refs.add(n)
                prev, ranging = n, False
            else:
                ranging = token.lower() in _RANGE_WORDS
    for m in _ORDINAL_REF.finditer(text):
        refs.update(_ORDINALS[w.lower()] for w in re.findall(r"[a-z]+", m.group(1), re.I) if w.lower() in _ORDINALS)
    if _PRECEDING.search(text):
        refs.update(range(1, num))
    # a claim can only refer back; a larger number is a misread quantity ("and 90-0% by weight")
    return tuple(sorted(n for n in refs if 0 < n < num))


_OWN_NUMBER = re.compile(r"^\s*(\d{1,3})\s*[.)]{1,2}(?!\d)\s*")  # "3.", "3)", "3.)"


def strip_own_number(text: str, num: int) -> str:
    """Remove a leading ``"3."`` from claim 3's text, but not a ``"2."`` that starts a
    chemical name or any number other than the claim's own."""
    m = _OWN_NUMBER.match(text)
    return text[m.end() :] if m and int(m.group(1)) == num else text


_NUMBERED = re.compile(r"(?<![\w.,/-])(\d{1,3})\s?[.)]\s+(?=[\"'(\[]?([A-Z]\w*))")
_CLAIM_OPENERS = {"A", "An", "The"}


def split_claims(text: str) -> list[tuple[int, str]]:
    """Split a claims text blob into ``(number, text)``: ``"1. A ... 2. The ... of claim 1"``.

    Markers are read in order. The next number counts where it starts a line, follows
    the end of a sentence (``.;:``) or opens with "A"/"An"/"The"; a jump of one or two
    (a number lost in OCR) counts after a sentence end only. So "heated to 2 mm" never
    cuts. Text before claim 1 ("What is claimed is:") is dropped; without numbering the
    whole text is claim 1.
    """
    cuts: list[tuple[int, int, int]] = []  # (number, marker start, text start)
    for m in _NUMBERED.finditer(text):
        n, expected = int(m.group(1)), (cuts[-1][0] + 1 if cuts else 1)
        if not expected <= n <= expected + 2:
            continue
        before = text[max(0, m.start() - 40) : m.start()]
        stripped = before.rstrip()
        sentence_end = m.start() < 40 and not stripped or stripped[-1:] in (".", ";", ":") or "\n" in before[len(stripped) :]
        if sentence_end or (n == expected and m.group(2) in _CLAIM_OPENERS):
            cuts.append((n, m.start(), m.end()))
    if not cuts:
        body = clean_text(text)
        return [(1, body)] if body else []
    ends = [start for _, start, _ in cuts[1:]] + [len(text)]
    pieces = [(n, clean_text(text[begin:end])) for (n, _, begin), end in zip(cuts, ends)]
    return [(n, body) for n, body in pieces if body]


def make_claims(numbered: Iterable[tuple[int, str]]) -> tuple[Claim, ...]:
    """Claims from ``(number, text)`` pairs; dependency read from the wording (no markup)."""
    claims = []
    for num, text in numbered:
        text = strip_own_number(clean_text(text), num)
        if text:
            refs = claim_references(text, num)
            claims.append(Claim(num, text, not refs, refs))
    return tuple(claims)


def claim_number(value: object, default: int) -> int:
    """``"00003" -> 3``; ``default`` when the value is missing or not a number."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return default
    return n if n > 0 else default


# --- documents -------------------------------------------------------------------


def require_text(doc: PatentDocument) -> PatentDocument:
    """``doc`` unchanged, or :class:`RecordError` when it has nothing to build graphs from."""
    if not (doc.claims or doc.abstract or doc.description or doc.title):
        raise RecordError("no text: no title, claims, abstract or description", doc.id)
    return doc
