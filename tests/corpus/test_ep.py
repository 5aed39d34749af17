import collections
from pathlib import Path

import pytest

from graphtx.corpus import ep
from graphtx.corpus.base import RawRecord, RecordError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
EP_XML = SHARED / "ep-xml"


def read(path: Path):
    """``[(raw, parsed or None, reason)]`` for every record of a file."""
    out = []
    with open(path, "rb") as f:
        for raw in ep.iter_raw(str(path), f):
            try:
                out.append((raw, ep.parse(raw), ""))
            except RecordError as err:
                out.append((raw, None, str(err)))
    return out


def parse_bytes(data: bytes):
    return ep.parse(RawRecord("ep", "inline.xml", "record 1 at byte 0", data))


# --- the shipped fixture -----------------------------------------------------------

FIXTURE = FIXTURES / "ep_grant_small.xml"


@pytest.fixture(scope="module")
def grant():
    records = read(FIXTURE)
    assert len(records) == 1 and records[0][2] == ""
    return records[0][1]


def test_german_grant_reads_the_english_claims(grant):
    doc = grant.document
    assert doc.id == "EP-3900001-B1" and doc.kind == "B1" and doc.date == "2021-06-30"
    assert doc.title == "SNOWTHROWER"  # B542 after B541 "en"
    assert doc.lang == "en"
    assert doc.extra["text_langs"] == {"claims": "en", "description": "de"}
    assert doc.claims[0].text == "A snowthrower comprising an auger housing."
    assert [(c.num, c.independent, c.depends_on) for c in doc.claims] == [
        (1, True, ()),
        (2, False, (1,)),
        (3, False, (1, 2)),  # "any one of claims 1 to 2"
        (4, False, (1, 2, 3)),  # "any preceding claim"
    ]
    assert doc.first_claim_index == 0


def test_description_keeps_inline_citation_text_in_place(grant):
    assert grant.document.description.splitlines() == [
        "Beschreibung",
        "Die Erfindung betrifft eine Schneefräse, wie in DE 10 2009 041 527 A1 beschrieben.",
    ]


def test_classification(grant):
    assert grant.document.ipc == ("E01H 5/04", "E01H 5/09")
    assert grant.document.cpc == ("E01H 5/045",)


def test_citations_from_search_report_and_reference_list(grant):
    assert [(c.cited_id, c.category, c.source) for c in grant.citations] == [
        ("EP-3109871-A1", "X", "search-report"),  # srep-citations wins over the same B561 entry
        ("GB-693448-A", "A", "search-report"),  # "A,D": first letter
        ("WO-2003008444-A", "unknown", "search-report"),  # "WO-A-03/008444"
        ("US-20080197955-A1", "unknown", "search-report"),  # "US-A1- 2008 197 955"
        ("DE-102009041527-A1", "applicant", "description"),
    ]


def test_without_english_claims_the_document_language_is_used():
    data = FIXTURE.read_bytes()
    start, end = data.index(b'<claims id="claims02"'), data.index(b'<claims id="claims03"')
    doc = parse_bytes(data[:start] + data[end:]).document
    assert doc.lang == "de"
    assert [c.text for c in doc.claims] == [
        "Schneefräse mit einem Schneckengehäuse.",
        "Schneefräse nach Anspruch 1, mit einem höhenverstellbaren Griff.",
    ]
    assert doc.claims[1].depends_on == (1,)


def test_record_errors():
    data = FIXTURE.read_bytes()
    with pytest.raises(RecordError, match="^missing id: no doc-number attribute and no B110$"):
        parse_bytes(data.replace(b'doc-number="3900001" ', b"").replace(b"<B110>3900001</B110>", b""))
    with pytest.raises(RecordError, match="^malformed XML: "):
        parse_bytes(data.replace(b"</SDOBI>", b""))
    bare = b'<ep-patent-document doc-number="1" kind="A1"><SDOBI/></ep-patent-document>'
    with pytest.raises(RecordError, match="^no text: no title, claims, abstract or description$"):
        parse_bytes(bare)


# --- the 33 EPO sample publications ------------------------------------------------


@pytest.fixture(scope="module")
def shared_records():
    if not EP_XML.is_dir():
        pytest.skip("../shared/data not present")
    return {path.name: read(path) for path in sorted(EP_XML.glob("*.xml"))}


def test_every_file_parses_or_has_a_reason(shared_records):
    assert len(shared_records) == 33
    assert all(len(records) == 1 for records in shared_records.values())
    reasons = {name: records[0][2] for name, records in shared_records.items() if records[0][2]}
    # bibliographic-only publications (front page without texts) and one file saved from a browser
    assert collections.Counter(reason.split(",")[0] for reason in reasons.values()) == {
        "malformed XML: Specification mandates value for attribute Embodiment": 1,
    }
    assert "application_v1-5-1-A1-2.xml" in reasons  # "<heading><First Embodiment</heading>"
    docs = [records[0][1].document for records in shared_records.values() if records[0][1]]
    assert len(docs) == 32  # 7 front-page-only publications are kept with their titles
    with_text = [d for d in docs if d.claims]
    assert len(with_text) == 25
    assert all(d.description and d.ipc and d.title and d.date for d in with_text)
    assert all(d.title and not d.description for d in docs if not d.claims)
    assert collections.Counter(d.lang for d in with_text) == {"en": 21, "de": 4}


def doc_of(shared_records, name):
    return shared_records[name][0][1]


def test_grant_v15_citations(shared_records):
    parsed = doc_of(shared_records, "grant_v1-5-B1.xml")
    assert parsed.document.id == "EP-3404678-B1"
    assert parsed.document.ipc == ("H01F 27/14", "H01F 27/40")
    assert [c.cited_id for c in parsed.citations if c.source == "search-report"] == [
        "EP-3109871-A1",
        "FR-84247-E",
        "GB-693448-A",
        "US-20080197955-A1",
    ]
    assert {c.category for c in parsed.citations if c.source == "search-report"} == {"unknown"}


def test_german_grant_takes_english_claims(shared_records):
    doc = doc_of(shared_records, "grant_v1-5-B2.xml").document
    assert doc.id == "EP-2743087-B2" and doc.lang == "en"
    assert doc.title == "Printing machine with cladding"
    assert doc.extra["text_langs"]["description"] == "de"
    assert len(doc.claims) == 13 and [c.num for c in doc.claims if c.independent] == [1, 8]


def test_pre_ipc8_classification_and_german_application(shared_records):
    assert doc_of(shared_records, "application_v1-0-A1.xml").document.ipc == (
        "C07C 29/44",
        "C07C 31/38",
    )  # " 7C 07C 29/44 A"
    doc = doc_of(shared_records, "application_v1-1-A1.xml").document
    assert doc.id == "EP-2-A1" and doc.lang == "de"
    assert doc.claims[0].text.startswith("Tetrahydrofuran-Derivate der Formel")  # "1.)" removed
    assert doc.claims[2].depends_on == (1,)  # "gemäß Anspruch 1"


def test_bare_ampersand_is_repaired_and_ordinal_references_read(shared_records):
    doc = doc_of(shared_records, "application_v1-2-A1.xml").document  # "UDAPI & ASOCIADOS"
    assert doc.id == "EP-1921219-A1"
    assert doc.claims[1].depends_on == (1,)  # "according to the first claim"
    assert doc.claims[3].depends_on == (1, 2)  # "the first or second claim"


def test_wo_citation_numbers_get_the_ucid_form(shared_records):
    cited = [c.cited_id for c in doc_of(shared_records, "grant_v1-0-B1.xml").citations]
    assert cited == ["WO-2003008444-A", "US-5948634-A"]
    cited = [c.cited_id for c in doc_of(shared_records, "grant_v1-5-1-B2.xml").citations if c.source == "search-report"]
    assert "US-RE36154-E" in cited  # "US-E- R E36 154"


def test_dependency_wording_in_the_wild(shared_records):
    braking = doc_of(shared_records, "grant_v1-1-B1.xml").document
    assert braking.id == "EP-1019261-B1" and len(braking.claims) == 29
    assert [c.num for c in braking.claims if c.independent] == [1, 21]
    assert braking.claims[2].depends_on == (1,)  # "as claimed in claim I" (OCR for 1)
    fees = doc_of(shared_records, "application_v1-0-A2.xml").document
    assert [c.num for c in fees.claims if c.independent] == [1, 10]
    assert fees.claims[8].depends_on == tuple(range(1, 9))  # "nach einem der vorgehenden Ansprüche"
