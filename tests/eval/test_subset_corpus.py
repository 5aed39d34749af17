"""benchmarks/studies/subset_corpus.py: a citation set's documents, then seeded random others, records unchanged."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import subset_corpus  # noqa: E402  (our own script: it imports or the test fails, never skips)

IDS = [f"US-{i}" for i in range(20)]


@pytest.mark.timeout(30)
def test_every_cited_and_citing_document_is_kept_and_the_fill_is_seeded():
    keep = {"US-3", "US-17"}
    a = subset_corpus.choose(IDS, keep, 8, seed=0)
    assert keep <= a and len(a) == 8 and a <= set(IDS)
    assert subset_corpus.choose(IDS, keep, 8, seed=0) == a
    assert any(subset_corpus.choose(IDS, keep, 8, seed=s) != a for s in range(1, 6))


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("keep", "size", "message"),
    [({"US-99"}, 5, "not in the corpus"), ({"US-1", "US-2"}, 1, "below"), (set(), 21, "above")],
)
def test_impossible_subsets_are_refused_with_the_reason(keep, size, message):
    with pytest.raises(ValueError, match=message):
        subset_corpus.choose(IDS, keep, size, seed=0)


@pytest.mark.timeout(30)
def test_the_subset_file_holds_the_chosen_records_whole_and_in_order(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    source = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": IDS, "title": [f"t{i}" for i in range(20)]}), source)
    cites = tmp_path / "c.tsv"
    cites.write_text("citing_id\tcited_id\nUS-12\tUS-4\n", encoding="utf-8")
    out = tmp_path / "sub" / "s.parquet"
    assert subset_corpus.main([str(source), str(cites), "--size", "6", "--seed", "1", "--out", str(out)]) == 0
    sub = pq.read_table(out).to_pydict()
    assert {"US-12", "US-4"} <= set(sub["id"]) and len(sub["id"]) == 6
    assert sub["id"] == sorted(sub["id"], key=IDS.index)  # the source's order
    assert all(t == f"t{i.split('-')[1]}" for i, t in zip(sub["id"], sub["title"]))
    assert subset_corpus.main([str(source), str(cites), "--size", "1", "--out", str(out)]) == 2  # refused, file kept
    assert len(pq.read_table(out)) == 6


@pytest.mark.timeout(30)
def test_drop_leaves_the_named_columns_out_and_refuses_unknown_ones_or_the_id(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    source = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": IDS, "abstract": ["a"] * 20, "description": ["d"] * 20}), source)
    cites = tmp_path / "c.tsv"
    cites.write_text("US-12\tUS-4\n", encoding="utf-8")
    out = tmp_path / "abs.parquet"
    assert (
        subset_corpus.main([str(source), str(cites), "--size", "20", "--drop", "description", "--out", str(out)]) == 0
    )
    table = pq.read_table(out)
    assert table.column_names == ["id", "abstract"] and table.column("id").to_pylist() == IDS  # every record, in order
    for bad in ("claims", "id"):
        assert subset_corpus.main([str(source), str(cites), "--size", "20", "--drop", bad, "--out", str(out)]) == 2
    assert pq.read_table(out).column_names == ["id", "abstract"]  # a refused run leaves the file as it was
