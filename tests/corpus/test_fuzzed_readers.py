"""Generated damage fed to every record reader (issue 50: patent files arrive broken in ways nobody listed).

Each test mutates a small valid seed of one format (the fixtures the readers' own tests read) with Hypothesis and
checks what the reader makes of it:

* nothing escapes but the documented error: ``parse`` raises :class:`RecordError` (ingest lists the record with its
  reason); the ``iter_raw`` of XML and JSON lines never raises; a Parquet file may stop with one of the errors ingest
  turns into a "rest of file" skip;
* every record is accounted for once: read as a document or skipped with a non-empty reason, and the records cover
  the file (no byte of an XML file, no non-blank JSON line is lost or read twice); ingest's counts add up;
* a document that is read has a non-empty id, str where the schema says str, and ``documents.parquet`` can hold it
  (UTF-8 text, int32 claim numbers); a record whose bytes are not UTF-8 is never read as a document.

Hypothesis comes with the ``fuzz`` extra (``make test-slow`` installs it); without it the module is skipped. Damage is
described as a list of operations on the seed (positions taken modulo its length), so a failing case reads as an
``@example`` that holds for every format.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip(
    "hypothesis", reason="property-based tests need hypothesis (the test extra: pip install 'graphtx[test]')"
)
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from hypothesis import HealthCheck, example, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from graphtx.config import IngestConfig  # noqa: E402
from graphtx.corpus import tabular  # noqa: E402
from graphtx.corpus.base import ParsedRecord, RawRecord, RecordError, SkippedRecord, split_stream  # noqa: E402
from graphtx.corpus.formats import ARCHIVE_ERRORS, READERS  # noqa: E402
from graphtx.corpus.ingest import ingest  # noqa: E402
from graphtx.corpus.schema import CITATION_SCHEMA, DOCUMENT_SCHEMA, citation_to_row, document_to_row  # noqa: E402
from graphtx.corpus.store import iter_documents, read_errors  # noqa: E402

from ..conftest import FIXTURES  # noqa: E402


def fuzz(max_examples: int):
    """Reproducible (derandomized, no example database) and without deadline: the machine may be busy."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def shown(**given) -> None:
    """Note the test's input as Python: the failure report of the Hypothesis version here leaves given arguments blank."""
    note(", ".join(f"{name}={value!r}" for name, value in given.items()))


# --- seeds: the small valid documents the readers' own tests read ------------------------------------------------------


def parquet_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=2)
    return out.getvalue()


PARQUET_SEED = pa.table(  # tests/corpus/test_tabular.py::test_parquet_rows
    {
        "patent_id": ["P1", "P2", None],
        "abstract": ["A heat pump.", "", "A lamp."],
        "claims": [["A heat pump.", "The heat pump of claim 1 with a fan."], [], []],
        "classifications_cpc": [["F25B30/02", "Y02B30/52"], [], []],
        "publication_date": [dt.date(2010, 1, 5), dt.date(2011, 2, 1), None],
    }
)
SEEDS = {
    "uspto": (FIXTURES / "us_grants_small.xml").read_bytes(),  # three grants and a sequence listing
    "ep": (
        FIXTURES / "ep_grant_small.xml"
    ).read_bytes(),  # a German grant with English claims, search report, a bare "&"
    "marec": (FIXTURES / "marec_small.xml").read_bytes(),
    "jsonl": (
        FIXTURES / "docs_with_bad_lines.jsonl"
    ).read_bytes(),  # good lines, bad JSON, bad UTF-8, no id, a blank line
    "parquet": parquet_bytes(PARQUET_SEED),
}
XML_FORMATS = ("uspto", "ep", "marec")
BYTE_FORMATS = (*XML_FORMATS, "jsonl")
SUFFIX = {"uspto": "xml", "ep": "xml", "marec": "xml", "jsonl": "jsonl", "parquet": "parquet"}
NAME = "fuzzed"
STOPPED_READING = (
    OSError,
    RecordError,
    ValueError,
    *ARCHIVE_ERRORS,
)  # what ingest.iter_items lists as one "rest of file" skip


# --- reading as ingest does, without the writer ---------------------------------------------------------------------------


@dataclass
class Reading:
    records: list[RawRecord | SkippedRecord] = field(default_factory=list)  # what iter_raw gave, in order
    documents: list[tuple[RawRecord, ParsedRecord]] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)  # iter_raw's skips and the records parse refused
    stopped: Exception | None = None  # Parquet only: the error that ended the file (ingest lists the rest of the file)


def read(fmt: str, data: bytes) -> Reading:
    """Every record of ``data``, read or skipped; any exception but the documented ones propagates (and fails the test)."""
    reader, reading = READERS[fmt], Reading()
    records = reader.iter_raw(NAME, io.BytesIO(data))
    while True:
        try:
            item = next(records, None)
        except STOPPED_READING as err:
            if fmt != "parquet":  # XML and JSON lines are split without parsing: nothing may stop them
                raise
            reading.stopped = err
            break
        if item is None:
            break
        reading.records.append(item)
        if isinstance(item, SkippedRecord):
            reading.skipped.append(item)
            continue
        try:
            reading.documents.append((item, reader.parse(item)))
        except RecordError as err:
            reading.skipped.append(SkippedRecord(item.file, item.position, str(err), err.doc_id))
    return reading


def check(fmt: str, data: bytes) -> Reading:
    """Read ``data`` and check the three properties; the reading, for more checks."""
    reading = read(fmt, data)
    positions = [r.position for r in reading.records]
    assert len(set(positions)) == len(positions), f"a position named twice: {positions}"
    assert len(reading.documents) + len(reading.skipped) == len(reading.records)
    for skip in reading.skipped:
        assert skip.file == NAME and skip.reason.strip(), skip
    for raw, parsed in reading.documents:
        assert_a_sound_document(raw, parsed)
    COVERAGE[fmt](data, reading.records)
    return reading


# --- records cover the file -------------------------------------------------------------------------------------------------

_RECORD_AT = re.compile(r"^record (\d+) at byte (\d+)$")


def xml_records_cover_the_file(data: bytes, records: list) -> None:
    """Records are numbered 1, 2, ... in file order and tile the file: only whitespace lies outside them."""
    spans = []
    for n, record in enumerate(records, 1):
        m = _RECORD_AT.match(record.position)
        assert m and int(m.group(1)) == n, record.position
        start = int(m.group(2))
        if isinstance(record, RawRecord):
            assert data[start : start + len(record.payload)] == record.payload
            spans.append((start, start + len(record.payload)))
        else:
            spans.append((start, None))  # a sequence listing: it runs to the next record
    at = 0
    for (start, end), next_start in zip(spans, [s for s, _ in spans[1:]] + [len(data)]):
        assert at <= start and not data[at:start].strip(), f"bytes {at}..{start} belong to no record"
        at = next_start if end is None else end
        assert at <= next_start, "two records share bytes"
    assert not data[at:].strip(), f"bytes from {at} belong to no record"


def jsonl_records_cover_the_file(data: bytes, records: list) -> None:
    """One record a non-blank line, named by its line number, holding that line."""
    lines = [(f"line {n}", line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    assert [(r.position, r.payload.removesuffix(b"\n")) for r in records] == lines


def parquet_rows_are_numbered(data: bytes, records: list) -> None:
    assert [r.position for r in records] == [f"row {n}" for n in range(1, len(records) + 1)]


COVERAGE = {
    "uspto": xml_records_cover_the_file,
    "ep": xml_records_cover_the_file,
    "marec": xml_records_cover_the_file,
    "jsonl": jsonl_records_cover_the_file,
    "parquet": parquet_rows_are_numbered,
}


# --- a sound document -------------------------------------------------------------------------------------------------------

STRING_FIELDS = [
    f.name for f in DOCUMENT_SCHEMA if f.type == pa.string() and f.name != "extra"
]  # extra: a dict, stored as JSON
STRING_LISTS = [f.name for f in DOCUMENT_SCHEMA if f.type == pa.list_(pa.string())]
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")


def assert_a_sound_document(raw: RawRecord, parsed: ParsedRecord) -> None:
    doc = parsed.document
    assert doc is not None and isinstance(doc.id, str) and doc.id.strip(), f"a document without an id: {doc!r:.200}"
    for name in STRING_FIELDS:
        assert type(getattr(doc, name)) is str, (name, getattr(doc, name))
    for name in STRING_LISTS:
        assert isinstance(getattr(doc, name), tuple) and all(type(v) is str for v in getattr(doc, name)), (
            name,
            getattr(doc, name),
        )
    for claim in doc.claims:
        assert type(claim.num) is int and type(claim.text) is str and type(claim.independent) is bool, claim
        assert isinstance(claim.depends_on, tuple) and all(type(n) is int for n in claim.depends_on), claim
    assert isinstance(doc.extra, dict)
    pa.Table.from_pylist([document_to_row(doc)], schema=DOCUMENT_SCHEMA)  # documents.parquet can hold it
    pa.Table.from_pylist([citation_to_row(c) for c in parsed.citations], schema=CITATION_SCHEMA)
    if isinstance(raw.payload, bytes) and first_non_utf8(raw.payload) is not None:  # never read with damaged text
        declared = _ENCODING.search(raw.payload[:200])
        assert raw.format in XML_FORMATS and declared and declared.group(1).lower() not in (b"utf-8", b"utf8"), (
            "non-UTF-8 bytes read"
        )


def first_non_utf8(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start
    return None


# --- damage: operations on the seed, positions modulo its length ------------------------------------------------------------


def _flip(data: bytes, at: int, mask: int) -> bytes:
    if not data:
        return data
    at %= len(data)
    return data[:at] + bytes([data[at] ^ mask]) + data[at + 1 :]


def _insert(data: bytes, at: int, piece: bytes) -> bytes:
    at %= len(data) + 1
    return data[:at] + piece + data[at:]


def _delete(data: bytes, at: int, n: int) -> bytes:
    at %= len(data) + 1
    return data[:at] + data[at + n :]


def _repeat(data: bytes, at: int, n: int) -> bytes:
    """``data[at:at+n]`` twice in a row: a repeated tag, line or record."""
    at %= len(data) + 1
    return data[: at + n] + data[at:]


def _cut(data: bytes, at: int) -> bytes:
    return data[: at % (len(data) + 1)]


_XML_FIELD = re.compile(rb'>([^<]*)<|="([^"]*)"')  # a text node or an attribute value
_XML_TAG = re.compile(rb"</?[A-Za-z][^<>]*>")


def _field(data: bytes, k: int, filler: str, times: int) -> bytes:
    """The k-th text node or attribute value replaced by ``filler * times`` (0: empty)."""
    spans = [m.span(1) if m.group(1) is not None else m.span(2) for m in _XML_FIELD.finditer(data)]
    if not spans:
        return data
    start, end = spans[k % len(spans)]
    return data[:start] + (filler * times).encode() + data[end:]


def _number(data: bytes, k: int, digits: str) -> bytes:
    """The k-th run of digits (a date, a doc-number, a claim's num, an idref) replaced by ``digits``."""
    spans = [m.span() for m in re.finditer(rb"\d+", data)]
    if not spans:
        return data
    start, end = spans[k % len(spans)]
    return data[:start] + digits.encode() + data[end:]


def _nest(data: bytes, k: int, tag: str, depth: int, closed: bool) -> bytes:
    """``<tag>`` ``depth`` times after the k-th tag (closed again, or left open)."""
    ends = [m.end() for m in _XML_TAG.finditer(data)]
    at = ends[k % len(ends)] if ends else 0
    opened, closing = f"<{tag}>".encode() * depth, f"</{tag}>".encode() * depth if closed else b""
    return data[:at] + opened + closing + data[at:]


def _drop_tag(data: bytes, k: int) -> bytes:
    """The k-th start or end tag removed: an element left unclosed, or an end tag without start."""
    spans = [m.span() for m in _XML_TAG.finditer(data)]
    if not spans:
        return data
    start, end = spans[k % len(spans)]
    return data[:start] + data[end:]


OPS = {
    "flip": _flip,
    "insert": _insert,
    "delete": _delete,
    "repeat": _repeat,
    "cut": _cut,
    "field": _field,
    "number": _number,
    "nest": _nest,
    "drop_tag": _drop_tag,
}


def damage(seed: bytes, ops) -> bytes:
    for op, *args in ops:
        seed = OPS[op](seed, *args)
    return seed


positions = st.integers(0, 1 << 16)  # taken modulo the length of what they apply to
SNIPPETS = [
    b'\n<?xml version="1.0"?>\n',
    b"\n<?xml",
    b"<?xml",
    b"<",
    b">",
    b"</",
    b"&",
    b"&#0;",
    b"&#xD800;",
    b"&nosuch;",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"\x00",
    b"\n",
    b'"',
    b"{",
    b"}",
    b"[",
    b'"\\ud800"',
    b"\r\n",
    b"\xef\xbb\xbf",
]
INVALID_UTF8 = [
    b"\x80",
    b"\xbf",
    b"\xc0\xaf",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe",
    b"\xff",
]
byte_op = st.one_of(
    st.tuples(st.just("flip"), positions, st.integers(1, 255)),
    st.tuples(
        st.just("insert"), positions, st.sampled_from(SNIPPETS + INVALID_UTF8) | st.binary(min_size=1, max_size=8)
    ),
    st.tuples(st.just("delete"), positions, st.integers(1, 64)),
    st.tuples(st.just("repeat"), positions, st.integers(1, 512)),
)
FILLERS = [
    "",
    "0",
    "9",
    "-",
    "1-",
    "x",
    " ",
    "\t\n",
    "é",
    "\u2028",
    "\U0001f600",
    "&amp;",
    "&",
    "<",
    "\x00",
    "claim 1 ",
    "any preceding claim ",
    "CLM-0000",
    "EP-",
    "US",
]
fillers = st.sampled_from(FILLERS) | st.text(max_size=3)
field_op = st.tuples(st.just("field"), positions, fillers, st.integers(0, 20_000))
numbers = st.integers(0, 10**12).map(str) | st.builds(lambda n: "9" * n, st.integers(1, 6000))  # up to 6,000 digits
number_op = st.tuples(st.just("number"), positions, numbers)
TAGS = [
    "a",
    "p",
    "b",
    "claim",
    "claim-text",
    "claims",
    "abstract",
    "description",
    "document-id",
    "doc-number",
    "us-patent-grant",
    "SDOBI",
    "B110",
    "patent-document",
    "sequence-cwu",
]
tag_op = st.one_of(
    st.tuples(st.just("nest"), positions, st.sampled_from(TAGS), st.integers(1, 3000), st.booleans()),
    st.tuples(st.just("drop_tag"), positions),
)


# --- every format: truncation, byte damage, invalid UTF-8 ---------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", [*BYTE_FORMATS, "parquet"])
@fuzz(200)
@given(cut=positions)
def test_a_truncated_file_is_read_or_skipped_with_a_reason(fmt, cut):
    shown(fmt=fmt, cut=cut)
    check(fmt, damage(SEEDS[fmt], [("cut", cut)]))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", [*BYTE_FORMATS, "parquet"])
@fuzz(300)
@given(ops=st.lists(byte_op, min_size=1, max_size=4))
def test_flipped_inserted_deleted_or_repeated_bytes_are_read_or_skipped_with_a_reason(fmt, ops):
    shown(fmt=fmt, ops=ops)
    check(fmt, damage(SEEDS[fmt], ops))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", BYTE_FORMATS)
@fuzz(150)
@given(at=positions, bad=st.sampled_from(INVALID_UTF8))
@example(
    at=1279, bad=b"\x80"
)  # ep: after "Muster & Partner" the offset named was the repaired record's, 4 bytes on (the "&amp;")
def test_a_record_with_invalid_utf8_is_skipped_with_a_reason_naming_the_offset(fmt, at, bad):
    shown(fmt=fmt, at=at, bad=bad)
    reading = check(fmt, damage(SEEDS[fmt], [("insert", at, bad)]))
    skipped = {s.position: s.reason for s in reading.skipped}
    for record in reading.records:
        if isinstance(record, SkippedRecord) or (offset := first_non_utf8(record.payload)) is None:
            continue
        assert record.position in skipped  # the generic check: never read
        declared = _ENCODING.search(record.payload[:200])
        if fmt == "jsonl" or (declared and declared.group(1).lower() == b"utf-8"):
            assert skipped[record.position].startswith(f"non-UTF-8 bytes at offset {offset} "), skipped[record.position]


# --- XML: huge or empty fields, nested, unclosed or missing tags ----------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", XML_FORMATS)
@fuzz(250)
@given(ops=st.lists(field_op | number_op, min_size=1, max_size=3))
@example(
    ops=[("number", 600, "9999999999")]
)  # uspto: claim 3 numbered 9,999,999,999 (int32 of documents.parquet: ArrowInvalid)
@example(ops=[("number", 61, "1" * 5000)])  # uspto: a claim-ref idref of 5,000 digits (int(): ValueError)
@example(
    ops=[("number", 133, "9999999999")]
)  # ep: claim 4 "of any preceding claim" numbered 9,999,999,999 (all before it: MemoryError)
def test_huge_or_empty_xml_fields_are_read_or_skipped_with_a_reason(fmt, ops):
    shown(fmt=fmt, ops=ops)
    check(fmt, damage(SEEDS[fmt], ops))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", XML_FORMATS)
@fuzz(150)
@given(ops=st.lists(tag_op, min_size=1, max_size=3))
def test_deeply_nested_unclosed_or_missing_xml_tags_are_read_or_skipped_with_a_reason(fmt, ops):
    shown(fmt=fmt, ops=ops)
    check(fmt, damage(SEEDS[fmt], ops))


# --- JSON lines: fields of any type, size and depth ------------------------------------------------------------------------------


def _seed_rows() -> list[dict[str, str]]:
    """The fixture's lines that are JSON objects, each field as its JSON text."""
    rows = []
    for line in SEEDS["jsonl"].splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append({name: json.dumps(value) for name, value in row.items()})
    return rows


SEED_ROWS = _seed_rows()
FIELD_NAMES = sorted(
    {name for names in tabular._ALIASES.values() for name in names} | {"year", "examiner"}
)  # every alias, and unknown fields
big_ints = st.integers(2**31, 2**70) | st.integers(-(2**70), -(2**31))
json_scalars = st.none() | st.booleans() | st.integers() | big_ints | st.floats() | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
claim_texts = st.sampled_from(["A widget.", "The widget of claim 1.", "The widget of any preceding claim."]) | st.text(
    max_size=30
)
claim_objects = st.lists(
    st.fixed_dictionaries(
        {"text": claim_texts | json_values},
        optional={
            "num": json_values | big_ints,
            "independent": json_values,
            "depends_on": json_values | st.lists(st.integers() | big_ints, max_size=3),
        },
    ),
    max_size=3,
)
ODD_JSON = [
    '"\\ud800"',
    '"x\\udc00y"',
    '["\\ud83d"]',
    '"\\ud83d\\ude00"',
    "1e999",
    "-0",
    "NaN",
    "-Infinity",
    '"\\u0000"',
    '""',
    "[]",
    "{}",
    "null",
    "true",
    "0",
    "[[]]",
    '[""]',
    "[{}]",
    '{"name": 1}',
]
json_texts = st.one_of(
    json_values.map(json.dumps),
    claim_objects.map(json.dumps),
    st.sampled_from(ODD_JSON),
    st.builds(lambda n: "9" * n, st.integers(1, 6000)),  # a number of any length
    st.builds(lambda filler, n: json.dumps(filler * n), fillers, st.integers(0, 20_000)),  # an empty or huge string
    st.builds(
        lambda d, inner: "[" * d + inner + "]" * d,
        st.integers(1, 5000),
        st.sampled_from(['"x"', "1", "", '{"name": "x"}']),
    ),
    st.builds(lambda d: '{"a": ' * d + "1" + "}" * d, st.integers(1, 5000)),
)


def jsonl_with(edits) -> bytes:
    """The seed rows with ``edits`` applied: ``(row, field, JSON text)``, the row modulo their number."""
    rows = [dict(row) for row in SEED_ROWS]
    for k, name, text in edits:
        rows[k % len(rows)][name] = text
    lines = ("{" + ", ".join(f"{json.dumps(name)}: {text}" for name, text in row.items()) + "}\n" for row in rows)
    return "".join(lines).encode("utf-8")


@pytest.mark.timeout(120)
@fuzz(400)
@given(
    edits=st.lists(
        st.tuples(positions, st.sampled_from(FIELD_NAMES), json_texts)
        | st.tuples(positions, st.just("claims"), claim_objects.map(json.dumps)),
        min_size=1,
        max_size=5,
    )
)
@example(edits=[(0, "abstract", "[" * 5000 + '"x"' + "]" * 5000)])  # json.loads: RecursionError
@example(
    edits=[(0, "abstract", "[" * 900 + "]" * 900)]
)  # json.loads reads it; _string's recursion over it did not (RecursionError)
@example(edits=[(0, "title", "9" * 4301)])  # json.loads: ValueError (Python's 4,300-digit limit on int())
@example(edits=[(0, "ipc", "5")])  # _codes iterated a number: TypeError
@example(edits=[(0, "id", '"\\ud800"')])  # a lone surrogate: a str no UTF-8 file holds (UnicodeEncodeError writing it)
@example(edits=[(0, "claims", '[{"text": "A widget.", "depends_on": false}]')])  # TypeError
@example(edits=[(0, "claims", '[{"text": "A widget.", "depends_on": ":"}]')])  # ValueError
@example(
    edits=[(0, "claims", '[{"text": "A widget.", "depends_on": [2147483648]}]')]
)  # int32 of documents.parquet: OverflowError
def test_jsonl_fields_of_any_type_size_or_depth_are_read_or_skipped_with_a_reason(edits):
    shown(edits=edits)
    reading = check("jsonl", jsonl_with(edits))
    assert len(reading.records) == len(SEED_ROWS)


# --- Parquet: columns of any type --------------------------------------------------------------------------------------------------

CLAIM_STRUCT = pa.struct(
    [("num", pa.int64()), ("text", pa.string()), ("independent", pa.bool_()), ("depends_on", pa.list_(pa.int64()))]
)
int64s = st.integers(-(2**63), 2**63 - 1)
ARROW_COLUMNS = [  # an Arrow type, and values of it
    (pa.int64(), int64s),
    (pa.float64(), st.floats()),
    (pa.bool_(), st.booleans()),
    (pa.string(), st.text(max_size=20) | st.builds(lambda filler, n: filler * n, fillers, st.integers(0, 20_000))),
    (pa.binary(), st.binary(max_size=20) | st.sampled_from(INVALID_UTF8)),
    (pa.list_(pa.string()), st.lists(st.text(max_size=10), max_size=3)),
    (pa.list_(pa.int64()), st.lists(int64s, max_size=3)),
    (pa.date32(), st.dates()),
    (pa.timestamp("us"), st.datetimes()),
    (pa.struct([("name", pa.string())]), st.fixed_dictionaries({"name": st.text(max_size=10)})),
    (
        pa.list_(CLAIM_STRUCT),
        st.lists(
            st.fixed_dictionaries(
                {
                    "num": int64s,
                    "text": st.text(max_size=30),
                    "independent": st.booleans(),
                    "depends_on": st.lists(int64s, max_size=3),
                }
            ),
            max_size=3,
        ),
    ),
]


def kind_of(arrow_type: pa.DataType) -> int:
    return next(i for i, (t, _) in enumerate(ARROW_COLUMNS) if t == arrow_type)


@st.composite
def arrow_columns(draw):
    """``(name, type index, 3 values)``: a column that replaces or joins the seed's."""
    kind = draw(st.integers(0, len(ARROW_COLUMNS) - 1))
    values = draw(st.lists(st.none() | ARROW_COLUMNS[kind][1], min_size=3, max_size=3))
    return draw(st.sampled_from(FIELD_NAMES)), kind, values


def parquet_with(columns) -> bytes:
    table = PARQUET_SEED
    for name, kind, values in columns:
        if name in table.column_names:
            table = table.drop_columns([name])
        table = table.append_column(name, pa.array(values, type=ARROW_COLUMNS[kind][0]))
    return parquet_bytes(table)


@pytest.mark.timeout(120)
@fuzz(250)
@given(columns=st.lists(arrow_columns(), min_size=1, max_size=4))
@example(
    columns=[("ipc", kind_of(pa.timestamp("us")), [dt.datetime(2000, 1, 1), None, None])]
)  # _codes iterated a datetime: TypeError
def test_parquet_columns_of_any_type_are_read_or_skipped_with_a_reason(columns):
    shown(columns=columns)
    reading = check("parquet", parquet_with(columns))
    assert reading.stopped is None and len(reading.records) == PARQUET_SEED.num_rows


# --- ingest: records repeated (duplicate ids) and damaged, every one accounted once -------------------------------------------


def records_of(fmt: str) -> list[bytes]:
    """The seed's records as bytes, each ending in a newline (so that any order of them splits the same)."""
    if fmt == "jsonl":
        pieces = SEEDS[fmt].splitlines(keepends=True)
    else:
        pieces = [piece for _, piece in split_stream(io.BytesIO(SEEDS[fmt]))]
    return [p if p.endswith(b"\n") else p + b"\n" for p in pieces]


def reordered(fmt: str, order: list[int]) -> bytes:
    """The seed's records in ``order`` (indices modulo their number): repeats give duplicate ids."""
    if fmt == "parquet":
        return parquet_bytes(PARQUET_SEED.take([i % PARQUET_SEED.num_rows for i in order]))
    pieces = records_of(fmt)
    return b"".join(pieces[i % len(pieces)] for i in order)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", [*BYTE_FORMATS, "parquet"])
@fuzz(25)
@given(order=st.lists(st.integers(0, 8), min_size=1, max_size=8), ops=st.lists(byte_op, max_size=2))
def test_ingest_lists_every_record_of_a_damaged_file_with_repeated_ids_once(fmt, order, ops):
    shown(fmt=fmt, order=order, ops=ops)
    data = damage(reordered(fmt, order), ops)
    reading = check(fmt, data)
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / f"{NAME}.{SUFFIX[fmt]}", Path(tmp) / "corpus"
        path.write_bytes(data)
        report = ingest([path], out, IngestConfig(format=fmt), progress=False)
        errors = read_errors(out)
        written = [doc.id for doc in iter_documents(out)]
    read_ids = [parsed.document.id for _, parsed in reading.documents]
    repeats = len(read_ids) - len(set(read_ids))
    assert written == list(dict.fromkeys(read_ids))  # the first of each id, in file order
    assert (
        report.records_seen
        == len(reading.records) + (reading.stopped is not None)
        == report.records_written + report.skipped
    )
    assert report.skipped == len(errors) == len(reading.skipped) + repeats + (reading.stopped is not None)
    assert sum(e["reason"].startswith("duplicate id ") for e in errors) == repeats
    assert all(e["reason"].strip() and not e["reason"].startswith("reader failure") for e in errors), errors
