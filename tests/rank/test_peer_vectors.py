"""--peer-vectors: a peer's cosines read from a `graphtx teacher` directory (vectors written once, e.g. on a GPU) in
`graphtx rank-fit --peer` and `graphtx eval citations` (baseline row and --ranker-peer), instead of encoding again."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import graphtx.text.peers as peers
import graphtx.text.teacher as teacher
from graphtx import integrity
from graphtx.cli import main
from graphtx.eval.baselines import MiniLMSystem
from graphtx.eval.peer_vectors import PeerVectorsSystem, peer_vector_dirs

RANK_YAML = (
    "rank:\n  depth: 30\n  folds: 3\n  min_data_in_leaf: 5\n  num_leaves_grid: [3]\n  max_rounds: 30\n  bag: 1\n"
)


class _HashPeer:
    """A deterministic stand-in for all-MiniLM-L6-v2 (no weights in the default suite): unit vectors of word hashes."""

    def encode(self, texts, **_):
        import torch

        out = np.zeros((len(texts), 16), dtype=np.float32)
        for r, t in enumerate(texts):
            for w in t.lower().split():
                out[r, int(hashlib.md5(w.encode()).hexdigest(), 16) % 16] += 1
        out[:, 0] += 1e-3  # no all-zero row
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return torch.from_numpy(out)


@pytest.fixture
def vectors_of(ranked, tmp_path, monkeypatch):
    """vectors_of(name, passages=1): a real, sealed `graphtx teacher` directory over the ranked corpus (the stand-in peer
    under minilm's name and checked sha256: what `graphtx teacher` writes, made without the weights)."""
    monkeypatch.setattr(teacher, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _HashPeer())
    monkeypatch.setattr(
        peers,
        "encode_passages",
        lambda model, texts, passages, batch_size=64, autocast_bf16=False: model.encode(texts).numpy(),
    )  # windows: tested in tests/text

    def make(name: str, passages: int = 1):
        out = tmp_path / name
        teacher.write_teacher_vectors(
            [ranked["corpus"]], out, peer="minilm", max_tokens=64, passages=passages, progress=False
        )
        return out

    return make


def _rank_fit(ranked, tmp_path, *extra):
    cfg = tmp_path / "rank.yaml"
    cfg.write_text(RANK_YAML)
    return main(
        [
            "rank-fit",
            str(ranked["corpus"]),
            "--peer",
            "minilm",
            "--citations",
            ranked["train"],
            "--config",
            str(cfg),
            "--quiet",
            *extra,
        ]
    )


def _eval(ranked, tmp_path, *extra):
    return main(
        [
            "eval",
            "citations",
            str(ranked["corpus"]),
            "--citations",
            ranked["valid"],
            "--protocols",
            "retrieval",
            "--config",
            str(tmp_path / "rank.yaml"),
            "--json",
            "--quiet",
            *extra,
        ]
    )


def test_fingerprint_is_the_encoding_baselines_and_names_passages(vectors_of):
    one, two = PeerVectorsSystem(vectors_of("one")), PeerVectorsSystem(vectors_of("two", passages=2))
    assert one.name == "minilm"
    assert one.fingerprint == MiniLMSystem(max_tokens=64).fingerprint  # a ranker fitted on either accepts the other
    assert two.fingerprint == one.fingerprint + "x2"
    assert "vectors of one" in one.label and "2 passages of 64 tokens" in two.label


@pytest.mark.timeout(180)
def test_a_ranker_fitted_over_peer_vectors_is_evaluated_over_them(ranked, tmp_path, vectors_of, capsys):
    vectors = vectors_of("minilm-vectors")
    out = tmp_path / "peer-ranker"
    assert _rank_fit(ranked, tmp_path, "--peer-vectors", str(vectors), "--out", str(out)) == 0
    meta = json.loads((out / "ranker.json").read_text())
    assert meta["model_fingerprint"] == PeerVectorsSystem(vectors).fingerprint
    assert meta["report"]["peer_vectors"] == str(vectors)
    assert meta["report"]["dense_coverage"] == {"queries_without_vector": 0, "candidates_without_vector": 0}
    capsys.readouterr()
    assert (
        _eval(
            ranked,
            tmp_path,
            "--baselines",
            "bm25,minilm",
            "--peer-vectors",
            str(vectors),
            "--ranker-peer",
            "minilm",
            str(out),
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in report["retrieval"]}
    assert {"bm25", "minilm", "learned-minilm"} <= set(rows)
    assert "vectors of minilm-vectors" in rows["minilm"]["system"]
    assert rows["learned-minilm"]["system"].startswith("learned (LightGBM) (all-MiniLM-L6-v2 (")
    info = {s["name"]: s["info"] for s in report["systems"]}["minilm"]  # what a reader needs to rerun the row
    assert info["peer_vectors"] == str(vectors) and info["max_tokens"] == 64 and info["candidates_without_vector"] == 0


def test_passage_vectors_are_refused_by_a_ranker_fitted_over_one_passage(ranked, tmp_path, vectors_of, capsys):
    out = tmp_path / "peer-ranker"
    assert _rank_fit(ranked, tmp_path, "--peer-vectors", str(vectors_of("one")), "--out", str(out)) == 0
    capsys.readouterr()
    assert (
        _eval(
            ranked,
            tmp_path,
            "--baselines",
            "bm25",
            "--peer-vectors",
            str(vectors_of("two", passages=2)),
            "--ranker-peer",
            "minilm",
            str(out),
        )
        == 2
    )
    assert "its dense features would mean something else" in capsys.readouterr().err


def test_a_document_without_a_vector_is_unknown_and_counted(ranked, tmp_path, vectors_of):
    import dataclasses

    from graphtx.eval.config import EvalConfig
    from graphtx.eval.data import EvalCorpus
    from tests.index.fixtures import N_DOCS, make_corpus

    fewer = make_corpus(tmp_path / "fewer", range(N_DOCS - 1))  # the last document has no vector
    teacher.write_teacher_vectors([fewer], tmp_path / "v", peer="minilm", max_tokens=64, progress=False)
    corpus = EvalCorpus.load(ranked["corpus"], dataclasses.replace(EvalConfig(), cutoff="none"))
    system = PeerVectorsSystem(tmp_path / "v").fit(corpus)
    assert system.coverage() == {"queries_without_vector": 1, "candidates_without_vector": 1}
    known = int(np.flatnonzero(system.candidate_known)[0])
    scores = system.scores(np.arange(len(corpus)))  # (n, n) cosines of unit vectors
    unknown = int(np.flatnonzero(~system.candidate_known)[0])
    assert np.all(scores[:, unknown][np.arange(len(corpus)) != unknown] == -np.inf)  # never ranked as a candidate
    assert np.all(scores[unknown][system.candidate_known] == 0.0)  # as a query: no order but the ids'
    assert np.isclose(scores[known, known], 1.0)  # a known document is its own nearest
    assert np.all(np.abs(scores[np.isfinite(scores)]) <= 1 + 1e-9)


def test_arguments_and_directories_are_checked(ranked, tmp_path, vectors_of, capsys):
    vectors = vectors_of("v")
    (tmp_path / "rank.yaml").write_text(RANK_YAML)
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--model",
                str(ranked["model"]),
                "--graphs",
                str(ranked["graphs"]),
                "--citations",
                ranked["train"],
                "--peer-vectors",
                str(vectors),
                "--out",
                str(tmp_path / "r"),
                "--quiet",
            ]
        )
        == 2
    )
    assert "--peer-vectors goes with --peer" in capsys.readouterr().err
    assert (
        main(
            [
                "rank-fit",
                str(ranked["corpus"]),
                "--peer",
                "mpnet",
                "--citations",
                ranked["train"],
                "--peer-vectors",
                str(vectors),
                "--out",
                str(tmp_path / "r"),
                "--quiet",
            ]
        )
        == 2
    )
    assert "holds minilm vectors, not mpnet's" in capsys.readouterr().err
    assert _eval(ranked, tmp_path, "--baselines", "bm25", "--peer-vectors", str(vectors)) == 2
    assert "used by nothing" in capsys.readouterr().err
    assert (
        _eval(
            ranked,
            tmp_path,
            "--baselines",
            "bm25",
            "--peer-vectors",
            str(vectors),
            "--ranker-peer",
            "minilm",
            str(tmp_path / "none"),
        )
        == 2
    )
    assert "no ranker there; fit one with `graphtx rank-fit CORPUS --peer minilm" in capsys.readouterr().err
    assert _eval(ranked, tmp_path, "--baselines", "minilm", "--peer-vectors", str(tmp_path / "nowhere")) == 2
    assert "no manifest.json there" in capsys.readouterr().err
    assert _eval(ranked, tmp_path, "--baselines", "minilm", "--peer-vectors", str(vectors), "--known-item") == 2
    assert "one vector a document cannot read first_claim for queries" in capsys.readouterr().err
    assert peer_vector_dirs([vectors, tmp_path / "." / "v"]) == {
        "minilm": vectors.resolve()
    }  # the same directory twice: once
    other = vectors_of("w")
    with pytest.raises(ValueError, match="both minilm vectors"):
        peer_vector_dirs([vectors, other])
    path = vectors / teacher.MANIFEST_FILE
    manifest = json.loads(path.read_text())
    for text, message in (
        (json.dumps(integrity.seal(manifest | {"sha256": "1" * 64})), "not the checked ones"),
        (json.dumps(integrity.seal(manifest | {"peer": "bert"})), "written by peer 'bert'"),
        (json.dumps(manifest | {"peer": "bert"}), "do not match its manifest_sha256"),  # edited, not resealed
        ("[1, 2]", "not a JSON object"),
        ("{not json", "not valid JSON"),
    ):
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            PeerVectorsSystem(vectors)


def test_the_report_notes_vectors_of_other_fields_than_the_evaluations(ranked, tmp_path, vectors_of, capsys):
    """Title + abstract vectors in an evaluation reading title, abstract and claims: allowed (a zero-shot transfer), noted."""
    (tmp_path / "rank.yaml").write_text(RANK_YAML)
    vectors = vectors_of("ta")
    fields = "title,abstract,claims"
    assert (
        _eval(
            ranked,
            tmp_path,
            "--baselines",
            "minilm",
            "--peer-vectors",
            str(vectors),
            "--query-fields",
            fields,
            "--candidate-fields",
            fields,
        )
        == 0
    )
    info = {s["name"]: s["info"] for s in json.loads(capsys.readouterr().out)["systems"]}["minilm"]
    assert info["fields_note"] == "its vectors read title+abstract, this evaluation's text is title+abstract+claims"
    assert _eval(ranked, tmp_path, "--baselines", "minilm", "--peer-vectors", str(vectors)) == 0
    assert "fields_note" not in {s["name"]: s["info"] for s in json.loads(capsys.readouterr().out)["systems"]}["minilm"]
