"""Corpus texts, citation files and judgements: what is scored and what is not, and why."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.config import EvalConfig, config_from_dict
from graphtx.corpus.citations import read_citations
from graphtx.corpus.schema import CITATION_SCHEMA, Citation, Claim, PatentDocument
from graphtx.eval.data import EvalCorpus, citation_graph, document_text, iter_raw_documents, judgements


def doc(doc_id, **fields):
    return PatentDocument(doc_id, "test", "-", **fields)


def test_document_text_joins_fields_and_falls_back():
    d = doc(
        "A",
        title="Valve",
        abstract="A valve seat.",
        claims=(Claim(1, "A valve comprising a seat.", True),),
        description="Long text.",
    )
    assert document_text(d, ("title", "abstract")) == "Valve\nA valve seat."
    assert document_text(d, ("first_claim",)) == "A valve comprising a seat."
    assert document_text(doc("B", description="Only a description."), ("title", "abstract")) == "Only a description."
    with pytest.raises(ValueError, match="unknown text field"):
        document_text(d, ("abstrakt",))


def test_corpus_is_in_id_order_and_rejects_duplicates():
    corpus = EvalCorpus.from_documents([doc("b", abstract="x", cpc=("H01M 10/44",)), doc("a", abstract="y")])
    assert corpus.ids == ("a", "b") and corpus.candidate_texts == ("y", "x") and corpus.codes == ((), ("H01M 10/44",))
    assert corpus.rows(["b", "a"]).tolist() == [1, 0] and "a" in corpus and corpus.same_texts
    with pytest.raises(ValueError, match="appears twice"):
        EvalCorpus.from_documents([doc("a", abstract="x"), doc("a", abstract="y")])


def test_raw_jsonl_documents_keep_their_text_verbatim(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": 17, "abstract": "mol. wt. &gt; 52.   USE -  x", "cpc": "H01M 10/44; B60L 50/64"}\n\n{"id": "b", "claims": ["first", "second"]}\n'
    )
    a, b = iter_raw_documents(path)
    assert a.id == "17" and a.abstract == "mol. wt. &gt; 52.   USE -  x" and a.cpc == ("H01M 10/44", "B60L 50/64")
    assert b.first_claim == "first" and len(b.claims) == 2
    assert EvalCorpus.load(path).ids == ("17", "b")
    path.write_text('{"abstract": "no id"}\n')
    with pytest.raises(ValueError, match="line 1"):
        list(iter_raw_documents(path))


def test_read_citations_from_tsv_parquet_and_corpus_dir(tmp_path):
    (tmp_path / "c.tsv").write_text("citing_id\tcited_id\n2008A\t2001B\n2008A\t2002C\n")
    assert [(c.citing_id, c.cited_id, c.category) for c in read_citations(tmp_path / "c.tsv")] == [
        ("2008A", "2001B", "unknown"),
        ("2008A", "2002C", "unknown"),
    ]
    (tmp_path / "c.csv").write_text("2008A,2001B,X\n")  # no header: citing, cited, category
    assert read_citations(tmp_path / "c.csv")[0].category == "X"
    table = pa.Table.from_pylist(
        [{"citing_id": "q", "cited_id": "d", "category": "Y", "source": "t"}], schema=CITATION_SCHEMA
    )
    (tmp_path / "corpus").mkdir()
    pq.write_table(table, tmp_path / "corpus" / "citations.parquet")
    assert read_citations(tmp_path / "corpus")[0] == Citation("q", "d", "Y", "t")  # the source is kept
    assert read_citations(tmp_path / "corpus" / "citations.parquet")[0].category == "Y"
    (tmp_path / "bad.tsv").write_text("citing_id\tcited_id\n2008A\n")
    with pytest.raises(ValueError, match="line 2"):
        read_citations(tmp_path / "bad.tsv")
    with pytest.raises(FileNotFoundError):
        read_citations(tmp_path / "nope.tsv")


def test_judgements_count_what_is_not_scored():
    corpus = EvalCorpus.from_documents([doc(i, abstract="t") for i in ("a", "b", "c", "q", "r")])
    cites = [
        Citation("q", "a", "X"),
        Citation("q", "b", "A"),
        Citation("q", "a", "A"),  # duplicate pair: the higher gain stays
        Citation("q", "q"),
        Citation("q", "zz"),
        Citation("zz", "a"),
        Citation("r", "c", "A"),
    ]
    binary = judgements(cites, corpus)
    assert binary.relevant == {"q": {"a": 1.0, "b": 1.0}, "r": {"c": 1.0}} and binary.pairs == 3
    assert binary.skipped == {
        "self-citation": 1,
        "cited document not in the corpus": 1,
        "citing document not in the corpus": 1,
        "duplicate pair": 1,
    }
    graded = judgements(cites, corpus, EvalConfig(gains={"X": 3, "A": 0}))  # A: not relevant at all
    assert graded.relevant == {"q": {"a": 3.0}} and graded.query_ids == ["q"]
    assert graded.skipped["category gain 0"] == 2  # q-b and r-c
    assert citation_graph(cites)["q"] == {"a", "b", "zz"}


def test_eval_config_from_yaml_and_checks():
    cfg = config_from_dict(
        {"eval": {"gains": {"X": 3, "Y": 2}, "recall_ks": [10, 20], "query_fields": ["abstract"]}}
    ).eval
    assert cfg.gains == (("X", 3.0), ("Y", 2.0)) and cfg.gain("X") == 3.0 and cfg.gain("A") == 1.0
    assert cfg.recall_ks == (10, 20) and cfg.query_fields == ("abstract",)
    for bad, match in (
        ({"gains": {"Q": 1}}, "unknown citation"),
        ({"depth": 100}, "depth"),
        ({"query_fields": ["abstrakt"]}, "query_fields"),
        ({"tune_metric": "MAP"}, "tune_metric"),
        ({"minilm_dtype": "fp16"}, "minilm_dtype"),
    ):
        with pytest.raises(ValueError, match=match):
            config_from_dict({"eval": bad})
