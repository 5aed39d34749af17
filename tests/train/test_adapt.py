"""`graphtx adapt`: a model adapted to a corpus without citations (stage pretrain on its own documents, no citation read)."""

from __future__ import annotations

import json

import pytest
import torch
import yaml

import graphtx.text.peers as peers_io
import graphtx.text.teacher as teacher_io
from graphtx.cli import main
from graphtx.model.io import load_model
from tests.train.test_pretrain_teacher import _TopicPeer


def _peer(monkeypatch, tmp_path):
    monkeypatch.setattr(peers_io, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": _TopicPeer())


def _config(synthetic, tmp_path, **train):
    path = tmp_path / "adapt.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(synthetic / "tiny.yaml"),
                "train": {
                    "stages": ["pretrain", "base"],
                    "pretrain_teacher": "minilm",
                    "pretrain_steps": 6,
                    "pretrain_views_weight": 0.0,
                    "pretrain_bm25_weight": 0.0,
                    "pretrain_teacher_weight": 1.0,
                    **train,
                },
            }
        )
    )
    return path


def _args(command, synthetic, config, out, *extra):
    """``graphtx adapt`` or ``train`` over the synthetic corpus, graphs and tokens, into ``out``."""
    return [
        command,
        "--config",
        str(config),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--tokens",
        str(synthetic / "tokens"),
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.timeout(240)
def test_adapt_distils_the_teacher_on_the_corpus_from_a_trained_model_without_reading_citations(
    synthetic, tmp_path, monkeypatch, capsys
):
    import graphtx.corpus.citations as citations

    _peer(monkeypatch, tmp_path)
    config = _config(synthetic, tmp_path)
    assert (
        main(
            [
                "init-model",
                "--config",
                str(config),
                "--tokens",
                str(synthetic / "tokens"),
                "--out",
                str(tmp_path / "source"),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    import graphtx.train.run as run  # imported before the patch: its own name for the reader is patched too, then restored

    for module in (citations, run):
        monkeypatch.setattr(module, "read_citations", lambda *a, **k: pytest.fail("adapt read citations"))
    args = [
        "adapt",
        "--config",
        str(config),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--model",
        str(tmp_path / "source"),
        "--out",
        str(tmp_path / "run"),
        "--json",
    ]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["mode"] == "adapt"
        and summary["stages"]["pretrain"]["steps"] == 6
        and summary["documents_with_graphs"] == 96
    )
    log = [json.loads(x) for x in (tmp_path / "run" / "pretrain" / "log.jsonl").read_text().splitlines()]
    assert len(log) == 6 and all(r["teacher_queries"] > 0 for r in log)
    source, adapted = load_model(tmp_path / "source").model, load_model(tmp_path / "run" / "model").model
    assert not torch.equal(source.swem.proj.weight, adapted.swem.proj.weight)  # the weights moved
    assert not (tmp_path / "run" / "model" / "ranker").exists()  # the source's ranker does not describe these vectors
    from graphtx.corpus.store import count_documents
    from graphtx.text.field import corpus_profile, read_model_profile

    learned_on = read_model_profile(tmp_path / "run" / "model")  # the corpus it adapted to, for search's auto
    assert learned_on == corpus_profile(synthetic / "corpus") and learned_on.documents == count_documents(
        synthetic / "corpus"
    )
    assert read_model_profile(tmp_path / "source") is None  # init-model learned on nothing
    import shutil

    from graphtx.errors import IntegrityError

    shutil.copytree(tmp_path / "run" / "model", tmp_path / "edited")
    (tmp_path / "edited" / "corpus_profile.json").write_text('{"documents": 1, "df": {}}\n')
    with pytest.raises(IntegrityError, match="corpus_profile.json"):  # sealed in checksums.json with the weights
        load_model(tmp_path / "edited")
    assert main([a for a in args if a != "--json"]) == 0  # finished: the same command reuses it
    assert "6 distillation steps" in capsys.readouterr().out


def test_adapt_without_a_teacher_is_refused_in_words(synthetic, tmp_path, capsys):
    config = _config(synthetic, tmp_path, pretrain_teacher="", pretrain_teacher_weight=0.0, pretrain_views_weight=1.0)
    assert main(_args("adapt", synthetic, config, tmp_path / "run")) == 2
    assert "adapting needs a teacher" in capsys.readouterr().err


@pytest.mark.timeout(240)
def test_train_on_a_corpus_without_citations_adapts_and_says_so(synthetic, tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path)
    config = _config(synthetic, tmp_path, pretrain_steps=3)
    assert (
        main(_args("train", synthetic, config, tmp_path / "run", "--quiet")) == 0
    )  # the synthetic corpus holds no citations (they are in train.tsv)
    captured = capsys.readouterr()
    assert (
        "adapting the model to its documents without labels" in captured.err and "3 distillation steps" in captured.out
    )
    assert (tmp_path / "run" / "model" / "model.pt").is_file() and not (tmp_path / "run" / "base").exists()


@pytest.mark.timeout(240)
def test_train_given_citations_that_link_no_two_documents_of_the_corpus_adapts_and_says_which(
    synthetic, tmp_path, monkeypatch, capsys
):
    _peer(monkeypatch, tmp_path)
    config = _config(synthetic, tmp_path, pretrain_steps=3)
    outside = tmp_path / "outside.tsv"  # another field's pairs: neither side is a document of this corpus
    outside.write_text("citing_id\tcited_id\tcategory\nUS-1111111-B2\tUS-2222222-A\texaminer\n")
    args = _args("train", synthetic, config, tmp_path / "run", "--citations", str(outside))
    assert main([*args, "--valid-citations", str(outside), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert f"none of the training citations in {outside} links two documents of" in captured.err
    assert f"evaluate {outside} with `graphtx eval citations`" in captured.err  # the held-out file is not scored
    assert (
        "adapting the model to its documents without labels" in captured.err and "3 distillation steps" in captured.out
    )
    assert (tmp_path / "run" / "model" / "model.pt").is_file() and not (tmp_path / "run" / "base").exists()


@pytest.mark.timeout(60)
def test_train_given_citations_within_the_corpus_trains_on_them(synthetic, tmp_path):
    from argparse import Namespace

    from graphtx.cli.training import _adapts_instead
    from graphtx.train.config import TrainConfig

    teacher = TrainConfig(stages=("pretrain", "base"), pretrain_teacher="minilm", pretrain_teacher_weight=1.0)
    given = Namespace(
        engine="local",
        corpus=str(synthetic / "corpus"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=None,
        test_citations=None,
    )
    assert _adapts_instead(given, teacher) == ""  # its pairs link documents of the corpus: citation training
    assert _adapts_instead(Namespace(**{**vars(given), "citations": None}), teacher).startswith("no citation between")
    no_teacher = TrainConfig(stages=("pretrain", "base"), pretrain_teacher="", pretrain_teacher_weight=0.0)
    assert _adapts_instead(Namespace(**{**vars(given), "citations": None}), no_teacher) == ""  # nothing to distil


@pytest.mark.timeout(240)
def test_adapt_with_a_hold_out_share_never_distils_the_held_out_documents_and_writes_their_judgements(
    synthetic, tmp_path, monkeypatch, capsys
):
    import graphtx.train.pretrain_graph as pretrain_graph
    from graphtx.corpus.citations import read_citations
    from graphtx.train.adapt import hold_out
    from graphtx.train.config import TrainConfig
    from graphtx.train.data import GraphStore

    _peer(monkeypatch, tmp_path)
    pools = []
    real_pool = pretrain_graph.PretrainPool

    def recording_pool(store, cfg):
        pool = real_pool(store, cfg)
        pools.append(set(pool.doc_ids) | set(pool.peer.doc_ids if pool.peer else ()))
        return pool

    monkeypatch.setattr(pretrain_graph, "PretrainPool", recording_pool)
    config = _config(synthetic, tmp_path, pretrain_steps=3)
    args = _args("adapt", synthetic, config, tmp_path / "run", "--hold-out-share", "0.25", "--quiet")
    assert main(args) == 0
    out = capsys.readouterr().out
    held = read_citations(tmp_path / "run" / "test_citations.tsv")
    held_ids = {c.citing_id for c in held}
    assert held and all(c.citing_id == c.cited_id for c in held)  # known-item: each held-out document finds itself
    assert 0.1 < len(held_ids) / 96 < 0.45 and f"held out of the adaptation: {len(held_ids)} documents" in out
    assert pools and not (pools[0] & held_ids) and len(pools[0]) == 96 - len(held_ids)  # never anchor nor neighbour
    store = GraphStore.load(synthetic / "graphs")  # the rule is a seeded function of the id: the same ids again
    assert set(hold_out(store, TrainConfig(), 0.25, 0)[1]) == held_ids
    assert main(["plot", str(tmp_path / "run"), "--quiet"]) == 0  # an adaptation's curves: stage pretrain's log
    assert (tmp_path / "run" / "curves.png").stat().st_size > 10_000
    # the same graphs named again in train.pretrain_graphs (the pool is then read from disk): still held out
    pools.clear()
    again = _config(synthetic, tmp_path, pretrain_steps=3, pretrain_graphs=[str(synthetic / "graphs")])
    assert main(_args("adapt", synthetic, again, tmp_path / "run2", "--hold-out-share", "0.25", "--quiet")) == 0
    assert pools and not (pools[0] & held_ids)
    # a later run in the same directory without a hold-out drops the list (it would name documents adapted on)
    import shutil

    shutil.rmtree(tmp_path / "run" / "pretrain")
    assert main([a for a in args if a not in ("--hold-out-share", "0.25")]) == 0
    assert not (tmp_path / "run" / "test_citations.tsv").exists()


def test_adapt_refuses_a_hold_out_share_outside_the_unit_interval(synthetic, tmp_path, capsys):
    args = ["adapt", "--corpus", "c", "--graphs", "g", "--tokens", "t", "--out", str(tmp_path / "r")]
    assert main([*args, "--hold-out-share", "1.5"]) == 2
    assert "the share must be in [0, 1) (got 1.5)" in capsys.readouterr().err


def test_adapt_with_a_hold_out_share_that_holds_out_nothing_says_so_before_the_teacher(
    synthetic, tmp_path, monkeypatch, capsys
):
    import graphtx.train.run_teacher as run_teacher

    monkeypatch.setattr(run_teacher, "run_teacher_dir", lambda *a, **k: pytest.fail("the teacher ran"))
    config = _config(synthetic, tmp_path)
    args = _args("adapt", synthetic, config, tmp_path / "run")
    assert main([*args, "--hold-out-share", "0.0001"]) == 2  # 96 documents: the seeded draw picks none
    assert "holds out none of" in capsys.readouterr().err
    assert main([*args, "--hold-out-share", "0.9999"]) == 2  # all of them: nothing left to adapt to
    assert "give a smaller share" in capsys.readouterr().err


@pytest.mark.timeout(30)
def test_few_passes_are_told_with_the_steps_fifteen_would_take():
    from graphtx.train.adapt import adapt_passes, few_passes_warning

    assert adapt_passes(938, 2_000, 32) == pytest.approx(15.0, abs=0.01)
    assert few_passes_warning(938, 2_000, 32) == ""  # taught to the cap: nothing to say
    assert few_passes_warning(625, 4_000, 32) == ""  # 5 passes: the floor itself is enough
    warning = few_passes_warning(1_500, 42_356, 32)  # the full-text build: 1.1 passes
    assert (
        "are 1.1 passes over 42,356 documents" in warning
        and "(build or adapt --steps all, or train.pretrain_steps 19855)" in warning
    )


@pytest.mark.timeout(30)
def test_the_cap_of_passes_is_a_setting_that_bounds_the_steps_the_sample_and_the_warning():
    from graphtx.train.adapt import adapt_sample_size, adapt_steps, few_passes_warning, steps_reading_every_document
    from graphtx.train.config import TrainConfig

    assert adapt_steps(1_500, 2_000, 32) == 938 and adapt_steps(1_500, 2_000, 32, max_passes=30) == 1_500
    assert adapt_steps(5_000, 2_000, 32, max_passes=30) == 1_875 == steps_reading_every_document(2_000, 32, 30)
    assert adapt_sample_size(1_500, 42_356, 32) == 3_200 and adapt_sample_size(1_500, 42_356, 32, 30) == 2_000
    assert "30 passes (train.adapt_max_passes) here are 39,709 steps" in few_passes_warning(1_500, 42_356, 32, 30)
    with pytest.raises(ValueError, match="adapt_max_passes must be > 0"):
        TrainConfig(adapt_max_passes=0)


class _Stopped(Exception):
    pass


@pytest.mark.timeout(120)
def test_adapt_steps_all_runs_the_steps_that_read_every_document_fifteen_times(synthetic, tmp_path, monkeypatch):
    import graphtx.train.run as run
    from graphtx.cli import build_parser
    from graphtx.config import load_config
    from graphtx.train.adapt import adapt, steps_reading_every_document

    args = build_parser().parse_args(_args("adapt", synthetic, tmp_path / "c.yaml", tmp_path / "r", "--steps", "all"))
    assert args.steps == "all"
    _peer(monkeypatch, tmp_path)
    config = load_config(_config(synthetic, tmp_path))  # train.pretrain_steps 6: `all` ignores it

    def stop(*a, **k):
        raise _Stopped  # the job is written before the distillation starts

    monkeypatch.setattr(run, "run_pretrain_stage", stop)
    with pytest.raises(_Stopped):
        adapt(
            config,
            synthetic / "corpus",
            synthetic / "graphs",
            tmp_path / "run",
            tokens_dir=str(synthetic / "tokens"),
            read_every_document=True,
        )
    steps = json.loads((tmp_path / "run" / "adapt.json").read_text())["steps"]
    assert steps == steps_reading_every_document(96, config.train.pretrain_batch_docs) and steps > 6
