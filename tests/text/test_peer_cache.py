"""The peer vector cache: each distinct text is encoded once per namespace, damaged chunks are re-encoded."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.text.peer_cache import PeerVectorCache, encode_cached, peer_namespace


class CountingEncoder:
    """A stand-in peer: a text's vector is a function of the text alone; every text it is asked for is recorded."""

    def __init__(self, dim: int = 4):
        self.dim, self.seen = dim, []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return np.array([[len(t), t.count("a"), t.count("e"), hash(t) % 7] for t in texts], dtype=np.float32)[
            :, : self.dim
        ]


def cached(folder, namespace="ns", warn=None):
    """A fresh open of the cache, as a new process would make it."""
    return PeerVectorCache.open(folder, namespace, warn)


def test_second_call_encodes_nothing_and_gives_the_same_vectors(tmp_path):
    enc = CountingEncoder()
    texts = ["a battery cell", "an anode", "a cathode"]
    first, hits = encode_cached(texts, enc, cached(tmp_path))
    assert hits == 0 and enc.seen == texts
    again, hits = encode_cached(list(reversed(texts)), enc, cached(tmp_path))
    assert hits == 3 and enc.seen == texts  # nothing new encoded
    np.testing.assert_array_equal(again, first[::-1])


def test_only_missing_and_distinct_texts_are_encoded(tmp_path):
    enc = CountingEncoder()
    encode_cached(["x", "y"], enc, cached(tmp_path))
    enc.seen.clear()
    out, hits = encode_cached(["y", "z", "z", "w"], enc, cached(tmp_path))
    assert hits == 1 and enc.seen == ["z", "w"]
    assert out.shape == (4, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out[1], out[2])


@pytest.mark.parametrize(
    "other",
    [
        ("mpnet", "ab" * 32, 256, "float32"),
        ("minilm", "cd" * 32, 256, "float32"),
        ("minilm", "ab" * 32, 128, "float32"),
        ("minilm", "ab" * 32, 256, "bfloat16"),
    ],
)
def test_namespaces_do_not_share_vectors(tmp_path, other):
    """Another peer, other weights, another input cut or another dtype: encoded again."""
    enc = CountingEncoder()
    encode_cached(["x"], enc, cached(tmp_path, peer_namespace("minilm", "ab" * 32, 256, "float32")))
    _, hits = encode_cached(["x"], enc, cached(tmp_path, peer_namespace(*other)))
    assert hits == 0 and enc.seen == ["x", "x"]


def test_a_key_ending_in_a_zero_byte_is_found_again(tmp_path):
    """sha256("403") ends in 0x00: stored as fixed-width bytes it would lose that byte and never match again."""
    from graphtx.text.peer_cache import text_key

    assert text_key("403")[-1] == 0
    enc = CountingEncoder()
    encode_cached(["403", "x"], enc, cached(tmp_path))
    _, hits = encode_cached(["403", "x"], enc, cached(tmp_path))
    assert hits == 2 and enc.seen == ["403", "x"]
    assert len(list((tmp_path / "ns").glob("chunk-*.npz"))) == 1  # nothing new written


def test_a_damaged_chunk_is_left_out_with_a_warning_and_encoded_again(tmp_path):
    enc = CountingEncoder()
    encode_cached(["x", "y"], enc, cached(tmp_path))
    (chunk,) = (tmp_path / "ns").glob("chunk-*.npz")
    data = bytearray(chunk.read_bytes())
    data[-5] ^= 0xFF
    chunk.write_bytes(bytes(data))
    warnings = []
    out, hits = encode_cached(["x", "y"], enc, cached(tmp_path, warn=warnings.append))
    assert hits == 0 and enc.seen == ["x", "y", "x", "y"]
    assert len(warnings) == 1 and "checksum" in warnings[0]
    np.testing.assert_array_equal(out, enc(["x", "y"]))


def test_without_a_folder_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert PeerVectorCache.open("", "ns") is None
    enc = CountingEncoder()
    encode_cached(["x"], enc, None)
    encode_cached(["x"], enc, None)
    assert enc.seen == ["x", "x"] and not list(tmp_path.iterdir())


def test_a_peer_giving_the_wrong_number_of_vectors_is_refused(tmp_path):
    with pytest.raises(ValueError, match="2 texts"):
        encode_cached(["x", "y"], lambda texts: np.zeros((1, 3)), cached(tmp_path))


def test_the_evaluation_peer_reads_the_cache_and_loads_no_model(tmp_path, monkeypatch):
    """MiniLMSystem.fit with a cache folder: the second fit over the same texts never loads the peer."""
    from types import SimpleNamespace

    from graphtx.eval import baselines
    from graphtx.eval.systems import DenseSystem
    from graphtx.text import peers

    loads = []
    monkeypatch.setattr(peers, "load_peer", lambda *a, **k: loads.append(a) or object())
    monkeypatch.setattr(
        peers, "encode_texts", lambda model, texts, batch_size, autocast_bf16=False: CountingEncoder()(list(texts))
    )
    monkeypatch.setattr(baselines.MiniLMSystem, "model_path", lambda self: tmp_path)
    monkeypatch.setattr(DenseSystem, "fit", lambda self, corpus: self)
    monkeypatch.setattr(DenseSystem, "set_vectors", lambda self, q, c: setattr(self, "vectors", (q, c)))
    corpus = SimpleNamespace(candidate_texts=("a cell", "an anode"), query_texts=("a cell",), same_texts=False)
    first = baselines.MiniLMSystem(vector_cache_dir=str(tmp_path / "cache")).fit(corpus)
    second = baselines.MiniLMSystem(vector_cache_dir=str(tmp_path / "cache")).fit(corpus)
    assert len(loads) == 1 and first.cached == 1 and second.cached == 3
    np.testing.assert_array_equal(first.vectors[1], second.vectors[1])


def test_the_evaluation_peer_encodes_on_eval_peer_device(tmp_path, monkeypatch):
    """eval.peer_device reaches the peer's loading (auto -> cpu without a GPU); a GPU PyTorch does not see is refused in
    words before any loading; a device name that is no device is refused by the configuration."""
    from types import SimpleNamespace

    import torch

    from graphtx.eval import baselines
    from graphtx.eval.config import EvalConfig
    from graphtx.eval.systems import DenseSystem
    from graphtx.text import peers

    devices = []
    monkeypatch.setattr(
        peers, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": devices.append(device) or object()
    )
    monkeypatch.setattr(
        peers, "encode_texts", lambda model, texts, batch_size, autocast_bf16=False: CountingEncoder()(list(texts))
    )
    monkeypatch.setattr(baselines.MiniLMSystem, "model_path", lambda self: tmp_path)
    monkeypatch.setattr(DenseSystem, "fit", lambda self, corpus: self)
    monkeypatch.setattr(DenseSystem, "set_vectors", lambda self, q, c: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    corpus = SimpleNamespace(candidate_texts=("a cell",), query_texts=("a cell",), same_texts=True)
    system = baselines.MiniLMSystem.from_config(EvalConfig()).fit(corpus)  # peer_device auto
    assert devices == ["cpu"] and system.device == "cpu"
    with pytest.raises(ValueError, match="sees no CUDA GPU"):
        baselines.MiniLMSystem.from_config(EvalConfig(peer_device="cuda")).fit(corpus)
    assert devices == ["cpu"]
    with pytest.raises(ValueError, match="eval.peer_device"):
        EvalConfig(peer_device="tpu")
