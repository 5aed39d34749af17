import collections
import io
from pathlib import Path

import pytest

from graphtx.corpus import uspto
from graphtx.corpus.base import RawRecord, RecordError, SkippedRecord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
GRANTS = SHARED / "uspto-grants"


def read(path: Path, stream=None, skipped: list | None = None):
    """``[(raw, parsed or None, reason)]`` for every record of a file; reader skips go to ``skipped``."""
    out = []
    with open(path, "rb") as f:
        for raw in uspto.iter_raw(str(path), stream or f):
            if isinstance(raw, SkippedRecord):
                if skipped is not None:
                    skipped.append(raw)
                continue
            try:
                out.append((raw, uspto.parse(raw), ""))
            except RecordError as err:
                out.append((raw, None, str(err)))
    return out


def record(xml: str) -> RawRecord:
    return RawRecord("uspto", "inline.xml", "record 1 at byte 0", xml.encode())


class Trickle(io.RawIOBase):
    """A stream that hands out at most 7 bytes per read, to exercise chunk boundaries."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def read(self, size=-1):
        return self._data.read(7)

    def readable(self):
        return True


# --- the shipped fixture -----------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_records():
    return read(FIXTURES / "us_grants_small.xml")


def test_sequence_listing_is_listed_not_parsed():
    skipped = []
    read(FIXTURES / "us_grants_small.xml", skipped=skipped)
    assert [(s.position.split(" at ")[0], s.reason.split(":")[0]) for s in skipped] == [
        ("record 2", "not a patent document")
    ]
    assert "sequence-cwu" in skipped[0].reason


def test_splits_documents_and_passes_over_the_sequence_listing(fixture_records):
    positions = [raw.position for raw, _, _ in fixture_records]
    assert positions[0] == "record 1 at byte 0"
    assert [p.split(" at ")[0] for p in positions] == ["record 1", "record 3", "record 4"]
    data = (FIXTURES / "us_grants_small.xml").read_bytes()
    for raw, _, _ in fixture_records:
        offset = int(raw.position.rsplit(" ", 1)[1])
        assert data[offset:].startswith(b"<?xml") and data[offset:].startswith(raw.payload)


def test_utility_grant(fixture_records):
    doc = fixture_records[0][1].document
    assert doc.id == "US-7900001-B2" and doc.kind == "B2" and doc.date == "2011-03-01"
    assert doc.title == "Snowthrower with adjustable handle"
    assert doc.abstract.startswith("A snowthrower has an auger housing")
    assert doc.description.splitlines() == [
        "BACKGROUND",
        "Snowthrowers clear snow with a rotating auger.",
        "The handle of FIG. 1 can be raised & lowered.",
    ]
    assert doc.ipc == ("E01H 5/04", "E01H 5/09")
    assert doc.lang == "en" and doc.family_id == ""
    assert [c.num for c in doc.claims] == [1, 2, 3, 4]
    assert doc.first_claim_index == 0
    assert doc.first_claim == (
        "A snowthrower comprising: an auger housing; a frame for connecting a handle device and the auger housing;"
        " and a handle device mounted on the frame."
    )
    assert [(c.independent, c.depends_on) for c in doc.claims] == [
        (True, ()),
        (False, (1,)),
        (False, (1, 2)),
        (True, ()),
    ]


def test_front_page_citations(fixture_records):
    citations = fixture_records[0][1].citations
    # the <nplcit> is literature and is left out
    assert [(c.cited_id, c.category) for c in citations] == [
        ("US-5123456-A", "examiner"),
        ("US-20040012345-A1", "other"),
        ("WO-1998051827-A1", "unknown"),  # no <category>; "WO 98/51827" in ucid form
    ]
    assert {(c.citing_id, c.source) for c in citations} == {("US-7900001-B2", "front-page")}


def test_design_patent_with_v40_ipc(fixture_records):
    parsed = fixture_records[1][1]
    doc = parsed.document
    assert doc.id == "US-D651432-S1"
    assert doc.abstract == ""
    assert doc.ipc == ("E01H 5/04", "E01H 11/00")  # fixed-width "E01H  504", "E01H 1100"
    assert len(doc.claims) == 1 and doc.claims[0].independent
    assert [(c.cited_id, c.category) for c in parsed.citations] == [("US-D400123-S", "applicant")]


def test_malformed_document_gives_a_reason(fixture_records):
    raw, parsed, reason = fixture_records[2]
    assert parsed is None
    assert raw.position.startswith("record 4 at byte ")
    assert reason.startswith("malformed XML: Opening and ending tag mismatch: claim line 15 and claims")


def test_splitting_does_not_depend_on_read_sizes(fixture_records):
    data = (FIXTURES / "us_grants_small.xml").read_bytes()
    trickled = [r for r in uspto.iter_raw("x.xml", Trickle(data)) if not isinstance(r, SkippedRecord)]
    assert [(r.position, r.payload) for r in trickled] == [(r.position, r.payload) for r, _, _ in fixture_records]


# --- record errors -----------------------------------------------------------------

GRANT = """<?xml version="1.0" encoding="UTF-8"?>
<us-patent-grant><us-bibliographic-data-grant>
<publication-reference><document-id><country>US</country>{number}<kind>B1</kind></document-id></publication-reference>
<invention-title>{title}</invention-title></us-bibliographic-data-grant>{body}</us-patent-grant>"""
CLAIMS = '<claims><claim num="1"><claim-text>1. A shovel.</claim-text></claim></claims>'


def test_missing_id():
    with pytest.raises(RecordError, match="^missing id: no publication-reference doc-number$"):
        uspto.parse(record(GRANT.format(number="", title="Shovel", body=CLAIMS)))


def test_document_without_any_text():
    xml = GRANT.format(number="<doc-number>7000001</doc-number>", title="", body="")
    with pytest.raises(RecordError, match="^no text: no title, claims, abstract or description$"):
        uspto.parse(record(xml))


def test_title_only_document_is_kept():
    xml = GRANT.format(number="<doc-number>7000001</doc-number>", title="Shovel", body="")
    doc = uspto.parse(record(xml)).document
    assert (doc.title, doc.claims, doc.abstract) == ("Shovel", (), "")


def test_non_utf8_bytes():
    xml = GRANT.format(number="<doc-number>7000001</doc-number>", title="Sch\udcfcppe", body=CLAIMS)
    raw = RawRecord("uspto", "x.xml", "record 1 at byte 0", xml.encode("utf-8", "surrogateescape"))
    with pytest.raises(RecordError, match=r"^non-UTF-8 bytes at offset \d+ \(fc"):
        uspto.parse(raw)


def test_other_root_is_rejected():
    with pytest.raises(RecordError, match=r"^not a US grant: root element <us-patent-application>$"):
        uspto.parse(record('<?xml version="1.0"?><us-patent-application/>'))


def test_abstract_without_claims_is_kept():
    xml = GRANT.format(
        number="<doc-number>7000001</doc-number>", title="Shovel", body="<abstract><p>A shovel.</p></abstract>"
    )
    doc = uspto.parse(record(xml)).document
    assert doc.claims == () and doc.abstract == "A shovel." and doc.first_claim_index == -1


# --- the real weekly excerpts ------------------------------------------------------


@pytest.fixture(scope="module")
def shared_records():
    if not GRANTS.is_dir():
        pytest.skip("../shared/data not present")
    return {path.name: read(path) for path in sorted(GRANTS.glob("*.xml"))}


def test_all_371_grants_parse(shared_records):
    results = [r for records in shared_records.values() for r in records]
    assert [reason for _, _, reason in results if reason] == []
    docs = [parsed.document for _, parsed, _ in results]
    assert len(docs) == 371  # 376 <?xml records, of which 5 are sequence listings
    assert len({d.id for d in docs}) == 371
    assert all(d.claims and d.description and d.title and d.date for d in docs)
    # design patents have one claim, no abstract and no IPC (Locarno only)
    designs = [d for d in docs if d.kind == "S1"]
    assert len(designs) == 216
    assert all(not d.abstract and not d.ipc and len(d.claims) == 1 for d in designs)
    assert all(d.abstract and d.ipc for d in docs if d.kind != "S1")
    assert all(d.first_claim_index == 0 for d in docs)


def test_citation_categories_in_the_weekly_files(shared_records):
    citations = [c for records in shared_records.values() for _, parsed, _ in records for c in parsed.citations]
    assert collections.Counter(c.category for c in citations) == {"examiner": 3641, "other": 3371, "applicant": 797}


def test_v40_grant(shared_records):
    raw, parsed, _ = shared_records["ipg050104.small.xml"][0]
    doc = parsed.document
    assert doc.id == "US-6836899-B1" and doc.date == "2005-01-04"
    assert doc.title == "Device for detachably holding an absorbent napkin across the torso"
    assert doc.ipc == ("A45F 5/04",)
    assert len(doc.claims) == 23 and doc.claims[1].depends_on == (1,)
    assert len(parsed.citations) == 39 and {c.category for c in parsed.citations} == {"examiner"}
    assert shared_records["ipg050104.small.xml"][1][0].position == "record 2 at byte 106165"


def test_v43_grant_with_applicant_citations(shared_records):
    _, parsed, _ = shared_records["ipg130416.small.xml"][2]
    doc = parsed.document
    assert doc.id == "US-8418361-B2" and doc.ipc == ("H05K 3/02",)
    assert [c.num for c in doc.claims if c.independent] == [1] and len(doc.claims) == 5
    assert doc.claims[4].depends_on == (4,)
    assert collections.Counter(c.category for c in parsed.citations) == {"applicant": 5, "examiner": 2}
