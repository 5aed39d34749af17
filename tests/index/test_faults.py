"""Damaged index files: a clear error naming the file and the mend, never silently wrong hits.

Each test copies one tiny finished index, damages one file the way a disk, a copy or a hand
edit does (truncation, one flipped byte, id-map rows rotated by one, two tokenizer ids
swapped), and checks the Python API (``IntegrityError``), the CLI (exit 2, one message line,
no traceback), ``graphtx index --verify`` (lists the file) and, where the file is derived from
the stored documents, the repair ``graphtx index --out DIR --rebuild``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig
from graphtx.errors import IntegrityError
from graphtx.index.build import build_index
from graphtx.index.search import Index
from tests.index.fixtures import make_graphs

QUERY = "T-00007"


def truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def flip_byte(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def pristine(tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("pristine") / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=40), progress=False)
    hits = [h.doc_id for h in Index.open(out).search(doc_id=QUERY, k=5)]
    return out, hits


@pytest.fixture
def index(pristine, tmp_path):
    out = tmp_path / "index"
    shutil.copytree(pristine[0], out)
    return out


def manifest_of(index: Path) -> dict:
    return json.loads((index / "manifest.json").read_text())


def shard_of(index: Path) -> Path:
    return index / "shards" / manifest_of(index)["shards"][0]["file"]


def ids_of(index: Path) -> Path:
    return index / manifest_of(index)["ids_file"]


def assert_refused(index: Path, damaged: str, mend: str, capsys) -> None:
    """The API raises IntegrityError naming ``damaged`` and ``mend``; the CLI exits 2 with one clean line."""
    with pytest.raises(IntegrityError, match=mend) as err:
        Index.open(index).search(doc_id=QUERY, k=5)
    assert damaged in str(err.value)
    capsys.readouterr()
    assert main(["search", "--index", str(index), "--id", QUERY, "-k", "5"]) == 2
    captured = capsys.readouterr()
    assert (
        damaged in captured.err
        and re.search(mend, captured.err)
        and "Traceback" not in captured.err
        and captured.out == ""
    )


def assert_verify_lists(index: Path, damaged: str, capsys) -> None:
    capsys.readouterr()
    assert main(["index", "--out", str(index), "--verify"]) == 2
    err = capsys.readouterr().err
    assert f"damaged: {index}" in err and damaged in err


def assert_repaired(index: Path, expected_hits: list[str], capsys) -> None:
    assert main(["index", "--out", str(index), "--rebuild", "--quiet"]) == 0
    assert main(["index", "--out", str(index), "--verify"]) == 0
    capsys.readouterr()
    assert [h.doc_id for h in Index.open(index).search(doc_id=QUERY, k=5)] == expected_hits


@pytest.mark.parametrize("damage", [truncate, flip_byte], ids=["truncated", "byte-flipped"])
def test_a_damaged_faiss_shard_is_refused_listed_and_repaired(pristine, index, damage, capsys):
    shard = shard_of(index)
    damage(shard)
    assert_refused(index, shard.name, r"graphtx index --out .* --rebuild", capsys)
    assert_verify_lists(index, shard.name, capsys)
    assert_repaired(index, pristine[1], capsys)


@pytest.mark.parametrize("damage", ["truncated", "byte-flipped", "rotated"])
def test_a_damaged_id_map_is_refused_never_wrong_hits(pristine, index, damage, capsys):
    path = ids_of(index)
    if damage == "truncated":
        truncate(path)
    elif damage == "byte-flipped":
        flip_byte(path, 0.3)
    else:  # rows of doc ids rotated by one against their FAISS ids: a valid file, every hit would be its neighbour
        table = pq.read_table(path)
        pq.write_table(
            table.set_column(
                1, "doc_id", pa.array(np.roll(np.array(table.column("doc_id").to_pylist(), dtype=object), 1).tolist())
            ),
            path,
        )
    assert_refused(index, path.name, r"graphtx index --out .* --rebuild", capsys)
    assert_verify_lists(index, path.name, capsys)
    assert_repaired(index, pristine[1], capsys)


def test_a_truncated_manifest_is_refused_and_repaired(pristine, index, capsys):
    truncate(index / "manifest.json")
    assert_refused(index, "manifest.json", "not valid JSON", capsys)
    assert_repaired(index, pristine[1], capsys)


def test_a_changed_manifest_is_refused(pristine, index, capsys):
    text = (index / "manifest.json").read_text()
    (index / "manifest.json").write_text(text.replace('"count": 120', '"count": 119'))  # still valid JSON
    assert_refused(index, "manifest.json", "do not match its manifest_sha256", capsys)
    assert_repaired(index, pristine[1], capsys)


@pytest.mark.parametrize("damage", [truncate, flip_byte], ids=["truncated", "byte-flipped"])
def test_damaged_model_weights_in_the_index_are_refused(index, damage, capsys):
    damage(index / "model" / "model.pt")
    assert_refused(index, "model.pt", "graphtx index --model MODEL --graphs GRAPHS", capsys)
    assert_verify_lists(index, "model.pt", capsys)


def swap_two_token_ids(path: Path) -> None:
    tok = json.loads(path.read_text())
    vocab = tok["model"]["vocab"]
    a, b = sorted(vocab, key=vocab.get)[10:12]
    vocab[a], vocab[b] = vocab[b], vocab[a]
    path.write_text(json.dumps(tok))


def test_a_tokenizer_with_two_ids_swapped_is_refused(index, capsys):
    swap_two_token_ids(index / "model" / "tokenizer.json")
    assert_refused(index, "tokenizer.json", "graphtx index --model MODEL", capsys)
    (index / "model" / "checksums.json").unlink()  # the model's own record gone too: the index's record still names it
    assert_refused(index, "model/checksums.json", "build the index again", capsys)


def test_the_tokenizer_belongs_to_the_fingerprint(tiny, index, tmp_path, capsys):
    """A consistent model directory whose tokenizer differs (same weights) is another model: search refuses it."""
    from graphtx.model.io import load_model, save_model

    tokens = tmp_path / "tokens"
    tokens.mkdir()
    shutil.copy(tiny["model"] / "tokenizer.json", tokens / "tokenizer.json")
    swap_two_token_ids(tokens / "tokenizer.json")
    model = load_model(tiny["model"]).model
    other = save_model(tmp_path / "other", model, tokenizer=tokens / "tokenizer.json")
    assert (other / "fingerprint.txt").read_text() != (tiny["model"] / "fingerprint.txt").read_text()
    with pytest.raises(ValueError, match="not the model index"):
        Index.open(index, model=other)
    assert main(["search", "--index", str(index), "--id", QUERY, "--model", str(other)]) == 2
    assert "not the model index" in capsys.readouterr().err


def test_a_byte_flipped_document_part_is_found_on_first_read_and_by_verify(index, capsys):
    parts = sorted((index / "documents").glob("part-*.parquet"))
    flip_byte(parts[0], 0.4)
    ix = Index.open(index)  # sizes match: parts are hashed when first read, not at open
    with pytest.raises(IntegrityError, match="part-000000.parquet"):
        ix.search(doc_id="T-00001", k=3)  # its row lives in the first part
    assert_verify_lists(index, "part-000000.parquet", capsys)
    # --rebuild remakes derived files from the parts: it reads the damaged part's vectors, so it refuses, naming the part
    assert main(["index", "--out", str(index), "--rebuild", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "part-000000.parquet" in err and "build the index again into a new directory" in err
    assert main(["index", "--out", str(index), "--verify"]) == 2
    assert "build the index again into a new directory" in capsys.readouterr().err


def test_verify_reports_a_sound_index(index, capsys):
    assert main(["index", "--out", str(index), "--verify", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ok"] and summary["files"] >= 5


@pytest.mark.parametrize("damage", [truncate, flip_byte], ids=["truncated", "byte-flipped"])
def test_damaged_graphs_parquet_is_refused_by_index_and_encode(tiny, tmp_path, damage, capsys):
    graphs = make_graphs(tmp_path, range(20))
    damage(graphs / "graphs.parquet")
    with pytest.raises(IntegrityError, match=r"graphs.parquet .*graphtx parse"):
        build_index(tiny["model"], graphs, tmp_path / "index", progress=False)
    assert not (tmp_path / "index").exists()  # nothing written
    assert (
        main(["index", "--model", str(tiny["model"]), "--graphs", str(graphs), "--out", str(tmp_path / "index")]) == 2
    )
    err = capsys.readouterr().err
    assert "graphs.parquet" in err and "graphtx parse" in err and "Traceback" not in err
    assert (
        main(["encode", "--model", str(tiny["model"]), "--graphs", str(graphs), "--out", str(tmp_path / "v.parquet")])
        == 2
    )
    assert "graphs.parquet" in capsys.readouterr().err
