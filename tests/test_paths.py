"""Document ids that look like paths never make `graphtx show --out` or `--explain-png` write outside the chosen folder."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from graphtx.cli import main
from graphtx.corpus.store import TableWriter
from graphtx.graphs.graph import GRAPH_SCHEMA
from graphtx.graphs.parse import GRAPHS_FILE
from graphtx.paths import MAX_STEM, file_in, safe_file_name
from tests.index.fixtures import make_graph, make_model

HOSTILE = [
    "../../x",
    "/etc/passwd",
    "a/b",
    "..",
    ".",
    "a\0b",
    "x" * 5000,
    "",
    ".hidden",
    "..\\..\\win",
    "CON",
    "é/../ü",
]


def test_every_id_maps_to_one_plain_component_and_distinct_ids_to_distinct_names(tmp_path):
    names = [safe_file_name(d, ".png", "01-") for d in HOSTILE + ["US-7315346-B2", "a_b"]]
    for name in names:
        assert "/" not in name and "\\" not in name and "\0" not in name and not name.startswith(".")
        assert len(name) <= MAX_STEM + 10 and name not in (".", "..")
        assert file_in(tmp_path, "x", ".png").parent == tmp_path
    assert len(set(names)) == len(names)  # "a/b" and "a_b" differ
    assert safe_file_name("US-7315346-B2", ".png") == "US-7315346-B2.png"  # a plain id keeps its name


def _hostile_graphs(root, ids, name="graphs"):
    out = root / name
    out.mkdir()
    writer = TableWriter(out / GRAPHS_FILE, GRAPH_SCHEMA, rows_per_group=64)
    for i, doc_id in enumerate(ids):
        for kind in ("description", "first_claim"):
            writer.add(dataclasses.replace(make_graph(i, kind), doc_id=doc_id).to_row())
    writer.close()
    (out / "manifest.json").write_text(json.dumps({"corpus": "", "config": {}}) + "\n")
    return out


def _files_outside(root, folder) -> list[str]:
    return [
        os.path.join(d, f)
        for d, _, fs in os.walk(root)
        for f in fs
        if f.endswith(".png") and not d.startswith(str(folder))
    ]


@pytest.mark.timeout(300)
def test_show_and_explain_png_write_only_inside_the_chosen_folder(tmp_path, capsys):
    ids = [d for d in HOSTILE if "\0" not in d and d] + ["US-1-B1"]  # Parquet strings can hold NUL, but argv cannot
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    graphs = _hostile_graphs(tmp_path, ids)

    pngs = work / "pngs"
    for doc_id in ids:
        assert main(["show", str(graphs), "--id", doc_id, "--out", str(pngs) + "/", "--json"]) == 0
        written = json.loads(capsys.readouterr().out)["png"]
        assert os.path.dirname(written) == str(pngs)
    assert len(list(pngs.glob("*.png"))) == len(ids)
    assert _files_outside(tmp_path, pngs) == [] and not os.path.exists("/etc/passwd-first_claim.png")

    model = make_model(tmp_path)
    index = tmp_path / "index"
    ids = ["../../x", "/etc/passwd", "a/b", "..", "x" * 5000, ".hidden"]  # a few hits keep the rendering short
    graphs = _hostile_graphs(tmp_path, ids, "graphs2")
    assert main(["index", "--model", str(model), "--graphs", str(graphs), "--out", str(index), "--quiet"]) == 0
    capsys.readouterr()
    hits = work / "hits"
    code = main(
        [
            "search",
            "--index",
            str(index),
            "--text",
            "A zorblat3 device comprising a frame.",
            "-k",
            str(len(ids)),
            "--explain-png",
            str(hits),
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert len(summary["png"]) == len(ids) and all(os.path.dirname(p) == str(hits) for p in summary["png"])
    assert len(list(hits.glob("*.png"))) == len(ids) and _files_outside(tmp_path, work) == []
