"""Priority and application dates, applicants, country, kind and language from each format;
JSONL/Parquet field names mapped, unknown fields kept in ``extra``; old corpora still open.

The XML snippets are cut from real files in ../shared/data (bibliographic parts verbatim,
texts shortened)."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.corpus import ep, marec, tabular, uspto
from graphtx.corpus.base import RawRecord
from graphtx.corpus.ingest import ingest
from graphtx.corpus.schema import DOCUMENT_SCHEMA, NEW_DOCUMENT_COLUMNS
from graphtx.corpus.store import iter_documents

pytestmark = pytest.mark.timeout(60)

# ipg130416: US-D680087-S1 (foreign priority, assignee) and ipg050104: US-6836979-B2 (applicants only)
US_DESIGN = """<?xml version="1.0" encoding="UTF-8"?>
<us-patent-grant lang="EN" dtd-version="v4.3 2012-12-04" file="USD0680087-20130416.XML" country="US" date-publ="20130416">
<us-bibliographic-data-grant>
<publication-reference><document-id><country>US</country><doc-number>D0680087</doc-number><kind>S1</kind><date>20130416</date></document-id></publication-reference>
<application-reference appl-type="design"><document-id><country>US</country><doc-number>29410027</doc-number><date>20120103</date></document-id></application-reference>
<priority-claims>
<priority-claim sequence="01" kind="national"><country>JP</country><doc-number>2011-015204</doc-number><date>20110704</date></priority-claim>
</priority-claims>
<invention-title id="d2e71">Air purifier</invention-title>
<us-parties>
<us-applicants>
<us-applicant sequence="001" app-type="applicant" designation="us-only"><addressbook><last-name>Fujii</last-name><first-name>Yoshito</first-name><address><city>Osaka</city><country>JP</country></address></addressbook><residence><country>JP</country></residence></us-applicant>
</us-applicants>
</us-parties>
<assignees>
<assignee><addressbook><orgname>Sharp Kabushiki Kaisha</orgname><role>03</role><address><city>Osaka</city><country>JP</country></address></addressbook></assignee>
</assignees>
</us-bibliographic-data-grant>
<claims id="claims"><claim id="CLM-00001" num="00001"><claim-text>The ornamental design for an air purifier, as shown and described.</claim-text></claim></claims>
</us-patent-grant>
"""

US_CONTINUATION = """<?xml version="1.0" encoding="UTF-8"?>
<us-patent-grant lang="EN" dtd-version="v4.3 2012-12-04" country="US" date-publ="20130416">
<us-bibliographic-data-grant>
<publication-reference><document-id><country>US</country><doc-number>08418361</doc-number><kind>B2</kind><date>20130416</date></document-id></publication-reference>
<application-reference appl-type="utility"><document-id><country>US</country><doc-number>13299924</doc-number><date>20111118</date></document-id></application-reference>
<invention-title id="d2e53">Method of manufacturing a printed circuit board</invention-title>
<us-related-documents>
<division><relation><parent-doc><document-id><country>US</country><doc-number>12216612</doc-number><date>20080708</date></document-id><parent-status>PENDING</parent-status></parent-doc>
<child-doc><document-id><country>US</country><doc-number>13299924</doc-number></document-id></child-doc></relation></division>
<us-provisional-application><document-id><country>US</country><doc-number>61000001</doc-number><kind>00</kind><date>20080415</date></document-id></us-provisional-application>
<related-publication><document-id><country>US</country><doc-number>20120060366</doc-number><kind>A1</kind><date>20120315</date></document-id></related-publication>
</us-related-documents>
<parties>
<applicants>
<applicant sequence="001" app-type="applicant-inventor" designation="us-only"><addressbook><last-name>Flavio</last-name><first-name>Bacchiega</first-name><address><country>IT</country></address></addressbook></applicant>
</applicants>
</parties>
</us-bibliographic-data-grant>
<abstract id="abstract"><p id="p-0001" num="0000">A method of manufacturing a printed circuit board is disclosed.</p></abstract>
</us-patent-grant>
"""

# ep-xml/application_v1-0-A1.xml (EP-1325900-A1) and grant_v1-4-B1.xml (EP-449582-B1)
EP_APPLICATION = """<?xml version="1.0" encoding="UTF-8"?>
<ep-patent-document id="EP01963450A1" file="01963450.xml" lang="en" country="EP" doc-number="1325900" kind="A1" date-publ="20030709" status="n" dtd-version="ep-patent-document-v1-0">
<SDOBI lang="en">
<B200><B210>01963450.0</B210><B220><date>20010905</date></B220><B240><B241><date>20030313</date></B241></B240><B250>ja</B250><B251EP>en</B251EP><B260>en</B260></B200>
<B300><B310>2000273711</B310><B320><date>20000908</date></B320><B330><ctry>JP</ctry></B330></B300>
<B700><B710><B711><snm>ASAHI GLASS COMPANY LTD.</snm><iid>00242775</iid><adr><city>Tokyo 100-8405</city><ctry>JP</ctry></adr></B711></B710>
<B720><B721><snm>TOHMA, Toshihiko</snm><adr><ctry>JP</ctry></adr></B721></B720>
<B740><B741><snm>Mueller-Bore &amp; Partner</snm><adr><ctry>DE</ctry></adr></B741></B740></B700>
</SDOBI>
<abstract id="abst" lang="en"><p id="pa01" num="0001">A process for producing a fluorinated compound is provided.</p></abstract>
</ep-patent-document>
"""

EP_GRANT = """<?xml version="1.0" encoding="UTF-8"?>
<ep-patent-document id="EP91302636B1" lang="en" country="EP" doc-number="0449582" kind="B1" date-publ="20091021" status="n" dtd-version="ep-patent-document-v1-4">
<SDOBI lang="en">
<B200><B210>91302636.5</B210><B220><date>19910326</date></B220><B250>en</B250></B200>
<B300><B310>8000290</B310><B320><date>19900327</date></B320><B330><ctry>JP</ctry></B330></B300>
<B300><B310>8000291</B310><B320><date>19900102</date></B320><B330><ctry>JP</ctry></B330></B300>
<B700><B720><B721><snm>Nose, Noriyuki</snm><adr><ctry>JP</ctry></adr></B721></B720>
<B730><B731><snm>CANON KABUSHIKI KAISHA</snm><iid>00542361</iid><adr><city>Tokyo</city><ctry>JP</ctry></adr></B731></B730></B700>
</SDOBI>
<claims id="claims01" lang="en"><claim id="c-en-0001" num="0001"><claim-text>A measuring method comprising a light source.</claim-text></claim></claims>
</ep-patent-document>
"""

# marec/EP-1000000-B1.xml and US-H1-H.xml
MAREC_EP = """<?xml version="1.0" encoding="UTF-8"?>
<patent-document ucid="EP-1000000-B1" country="EP" doc-number="1000000" kind="B1" lang="EN" family-id="19768124" status="new" date="20030212">
<bibliographic-data>
<publication-reference ucid="EP-1000000-B1" status="new"><document-id status="new" format="original"><country status="new">EP</country><doc-number>1000000</doc-number><kind>B1</kind><date>20030212</date><lang>EN</lang></document-id></publication-reference>
<application-reference load-source="docdb" ucid="EP-99203729-A" status="new"><document-id status="new" format="epo"><country status="new">EP</country><doc-number>99203729</doc-number><kind>A</kind><date>19991108</date><lang>NL</lang></document-id></application-reference>
<priority-claims status="new"><priority-claim ucid="NL-1010536-A" status="new"><document-id status="new" format="epo"><country status="new">NL</country><doc-number>1010536</doc-number><kind>A</kind><date>19981112</date></document-id></priority-claim></priority-claims>
<parties>
<applicants>
<applicant status="new" sequence="1" format="epo"><addressbook><name>BEHEERMIJ DE BOER NIJMEGEN B V</name><address><country status="new">NL</country></address></addressbook></applicant>
<applicant status="new" sequence="1" format="intermediate"><addressbook><name>BEHEERMAATSCHAPPIJ DE BOER NIJMEGEN B.V.</name></addressbook></applicant>
</applicants>
</parties>
</bibliographic-data>
<abstract lang="EN"><p>Apparatus for manufacturing green bricks from clay.</p></abstract>
</patent-document>
"""

MAREC_US = """<?xml version="1.0" encoding="UTF-8"?>
<patent-document ucid="US-H1-H" country="US" doc-number="H1" kind="H" lang="EN" family-id="24343680" status="new" date="19851203">
<bibliographic-data>
<publication-reference ucid="US-H1-H" status="new"><document-id status="new" format="original"><country>US</country><doc-number>H1</doc-number><kind>H</kind><date>19851203</date></document-id></publication-reference>
<application-reference appl-type="7" ucid="US-58595184-A" status="new"><document-id status="new" format="epo"><country>US</country><doc-number>58595184</doc-number><kind>A</kind><date>19840305</date></document-id></application-reference>
<parties>
<inventors><inventor status="new" format="original"><addressbook><last-name>Wattana-Chayakul</last-name><first-name>Montri</first-name></addressbook></inventor></inventors>
<assignees><assignee status="new" format="original"><addressbook><name>BELL TELEPHONE LABORATORIES, INC.</name><address><country>US</country></address></addressbook></assignee></assignees>
</parties>
</bibliographic-data>
<abstract lang="EN"><p>A method of making a semiconductor device.</p></abstract>
</patent-document>
"""


def parse(module, xml: str):
    return module.parse(RawRecord(module.FORMAT, "inline.xml", "record 1 at byte 0", xml.encode())).document


def test_uspto_priority_claim_application_date_and_assignee():
    doc = parse(uspto, US_DESIGN)
    assert (doc.id, doc.country, doc.kind, doc.lang) == ("US-D680087-S1", "US", "S1", "en")
    assert doc.application_date == "2012-01-03"
    assert doc.priority_date == "2011-07-04"  # the Japanese priority, before the US filing
    assert doc.applicants == ("Sharp Kabushiki Kaisha",)  # the assignee (owner) before the inventor-applicants


def test_uspto_related_filings_count_and_applicants_without_assignee():
    doc = parse(uspto, US_CONTINUATION)
    assert doc.application_date == "2011-11-18"
    assert (
        doc.priority_date == "2008-04-15"
    )  # the provisional; the parent (2008-07-08) is later, the pre-grant publication is no filing
    assert doc.applicants == ("Bacchiega Flavio",)


def test_uspto_without_earlier_filings_priority_is_application_date():
    doc = parse(uspto, US_DESIGN.replace("<priority-claims>", "<x>").replace("</priority-claims>", "</x>"))
    assert doc.priority_date == doc.application_date == "2012-01-03"


def test_ep_application_and_grant():
    a = parse(ep, EP_APPLICATION)
    assert (a.id, a.country, a.kind) == ("EP-1325900-A1", "EP", "A1")
    assert (a.application_date, a.priority_date) == ("2001-09-05", "2000-09-08")
    assert a.applicants == ("ASAHI GLASS COMPANY LTD.",)  # not the inventor (B721) nor the representative (B741)
    g = parse(ep, EP_GRANT)
    assert g.priority_date == "1990-01-02"  # the earliest of two B300 priorities
    assert g.applicants == ("CANON KABUSHIKI KAISHA",)  # the proprietor of a grant (B731)


def test_marec_parties_one_format_and_dates():
    d = parse(marec, MAREC_EP)
    assert (d.country, d.kind, d.family_id) == ("EP", "B1", "19768124")
    assert (d.application_date, d.priority_date) == ("1999-11-08", "1998-11-12")
    assert d.applicants == ("BEHEERMIJ DE BOER NIJMEGEN B V",)  # the epo form only, not each format's repeat
    u = parse(marec, MAREC_US)
    assert (u.country, u.application_date, u.priority_date) == ("US", "1984-03-05", "1984-03-05")
    assert u.applicants == ("BELL TELEPHONE LABORATORIES, INC.",)  # no applicants: the assignees


SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not (SHARED / "marec").exists(), reason="shared data not present")
def test_real_files_fill_the_new_fields(tmp_path):
    report = ingest([SHARED / "marec", SHARED / "ep-xml" / "grant_v1-4-B1.xml"], tmp_path / "c", progress=False)
    filled = json.loads((tmp_path / "c" / "manifest.json").read_text())["fields_filled"]
    assert set(filled) == {str(SHARED / "marec"), str(SHARED / "ep-xml" / "grant_v1-4-B1.xml")}
    ep_counts = filled[str(SHARED / "ep-xml" / "grant_v1-4-B1.xml")]
    assert ep_counts["documents"] == ep_counts["priority_date"] == ep_counts["applicants"] == ep_counts["country"] == 1
    m = filled[str(SHARED / "marec")]
    assert (
        m["documents"] == report.documents - 1
        and m["priority_date"] == m["documents"]
        and m["family_id"] == m["documents"]
    )


# --- JSONL / Parquet ---------------------------------------------------------------


def jsonl_doc(row: dict):
    return tabular.parse_jsonl(RawRecord("jsonl", "docs.jsonl", "line 1", json.dumps(row).encode())).document


def test_jsonl_common_names_are_mapped():
    doc = jsonl_doc(
        {
            "publication_number": "US-8418590-B2",
            "abstract": "A snowthrower with an auger.",
            "earliest_priority_date": "20080604",
            "filing_date": "2009-06-03",
            "assignee": "Black & Decker Inc.; Acme Corp",
            "applicant": ["Black & Decker Inc."],
            "country_code": "us",
            "kind_code": "b2",
            "language": "EN",
            "publication_date": "2013-04-16",
        }
    )
    assert (doc.priority_date, doc.application_date, doc.date) == ("2008-06-04", "2009-06-03", "2013-04-16")
    assert doc.applicants == (
        "Black & Decker Inc.",
        "Acme Corp",
    )  # applicant and assignee columns both read, repeats dropped
    assert (doc.country, doc.kind, doc.lang) == ("US", "B2", "en")
    assert doc.extra == {}


def test_jsonl_unknown_fields_kept_in_extra_and_stored(tmp_path):
    rows = [
        {
            "id": "2004281796",
            "abstract": "A battery pack with cooling plates.",
            "examiner": "J. Smith",
            "claims_count": 12,
            "inventors": ["A", "B"],
            "family": "F1",
            "date": "2004-12-01",
        },
        {"id": "US-1-A", "abstract": "A cell.", "priority_date": "2001-02-03", "applicants": [{"name": "Cell Co"}]},
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ingest([tmp_path / "d.jsonl"], tmp_path / "c", progress=False)
    docs = {d.id: d for d in iter_documents(tmp_path / "c")}
    assert docs["2004281796"].extra == {"examiner": "J. Smith", "claims_count": 12, "inventors": ["A", "B"]}
    assert docs["2004281796"].family_id == "F1" and docs["2004281796"].country == ""  # an opaque id names no office
    assert docs["US-1-A"].country == "US" and docs["US-1-A"].applicants == ("Cell Co",) and docs["US-1-A"].extra == {}
    assert docs["US-1-A"].kind == "A" and docs["2004281796"].kind == ""  # office and kind read from a CC-NUMBER-KIND id
    filled = json.loads((tmp_path / "c" / "manifest.json").read_text())["fields_filled"][str(tmp_path / "d.jsonl")]
    assert (
        filled["documents"] == 2
        and filled["priority_date"] == 1
        and filled["applicants"] == 1
        and filled["family_id"] == 1
    )
    assert filled["extra"] == {"claims_count": 1, "examiner": 1, "inventors": 1}


def test_parquet_rows_are_mapped_too(tmp_path):
    table = pa.table(
        {
            "id": ["P-1"],
            "abstract": ["A cooling plate."],
            "filing_date": ["2010-01-02"],
            "assignee_name": ["Acme"],
            "score": [0.5],
        }
    )
    pq.write_table(table, tmp_path / "d.parquet")
    ingest([tmp_path / "d.parquet"], tmp_path / "c", progress=False)
    (doc,) = iter_documents(tmp_path / "c")
    assert (doc.application_date, doc.applicants, doc.extra) == ("2010-01-02", ("Acme",), {"score": 0.5})


def test_a_corpus_without_the_new_columns_still_opens(tmp_path):
    ingest([_write(tmp_path)], tmp_path / "c", progress=False)
    path = tmp_path / "c" / "documents.parquet"
    old = pq.read_table(path).drop_columns(list(NEW_DOCUMENT_COLUMNS))
    assert len(old.schema) == len(DOCUMENT_SCHEMA) - len(NEW_DOCUMENT_COLUMNS)
    pq.write_table(old, path)
    (doc,) = iter_documents(tmp_path / "c")
    assert (doc.id, doc.priority_date, doc.applicants, doc.country, doc.extra) == ("D-1", "", (), "", {})


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": "D-1", "abstract": "A gear.", "priority_date": "2001-01-01"}) + "\n")
    return path


def test_cli_ingest_says_what_each_source_filled(tmp_path, capsys):
    from graphtx.cli import main

    (tmp_path / "d.jsonl").write_text(
        json.dumps({"id": "A-1", "abstract": "A gear.", "assignee": "Acme", "examiner": "Smith"}) + "\n"
    )
    assert main(["ingest", str(tmp_path / "d.jsonl"), "--out", str(tmp_path / "c"), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert f"{tmp_path / 'd.jsonl'}: 1 documents; filled: abstract 1, applicants 1; empty: title," in said
    assert "kept in extra: examiner 1" in said
