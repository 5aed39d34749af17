"""MAREC / CLEF-IP ``patent-document`` XML (EP, WO, US, JP publications in one schema).

Each document names itself by ``ucid`` (``EP-1000000-B1``) and its DOCDB family by
``family-id``. Texts come in several languages, each with a ``lang`` attribute
(upper case); English is taken where present. Citations carry their origin as
``<source name="SEA" category="A"/>``: search report (SEA), applicant (APP),
examiner (EXA) and others.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from lxml import etree

from graphtx.corpus.base import (
    ParsedRecord,
    RawRecord,
    RecordError,
    by_language,
    earliest_date,
    element_text,
    iso_date,
    paragraphs_text,
    parse_xml,
    party_name,
    require_text,
    split_stream,
    unique_names,
)
from graphtx.corpus.citations import citation_category, unique_citations
from graphtx.corpus.claims import claim_number, make_claims, split_claims
from graphtx.corpus.codes import normalise_cpc, normalise_ipc, publication_id, unique_codes
from graphtx.corpus.schema import Citation, Claim, PatentDocument

FORMAT = "marec"
# <source name=...>: who cited the document, as Citation.source; category when none is given
_SOURCES = {
    "SEA": ("search-report", "unknown"),
    "ISR": ("search-report", "unknown"),
    "APP": ("applicant", "applicant"),
    "EXA": ("examiner", "examiner"),
    "OPP": ("opposition", "other"),
}


def iter_raw(path: str, data_stream: BinaryIO) -> Iterator[RawRecord]:
    for n, (offset, piece) in enumerate(split_stream(data_stream), 1):
        yield RawRecord(FORMAT, path, f"record {n} at byte {offset}", piece)


def parse(raw: RawRecord) -> ParsedRecord:
    root = parse_xml(raw.payload)
    if root.tag != "patent-document":
        raise RecordError(f"not a MAREC patent-document: root element <{root.tag}>")
    biblio = root.find("bibliographic-data")
    if biblio is None:
        biblio = etree.Element("bibliographic-data")
    pub = biblio.find("publication-reference")
    parts = _ucid_parts(root.get("ucid") or (pub.get("ucid", "") if pub is not None else ""))
    if parts is None:
        raise RecordError("missing id: no ucid attribute")
    doc_id = publication_id(*parts)

    doc_lang = (root.get("lang") or "").lower().replace("xx", "")
    preferred = ("en", doc_lang)
    claims_el = by_language(root.findall("claims"), preferred)
    abstract_el = by_language(root.findall("abstract"), preferred)
    description_el = by_language(root.findall("description"), preferred)
    text_langs = [(el.get("lang") or "").lower() for el in (claims_el, abstract_el, description_el) if el is not None]
    application_date = iso_date(biblio.findtext("application-reference/document-id/date", ""))
    doc = PatentDocument(
        id=doc_id,
        source=FORMAT,
        source_file=raw.file,
        title=element_text(by_language(biblio.findall("technical-data/invention-title"), preferred)),
        abstract=paragraphs_text(abstract_el),
        claims=_claims(claims_el),
        description=paragraphs_text(description_el),
        ipc=_ipc(biblio),
        cpc=unique_codes(normalise_cpc(el.text or "") for el in biblio.iterfind(_CPC)),
        family_id=(root.get("family-id") or "").strip(),
        date=iso_date(root.get("date") or biblio.findtext("publication-reference/document-id/date", "")),
        lang=next((lang for lang in text_langs if lang), doc_lang),
        kind=parts[2],
        priority_date=earliest_date(
            [
                application_date,
                *(iso_date(el.text or "") for el in biblio.iterfind("priority-claims/priority-claim/document-id/date")),
            ]
        ),
        application_date=application_date,
        applicants=_parties(biblio, "applicants/applicant") or _parties(biblio, "assignees/assignee"),
        country=parts[0].upper(),
    )
    return ParsedRecord(require_text(doc), _citations(doc_id, biblio))


def _parties(biblio: etree._Element, path: str) -> tuple[str, ...]:
    """Names of one party list; MAREC repeats each party per format (epo, intermediate, original): the first format given is kept."""
    entries = biblio.findall(f"parties/{path}")
    formats = [el.get("format") or "" for el in entries]
    keep = next((f for f in ("epo", "original", "intermediate") if f in formats), formats[0] if formats else "")
    return unique_names(party_name(el) for el in entries if (el.get("format") or "") == keep)


def _ucid_parts(ucid: str) -> tuple[str, str, str] | None:
    """``"EP-1000000-B1" -> ("EP", "1000000", "B1")``; None if it is not of that shape."""
    parts = ucid.strip().split("-")
    if len(parts) < 2 or len(parts[0]) != 2 or not parts[1]:
        return None
    if len(parts) == 2:
        return parts[0], parts[1], ""
    return parts[0], "".join(parts[1:-1]), parts[-1]


def _claims(claims_el: etree._Element | None) -> tuple[Claim, ...]:
    if claims_el is None:
        return ()
    numbered = [(claim_number(el.get("num"), i), element_text(el)) for i, el in enumerate(claims_el.iter("claim"), 1)]
    if len(numbered) == 1:  # some PCT texts put every claim into one <claim> ("I CLAIM; 1. ... 2. ...")
        pieces = split_claims(numbered[0][1])
        if len(pieces) > 1:
            numbered = pieces
    return make_claims(numbered)


_CPC = "technical-data/classifications-cpc/classification-cpc"


def _ipc(biblio: etree._Element) -> tuple[str, ...]:
    ipcr = biblio.iterfind("technical-data/classifications-ipcr/classification-ipcr")
    codes = unique_codes(normalise_ipc(el.text or "") for el in ipcr)
    if codes:
        return codes
    old = biblio.iterfind("technical-data/classification-ipc/*")  # before IPC 8
    return unique_codes(
        normalise_ipc(el.text or "") for el in old if el.tag in ("main-classification", "further-classification")
    )


def _citations(doc_id: str, biblio: etree._Element) -> tuple[Citation, ...]:
    citations = []
    for patcit in biblio.iterfind("technical-data/citations/patent-citations/patcit"):
        parts = _ucid_parts(patcit.get("ucid", "")) or _document_id_parts(patcit.find("document-id"))
        if parts is None:
            continue
        category, source = _category_and_source(patcit.findall("sources/source"))
        citations.append(Citation(doc_id, publication_id(*parts), category, source))
    return unique_citations(c for c in citations if c.cited_id != doc_id)


def _document_id_parts(el: etree._Element | None) -> tuple[str, str, str] | None:
    if el is None or not el.findtext("doc-number", "").strip() or not el.findtext("country", "").strip():
        return None
    return el.findtext("country", ""), el.findtext("doc-number", ""), el.findtext("kind", "")


def _category_and_source(sources: list[etree._Element]) -> tuple[str, str]:
    """The first search-report letter (X, Y, A, ...) of any source wins; else what the
    first source's name implies (APP -> applicant, EXA -> examiner, else unknown)."""
    if not sources:
        return "unknown", "unknown"
    for el in sources:
        category = citation_category(el.get("category"))
        if len(category) == 1:
            return category, _source_name(el)
    name = (sources[0].get("name") or "").upper()
    return _SOURCES.get(name, ("", "unknown"))[1], _source_name(sources[0])


def _source_name(el: etree._Element) -> str:
    name = (el.get("name") or "").upper()
    return _SOURCES[name][0] if name in _SOURCES else (name.lower() or "unknown")
