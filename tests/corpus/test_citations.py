"""Citation files: the TSV/CSV dialect ingest reads line by line, and the one reader every stage uses."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.corpus import citations
from graphtx.corpus.citations import citation_category, read_citations
from graphtx.corpus.schema import CITATION_SCHEMA, Citation
from tests.corpus.test_tabular import SHARED, needs, read


def read_lines(path):
    return read(path, citations.iter_raw_citations, citations.parse_citations)


def test_citation_lines(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(
        b"cited_id,citing_id,category\n"  # header in another order
        b"B1,A1,x\n"
        b"B2,A1,examiner\n"
        b"B3,A2,cited by applicant\n"
        b"B4,A2,whatever\n"
        b"B5\n"
        b"B6,A\xff3\n"
    )
    records = read_lines(path)
    assert [position for position, _, _ in records] == [f"line {n}" for n in range(2, 8)]
    parsed = [
        (p.document, [(c.citing_id, c.cited_id, c.category, c.source) for c in p.citations]) for _, p, _ in records[:4]
    ]
    assert parsed == [
        (None, [("A1", "B1", "X", "tsv")]),
        (None, [("A1", "B2", "examiner", "tsv")]),
        (None, [("A2", "B3", "applicant", "tsv")]),
        (None, [("A2", "B4", "unknown", "tsv")]),
    ]
    assert records[4][2] == "expected citing_id and cited_id, tab- or comma-separated"
    assert records[5][2].startswith("non-UTF-8 bytes at offset 4 (ff")


def test_tsv_without_header(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("A1\tB1\tY\nA2\tB2\n")
    records = read_lines(path)
    assert [(c.citing_id, c.cited_id, c.category) for _, p, _ in records for c in p.citations] == [
        ("A1", "B1", "Y"),
        ("A2", "B2", "unknown"),
    ]


def test_ev_battery_citations():
    folder = SHARED / "citations-ev-battery"
    train = read_lines(needs(folder / "citations_train.tsv"))
    validation = read_lines(needs(folder / "citations_validation.tsv"))
    assert (len(train), len(validation)) == (4010, 661)
    assert [r for _, _, r in train + validation if r] == []
    first = train[0][1].citations[0]
    assert (first.citing_id, first.cited_id, first.category) == ("2004281796", "2005777716", "unknown")
    assert train[0][0] == "line 2"


def test_the_reader_takes_a_file_a_parquet_or_a_corpus_and_names_bad_input(tmp_path):
    (tmp_path / "c.csv").write_text("cited_id,citing_id,category\nB,A,x\nD,C,cited by examiner\n")
    assert read_citations(tmp_path / "c.csv") == [Citation("A", "B", "X", "tsv"), Citation("C", "D", "examiner", "tsv")]
    pq.write_table(
        pa.table({"citing_id": ["A"], "cited_id": ["B"]}), tmp_path / "bare.parquet"
    )  # category and source optional
    assert read_citations(tmp_path / "bare.parquet") == [Citation("A", "B", "unknown", "")]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "documents.parquet").write_bytes(b"")
    assert read_citations(corpus) == []  # a corpus without citations
    pq.write_table(
        pa.Table.from_pylist(
            [{"citing_id": "q", "cited_id": "d", "category": "Y", "source": "t"}], schema=CITATION_SCHEMA
        ),
        corpus / "citations.parquet",
    )
    assert read_citations(corpus) == [Citation("q", "d", "Y", "t")]
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(FileNotFoundError, match="not a corpus directory"):
        read_citations(tmp_path / "empty_dir")
    pq.write_table(pa.table({"a": [1]}), tmp_path / "other.parquet")
    with pytest.raises(ValueError, match=r"other\.parquet: not a citations Parquet file .*its columns are a"):
        read_citations(tmp_path / "other.parquet")
    (tmp_path / "bad.tsv").write_text("A\tB\nonly-one\n")
    with pytest.raises(
        ValueError, match=r"bad\.tsv: line 2: expected citing_id and cited_id, tab- or comma-separated, got 'only-one'"
    ):
        read_citations(tmp_path / "bad.tsv")


def test_category_labels():
    assert [
        citation_category(x) for x in ("x", "X,Y", "cited by examiner", "cited by third party", "whatever", None)
    ] == [
        "X",
        "X",
        "examiner",
        "other",
        "unknown",
        "unknown",
    ]
