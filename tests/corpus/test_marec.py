from pathlib import Path

import pytest

from graphtx.corpus import marec
from graphtx.corpus.base import RawRecord, RecordError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
MAREC = SHARED / "marec"


def read(path: Path):
    """``[(raw, parsed or None, reason)]`` for every record of a file."""
    out = []
    with open(path, "rb") as f:
        for raw in marec.iter_raw(str(path), f):
            try:
                out.append((raw, marec.parse(raw), ""))
            except RecordError as err:
                out.append((raw, None, str(err)))
    return out


# --- the shipped fixture -----------------------------------------------------------


@pytest.fixture(scope="module")
def parsed():
    ((raw, result, reason),) = read(FIXTURES / "marec_small.xml")
    assert reason == "" and raw.position == "record 1 at byte 0"
    return result


def test_document_fields(parsed):
    doc = parsed.document
    assert doc.id == "EP-900001-B1"  # ucid EP-0900001-B1, zeros dropped like every other id
    assert doc.family_id == "12345678" and doc.date == "2003-02-12" and doc.kind == "B1"
    assert doc.title == "Snowthrower" and doc.lang == "en"
    assert [c.text for c in doc.claims] == [
        "A snowthrower comprising an auger housing.",
        "A snowthrower as claimed in claim 1, wherein the housing is steel.",
    ]
    assert [(c.independent, c.depends_on) for c in doc.claims] == [(True, ()), (False, (1,))]
    assert doc.description == "The invention relates to a snowthrower.\nIt has an auger."
    assert doc.ipc == ("E01H 5/04", "B62B 13/00")  # the repeated E01H 5/04 (A and C level) once


def test_citation_sources_and_categories(parsed):
    assert [(c.cited_id, c.category, c.source) for c in parsed.citations] == [
        ("DE-3546191-A1", "X", "search-report"),
        ("US-5123456-A", "applicant", "applicant"),
        ("EP-680812-A1", "Y", "search-report"),  # EXA first, but the SEA source has a category
        ("NL-9400663-A", "unknown", "search-report"),
    ]


def test_missing_ucid():
    raw = RawRecord(
        "marec",
        "x.xml",
        "record 1 at byte 0",
        b'<patent-document><abstract lang="EN"><p>A.</p></abstract></patent-document>',
    )
    with pytest.raises(RecordError, match="^missing id: no ucid attribute$"):
        marec.parse(raw)


# --- the eight MAREC samples -------------------------------------------------------


@pytest.fixture(scope="module")
def shared_records():
    if not MAREC.is_dir():
        pytest.skip("../shared/data not present")
    return {path.name: read(path) for path in sorted(MAREC.glob("*.xml"))}


def doc_of(shared_records, name):
    ((_, parsed, reason),) = shared_records[name]
    assert reason == ""
    return parsed


def test_all_samples(shared_records):
    assert len(shared_records) == 8
    reasons = {name: records[0][2] for name, records in shared_records.items() if records[0][2]}
    assert reasons == {}  # EP-1000006-A1 is bibliographic only: kept with its title (and citations)
    assert shared_records["EP-1000006-A1.xml"][0][1].document.title
    ids = sorted(records[0][1].document.id for records in shared_records.values() if records[0][1])
    assert ids == [
        "EP-1000000-A1",
        "EP-1000000-B1",
        "EP-1000006-A1",
        "EP-1000006-B1",
        "JP-10000001-A",
        "US-H1-H",
        "WO-1978000001-A1",
        "WO-2004047228-B1",
    ]


def test_ep_application_with_search_report(shared_records):
    parsed = doc_of(shared_records, "EP-1000000-A1.xml")
    doc = parsed.document
    assert doc.family_id == "19768124" and doc.date == "2000-05-17"
    assert doc.title == "Apparatus for manufacturing green bricks for the brick manufacturing industry"
    assert len(doc.claims) == 11
    assert doc.claims[2].depends_on == (1, 2)  # "claim 1 or 2"
    assert doc.claims[3].depends_on == (1, 2, 3)  # "any of the foregoing claims"
    assert [(c.cited_id, c.category) for c in parsed.citations] == [
        ("DE-3546191-A1", "A"),
        ("EP-680812-A1", "A"),
        ("NL-9400663-A", "A"),
    ]


def test_grant_takes_english_of_three_claim_sets(shared_records):
    doc = doc_of(shared_records, "EP-1000006-B1.xml").document
    assert doc.lang == "en" and len(doc.claims) == 14
    assert doc.claims[0].text.startswith("A process for preparation of a linear aldehyde")
    assert [c.num for c in doc.claims if c.independent] == [1, 2, 10]


def test_abstract_only_documents(shared_records):
    jp = doc_of(shared_records, "JP-10000001-A.xml").document
    assert jp.claims == () and jp.lang == "en" and jp.abstract and jp.first_claim_index == -1
    wo = doc_of(shared_records, "WO-2004047228-B1.xml").document
    assert wo.lang == "en" and wo.title == "IMPROVED MEMORY CARD CONNECTOR"
    assert "memory card" in wo.abstract.lower()


def test_claims_packed_in_one_claim_element_are_split(shared_records):
    doc = doc_of(shared_records, "WO-1978000001-A1.xml").document
    assert [c.num for c in doc.claims] == list(range(1, 46))
    assert doc.claims[0].text.startswith("A method for the synthesis of a porous self-supporting body")
    assert doc.claims[1].text.startswith("The method of Claim 1 wherein") and doc.claims[1].depends_on == (1,)
    assert doc.claims[43].depends_on == (41,)  # "44. A product made by the process of Claim 41."


def test_us_defensive_publication(shared_records):
    doc = doc_of(shared_records, "US-H1-H.xml").document
    assert doc.id == "US-H1-H" and doc.ipc == ("H01R 4/24",)
    assert doc.claims[0].text.startswith("An electrical contact having a cylindrical configuration")
