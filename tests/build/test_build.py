"""`graphtx build`: sources to an index in one resumable command; up to date steps skipped, changed ones redone."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time

import pytest
import yaml

import graphtx.text.peers as peers_io
import graphtx.text.teacher as teacher_io
from graphtx.cli import main
from graphtx.config import REPO_ROOT
from tests.train.test_pretrain_teacher import _TopicPeer

GRANTS = REPO_ROOT / "tests" / "fixtures" / "us_grants_small.xml"  # two grants, a sequence listing, a broken grant


def _config(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(REPO_ROOT / "configs" / "small.yaml"),
                "parse": {"cache_dir": str(tmp_path / "parse-cache")},  # not the user's ~/.cache/graphtx
                "pretrain": {
                    "vocab_size": 300,
                    "dim": 16,
                    "epochs": 1,
                    "buckets": 5000,
                    "min_count": 1,
                    "min_frequency": 1,
                },
                "model": {
                    "vocab_size": 300,
                    "token_dim": 16,
                    "node_dim": 32,
                    "heads": 2,
                    "layers": 1,
                    "ffn_mult": 2,
                    "base_dim": 32,
                    "reduced_dim": 8,
                    "num_experts": 2,
                    "lexical_dim": 64,
                },
                "train": {"pretrain_teacher": "minilm", "pretrain_batch_docs": 2, "pretrain_teacher_neighbours": 1},
            }
        )
    )
    return path


def _peer(monkeypatch, tmp_path, loads: list):
    monkeypatch.setattr(peers_io, "require_peer", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(teacher_io, "peer_path", lambda name, cache_dir="": tmp_path)
    monkeypatch.setattr(
        peers_io, "load_peer", lambda path, max_tokens, dtype="float32", device="cpu": loads.append(1) or _TopicPeer()
    )


@pytest.mark.timeout(300)
def test_build_makes_a_searchable_index_and_a_second_build_redoes_only_what_changed(tmp_path, monkeypatch, capsys):
    loads: list = []
    _peer(monkeypatch, tmp_path, loads)
    out, config = tmp_path / "b", _config(tmp_path)
    base = ["build", str(GRANTS), "--out", str(out), "--config", str(config), "--device", "cpu"]
    assert main([*base, "--plan", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["documents"] == 2 and plan["route"] == "adapt" and plan["teacher"] == "minilm"
    assert not (out / "graphs").exists()  # the plan read the sources, nothing after
    assert main([*base, "--json"]) == 0
    captured = capsys.readouterr()
    steps = json.loads((out / "build.json").read_text())["steps"]
    assert list(steps) == ["ingest", "parse", "tokens", "model", "index"] and all(s["finished"] for s in steps.values())
    assert steps["ingest"]["result"] == {
        "documents": 2,
        "skipped": 2,
        "not_patents": 1,
    }  # the broken grant listed, the build went on
    assert "graphtx search --index" in captured.err and loads == [1]
    # the model's projection, once the graphs are parsed, reads their sizes rather than the plan's guess from the words;
    # build.json keeps both
    assert "model: the parsed graphs average" in captured.err and "(the plan guessed" in captured.err
    assert steps["model"]["planned_s"] == plan["projected_s"]["model"] and steps["model"]["projected_s"] > 0
    assert (
        main(
            [
                "search",
                "--index",
                str(out / "index"),
                "--text",
                "1. A method comprising a housing.",
                "-k",
                "2",
                "--json",
            ]
        )
        == 0
    )
    found = json.loads(capsys.readouterr().out)
    assert (
        len(found["hits"]) == 2 and found["ranker"] == "hybrid"
    )  # adapted, no learned ranker: BM25 and the model fused
    # the same command again: every step up to date, the teacher not even loaded
    assert main([*base, "--json"]) == 0
    captured = capsys.readouterr()
    assert all(
        f"{step}: up to date" in captured.err for step in ("ingest", "parse", "tokens", "model", "index")
    ) and loads == [1]
    assert all(s.get("skipped") for s in json.loads(captured.out)["steps"].values())
    # more steps than the cap of passes allows run the same capped steps: the model stays up to date
    assert main([*base, "--steps", "999"]) == 0
    assert "model: up to date" in capsys.readouterr().err and loads == [1]
    # another seed: tokens, model and index again; ingest and parse kept; the teacher's vectors all from the cache
    assert main([*base, "--seed", "1"]) == 0
    err = capsys.readouterr().err
    assert "ingest: up to date" in err and "parse: up to date" in err and "tokens: projected" in err and loads == [1]
    assert "2 of them from the peer vector cache" in err
    assert "teacher minilm over 2 documents (0 s; 2 of their vectors cached)" in err  # the plan knew it


def test_build_until_stops_after_that_step(tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path, [])
    out = tmp_path / "b"
    assert (
        main(
            [
                "build",
                str(GRANTS),
                "--out",
                str(out),
                "--config",
                str(_config(tmp_path)),
                "--until",
                "ingest",
                "--quiet",
            ]
        )
        == 0
    )
    assert (out / "corpus" / "manifest.json").is_file() and not (out / "graphs").exists()
    assert (
        main(
            [
                "build",
                str(GRANTS),
                "--out",
                str(out),
                "--config",
                str(_config(tmp_path)),
                "--until",
                "tokens",
                "--quiet",
            ]
        )
        == 0
    )
    assert (out / "tokens" / "manifest.json").is_file() and not (out / "run").exists()
    assert main(["build", str(GRANTS), "--out", str(out), "--until", "nope"]) == 2


def test_a_touched_source_is_still_up_to_date_and_a_changed_one_is_read_again(tmp_path, monkeypatch, capsys):
    import os
    import shutil

    _peer(monkeypatch, tmp_path, [])
    source, out = tmp_path / "grants.xml", tmp_path / "b"
    shutil.copy(GRANTS, source)
    command = ["build", str(source), "--out", str(out), "--config", str(_config(tmp_path)), "--until", "ingest"]
    assert main(command) == 0
    os.utime(source, ns=(1, 1))  # copied again, touched: the same bytes
    capsys.readouterr()
    assert main(command) == 0 and "ingest: up to date" in capsys.readouterr().err
    source.write_bytes(GRANTS.read_bytes().replace(b"housing", b"casing"))  # same size class, other words
    assert main(command) == 0 and "ingest: up to date" not in capsys.readouterr().err


def test_without_citations_or_a_teacher_the_build_stops_before_parsing(tmp_path, capsys):
    config = tmp_path / "noteacher.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "extends": str(REPO_ROOT / "configs" / "small.yaml"),
                "train": {"pretrain_teacher": "", "pretrain_teacher_weight": 0.0, "pretrain_views_weight": 1.0},
            }
        )
    )
    assert main(["build", str(GRANTS), "--out", str(tmp_path / "b"), "--config", str(config)]) == 2
    assert (
        "no teacher to adapt with: give --teacher" in capsys.readouterr().err
        and not (tmp_path / "b" / "graphs").exists()
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("below", [True, False])
def test_the_build_trains_from_the_measured_number_of_citing_documents_and_adapts_below(tmp_path, capsys, below):
    # benchmarks/results/transfer.md, "build's own train route": below the number, a ranker fitted on the few
    # held-out queries searched below the fusion the label-free route ships
    from graphtx.build import MIN_TRAINING_QUERIES

    citing = MIN_TRAINING_QUERIES - 1 if below else MIN_TRAINING_QUERIES
    docs = tmp_path / "docs.jsonl"
    words = "battery cell cooling plate module housing terminal busbar sensor inverter".split()
    with docs.open("w") as f:
        for i in range(citing + 1):  # document 0 is the one every other cites
            text = " ".join(words[(i + j) % len(words)] for j in range(12))
            f.write(
                json.dumps({"id": f"D{i:04d}", "year": 2000 + i % 20, "abstract": f"A {text} of document {i}."}) + "\n"
            )
    cites = tmp_path / "citations.tsv"
    cites.write_text("citing_id\tcited_id\n" + "".join(f"D{i:04d}\tD0000\n" for i in range(1, citing + 1)))
    out = tmp_path / "b"
    args = ["build", str(docs), "--citations", str(cites), "--out", str(out), "--config", str(_config(tmp_path))]
    assert main([*args, "--plan", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["documents"] == citing + 1
    assert plan["route"] == ("adapt" if below else "train")
    assert not (out / "graphs").exists()


def test_on_a_cpu_a_large_corpus_gets_minilm_and_is_told_what_mpnet_costs():
    from graphtx.build.plan import MPNET_CPU_HOUR_DOCUMENTS, choose_teacher, core_scale

    large = int(MPNET_CPU_HOUR_DOCUMENTS / core_scale()) + 1
    assert choose_teacher("mpnet", large - 1, gpu=False, asked=False) == ("mpnet", "")
    teacher, note = choose_teacher("mpnet", large, gpu=False, asked=False)
    assert teacher == "minilm" and "mpnet would take about" in note and "--teacher mpnet" in note
    assert (
        choose_teacher("mpnet", large, gpu=True, asked=False)[0] == "mpnet"
        and choose_teacher("mpnet", large, False, asked=True)[0] == "mpnet"
    )


@contextlib.contextmanager
def _held_by_another_process(directory):
    """The build directory's lock held by a child process (as a running build holds it) until the block ends."""
    ready = directory.parent / f"{directory.name}.held"
    code = (
        "import sys, time, pathlib\n"
        "from graphtx.lock import DirectoryLock\n"
        "with DirectoryLock(sys.argv[1], 'graphtx build', 'build directory'):\n"
        "    pathlib.Path(sys.argv[2]).touch()\n"
        "    time.sleep(120)\n"
    )
    directory.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c", code, str(directory), str(ready)], cwd=REPO_ROOT)
    try:
        for _ in range(600):
            if ready.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the child did not take the lock"
        yield
    finally:
        child.kill()
        child.wait(timeout=30)
        ready.unlink(missing_ok=True)


@pytest.mark.timeout(120)
def test_plan_reads_beside_a_running_build_once_its_ingest_is_done(tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path, [])
    out, config = tmp_path / "b", _config(tmp_path)
    plan = ["build", str(GRANTS), "--out", str(out), "--config", str(config), "--plan", "--json"]
    with _held_by_another_process(out):  # another build holds it, before its ingest
        assert main(plan) != 0
        assert "once its ingest of these sources is done" in capsys.readouterr().err and not (out / "corpus").exists()
    assert main(["build", str(GRANTS), "--out", str(out), "--config", str(config), "--until", "ingest", "--quiet"]) == 0
    capsys.readouterr()
    with _held_by_another_process(out):  # the build runs on past its ingest
        assert main(plan) == 0
        assert json.loads(capsys.readouterr().out)["plan"]["documents"] == 2


@pytest.mark.timeout(300)
def test_documents_added_to_a_corpus_are_the_only_ones_the_teacher_encodes(tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path, [])
    config = _config(tmp_path)
    added = tmp_path / "added.jsonl"  # three more patents, as a later export would bring them
    added.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"US-90000{i}-B1",
                    "title": f"Auger housing {i}",
                    "claims": f"1. A snowthrower comprising an auger housing and a chute {i}.",
                }
            )
            + "\n"
            for i in range(3)
        )
    )
    first = ["build", str(GRANTS), "--out", str(tmp_path / "b1"), "--config", str(config), "--until", "model"]
    assert main(first) == 0
    assert "0 of them from the peer vector cache" in capsys.readouterr().err  # the first build encodes both grants
    second = [
        "build",
        str(GRANTS),
        str(added),
        "--out",
        str(tmp_path / "b2"),
        "--config",
        str(config),
        "--until",
        "model",
    ]
    assert main(second) == 0
    err = capsys.readouterr().err
    assert (
        "2 of them from the peer vector cache" in err and "5 documents' vectors" in err
    )  # 3 encoded, 2 from the cache
    assert "teacher minilm over 5 documents" in err and "2 of their vectors cached" in err  # projected for 3


@pytest.mark.timeout(120)
def test_the_plan_says_the_distillations_precision_on_a_cpu_and_projects_bf16_shorter(tmp_path, monkeypatch, capsys):
    """A CPU with bf16 in hardware distils in bf16 (train.amp on), and its teacher encodes under bf16 autocast, so the
    plan says so and projects the model step at CPU_STEP_SHARE's bf16 share; without it, or with train.amp off, fp32."""
    import graphtx.hardware as hardware

    config = _config(tmp_path)
    fp32 = tmp_path / "fp32.yaml"
    fp32.write_text(f"extends: {config}\ntrain:\n  amp: false\n")
    model_s = {}
    for native, cfg, expect in ((True, config, "bf16"), (False, config, "fp32"), (True, fp32, "fp32")):
        monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda native=native: native)
        out = tmp_path / f"b-{native}-{cfg.stem}"
        args = ["build", str(GRANTS), "--out", str(out), "--config", str(cfg), "--device", "cpu", "--plan", "--json"]
        assert main(args) == 0
        captured = capsys.readouterr()
        assert f"passes, {expect} on the CPU)" in captured.err
        assert ("; bf16 autocast)" in captured.err) is (expect == "bf16")  # the teacher's encoding: the same rule
        model_s[native, cfg.stem] = json.loads(captured.out)["plan"]["projected_s"]["model"]
    assert model_s[True, fp32.stem] == pytest.approx(model_s[False, config.stem])  # fp32 either way
    assert model_s[True, config.stem] < model_s[False, config.stem]


@pytest.mark.timeout(120)
def test_a_gpu_plan_projects_the_distillation_at_the_share_of_its_batches_built_ahead(tmp_path, capsys, monkeypatch):
    """On a GPU the distillation's batches are built ahead where workers run (auto: 4 where the cores allow), and the
    plan takes plan.py GPU_STEP_SHARE's share for that; with pretrain_batch_workers 0, the in-line share."""
    import graphtx.build.run as build_run
    import graphtx.model.chunks as chunks
    from graphtx.build.plan import GPU_STEP_SHARE
    from graphtx.train import prefetch

    monkeypatch.setattr(chunks, "resolve_device", lambda device: "cuda")  # the plan only: nothing runs on it
    monkeypatch.setattr(prefetch, "usable_cores", lambda: 16)
    monkeypatch.setattr(prefetch, "can_fork", lambda: True)
    config = _config(tmp_path)
    model_s = {}
    for workers in (-1, 0):
        cfg = tmp_path / f"w{workers}.yaml"
        cfg.write_text(f"extends: {config}\ntrain:\n  pretrain_batch_workers: {workers}\n")
        args = ["build", str(GRANTS), "--out", str(tmp_path / f"b{workers}"), "--config", str(cfg), "--plan", "--json"]
        assert main(args) == 0
        model_s[workers] = json.loads(capsys.readouterr().out)["plan"]["projected_s"]["model"]
    assert GPU_STEP_SHARE["ahead"] < GPU_STEP_SHARE["in line"]
    assert model_s[-1] < model_s[0]
    assert build_run.GPU_STEP_SHARE is GPU_STEP_SHARE


@pytest.mark.timeout(120)
def test_the_plan_says_how_many_passes_the_distillation_makes_and_warns_when_they_are_few(tmp_path, capsys):
    out, config = tmp_path / "b", _config(tmp_path)
    base = ["build", str(GRANTS), "--out", str(out), "--config", str(config), "--device", "cpu", "--plan"]
    assert main(base) == 0  # 2 documents, 2 anchors a step: the default steps capped at ADAPT_MIN_STEPS, 50 passes
    err = capsys.readouterr().err
    assert "50 distillation steps (50.0 passes, " in err and "note:" not in err
    assert main([*base, "--steps", "3"]) == 0  # 3 passes: the user is told, with the steps 15 passes would take
    err = capsys.readouterr().err
    assert "3 distillation steps (3.0 passes, " in err
    assert (
        "note: 3 distillation steps are 3.0 passes over 2 documents" in err
        and "(build or adapt --steps all, or train.pretrain_steps 15)" in err
    )


@pytest.mark.timeout(300)
def test_a_build_that_adapts_says_the_few_passes_warning_once(tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path, [])
    out, config = tmp_path / "b", _config(tmp_path)
    run = ["build", str(GRANTS), "--out", str(out), "--config", str(config), "--device", "cpu", "--steps", "3"]
    assert main([*run, "--until", "model"]) == 0  # the plan leaves it to the adaptation, which counts the graphs
    assert capsys.readouterr().err.count("3 distillation steps are 3.0 passes over 2 documents") == 1


def _documents(path, n: int):
    """``n`` small patents of one field as JSONL (no citation between them: the build adapts)."""
    parts = ("auger housing", "discharge chute", "impeller blade", "drive belt", "scraper bar", "skid shoe")
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"US-91000{i:02d}-B1",
                    "title": f"Snowthrower with {parts[i % len(parts)]} {i}",
                    "abstract": f"A snowthrower has an {parts[i % len(parts)]} and a {parts[(i + 1) % len(parts)]}.",
                    "claims": f"1. A snowthrower comprising a {parts[i % len(parts)]} and a {parts[(i + 2) % len(parts)]}.",
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


@pytest.mark.timeout(300)
def test_a_corpus_the_steps_read_few_times_adapts_on_a_seeded_sample_and_indexes_every_document(
    tmp_path, monkeypatch, capsys
):
    import pyarrow.parquet as pq

    import graphtx.train.adapt as adapt_io
    from graphtx.build.sample import draw_sample

    monkeypatch.setattr(adapt_io, "ADAPT_SAMPLE_MIN", 2)  # (2,000 in use) so that 8 documents are a large corpus
    _peer(monkeypatch, tmp_path, [])
    source, out, config = _documents(tmp_path / "docs.jsonl", 8), tmp_path / "b", _config(tmp_path)
    base = ["build", str(source), "--out", str(out), "--config", str(config), "--device", "cpu", "--steps", "15"]
    assert main([*base, "--plan", "--json"]) == 0  # 15 steps of 2 anchors: 3.75 passes over 8, 15 over 2
    captured = capsys.readouterr()
    plan = json.loads(captured.out)["plan"]
    assert plan["documents"] == 8 and plan["model_documents"] == 2 and "sample" in plan["projected_s"]
    assert "on a seeded uniform 2 of the 8 documents; all are indexed" in captured.err
    assert "teacher minilm over 2 documents" in captured.err and "(15.0 passes, " in captured.err
    assert "(--steps all would read all 8 15 times: 60 steps" in captured.err and "note:" not in captured.err
    assert main([*base, "--json"]) == 0
    captured = capsys.readouterr()
    steps = json.loads((out / "build.json").read_text())["steps"]
    assert list(steps) == ["ingest", "parse", "sample", "tokens", "model", "index"]
    assert steps["sample"]["result"] == {"documents": 2, "of": 8, "seed": 0}
    assert steps["index"]["result"] == {"documents": 8}  # every document indexed, not the sample only
    corpus_ids = pq.read_table(out / "corpus" / "documents.parquet").column("id").to_pylist()
    sample_ids = pq.read_table(out / "sample" / "corpus" / "documents.parquet").column("id").to_pylist()
    graph_ids = set(pq.read_table(out / "sample" / "graphs" / "graphs.parquet").column("doc_id").to_pylist())
    assert sorted(sample_ids) == draw_sample(corpus_ids, 2, 0) and graph_ids == set(sample_ids)
    assert "2 documents' vectors" in captured.err  # the teacher encoded the sample only
    assert (
        "note: the model read 2 of the 8 documents" in captured.err
        and "--steps all reads every document 15 times (60 steps" in captured.err
    )
    assert "--ranker bm25" in captured.err  # what searches as well or better on such a corpus
    assert "build the part you search on its own" in captured.err  # a part read whole beat BM25
    assert json.loads((out / "run" / "summary.json").read_text())["documents_with_graphs"] == 2
    # again: every step up to date; then another seed draws its own sample
    assert main(base) == 0
    assert "sample: up to date" in capsys.readouterr().err
    assert main([*base, "--seed", "1", "--until", "sample"]) == 0
    assert "sample: projected" in capsys.readouterr().err
    resampled = pq.read_table(out / "sample" / "corpus" / "documents.parquet").column("id").to_pylist()
    assert sorted(resampled) == draw_sample(corpus_ids, 2, 1)
    # steps that read all 8 documents 5 times: no sample (adaptation helps most the documents it reads); the tokens
    # learn from the whole corpus, and the note says the passes are few of the 15
    assert main([*base, "--steps", "20", "--until", "tokens"]) == 0
    err = capsys.readouterr().err
    assert not (out / "sample").exists() and "sample" not in json.loads((out / "build.json").read_text())["steps"]
    assert "tokens: projected" in err and "teacher minilm over 8 documents" in err and "(5.0 passes, " in err
    # --steps all: the steps that read every one of the 8 documents 15 times, counted from the corpus; no sample
    assert main([*base[:-2], "--steps", "all", "--plan", "--json"]) == 0
    captured = capsys.readouterr()
    plan = json.loads(captured.out)["plan"]
    assert (plan["distillation_steps"], plan["passes"], plan["model_documents"]) == (
        60,
        15.0,
        8,
    ) and "sample" not in plan["projected_s"]
    assert "60 distillation steps (15.0 passes, " in captured.err


@pytest.mark.timeout(300)
def test_by_default_a_corpus_the_steps_would_sample_is_read_whole_when_the_plan_projects_it_within_the_hour(
    tmp_path, monkeypatch, capsys
):
    import graphtx.build.run as run_io
    import graphtx.train.adapt as adapt_io

    monkeypatch.setattr(adapt_io, "ADAPT_SAMPLE_MIN", 2)  # (2,000 in use) so that 8 documents are a large corpus
    _peer(monkeypatch, tmp_path, [])
    source, out, config = _documents(tmp_path / "docs.jsonl", 8), tmp_path / "b", tmp_path / "steps.yaml"
    config.write_text(yaml.safe_dump({"extends": str(_config(tmp_path)), "train": {"pretrain_steps": 15}}))
    base = ["build", str(source), "--out", str(out), "--config", str(config), "--device", "cpu"]

    def plan_of(*extra: str) -> tuple[dict, str]:
        assert main([*base, *extra, "--plan", "--json"]) == 0
        captured = capsys.readouterr()
        return json.loads(captured.out)["plan"], captured.err

    # 15 steps of 2 anchors would read the 8 documents 3.75 times: a sample of 2; all 8 read 15 times fit the hour
    plan, err = plan_of()
    assert (plan["model_documents"], plan["distillation_steps"], plan["passes"]) == (8, 60, 15.0)
    assert "sample" not in plan["projected_s"] and "reads every one of the 8 documents 15 times: projected" in err
    assert "(--steps 15 would sample 2 of them)" in err
    plan, err = plan_of("--steps", "15")  # steps named: the sample, as before
    assert (plan["model_documents"], plan["distillation_steps"]) == (2, 15) and "reads every one" not in err
    monkeypatch.setattr(run_io, "READ_ALL_WITHIN_S", 0.0)  # beyond the hour: the sample, and the plan says why
    plan, err = plan_of()
    assert plan["model_documents"] == 2 and "the model step about" in err and "more than the 0 s the default" in err
    monkeypatch.setattr(run_io, "READ_ALL_WITHIN_S", 3600.0)
    chosen = run_io.choose_teacher  # another teacher for every document (a CPU's MiniLM for mpnet): the sample
    monkeypatch.setattr(
        run_io,
        "choose_teacher",
        lambda configured, documents, *a, **k: (
            ("mpnet", "") if documents > 2 else chosen(configured, documents, *a, **k)
        ),
    )
    plan, err = plan_of()
    assert (plan["model_documents"], plan["teacher"]) == (2, "minilm") and "with mpnet as the teacher" in err
    monkeypatch.setattr(run_io, "choose_teacher", chosen)
    # a build begun reading every document goes on so where the default would now sample (another machine)
    assert main([*base, "--until", "tokens"]) == 0
    assert "reads every one of the 8 documents" in capsys.readouterr().err and not (out / "sample").exists()
    monkeypatch.setattr(run_io, "READ_ALL_WITHIN_S", 0.0)
    plan, err = plan_of()
    assert plan["model_documents"] == 8 and "the build began so" in err and plan["read_all_by_default"]
    # and one begun on the sample keeps it where the default would now read every document
    assert main([*base, "--steps", "15", "--until", "tokens"]) == 0
    assert (out / "sample").is_dir()
    capsys.readouterr()
    monkeypatch.setattr(run_io, "READ_ALL_WITHIN_S", 3600.0)
    plan, err = plan_of()
    assert plan["model_documents"] == 2 and "the build began on the sample" in err and not plan["read_all_by_default"]


@pytest.mark.timeout(300)
def test_the_plan_counts_a_parse_the_parse_cache_holds(tmp_path, monkeypatch, capsys):
    _peer(monkeypatch, tmp_path, [])
    config = _config(tmp_path)  # its parse cache in tmp_path
    first = ["build", str(GRANTS), "--out", str(tmp_path / "b1"), "--config", str(config), "--until", "parse"]
    assert main([*first, "--json"]) == 0
    parsed = json.loads(capsys.readouterr().out)["steps"]["parse"]["projected_s"]
    plan = ["build", str(GRANTS), "--out", str(tmp_path / "b2"), "--config", str(config), "--plan", "--json"]
    assert main(plan) == 0  # another build of the same documents: its parse is in the cache
    captured = capsys.readouterr()
    assert "(1 of its 1 shards in the parse cache)" in captured.err
    assert json.loads(captured.out)["plan"]["projected_s"]["parse"] <= parsed


@pytest.mark.timeout(60)
def test_the_sample_is_the_seeded_uniform_draw_the_measured_control_used():
    """build's draw is subset_corpus.py's fill with no document kept (transfer-ft-42k-random measured it)."""
    import importlib.util

    from graphtx.build.sample import draw_sample

    spec = importlib.util.spec_from_file_location(
        "subset_corpus", REPO_ROOT / "benchmarks" / "studies" / "subset_corpus.py"
    )
    subset = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(subset)
    choose = subset.choose

    ids = [f"US-{n}" for n in (5, 3, 9, 1, 7, 2, 8, 6, 4, 0)]
    for seed in (0, 1, 2):
        drawn = draw_sample(ids, 4, seed)
        assert len(drawn) == 4 and set(drawn) <= set(ids) and drawn == sorted(drawn)
        assert set(drawn) == choose(ids, set(), 4, seed) and drawn == draw_sample(list(reversed(ids)), 4, seed)
    assert draw_sample(ids, 10, 0) == sorted(ids) and draw_sample(ids, 12, 0) == sorted(ids)
    assert len({tuple(draw_sample(ids, 4, s)) for s in range(6)}) > 1  # the seed matters


@pytest.mark.timeout(300)
def test_the_study_script_draws_a_sample_of_another_size_as_the_build_draws(tmp_path, monkeypatch, capsys):
    """benchmarks/studies/build_sample.py (transfer-ft-42k-passes): the build's own draw and sample layout, any size."""
    import importlib.util

    import pyarrow.parquet as pq

    from graphtx.build.sample import draw_sample

    spec = importlib.util.spec_from_file_location(
        "build_sample", REPO_ROOT / "benchmarks" / "studies" / "build_sample.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    _peer(monkeypatch, tmp_path, [])
    source, out = _documents(tmp_path / "docs.jsonl", 8), tmp_path / "b"
    with pytest.raises(SystemExit):  # nothing parsed yet: refused with the command that parses
        script.main([str(out), "--size", "3", "--seed", "1", "--out", str(tmp_path / "s")])
    assert "--until parse" in capsys.readouterr().err
    config = _config(tmp_path)
    assert main(["build", str(source), "--out", str(out), "--config", str(config), "--until", "parse", "--quiet"]) == 0
    assert script.main([str(out), "--size", "3", "--seed", "1", "--out", str(tmp_path / "s")]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {"documents": 3, "of": 8, "seed": 1}
    corpus_ids = pq.read_table(out / "corpus" / "documents.parquet").column("id").to_pylist()
    sample_ids = pq.read_table(tmp_path / "s" / "corpus" / "documents.parquet").column("id").to_pylist()
    graph_ids = set(pq.read_table(tmp_path / "s" / "graphs" / "graphs.parquet").column("doc_id").to_pylist())
    assert sorted(sample_ids) == draw_sample(corpus_ids, 3, 1) and graph_ids == set(sample_ids)
    with pytest.raises(SystemExit):  # not into the build's own sample, which a resumed build would take for its own
        script.main([str(out), "--size", "3", "--seed", "1", "--out", str(out / "sample")])
    assert "the build's own sample" in capsys.readouterr().err and not (out / "sample").exists()
    assert script.main([str(out), "--size", "9", "--seed", "1", "--out", str(tmp_path / "all")]) == 0
    assert "covers all 8 parsed documents" in capsys.readouterr().err


@pytest.mark.timeout(300)
def test_mpnet_vectors_a_build_left_in_the_peer_cache_keep_mpnet_where_encoding_them_would_cost_too_much(
    tmp_path, monkeypatch, capsys
):
    from graphtx.build import plan as build_plan

    _peer(monkeypatch, tmp_path, [])
    # on this CPU any document left to encode with mpnet is too many
    monkeypatch.setattr(build_plan, "MPNET_CPU_HOUR_DOCUMENTS", 0)
    config = tmp_path / "mpnet.yaml"
    config.write_text(yaml.safe_dump({"extends": str(_config(tmp_path)), "train": {"pretrain_teacher": "mpnet"}}))
    base = ["build", str(GRANTS), "--config", str(config), "--device", "cpu"]
    assert main([*base, "--out", str(tmp_path / "plan1"), "--plan"]) == 0
    err = capsys.readouterr().err
    assert "teacher: all-MiniLM-L6-v2, not all-mpnet-base-v2" in err and "for 2 documents (" in err  # none cached
    # mpnet asked for by name: the build encodes both grants with it, and its vectors stay in the peer vector cache
    assert main([*base, "--out", str(tmp_path / "b1"), "--teacher", "mpnet", "--until", "model"]) == 0
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "plan2"), "--plan"]) == 0
    err = capsys.readouterr().err
    assert "not all-mpnet-base-v2" not in err and "; teacher: mpnet" in err
    assert "teacher mpnet over 2 documents (0 s; 2 of their vectors cached)" in err
