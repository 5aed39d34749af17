"""European Patent Office publication XML (``ep-patent-document``, DTD v1.0 to v1.5.1).

One document per file as the EPO ships it; a stream holding several documents is
split on ``<?xml`` lines. Grants (B1/B2) carry claims in German, English and French;
the English ones are taken where present. Search-report citations come from ``B561``
(``"EP-A1- 3 109 871"``), or from structured ``srep-citations`` (with X/Y/A category)
where a newer file has them; the description's reference list ("references cited by
the applicant") gives citations with source ``"description"``. Dates: ``B220`` (filing),
``B320`` (priorities; the earliest of them and the filing date is the priority date); parties:
``B711`` (applicants) and ``B731`` (proprietors of a grant).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from lxml import etree

from graphtx.corpus.base import (
    ParsedRecord,
    RawRecord,
    RecordError,
    by_language,
    clean_text,
    earliest_date,
    element_text,
    iso_date,
    paragraphs_text,
    parse_xml,
    require_text,
    split_stream,
    unique_names,
)
from graphtx.corpus.citations import citation_category, unique_citations
from graphtx.corpus.claims import claim_number, make_claims
from graphtx.corpus.codes import normalise_cpc, normalise_ipc, publication_id, unique_codes
from graphtx.corpus.schema import Citation, Claim, PatentDocument

FORMAT = "ep"


def iter_raw(path: str, data_stream: BinaryIO) -> Iterator[RawRecord]:
    for n, (offset, piece) in enumerate(split_stream(data_stream), 1):
        yield RawRecord(FORMAT, path, f"record {n} at byte {offset}", piece)


def parse(raw: RawRecord) -> ParsedRecord:
    root = parse_xml(raw.payload)
    if root.tag != "ep-patent-document":
        raise RecordError(f"not an EP publication: root element <{root.tag}>")
    biblio = root.find("SDOBI")
    if biblio is None:
        biblio = etree.Element("SDOBI")
    number = root.get("doc-number") or biblio.findtext("B100/B110", "")
    if not number.strip():
        raise RecordError("missing id: no doc-number attribute and no B110")
    kind = (root.get("kind") or biblio.findtext("B100/B130", "")).strip()
    doc_id = publication_id("EP", number, kind)
    application_date = iso_date(biblio.findtext("B200/B220/date", ""))

    doc_lang = (root.get("lang") or "").lower()
    preferred = ("en", doc_lang)
    claims_el = by_language(root.findall("claims"), preferred)
    abstract_el = by_language(root.findall("abstract"), preferred)
    description_el = by_language(root.findall("description"), preferred)
    text_langs = {
        name: (el.get("lang") or doc_lang).lower()
        for name, el in (("claims", claims_el), ("abstract", abstract_el), ("description", description_el))
        if el is not None
    }
    doc = PatentDocument(
        id=doc_id,
        source=FORMAT,
        source_file=raw.file,
        title=_title(biblio, preferred),
        abstract=paragraphs_text(abstract_el),
        claims=_claims(claims_el),
        description=paragraphs_text(description_el),
        ipc=_ipc(biblio),
        cpc=unique_codes(normalise_cpc(el.text or "") for el in biblio.iterfind(_CPC)),
        date=iso_date(root.get("date-publ") or biblio.findtext("B100/B140/date", "")),
        lang=next(iter(text_langs.values()), doc_lang),
        kind=kind,
        priority_date=earliest_date(
            [application_date, *(iso_date(el.text or "") for el in biblio.iterfind("B300/B320/date"))]
        ),
        application_date=application_date,
        applicants=unique_names(
            clean_text(el.text or "")
            for el in biblio.iterfind("B700/*/*/snm")
            if el.getparent().tag in ("B711", "B731")
        ),
        country="EP",
        extra={"text_langs": text_langs},
    )
    citations = _search_report(doc_id, root) + _reference_list(doc_id, root)
    return ParsedRecord(require_text(doc), unique_citations(c for c in citations if c.cited_id != doc_id))


def _title(biblio: etree._Element, preferred: tuple[str, ...]) -> str:
    """``B541`` names the language of the ``B542`` title that follows it."""
    titles: dict[str, str] = {}
    lang = ""
    for el in biblio.iterfind("B500/B540/*"):
        if el.tag == "B541":
            lang = (el.text or "").strip().lower()
        elif el.tag == "B542":
            titles.setdefault(lang, element_text(el))
    for lang in preferred:
        if titles.get(lang):
            return titles[lang]
    return next(iter(titles.values()), "")


def _claims(claims_el: etree._Element | None) -> tuple[Claim, ...]:
    if claims_el is None:
        return ()
    return make_claims(
        (claim_number(el.get("num"), i), element_text(el)) for i, el in enumerate(claims_el.iter("claim"), 1)
    )


# --- classification --------------------------------------------------------------


_CPC = "B500/B520EP/classifications-cpc/classification-cpc/text"


def _ipc(biblio: etree._Element) -> tuple[str, ...]:
    codes = unique_codes(normalise_ipc(el.text or "") for el in biblio.iterfind("B500/B510EP/classification-ipcr/text"))
    if codes:
        return codes
    # DTD v1.0/v1.1 before IPC 8: "7C 07C 29/44 A" is edition 7, main (B511) or further (B512)
    old = (el.text or "" for el in biblio.iterfind("B500/B510/*") if el.tag in ("B511", "B512"))
    return unique_codes(normalise_ipc(re.sub(r"^\s*\d+\s*", "", text)) for text in old)


# --- citations -------------------------------------------------------------------

# "EP-A1- 3 109 871", "WO-A-03/008444", "US-E- R E36 154", "DE-A1-102009 041 527"
_B561 = re.compile(r"^\s*([A-Z]{2})\s*-\s*([A-Z]\d?)\s*-\s*(.+?)\s*$")


def _search_report(doc_id: str, root: etree._Element) -> list[Citation]:
    citations = []
    for entry in root.iterfind("search-report-data//srep-citations/citation"):
        cited = _document_id(entry.find("patcit/document-id"))
        if cited:
            citations.append(Citation(doc_id, cited, citation_category(entry.findtext("category")), "search-report"))
    for entry in root.iterfind("SDOBI/B500/B560/B561"):
        cited = _document_id(entry.find(".//document-id")) or _b561_text(entry.findtext("text", ""))
        if cited:
            citations.append(Citation(doc_id, cited, "unknown", "search-report"))
    return citations


def _reference_list(doc_id: str, root: etree._Element) -> list[Citation]:
    """ "References cited in the description": EPO's list of documents the applicant cited."""
    entries = root.iterfind("ep-reference-list//patcit/document-id")
    return [Citation(doc_id, cited, "applicant", "description") for cited in map(_document_id, entries) if cited]


def _document_id(el: etree._Element | None) -> str | None:
    if el is None:
        return None
    number = el.findtext("doc-number", "").strip()
    country = el.findtext("country", "").strip()
    return publication_id(country, number, el.findtext("kind", "")) if number and country else None


def _b561_text(text: str) -> str | None:
    m = _B561.match(text)
    if not m:
        return None
    country, kind, number = m.groups()
    return publication_id(country, number, kind)
