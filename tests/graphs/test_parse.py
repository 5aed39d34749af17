"""The parse stage end to end: corpus directory -> graphs directory -> objects, and the CLI."""

from __future__ import annotations

import json

import pytest

from graphtx.cli import main
from graphtx.config import ParseConfig
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter, read_errors
from graphtx.graphs.parse import iter_graphs, load_graph, parse_corpus

CLAIM = "A snowthrower comprising: an auger housing; and a chute mounted on the auger housing."


@pytest.fixture()
def corpus(tmp_path):
    out = tmp_path / "corpus"
    with CorpusWriter(out) as w:
        w.add_document(
            PatentDocument(
                "US-1-B1",
                "test",
                "-",
                title="Snowthrower",
                claims=(Claim(1, CLAIM, True),),
                description="The chute is rotatable.\nAn engine drives the auger.",
            ),
            (),
            "-",
            "1",
        )
        w.add_document(
            PatentDocument("EV-2", "test", "-", abstract="A battery pack comprising cells and a cooling plate."),
            (),
            "-",
            "2",
        )
        w.add_document(PatentDocument("EMPTY-3", "test", "-"), (), "-", "3")
    return out


def test_parse_writes_three_graphs_per_document_and_lists_skips(corpus, tmp_path, builder):
    report = parse_corpus(corpus, tmp_path / "graphs", ParseConfig(), progress=False)
    assert (report.documents, report.graphs, report.skipped) == (2, 6, 1)
    errors = read_errors(tmp_path / "graphs")
    assert [(e["id"], "no text" in e["reason"]) for e in errors] == [("EMPTY-3", True)]
    graphs = list(iter_graphs(tmp_path / "graphs"))
    assert sorted((g.doc_id, g.kind) for g in graphs) == sorted(
        (d, k) for d in ("US-1-B1", "EV-2") for k in ("first_claim", "all_claims", "description")
    )
    first = load_graph(tmp_path / "graphs", "US-1-B1", "first_claim")
    assert ("chute", "part_of", "snowthrower") in first.edge_texts()
    assert load_graph(tmp_path / "graphs", "EV-2", "description").text_source == "abstract"
    manifest = json.loads((tmp_path / "graphs" / "manifest.json").read_text())
    assert manifest["graphs"] == {"first_claim": 2, "all_claims": 2, "description": 2}
    from graphtx.integrity import file_entry

    assert manifest["checksums"] == {
        "graphs.parquet": file_entry(tmp_path / "graphs" / "graphs.parquet")
    }  # verified by every reader


def test_two_workers_give_the_same_graphs(corpus, tmp_path):
    parse_corpus(corpus, tmp_path / "g1", ParseConfig(workers=1), progress=False)
    parse_corpus(corpus, tmp_path / "g2", ParseConfig(workers=2, chunk_size=1), progress=False)
    assert list(iter_graphs(tmp_path / "g1")) == list(iter_graphs(tmp_path / "g2"))


def test_cli_parse_and_show(corpus, tmp_path, capsys):
    assert main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--quiet"]) == 3  # one document skipped
    png = tmp_path / "g.png"
    assert main(["show", str(tmp_path / "g"), "--id", "US-1-B1", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "chute  --part_of-->  snowthrower" in capsys.readouterr().out


def test_cli_show_unknown_id_is_a_clear_error(corpus, tmp_path, capsys):
    main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--quiet"])
    assert main(["show", str(tmp_path / "g"), "--id", "NOPE"]) == 2
    assert "no first_claim graph for id 'NOPE'" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "g"), "--id", "US-1-B2", "--out", str(tmp_path / "x.png")]) == 2
    assert "did you mean US-1-B1?" in capsys.readouterr().err
    assert (
        main(["show", str(tmp_path / "g"), "--id", "us1b1", "--out", str(tmp_path / "x.png")]) == 0
    )  # a typed id finds US-1-B1


def test_cli_parse_of_a_missing_corpus_is_a_clear_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "missing"), "--out", str(tmp_path / "g"), "--quiet"]) == 2
    assert "run `graphtx ingest` first" in capsys.readouterr().err


def test_documents_not_in_english_are_flagged_and_skipped_unless_a_pipeline_is_named(tmp_path, capsys):
    out = tmp_path / "corpus"
    german = "Schneefräse mit einem Schneckengehäuse und einem Auswurfschacht."
    with CorpusWriter(out) as w:
        w.add_document(
            PatentDocument("EP-1-B1", "test", "-", abstract="A battery pack comprising cells.", lang="en"), (), "-", "1"
        )
        w.add_document(PatentDocument("EP-2-B1", "test", "-", abstract=german, lang="de"), (), "-", "2")
        w.add_document(
            PatentDocument("X-3", "test", "-", abstract="A valve comprising a seat."), (), "-", "3"
        )  # no language: English
        w.add_document(PatentDocument("EP-4-A1", "test", "-", abstract="Un moteur.", lang="FR"), (), "-", "4")
    assert main(["parse", str(out), "--out", str(tmp_path / "g"), "--quiet"]) == 3  # finished, some skipped
    said = capsys.readouterr().out
    assert "not English, not parsed: 1 in 'de', 1 in 'fr'" in said
    errors = {e["id"]: e["reason"] for e in read_errors(tmp_path / "g")}
    assert (
        set(errors) == {"EP-2-B1", "EP-4-A1"}
        and "language 'de' is not English" in errors["EP-2-B1"]
        and "parse.languages" in errors["EP-2-B1"]
    )
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert manifest["languages"] == {"de": 1, "en": 1, "fr": 1, "unknown": 1} and manifest["skipped_languages"] == {
        "de": 1,
        "fr": 1,
    }
    assert {g.doc_id for g in iter_graphs(tmp_path / "g")} == {"EP-1-B1", "X-3"}

    # a pipeline named for German parses it (here the English pipeline stands in: only German ships nowhere)
    cfg = tmp_path / "de.yaml"
    cfg.write_text(f"parse:\n  languages: {{de: {ParseConfig().spacy_model}}}\n")
    assert main(["parse", str(out), "--out", str(tmp_path / "g2"), "--config", str(cfg), "--quiet"]) == 3
    assert {g.doc_id for g in iter_graphs(tmp_path / "g2")} == {"EP-1-B1", "EP-2-B1", "X-3"}
    assert json.loads((tmp_path / "g2" / "manifest.json").read_text())["skipped_languages"] == {"fr": 1}
    with pytest.raises(ValueError, match="parse.languages must map a language code"):
        ParseConfig(languages=["de"])
