"""--engine ray against --engine local: the same graphs directory and the same index, on a local Ray (make test-slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig, ParseConfig
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter
from graphtx.graphs.parse import iter_graphs, parse_corpus

pytest.importorskip("ray", reason="Ray is the optional extra: pip install 'graphtx[ray]' (its tests run in make test-slow)")
pytestmark = pytest.mark.slow

CLAIMS = [
    "A snowthrower comprising: an auger housing; and a chute mounted on the auger housing.",
    "A battery pack comprising a plurality of cells and a cooling plate in contact with the cells.",
    "A bicycle comprising a frame, a chain and a rear wheel driven by the chain.",
]


@pytest.fixture()
def corpus(tmp_path):
    out = tmp_path / "corpus"
    with CorpusWriter(out) as w:
        for i in range(9):
            w.add_document(PatentDocument(f"US-{i}-B1", "test", "-", title=f"Doc {i}", claims=(Claim(1, CLAIMS[i % 3], True),),
                                          description=f"The housing {i} is rotatable.\nAn engine drives the auger."), (), "-", str(i))  # fmt: skip
        w.add_document(PatentDocument("EMPTY-9", "test", "-"), (), "-", "9")  # no text: listed in errors.jsonl by both engines
        w.add_document(PatentDocument("DE-10", "test", "-", lang="de", abstract="Ein Akku mit Zellen."), (), "-", "10")
    return out


def _manifest(graphs_dir):
    manifest = json.loads((graphs_dir / "manifest.json").read_text())
    manifest.pop("seconds"), manifest.pop("manifest_sha256")  # the time taken, and the seal over it
    return manifest


@pytest.mark.timeout(240)
def test_parse_on_ray_writes_the_same_graphs_directory(corpus, tmp_path, ray_local):
    local = parse_corpus(corpus, tmp_path / "local", ParseConfig(workers=1), progress=False)
    on_ray = parse_corpus(corpus, tmp_path / "ray", ParseConfig(workers=2, chunk_size=2), progress=False, engine="ray")
    assert (on_ray.documents, on_ray.graphs, on_ray.skipped) == (local.documents, local.graphs, local.skipped) == (9, 27, 2)
    assert list(iter_graphs(tmp_path / "ray")) == list(iter_graphs(tmp_path / "local"))  # same ids, same graphs, same order
    assert (tmp_path / "ray" / "graphs.parquet").read_bytes() == (tmp_path / "local" / "graphs.parquet").read_bytes()
    assert (tmp_path / "ray" / "errors.jsonl").read_text() == (tmp_path / "local" / "errors.jsonl").read_text()
    cfg = dict(_manifest(tmp_path / "local")["config"], workers=2, chunk_size=2)
    assert _manifest(tmp_path / "ray") == dict(_manifest(tmp_path / "local"), config=cfg)  # checksums included
    assert not (tmp_path / "ray" / ".partial").exists()


@pytest.mark.timeout(240)
def test_cli_parse_engine_ray(corpus, tmp_path, ray_local, capsys):
    assert main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--engine", "ray", "--workers", "2", "--json"]) == 3  # skips -> 3
    assert json.loads(capsys.readouterr().out)["graphs"] == 27


@pytest.mark.timeout(240)
def test_index_on_ray_gives_the_same_ids_and_search_results(tmp_path, ray_local):
    from graphtx.index.build import build_index
    from graphtx.index.search import Index
    from graphtx.index.store import IndexStore
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    cfg = IndexConfig(chunk_size=8, shard_size=25)
    local = build_index(model, graphs, tmp_path / "local", cfg, progress=False)
    on_ray = build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    assert (on_ray.added, on_ray.count, on_ray.shards) == (local.added, local.count, local.shards) == (60, 60, 3)
    a, b = IndexStore(tmp_path / "local").read_versions(), IndexStore(tmp_path / "ray").read_versions()
    assert a.column("doc_id").to_pylist() == b.column("doc_id").to_pylist()
    assert a.column("faiss_id").to_pylist() == b.column("faiss_id").to_pylist()
    one, two = Index.open(tmp_path / "local"), Index.open(tmp_path / "ray")
    for i in (0, 13, 59):
        x, y = one.search(doc_id=doc_id(i), k=10), two.search(doc_id=doc_id(i), k=10)
        assert [h.doc_id for h in x] == [h.doc_id for h in y]
        np.testing.assert_allclose([h.score for h in x], [h.score for h in y], atol=1e-6)


@pytest.mark.timeout(240)
def test_encode_on_ray_writes_the_same_vectors(tmp_path, ray_local):
    from graphtx.model.embed import read_vectors
    from tests.index.fixtures import make_graphs, make_model

    graphs, model = make_graphs(tmp_path, range(40)), make_model(tmp_path)
    common = ["encode", "--model", str(model), "--graphs", str(graphs), "--batch-size", "2", "--quiet"]  # 32 graphs a chunk: 2 chunks
    assert main([*common, "--out", str(tmp_path / "local.parquet")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray", "--ray-workers", "2"]) == 0
    (ids_a, va, meta_a), (ids_b, vb, meta_b) = read_vectors(tmp_path / "local.parquet"), read_vectors(tmp_path / "ray.parquet")
    assert ids_a == ids_b and len(ids_a) == 40 and meta_a == meta_b
    np.testing.assert_array_equal(va, vb)

