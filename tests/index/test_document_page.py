"""The whole document (`/view/ID`, `graphtx show --index`): every claim, the description, and its citations within the index."""

from __future__ import annotations

import json

import pytest

from graphtx.corpus.schema import Citation, Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter
from tests.index.fixtures import doc_id, make_graph, make_graphs, make_model

N = 12


@pytest.fixture(scope="module")
def cited_index(tmp_path_factory):
    """12 documents, each with three claims (1 and 3 independent) and a description; document i cites i - 1 and an outside id."""
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index

    root = tmp_path_factory.mktemp("cited")
    with CorpusWriter(root / "corpus") as w:
        for i in range(N):
            g = make_graph(i)
            claims = (
                Claim(1, f"A {g.node_text[0]} comprising a pump.", True),
                Claim(2, "The device of claim 1, wherein the pump is small.", False),
                Claim(3, f"A method of making a {g.node_text[1]}.", True),
            )
            doc = PatentDocument(
                doc_id(i),
                "test",
                "-",
                title=f"Title {i}",
                abstract=f"An abstract about a {g.node_text[1]}.",
                claims=claims,
                description=f"FIELD\n\nThe {g.node_text[1]} of document {i} holds a valve seat.\n\n"
                + "More text. " * 50,
                date=f"20{10 + i:02d}-01-01",
            )
            cites = (Citation(doc.id, doc_id(i - 1), source="tsv"),) if i else ()
            w.add_document(doc, (*cites, Citation(doc.id, "US-1-A", source="tsv")), "-", str(i))
    graphs = make_graphs(root, range(N), corpus=root / "corpus")
    out = root / "index"
    build_index(make_model(root), graphs, out, IndexConfig(chunk_size=5, document_max_chars=300), progress=False)
    return out


def test_a_document_has_every_claim_its_description_and_its_citations_in_the_index(cited_index):
    from graphtx.index.search import Index

    doc = Index.open(cited_index).document(doc_id(5))
    assert [(c["number"], c["independent"]) for c in doc.claims] == [(1, True), (2, False), (3, True)]
    assert doc.description.startswith("FIELD") and len(doc.description) == 300  # cut at index.document_max_chars
    assert doc.cites == (doc_id(4), "US-1-A") and [d for d, _ in doc.cited_in_index] == [
        doc_id(4)
    ]  # US-1-A is not indexed
    assert doc.citing_in_index == ((doc_id(6), "Title 6"),)
    body = doc.to_json(graph=False)
    assert body["cited"] == [{"doc_id": doc_id(4), "title": "Title 4"}] and len(body["claims"]) == 3


def test_show_prints_the_whole_document_with_the_query_words_marked(cited_index, capsys):
    from graphtx.cli import main

    assert main(["show", "--index", str(cited_index), "--id", doc_id(5), "--query", "a valve seat with a pump"]) == 0
    out = capsys.readouterr().out
    assert "claims (3; independent: 1, 3):" in out and "1 (independent):" in out and "2: The device of claim 1" in out
    assert "[valve] [seat]" in out and "[pump]" in out and "[with]" not in out  # stop words are not marked
    assert (
        f"cites, in this index: {doc_id(4)} (Title 4)" in out
        and f"cited by, in this index: {doc_id(6)} (Title 6)" in out
    )
    assert "it cites 2 documents in all; 1 are not in this index" in out
    assert main(["show", "--index", str(cited_index), "--id", doc_id(5), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["citing"] == [{"doc_id": doc_id(6), "title": "Title 6"}]
    assert main(["show", "--id", doc_id(5)]) == 2  # neither a graphs directory nor --index
    assert "give a graphs directory" in capsys.readouterr().err
