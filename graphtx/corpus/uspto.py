"""USPTO grant full text (weekly ``ipgYYMMDD.xml``, DTD v4.0 and later).

A weekly file is many XML documents concatenated, each starting with its own
``<?xml`` line. Sequence listings (root ``sequence-cwu``) sit in the stream right
after the grant they belong to; they carry no patent text and are passed over.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from lxml import etree

from graphtx.corpus.base import (
    NOT_A_PATENT,
    ParsedRecord,
    RawRecord,
    RecordError,
    SkippedRecord,
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
from graphtx.corpus.citations import citation_category
from graphtx.corpus.claims import claim_number, claim_references, strip_own_number
from graphtx.corpus.codes import normalise_cpc, normalise_ipc, publication_id, unique_codes
from graphtx.corpus.schema import Citation, Claim, PatentDocument

FORMAT = "uspto"
_ROOT = re.compile(rb"<([A-Za-z][\w:.-]*)")  # first element tag (skips <?xml and <!DOCTYPE)
_SKIPPED_ROOTS = {b"sequence-cwu"}
_BIBLIO = "us-bibliographic-data-grant"


def iter_raw(path: str, data_stream: BinaryIO) -> Iterator[RawRecord | SkippedRecord]:
    for n, (offset, piece) in enumerate(split_stream(data_stream), 1):
        root = _ROOT.search(piece, 0, 4096)
        if root and root.group(1) in _SKIPPED_ROOTS:
            yield SkippedRecord(
                path,
                f"record {n} at byte {offset}",
                f"{NOT_A_PATENT}: <{root.group(1).decode()}> (a sequence listing belonging to the grant before it)",
            )
            continue
        yield RawRecord(FORMAT, path, f"record {n} at byte {offset}", piece)


def parse(raw: RawRecord) -> ParsedRecord:
    root = parse_xml(raw.payload)
    if root.tag != "us-patent-grant":
        raise RecordError(f"not a US grant: root element <{root.tag}>")
    biblio = root.find(_BIBLIO)
    if biblio is None:
        raise RecordError(f"missing id: no <{_BIBLIO}>")
    pub = biblio.find("publication-reference/document-id")
    number = pub.findtext("doc-number", "").strip() if pub is not None else ""
    if not number:
        raise RecordError("missing id: no publication-reference doc-number")
    kind = pub.findtext("kind", "").strip()
    country = (pub.findtext("country", "") or "US").strip().upper()
    doc_id = publication_id(country, number, kind)
    application_date = iso_date(biblio.findtext("application-reference/document-id/date", ""))
    doc = PatentDocument(
        id=doc_id,
        source=FORMAT,
        source_file=raw.file,
        title=element_text(biblio.find("invention-title")),
        abstract=paragraphs_text(root.find("abstract")),
        claims=_claims(root.find("claims")),
        description=paragraphs_text(root.find("description")),
        ipc=_ipc(biblio),
        cpc=_cpc(biblio),
        date=iso_date(pub.findtext("date", "") or root.get("date-publ", "")),
        lang="en",
        kind=kind,
        priority_date=earliest_date([application_date, *_earlier_filings(biblio)]),
        application_date=application_date,
        applicants=_applicants(biblio),
        country=country,
    )
    return ParsedRecord(require_text(doc), _citations(doc_id, biblio))


# --- dates and parties -----------------------------------------------------------


def _earlier_filings(biblio: etree._Element) -> list[str]:
    """Dates of the filings this grant claims: foreign priorities, provisionals, parents of continuations."""
    paths = (
        "priority-claims/priority-claim/date",
        "us-related-documents/us-provisional-application/document-id/date",
        "us-related-documents/*/relation/parent-doc/document-id/date",
        "us-related-documents/*/relation/parent-doc/parent-grant-document/document-id/date",
    )
    return [iso_date(el.text or "") for path in paths for el in biblio.iterfind(path)]


def _applicants(biblio: etree._Element) -> tuple[str, ...]:
    """The assignees (owners) when the grant names any, else its applicants (often the inventors before 2013)."""
    for parties in ("assignees/assignee", "us-parties/us-applicants/us-applicant", "parties/applicants/applicant"):
        names = unique_names(party_name(el) for el in biblio.iterfind(parties))
        if names:
            return names
    return ()


# --- claims ----------------------------------------------------------------------


def _claims(claims_el: etree._Element | None) -> tuple[Claim, ...]:
    if claims_el is None:
        return ()
    claims = []
    for i, el in enumerate(claims_el.iter("claim"), 1):
        num = claim_number(el.get("num"), i)
        text = strip_own_number(element_text(el), num)
        refs = el.findall(".//claim-ref")
        deps = {n for ref in refs for n in _idref_numbers(ref.get("idref", ""))}
        # markup can be partial ("any one of claims 2 through 4" tags claim 2 only) or missing
        # ("according to one or more of the previous claims"): the wording counts too
        deps.update(claim_references(text, num))
        deps.discard(num)
        claims.append(Claim(num, text, not deps, tuple(sorted(deps))))
    return tuple(claims)


def _idref_numbers(idref: str) -> range:
    """``"CLM-00004" -> [4]``; ``"CLM-00001-00003" -> [1, 2, 3]``; a number that is no claim's (see
    :func:`claim_number`) ends no range: ``"CLM-00001-99999999" -> [1]``, ``"CLM-99999999" -> []``."""
    nums = [claim_number(n, 0) for n in re.findall(r"\d+", idref)]
    if not nums or not nums[0]:
        return range(0)
    return range(nums[0], (nums[1] if len(nums) > 1 and nums[1] >= nums[0] else nums[0]) + 1)


# --- classification --------------------------------------------------------------


def _ipc(biblio: etree._Element) -> tuple[str, ...]:
    codes = [_structured_code(el, normalise_ipc) for el in biblio.iterfind("classifications-ipcr/classification-ipcr")]
    if not any(codes):  # DTD v4.0: edition 7 text such as "A45F  504"
        old = biblio.find("classification-ipc")
        if old is not None:
            codes = [
                _old_ipc(el.text or "") for el in old if el.tag in ("main-classification", "further-classification")
            ]
    return unique_codes(codes)


def _cpc(biblio: etree._Element) -> tuple[str, ...]:
    codes = (_structured_code(el, normalise_cpc) for el in biblio.iterfind("classifications-cpc//classification-cpc"))
    return unique_codes(codes)


def _structured_code(el: etree._Element, normalise) -> str | None:
    """``<section>H</section><class>01</class><subclass>M</subclass><main-group>10</main-group>
    <subgroup>44</subgroup>`` -> ``"H01M 10/44"``."""
    parts = [el.findtext(tag, "").strip() for tag in ("section", "class", "subclass", "main-group", "subgroup")]
    return normalise("{}{}{} {}/{}".format(*parts))


_OLD_IPC = re.compile(r"^\s*([A-H]\d\d[A-Z])([ \d]{3})(\d{2,})")


def _old_ipc(code: str) -> str | None:
    """Fixed-width IPC of the early Red Book: subclass, group right-aligned in 3, subgroup.

    ``"A45F  504" -> "A45F 5/04"``, ``"A43B 1314" -> "A43B 13/14"``.
    """
    if "/" in code:
        return normalise_ipc(code)
    m = _OLD_IPC.match(code)
    if not m or not m.group(2).strip().isdigit():
        return None
    return normalise_ipc(f"{m.group(1)} {m.group(2).strip()}/{m.group(3)}")


# --- citations -------------------------------------------------------------------


def _citations(doc_id: str, biblio: etree._Element) -> tuple[Citation, ...]:
    entries = biblio.findall("references-cited/citation") + biblio.findall("us-references-cited/us-citation")
    citations: dict[str, Citation] = {}
    for entry in entries:
        cited = entry.find("patcit/document-id")
        number = cited.findtext("doc-number", "").strip() if cited is not None else ""
        if not number:  # <nplcit>: literature, not a patent
            continue
        cited_id = publication_id(cited.findtext("country", ""), number, cited.findtext("kind", ""))
        if cited_id != doc_id:
            category = citation_category(entry.findtext("category"))
            citations.setdefault(cited_id, Citation(doc_id, cited_id, category, "front-page"))
    return tuple(citations.values())
