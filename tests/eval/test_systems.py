"""graphtx as a system under evaluation: vectors files, a model + graphs directory, the index hook."""

from __future__ import annotations

import sys
import types

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from graphtx.corpus.schema import PatentDocument
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import ModelSystem, VectorSystem, index_system, l2_normalise
from graphtx.model.embed import vectors_schema


def write_vectors(path, ids, vectors, fingerprint="fp"):
    vectors = np.asarray(vectors, dtype=np.float32)
    schema = vectors_schema(vectors.shape[1], fingerprint)
    table = pa.table(
        {
            "doc_id": ids,
            "kind": ["first_claim"] * len(ids),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1]),
        },
        schema=schema,
    )
    pq.write_table(table, path)
    return path


def corpus_of(ids):
    return EvalCorpus.from_documents([PatentDocument(i, "test", "-", abstract=i) for i in ids])


def test_vector_system_is_cosine_and_marks_missing_documents(tmp_path):
    corpus = corpus_of(["a", "b", "c", "d"])
    vectors = [[1, 0], [3, 4], [0, 2]]
    path = write_vectors(tmp_path / "v.parquet", ["a", "b", "c", "zz"], vectors + [[1, 1]])  # zz: not in the corpus
    system = VectorSystem(path).fit(corpus)
    s = system.scores(np.array([0, 3]))
    assert s[0, :3].tolist() == pytest.approx([1.0, 0.6, 0.0]) and s[0, 3] == -np.inf  # d has no vector: last
    assert s[1].tolist() == [0.0, 0.0, 0.0, -np.inf]  # a query without a vector ranks by id only
    assert (
        system.info()["candidates_without_vector"] == 1
        and system.info()["vectors"]["query"]["model_fingerprint"] == "fp"
    )


def test_vector_system_with_separate_query_and_candidate_files(tmp_path):
    corpus = corpus_of(["a", "b"])
    q = write_vectors(tmp_path / "q.parquet", ["a", "b"], [[1, 0], [0, 1]])
    c = write_vectors(tmp_path / "c.parquet", ["a", "b"], [[0, 1], [1, 0]])
    assert VectorSystem(q, c).fit(corpus).scores(np.array([0]))[0].tolist() == [0.0, 1.0]
    other = write_vectors(tmp_path / "o.parquet", ["a", "b"], [[0, 1], [1, 0]], fingerprint="other")
    with pytest.raises(ValueError, match="different models"):
        VectorSystem(q, other).fit(corpus)
    with pytest.raises(ValueError, match="none of its"):
        VectorSystem(write_vectors(tmp_path / "x.parquet", ["x"], [[1, 0]])).fit(corpus)
    with pytest.raises(FileNotFoundError, match="graphtx encode"):
        VectorSystem(tmp_path / "nope.parquet")
    with pytest.raises(FileNotFoundError, match="graphs directory"):
        ModelSystem(tmp_path, tmp_path / "graphs")


def test_zero_vectors_stay_zero():
    assert l2_normalise(np.array([[0.0, 0.0], [3.0, 4.0]])).tolist() == [[0.0, 0.0], [0.6, 0.8]]


def test_index_hook_without_graphtx_index_says_what_to_do_instead(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphtx.index", None)  # as if graphtx.index did not exist
    with pytest.raises(ValueError, match="--vectors or --model"):
        index_system(tmp_path, tmp_path)


@pytest.fixture(scope="module")
def model_dirs(tiny_pretrained, tmp_path_factory):
    """A model (init-model) over the shared tokens, and the vectors `graphtx encode` writes of the shared graphs."""
    from graphtx.cli import main

    root = tmp_path_factory.mktemp("model_system")
    (root / "tiny.yaml").write_text(
        yaml.safe_dump({"model": {"node_dim": 32, "heads": 2, "layers": 1, "base_dim": 24, "reduced_dim": 0}})
    )
    assert (
        main(
            [
                "init-model",
                "--config",
                str(root / "tiny.yaml"),
                "--tokens",
                str(tiny_pretrained / "tokens"),
                "--out",
                str(root / "model"),
                "--quiet",
            ]
        )
        == 0
    )
    for kind in ("first_claim", "description"):
        out = str(root / f"{kind}.parquet")
        assert (
            main(
                [
                    "encode",
                    "--model",
                    str(root / "model"),
                    "--graphs",
                    str(tiny_pretrained / "graphs"),
                    "--kind",
                    kind,
                    "--out",
                    out,
                    "--quiet",
                ]
            )
            == 0
        )
    return root


def test_model_system_equals_the_vectors_graphtx_encode_writes(model_dirs, tiny_pretrained):
    corpus = EvalCorpus.load(tiny_pretrained / "corpus")
    from_model = ModelSystem(model_dirs / "model", tiny_pretrained / "graphs").fit(corpus)
    from_files = VectorSystem(model_dirs / "first_claim.parquet", model_dirs / "description.parquet").fit(corpus)
    rows = np.arange(len(corpus))
    np.testing.assert_allclose(from_model.scores(rows), from_files.scores(rows), atol=1e-5)
    info = from_model.info()
    assert (
        info["query_kind"] == "first_claim"
        and info["candidate_kind"] == "description"
        and info["candidates_without_vector"] == 0
    )
    assert info["model_fingerprint"] == from_files.meta["query"]["model_fingerprint"]


def test_index_hook_uses_the_model_an_index_opens(model_dirs, tiny_pretrained, monkeypatch):
    """The hook needs only Index.open(path) -> .model, .tokenizer, .manifest["kind"] (a stand-in here)."""
    from graphtx.model.io import load_model

    opened = []

    class Index:
        @classmethod
        def open(cls, path):
            opened.append(path)
            index = cls()
            loaded_dir = load_model(model_dirs / "model")
            index.model, index.tokenizer = loaded_dir.model, loaded_dir.tokenizer
            index.manifest = {"kind": "first_claim"}
            return index

    monkeypatch.setitem(sys.modules, "graphtx.index", types.SimpleNamespace(Index=Index))
    corpus = EvalCorpus.load(tiny_pretrained / "corpus")
    system = index_system(model_dirs / "model", tiny_pretrained / "graphs")  # a directory standing in for the index
    system.fit(corpus)
    assert (
        opened == [model_dirs / "model"]
        and system.candidate_kind == "first_claim"
        and system.label == "graphtx (index model)"
    )
    same = VectorSystem(model_dirs / "first_claim.parquet").fit(corpus)
    np.testing.assert_allclose(system.scores(np.arange(3)), same.scores(np.arange(3)), atol=1e-5)
    with pytest.raises(ValueError, match="--graphs"):
        index_system(model_dirs / "model", None)
