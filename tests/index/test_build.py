"""Batch indexing: the index directory, incremental add / replace / remove, one model per index."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from graphtx.config import IndexConfig
from graphtx.graphs.parse import iter_graphs
from graphtx.index.build import build_index, remove_documents
from graphtx.index.search import Index
from graphtx.index.store import IndexStore
from graphtx.model.io import fingerprint, load_model
from graphtx.text.bpe import PatentTokenizer
from tests.index.fixtures import N_DOCS, doc_id, make_graphs, make_model


def _stored(index_dir) -> tuple[list[str], np.ndarray]:
    """(doc ids, vectors) of the live documents, in FAISS id order."""
    store = IndexStore(index_dir)
    live = store.live()
    rows = store.read_rows(list(zip(live.part.tolist(), live.row.tolist())), ["vector"])
    return live.doc_id, np.array([r["vector"] for r in rows], np.float32)


def test_index_directory_holds_manifest_ids_vectors_metadata_and_graphs(tiny, tiny_index):
    manifest = json.loads((tiny_index / "manifest.json").read_text())
    model = load_model(tiny["model"]).model
    assert manifest["format"] == "graphtx-index/1" and manifest["metric"] == "inner_product"
    tokenizer = PatentTokenizer.load(tiny["model"])
    assert (
        manifest["model_fingerprint"]
        == fingerprint(model, tokenizer=tokenizer)
        == (tiny["model"] / "fingerprint.txt").read_text().strip()
    )
    assert (
        manifest["model_fingerprint"] != fingerprint(model) and manifest["dim"] == model.out_dim == 48
    )  # the tokenizer is part of it
    assert {"shards/" + s["file"] for s in manifest["shards"]} | {
        manifest["ids_file"],
        "documents/part-000000.parquet",
    } <= set(manifest["checksums"])
    assert manifest["count"] == N_DOCS and manifest["kind"] == "description" and manifest["parts"] == 4  # 120 / 32
    assert {"faiss", "torch", "pyarrow", "python"} <= set(manifest["library_versions"]) and manifest["built_at"]
    ids = pq.read_table(tiny_index / manifest["ids_file"])
    assert ids.column("faiss_id").to_pylist() == list(range(N_DOCS))
    assert ids.column("doc_id").to_pylist() == [doc_id(i) for i in range(N_DOCS)]
    assert (tiny_index / "model" / "fingerprint.txt").exists() and (tiny_index / "bm25" / "graphtx.json").exists()

    # vectors are the model's vectors of the description graphs
    doc_ids, vectors = _stored(tiny_index)
    graphs = list(iter_graphs(tiny["graphs"], kind="description"))
    direct = model.encode(graphs, PatentTokenizer.load(tiny["model"])).numpy()
    np.testing.assert_allclose(vectors, direct, atol=1e-5)

    # metadata from the corpus, the graph itself
    doc = Index.open(tiny_index).document(doc_id(7))
    assert doc.title.startswith("Title zorblat7") and doc.ipc == ("H01M 0/00",) and doc.date == "2017-01-08"
    assert doc.graph == graphs[7]


def test_add_skips_indexed_documents_and_replace_supersedes_them(tiny, tmp_path):
    out = tmp_path / "index"
    cfg = IndexConfig(chunk_size=16, bm25=False)
    first = build_index(tiny["model"], make_graphs(tmp_path, range(0, 40), "a"), out, cfg, progress=False)
    assert (first.added, first.count) == (40, 40)
    more = build_index(tiny["model"], make_graphs(tmp_path, range(30, 60), "b"), out, cfg, progress=False)
    assert (more.added, more.skipped_existing, more.count) == (20, 10, 60)

    # replace: the same ids with other graphs get new vectors, nothing is duplicated
    changed = make_graphs(tmp_path, range(50, 70), "c", seed=1)
    rep = build_index(tiny["model"], changed, out, cfg, replace=True, progress=False)
    assert (rep.added, rep.replaced, rep.count) == (20, 10, 70)
    ids, vectors = _stored(out)
    assert len(ids) == len(set(ids)) == 70
    model = load_model(tiny["model"]).model
    want = model.encode(list(iter_graphs(changed, kind="description")), PatentTokenizer.load(tiny["model"])).numpy()
    got = dict(zip(ids, vectors))
    np.testing.assert_allclose(np.stack([got[doc_id(i)] for i in range(50, 70)]), want, atol=1e-5)
    index = Index.open(out)
    assert (
        index.document(doc_id(55)).graph.node_text
        == next(g for g in iter_graphs(changed, kind="description") if g.doc_id == doc_id(55)).node_text
    )


def test_remove_takes_documents_out_of_search_and_lookup(tiny, tmp_path):
    out = tmp_path / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=50), progress=False)
    target = doc_id(5)
    report = remove_documents(out, [target, "NOT-THERE"])
    assert (report.removed, report.not_found, report.count) == (1, ("NOT-THERE",), N_DOCS - 1)
    index = Index.open(out)
    assert target not in index and len(index) == N_DOCS - 1
    with pytest.raises(KeyError, match="not in the index"):
        index.document(target)
    hits = index.search(
        graph=next(g for g in iter_graphs(tiny["graphs"], kind="description") if g.doc_id == target), k=N_DOCS
    )
    assert target not in [h.doc_id for h in hits] and len(hits) == N_DOCS - 1
    # removing again: nothing to do, still consistent; the removed id can be added back
    assert remove_documents(out, [target]).not_found == (target,)
    again = build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=50), progress=False)
    assert (again.added, again.count) == (1, N_DOCS)


def test_an_index_refuses_another_model(tiny, tiny_index, tmp_path):
    other = make_model(tmp_path, seed=1, name="other")
    with pytest.raises(ValueError, match="vectors of two models cannot share an index"):
        build_index(other, tiny["graphs"], tiny_index, IndexConfig(), progress=False)
    with pytest.raises(ValueError, match="not the model index .* was built with"):
        Index.open(tiny_index, model=other)


def test_shards_are_searched_as_one(tiny, tiny_index, tmp_path):
    out = tmp_path / "sharded"
    report = build_index(
        tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=10, shard_size=25, bm25=False), progress=False
    )
    assert report.shards == 6  # parts of 10 documents, at most 25 documents a shard: 2 parts a shard
    one, many = Index.open(tiny_index), Index.open(out)
    for i in (0, 17, 99):
        a = one.search(doc_id=doc_id(i), k=15)
        b = many.search(doc_id=doc_id(i), k=15)
        assert [h.doc_id for h in a] == [h.doc_id for h in b]
        np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=1e-6)


def test_only_changed_shards_are_rebuilt(tiny, tmp_path):
    out = tmp_path / "index"
    cfg = IndexConfig(chunk_size=10, shard_size=40, bm25=False)
    build_index(tiny["model"], make_graphs(tmp_path, range(0, 80), "a"), out, cfg, progress=False)
    before = {s["file"] for s in json.loads((out / "manifest.json").read_text())["shards"]}
    report = remove_documents(out, [doc_id(3)])  # shard 0 only; done in place for a flat index
    after = {s["file"] for s in json.loads((out / "manifest.json").read_text())["shards"]}
    assert report.rebuilt_shards == 1 and len(before & after) == 1
    assert sorted(p.name for p in (out / "shards").glob("*.faiss")) == sorted(after)  # old files deleted


def test_missing_inputs_are_clear_errors(tiny, tmp_path):
    with pytest.raises(FileNotFoundError, match="not a graphs directory"):
        build_index(tiny["model"], tmp_path / "nope", tmp_path / "i", IndexConfig(), progress=False)
    with pytest.raises(FileNotFoundError, match="not an index directory"):
        Index.open(tmp_path / "nothing")
    with pytest.raises(ValueError, match="index_type must be"):
        IndexConfig(index_type="annoy")
