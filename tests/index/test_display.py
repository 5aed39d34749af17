"""Readable hits: the fields a corpus has (full title, abstract, first claim, applicants, dates, classes,
family, link) in the API, JSON and CLI; fields it lacks left out; old index parts without them still read."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from graphtx.index.display import ABSTRACT_LINES, hit_lines
from graphtx.index.results import Hit

LONG = " ".join(f"word{i}" for i in range(200))


def test_hit_lines_show_what_the_hit_has():
    hit = Hit(
        rank=1,
        doc_id="EP-1-B1",
        score=0.5,
        title="A title " + "very long " * 12 + "end",
        date="2001-02-03",
        ipc=("H01M 10/44",),
        abstract=LONG,
        first_claim="A battery comprising a cell.",
        applicants=("Acme GmbH", "Foo Inc."),
        priority_date="1999-01-01",
        family_id="F7",
        link="https://x/EP1B1",
    )
    text = "\n".join(hit_lines(hit))
    assert "very long end" in text  # the title in full, not cut
    assert "applicants: Acme GmbH; Foo Inc." in text and "priority 1999-01-01" in text and "family F7" in text
    assert "IPC H01M 10/44" in text and "CPC" not in text  # no CPC codes: no CPC line
    assert "filed" not in text and "kind" not in text  # fields the corpus lacks are not shown blank
    assert "claim: A battery comprising a cell." in text and "https://x/EP1B1" in text
    abstract = [line for line in hit_lines(hit) if "word" in line]
    assert len(abstract) == ABSTRACT_LINES and abstract[-1].endswith("(--full: all)")
    full = [line for line in hit_lines(hit, full=True) if "word" in line]
    assert len(full) > ABSTRACT_LINES and "word199" in full[-1]


def test_json_leaves_out_empty_fields():
    out = Hit(rank=1, doc_id="X", score=0.1, title="t", abstract="an abstract").to_json()
    assert out["abstract"] == "an abstract"
    assert not {"applicants", "priority_date", "family_id", "link", "first_claim", "ranker_explanation"} & set(out)


def test_search_hits_carry_corpus_fields(tiny_index, capsys):
    from graphtx.cli import main
    from graphtx.config import SearchConfig
    from graphtx.index.search import Index

    index = Index.open(tiny_index, search=SearchConfig(link_template="https://patents.google.com/patent/{id_compact}"))
    hit = index.search(doc_id="T-00003", k=1)[0]
    assert (
        hit.abstract.startswith("A zorblat")
        and hit.first_claim.startswith("A zorblat")
        and hit.link.endswith(hit.doc_id.replace("-", ""))
    )
    assert hit.applicants == () and hit.priority_date == ""  # the tiny corpus has none
    record = index.document("T-00003")
    assert record.abstract.startswith("A zorblat3 device") and "abstract" in record.to_json(graph=False)
    assert (
        main(
            [
                "search",
                "--index",
                str(tiny_index),
                "--id",
                "T-00003",
                "-k",
                "2",
                "--json",
                "--quiet",
                "--link-template",
                "https://x/{id}",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert all(h["link"] == f"https://x/{h['doc_id']}" and h["first_claim"] for h in hits)
    assert all("applicants" not in h and "priority_date" not in h for h in hits)
    assert (
        main(
            [
                "search",
                "--index",
                str(tiny_index),
                "--id",
                "T-00003",
                "-k",
                "1",
                "--quiet",
                "--link-template",
                "https://x/{nope}",
            ]
        )
        == 2
    )
    assert "unknown placeholder {nope}" in capsys.readouterr().err


def test_corpus_with_applicants_and_dates_flows_into_hits(tiny, tmp_path):
    """A corpus that has the schema's newer columns (applicants, priority date, family, country): hits show them."""
    import shutil

    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index
    from graphtx.index.search import Index

    corpus = tmp_path / "corpus"
    shutil.copytree(tiny["corpus"], corpus)
    path = corpus / "documents.parquet"
    table = pq.read_table(path)
    n = table.num_rows
    table = table.append_column("applicants", pa.array([["Acme GmbH"]] * n, pa.list_(pa.string())))
    table = table.append_column("priority_date", pa.array(["2001-05-06"] * n)).append_column(
        "country", pa.array(["EP"] * n)
    )
    table = table.set_column(
        table.schema.get_field_index("family_id"), "family_id", pa.array([f"F{i}" for i in range(n)])
    )
    pq.write_table(table, path)
    out = tmp_path / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=64), corpus_dir=corpus, progress=False)
    hit = Index.open(out).search(doc_id="T-00003", k=1)[0]
    assert (
        hit.applicants == ("Acme GmbH",)
        and hit.priority_date == "2001-05-06"
        and hit.country == "EP"
        and hit.family_id.startswith("F")
    )
    assert hit.to_json()["applicants"] == ["Acme GmbH"]


def test_parts_written_before_the_display_columns_read_as_empty(tmp_path):
    from graphtx.index.store import IndexStore

    store = IndexStore(tmp_path)
    store.parts_dir.mkdir(parents=True)
    pq.write_table(pa.table({"faiss_id": [0], "doc_id": ["A"], "title": ["old"]}), store.part_path(0))
    row = store.read_rows([(0, 0)], ["title", "abstract", "applicants"])[0]
    assert row == {"title": "old", "abstract": None, "applicants": None}
