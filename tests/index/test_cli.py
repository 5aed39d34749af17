"""`graphtx index` and `graphtx search` end to end, exit codes and messages."""

from __future__ import annotations

import json
import shutil

from graphtx.cli import main
from tests.index.fixtures import N_DOCS, make_model


def test_index_then_search_by_id_text_hybrid_and_explain(tiny, tmp_path, capsys):
    out = tmp_path / "index"
    assert (
        main(
            [
                "index",
                "--model",
                str(tiny["model"]),
                "--graphs",
                str(tiny["graphs"]),
                "--out",
                str(out),
                "--chunk-size",
                "16",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["count"] == N_DOCS and summary["reports"][0]["added"] == N_DOCS

    assert main(["search", "--index", str(out), "--id", "T-00003", "-k", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (
        len(result["hits"]) == 3
        and result["query"]["source"] == "id"
        and "T-00003" not in [h["doc_id"] for h in result["hits"]]
    )

    claims = tmp_path / "claims.txt"
    claims.write_text(
        "1. A zorblat5 device comprising a chute, a frame and a handle.\n2. The device of claim 1, wherein the chute rotates.\n"
    )
    png = tmp_path / "png"
    code = main(
        [
            "search",
            "--index",
            str(out),
            "--file",
            str(claims),
            "-k",
            "2",
            "--hybrid",
            "--explain",
            "--explain-png",
            str(png),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0 and "hybrid" in text and "query feature" in text
    assert len(list(png.glob("*.png"))) == 2

    assert main(["search", "--index", str(out), "--text", "A zorblat5 device.", "-k", "100", "--hybrid", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert next(h for h in hits if h["bm25_rank"] == 1)["doc_id"] == "T-00005"  # its rare word: BM25 finds it


def test_remove_and_bad_usage_exit_codes(tiny, tiny_index, tmp_path, capsys):
    assert main(["index", "--out", str(tiny_index)]) == 2
    assert "nothing to do" in capsys.readouterr().err
    assert main(["search", "--index", str(tiny_index), "--id", "NOPE"]) == 2
    assert "'NOPE' is not in the index" in capsys.readouterr().err
    other = make_model(tmp_path, seed=3, name="other")
    assert main(["search", "--index", str(tiny_index), "--id", "T-00001", "--model", str(other)]) == 2
    assert "not the model index" in capsys.readouterr().err
    assert main(["search", "--index", str(tmp_path / "none"), "--id", "T-00001"]) == 2
    assert "not an index directory" in capsys.readouterr().err

    copy = tmp_path / "copy"
    assert (
        main(["index", "--model", str(tiny["model"]), "--graphs", str(tiny["graphs"]), "--out", str(copy), "--quiet"])
        == 0
    )
    capsys.readouterr()
    assert main(["index", "--out", str(copy), "--remove", "T-00001", "NOPE", "--json"]) == 3  # one id was not there
    summary = json.loads(capsys.readouterr().out)
    assert summary["count"] == N_DOCS - 1 and summary["reports"][0]["not_found"] == ["NOPE"]


def test_index_bm25_alone_persists_the_bm25_state(tiny, tmp_path, capsys):
    out = tmp_path / "index"
    assert (
        main(["index", "--model", str(tiny["model"]), "--graphs", str(tiny["graphs"]), "--out", str(out), "--quiet"])
        == 0
    )
    capsys.readouterr()
    shutil.rmtree(out / "bm25")  # as an index built with index.bm25: false
    assert main(["index", "--out", str(out), "--bm25", "--quiet"]) == 0
    assert "BM25 state of 120 documents" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["bm25"]["digest"] == manifest["live_digest"] and manifest["count"] == N_DOCS
    assert (out / "bm25" / "graphtx.json").exists()


def test_index_into_an_existing_index_takes_its_model(tiny, tmp_path, capsys):
    from tests.index.fixtures import make_graphs

    out = tmp_path / "index"
    first = make_graphs(tmp_path, range(10), name="first")
    more = make_graphs(tmp_path, range(10, 14), name="more")
    assert (
        main(["index", "--graphs", str(first), "--out", str(out), "--quiet"]) == 2
    )  # nothing to take a model from yet
    assert "--graphs needs --model" in capsys.readouterr().err
    assert main(["index", "--model", str(tiny["model"]), "--graphs", str(first), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert (
        main(["index", "--graphs", str(more), "--out", str(out), "--quiet", "--json"]) == 0
    )  # no --model: the index's own
    assert json.loads(capsys.readouterr().out)["count"] == 14
    other = make_model(tmp_path, seed=3, name="other")
    assert main(["index", "--model", str(other), "--graphs", str(more), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "cannot share an index" in err and "leave out --model" in err
