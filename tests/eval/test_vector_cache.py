"""The model-vector cache: a second evaluation of the same model over the same graphs encodes nothing; anything that
changes the vectors (model, graphs, kind, documents) is a miss; a damaged file is encoded again, not trusted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtx.eval.vector_cache import cached_vectors, vector_key


def _graphs(tmp_path, sha="a" * 64):
    d = tmp_path / "graphs"
    d.mkdir(exist_ok=True)
    (d / "manifest.json").write_text(json.dumps({"checksums": {"graphs.parquet": {"size": 1, "sha256": sha}}}))
    return d


class _Encoder:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return ["US-1", "US-2"], np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.timeout(30)
def test_the_same_model_and_graphs_encode_once(tmp_path):
    graphs, encode = _graphs(tmp_path), _Encoder()
    key = vector_key("f" * 64, graphs, "description", {"US-2", "US-1"})
    first = cached_vectors(key, encode)
    again = cached_vectors(
        vector_key("f" * 64, graphs, "description", ["US-1", "US-2"]), encode
    )  # same documents, any order
    assert encode.calls == 1 and first[0] == again[0] == ["US-1", "US-2"]
    np.testing.assert_array_equal(first[1], again[1])


@pytest.mark.timeout(30)
def test_what_changes_the_vectors_changes_the_key(tmp_path):
    graphs = _graphs(tmp_path)
    base = vector_key("f" * 64, graphs, "description", {"US-1"})
    assert base != vector_key("e" * 64, graphs, "description", {"US-1"})  # another model
    assert base != vector_key("f" * 64, graphs, "first_claim", {"US-1"})  # another kind
    assert base != vector_key("f" * 64, graphs, "description", {"US-1", "US-3"})  # other documents
    assert base != vector_key("f" * 64, _graphs(tmp_path, "b" * 64), "description", {"US-1"})  # re-parsed graphs
    (graphs / "manifest.json").unlink()
    assert vector_key("f" * 64, graphs, "description", {"US-1"}) == ""  # content unknown: never cached


@pytest.mark.timeout(30)
def test_a_damaged_cache_file_is_encoded_again_and_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRAPHTX_MODEL_VECTOR_CACHE", str(tmp_path / "cache"))
    encode, key = _Encoder(), vector_key("f" * 64, _graphs(tmp_path), "description", None)
    cached_vectors(key, encode)
    (tmp_path / "cache" / f"{key}.npz").write_bytes(b"not a numpy file")
    ids, vectors = cached_vectors(key, encode)
    assert encode.calls == 2 and ids == ["US-1", "US-2"] and vectors.shape == (2, 3)
    assert "does not read" in capsys.readouterr().err
    cached_vectors(key, encode)  # rewritten whole: read again
    assert encode.calls == 2


@pytest.mark.timeout(30)
def test_an_empty_cache_variable_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHTX_MODEL_VECTOR_CACHE", "")
    encode, key = _Encoder(), vector_key("f" * 64, _graphs(tmp_path), "description", None)
    cached_vectors(key, encode)
    cached_vectors(key, encode)
    assert encode.calls == 2
