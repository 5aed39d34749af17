"""The peer vector cache: each distinct text is encoded once per namespace, damaged chunks are re-encoded."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.text.peer_cache import encode_cached, peer_namespace


class CountingEncoder:
    """A stand-in peer: a text's vector is a function of the text alone; every text it is asked for is recorded."""

    def __init__(self, dim: int = 4):
        self.dim, self.seen = dim, []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return np.array([[len(t), t.count("a"), t.count("e"), hash(t) % 7] for t in texts], dtype=np.float32)[:, : self.dim]


def test_second_call_encodes_nothing_and_gives_the_same_vectors(tmp_path):
    enc = CountingEncoder()
    texts = ["a battery cell", "an anode", "a cathode"]
    first, hits = encode_cached(texts, enc, tmp_path, "ns")
    assert hits == 0 and enc.seen == texts
    again, hits = encode_cached(list(reversed(texts)), enc, tmp_path, "ns")
    assert hits == 3 and enc.seen == texts  # nothing new encoded
    np.testing.assert_array_equal(again, first[::-1])


def test_only_missing_and_distinct_texts_are_encoded(tmp_path):
    enc = CountingEncoder()
    encode_cached(["x", "y"], enc, tmp_path, "ns")
    enc.seen.clear()
    out, hits = encode_cached(["y", "z", "z", "w"], enc, tmp_path, "ns")
    assert hits == 1 and enc.seen == ["z", "w"]
    assert out.shape == (4, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out[1], out[2])


def test_namespaces_do_not_share_vectors(tmp_path):
    enc = CountingEncoder()
    encode_cached(["x"], enc, tmp_path, peer_namespace("minilm", "ab" * 32, 256, "float32"))
    _, hits = encode_cached(["x"], enc, tmp_path, peer_namespace("minilm", "ab" * 32, 128, "float32"))
    assert hits == 0 and enc.seen == ["x", "x"]


def test_a_damaged_chunk_is_left_out_with_a_warning_and_encoded_again(tmp_path):
    enc = CountingEncoder()
    encode_cached(["x", "y"], enc, tmp_path, "ns")
    (chunk,) = (tmp_path / "ns").glob("chunk-*.npz")
    data = bytearray(chunk.read_bytes())
    data[-5] ^= 0xFF
    chunk.write_bytes(bytes(data))
    warnings = []
    out, hits = encode_cached(["x", "y"], enc, tmp_path, "ns", warn=warnings.append)
    assert hits == 0 and enc.seen == ["x", "y", "x", "y"]
    assert len(warnings) == 1 and "checksum" in warnings[0]
    np.testing.assert_array_equal(out, enc(["x", "y"]))


def test_without_a_folder_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    enc = CountingEncoder()
    encode_cached(["x"], enc, "", "ns")
    encode_cached(["x"], enc, "", "ns")
    assert enc.seen == ["x", "x"] and not list(tmp_path.iterdir())


def test_a_peer_giving_the_wrong_number_of_vectors_is_refused(tmp_path):
    with pytest.raises(ValueError, match="2 texts"):
        encode_cached(["x", "y"], lambda texts: np.zeros((1, 3)), tmp_path, "ns")


def test_the_evaluation_peer_reads_the_cache_and_loads_no_model(tmp_path, monkeypatch):
    """MiniLMSystem.fit with a cache folder: the second fit over the same texts never loads the peer."""
    from types import SimpleNamespace

    from graphtx.eval import baselines
    from graphtx.eval.systems import DenseSystem

    loads = []
    monkeypatch.setattr(baselines, "load_peer", lambda *a, **k: loads.append(a) or object())
    monkeypatch.setattr(baselines, "encode_texts", lambda model, texts, batch_size: CountingEncoder()(list(texts)))
    monkeypatch.setattr(baselines.MiniLMSystem, "model_path", lambda self: tmp_path)
    monkeypatch.setattr(DenseSystem, "fit", lambda self, corpus: self)
    monkeypatch.setattr(DenseSystem, "set_vectors", lambda self, q, c: setattr(self, "vectors", (q, c)))
    corpus = SimpleNamespace(candidate_texts=("a cell", "an anode"), query_texts=("a cell",), same_texts=False)
    first = baselines.MiniLMSystem(vector_cache_dir=str(tmp_path / "cache")).fit(corpus)
    second = baselines.MiniLMSystem(vector_cache_dir=str(tmp_path / "cache")).fit(corpus)
    assert len(loads) == 1 and first.cached == 1 and second.cached == 3
    np.testing.assert_array_equal(first.vectors[1], second.vectors[1])
