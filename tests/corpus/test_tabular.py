import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.corpus import tabular
from graphtx.corpus.base import RecordError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def read(path: Path, iter_raw, parse):
    """``[(position, parsed or None, reason)]`` for every record of a file."""
    out = []
    with open(path, "rb") as f:
        for raw in iter_raw(str(path), f):
            try:
                out.append((raw.position, parse(raw), ""))
            except RecordError as err:
                out.append((raw.position, None, str(err)))
    return out


def read_jsonl(path):
    return read(path, tabular.iter_raw_jsonl, tabular.parse_jsonl)


def needs(path: Path) -> Path:
    if not path.exists():
        pytest.skip("../shared/data not present")
    return path


# --- JSON lines --------------------------------------------------------------------


@pytest.fixture(scope="module")
def jsonl():
    return {
        position: (parsed, reason) for position, parsed, reason in read_jsonl(FIXTURES / "docs_with_bad_lines.jsonl")
    }


def test_bad_lines_fail_alone(jsonl):
    assert list(jsonl) == ["line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 9"]  # 8 is blank
    reasons = {position: reason for position, (_, reason) in jsonl.items() if reason}
    assert reasons == {
        "line 4": "invalid JSON: Unterminated string starting at column 31",
        "line 5": "non-UTF-8 bytes at offset 34 (e9 20 61 75): invalid continuation byte",
        "line 6": "missing id: none of the fields id, patent_id, publication_number, doc_id, ucid",
    }
    assert jsonl["line 9"][0].document.id == "EV-0009"  # reading went on after the errors


def test_claims_string_is_split_and_dependencies_read(jsonl):
    doc = jsonl["line 1"][0].document
    assert doc.id == "EV-0001" and doc.title == "Battery pack cooling" and doc.family_id == "F100"
    assert [c.num for c in doc.claims] == [1, 2, 3]
    assert (
        doc.claims[0].text
        == "A battery pack comprising: a plurality of cells; and a housing with air channels between the cells."
    )
    assert [(c.independent, c.depends_on) for c in doc.claims] == [(True, ()), (False, (1,)), (False, (1, 2))]
    assert doc.first_claim_index == 0
    assert doc.ipc == ("H01M 10/44", "H01M 2/10")
    assert doc.date == "2006"  # from "year"
    assert doc.source == "jsonl" and doc.lang == ""


def test_claims_as_lists(jsonl):
    strings = jsonl["line 2"][0].document
    assert [(c.num, c.independent, c.depends_on) for c in strings.claims] == [(1, True, ()), (2, False, (1,))]
    assert strings.cpc == ("Y02T 10/70", "B60L 53/14")  # section Y kept, "not a code" dropped
    assert strings.date == "2008-03-01"
    objects = jsonl["line 3"][0].document
    assert [(c.num, c.text, c.independent, c.depends_on) for c in objects.claims] == [
        (1, "A motor controller.", True, ()),
        (2, "The motor controller of claim 1 with a brake.", False, (1,)),
    ]
    assert objects.date == "2007-05-15"


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ("A sensor.", [(1, ())]),  # no numbering: one claim
        (
            "1. A sensor. 2. The sensor as claimed in claim 1. 3. The sensor of any one of claims 1 to 2.",
            [(1, ()), (2, (1,)), (3, (1, 2))],
        ),
        (
            "1. A cell. 2. A pack of cells according to claim 1. 3. A car with the pack of claim 2 or the cell of claim 1.",
            [(1, ()), (2, (1,)), (3, (1, 2))],
        ),
    ],
)
def test_claim_strings(claims, expected, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(f'{{"id": "X1", "claims": {claims!r}}}\n'.replace("'", '"'))
    ((_, parsed, reason),) = read_jsonl(path)
    assert reason == ""
    assert [(c.num, c.depends_on) for c in parsed.document.claims] == expected


def test_ev_battery_docs():
    records = read_jsonl(needs(SHARED / "citations-ev-battery" / "docs.jsonl"))
    assert len(records) == 3603 and [r for _, _, r in records if r] == []
    first = records[0][1].document
    assert first.id == "1974J0644V" and first.date == "1974"
    assert first.abstract.startswith("Electric vehicle recuperative drive and braking cct.")


# --- Parquet -----------------------------------------------------------------------


def test_parquet_rows(tmp_path):
    path = tmp_path / "docs.parquet"
    table = pa.table(
        {
            "patent_id": ["P1", "P2", None],
            "abstract": ["A heat pump.", "", "A lamp."],
            "claims": [["A heat pump.", "The heat pump of claim 1 with a fan."], [], []],
            "classifications_cpc": [["F25B30/02", "Y02B30/52"], [], []],
            "publication_date": [dt.date(2010, 1, 5), dt.date(2011, 2, 1), None],
        }
    )
    pq.write_table(table, path, row_group_size=2)
    records = read(path, tabular.iter_raw_parquet, tabular.parse_parquet)
    assert [(position, reason) for position, _, reason in records] == [
        ("row 1", ""),
        ("row 2", "no text: no title, claims, abstract or description"),
        ("row 3", "missing id: none of the fields id, patent_id, publication_number, doc_id, ucid"),
    ]
    doc = records[0][1].document
    assert doc.id == "P1" and doc.source == "parquet" and doc.date == "2010-01-05"
    assert doc.cpc == ("F25B 30/02", "Y02B 30/52")
    assert [c.depends_on for c in doc.claims] == [(), (1,)]


def test_uspto_abstracts_parquet():
    records = read(
        needs(SHARED / "uspto-abstracts-cpc" / "uspto_random_10000.parquet"),
        tabular.iter_raw_parquet,
        tabular.parse_parquet,
    )
    assert len(records) == 10000 and [r for _, _, r in records if r] == []
    docs = [parsed.document for _, parsed, _ in records]
    assert docs[0].id == "US06836996-20050104" and docs[0].date == "2005-01-04"  # ids kept as given
    assert records[-1][0] == "row 10000"
    assert sum(1 for d in docs if d.cpc) == 9535
    assert sum(1 for d in docs if any(code.startswith("Y") for code in d.cpc)) == 394
