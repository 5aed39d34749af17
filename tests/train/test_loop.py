"""Training end to end on the synthetic corpus: learning, exact resume, the CLI, curves."""

from __future__ import annotations

import json

import pytest
import torch

from graphtx.cli import main
from graphtx.config import load_config
from graphtx.model.io import load_model
from graphtx.train.run import train


def _train_args(root, out, *extra):
    return [
        "train",
        "--config",
        str(root / "tiny.yaml"),
        "--corpus",
        str(root / "corpus"),
        "--graphs",
        str(root / "graphs"),
        "--tokens",
        str(root / "tokens"),
        "--citations",
        str(root / "train.tsv"),
        "--valid-citations",
        str(root / "valid.tsv"),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def test_training_beats_the_untrained_model_and_writes_a_run(synthetic, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_train_args(synthetic, out, "--json")) == 0
    summary = json.loads(capsys.readouterr().out)
    evals = [json.loads(line) for line in (out / "base" / "evals.jsonl").read_text().splitlines()]
    untrained = evals[0]["recall"]
    chance = 3 / 95  # top 3 of 95 candidates
    assert summary["stages"]["base"]["best_recall"] > max(untrained + 0.15, 3 * chance)
    d = summary["data"]
    # 144 training citations: the latest 15% of their queries (the 2005 documents) select, the rest train, minus those citing a selection query
    assert (
        d["citation_pairs"]
        + d["selection_citations"]
        + d["skipped_citations"]["cited document is a selection query (or its family)"]
        == 144
    )
    assert d["selection"]["queries"] == 11 and d["selection"]["dates"] == ["2005-01-01", "2005-01-01"]
    assert d["trivial_pairs"] == round(0.2 * d["citation_pairs"])
    selection = {line.split("\t")[0] for line in (out / "selection_citations.tsv").read_text().splitlines()[1:]}
    assert len(selection) == 11 and all(q.endswith("-5") for q in selection)  # the latest training year
    # validation: scored once at the end, on all 24 queries: trivial pairs come from documents no later than training's queries
    v = summary["validation"]
    assert (v["queries"], v["pairs"], v["trained_queries_left_out"]) == (24, 48, 0) and summary[
        "selected_on"
    ] == "selection"
    # the same run directory with another selection split is refused, not resumed on stages chosen on other queries
    args = _train_args(synthetic, out, "--json")
    assert main([*args[:1], "--config", str(_with_share(synthetic, tmp_path, 0.3)), *args[3:]]) == 2
    assert "selected on other queries (another selection split)" in capsys.readouterr().err
    # the run's model is its best validated stage (the reduction stage ships only when it is at least as good)
    final = summary["final_stage"]
    assert summary["stages"][final]["best_recall"] == max(s["best_recall"] for s in summary["stages"].values())
    assert (out / "model" / "fingerprint.txt").read_text() == (out / final / "best" / "fingerprint.txt").read_text()
    loaded_dir = load_model(out / "reduced" / "best")
    model, config = loaded_dir.model, loaded_dir.config
    assert (
        config.reduced_dim == 8 and model.moe is not None
    )  # the reduction stage ends with the MoE head and a reduced output
    assert summary["stages"]["reduced"]["best_recall"] > untrained
    log = [json.loads(line) for line in (out / "base" / "log.jsonl").read_text().splitlines()]
    assert {"loss", "active_triplets", "graphs", "nodes", "graphs_per_s", "lr"} <= set(log[0])
    assert main(["plot", str(out), "--quiet"]) == 0 and (out / "curves.png").stat().st_size > 10_000


def _with_share(synthetic, tmp_path, share: float):
    import yaml

    data = yaml.safe_load((synthetic / "tiny.yaml").read_text())
    data["train"]["selection_share"] = share
    path = tmp_path / f"share{share}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_validation_queries_in_the_training_file_are_left_out_of_the_report_and_warned_about(
    synthetic, tmp_path, capsys
):
    both = (
        tmp_path / "both.tsv"
    )  # the training file holds the validation citations too: they train (or select) and are not reported
    both.write_text(
        (synthetic / "train.tsv").read_text()
        + "".join(f"{line}\tX\n" for line in (synthetic / "valid.tsv").read_text().splitlines())
    )
    args = _train_args(synthetic, tmp_path / "run", "--json", "--stages", "base", "--max-epochs", "1")
    args[args.index("--citations") + 1] = str(both)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "warning: 24 validation queries are also training, selection or ranker queries" in err
    assert "no validation queries in" in err and "does --citations hold the validation citations?" in err
    summary = json.loads(
        (tmp_path / "run" / "summary.json").read_text()
    )  # written before the error: the model is there
    assert summary["validation"] == {"queries": 0, "trained_queries_left_out": 24}


def test_training_never_reads_the_validation_citations_before_its_final_report(
    synthetic, tmp_path, monkeypatch, capsys
):
    """The validation file is malformed (reading it raises) until the run has chosen its model: selection,
    early stopping and the stage that ships are decided on held-out training queries alone."""
    import graphtx.train.run as run

    valid = tmp_path / "valid.tsv"
    valid.write_text("this line is not a citation\n")
    chosen = []

    def read_at_the_end(prepared, docs):
        chosen.append(
            (tmp_path / "run" / "base" / "done.json").is_file()
            and (tmp_path / "run" / "reduced" / "done.json").is_file()
        )
        valid.write_text((synthetic / "valid.tsv").read_text())
        return real(prepared, docs)

    real = run.read_held_out
    monkeypatch.setattr(run, "read_held_out", read_at_the_end)
    args = _train_args(synthetic, tmp_path / "run", "--json")
    args[args.index("--valid-citations") + 1] = str(valid)
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert chosen == [True]  # read once, after both stages finished
    assert summary["validation"]["queries"] > 0 and summary["data"]["selection"]["queries"] == 11
    # unpatched, the malformed file fails the run only at its end, naming the file (the stages are kept)
    monkeypatch.setattr(run, "read_held_out", real)
    valid.write_text("this line is not a citation\n")
    with pytest.raises(ValueError, match="valid.tsv: line 1"):
        run.train(
            load_config(synthetic / "tiny.yaml"),
            str(synthetic / "corpus"),
            str(synthetic / "graphs"),
            str(tmp_path / "run"),
            tokens_dir=str(synthetic / "tokens"),
            citations=str(synthetic / "train.tsv"),
            valid_citations=str(valid),
            progress=False,
        )


def test_final_stage_is_the_best_validated_one_ties_to_the_later():
    from graphtx.train.run import pick_final_stage

    assert pick_final_stage(("base", "reduced"), {"base": 0.30, "reduced": 0.25}) == "base"
    assert pick_final_stage(("base", "reduced"), {"base": 0.30, "reduced": 0.30}) == "reduced"
    assert pick_final_stage(("base",), {"base": -1.0}) == "base"


def test_killed_run_resumes_to_identical_weights(synthetic, tmp_path):
    config = load_config(synthetic / "tiny.yaml")
    kwargs = dict(
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
        device="cpu",  # bit for bit is the CPU's promise; on a GPU atomic scatter-adds sum in any order (tests/train/test_cuda.py)
    )
    import dataclasses

    config = dataclasses.replace(config, train=dataclasses.replace(config.train, stages=("base",), max_epochs=2))
    args = (config, str(synthetic / "corpus"), str(synthetic / "graphs"))
    full = train(*args, str(tmp_path / "full"), **kwargs)
    # "kill" after 5 steps (the last checkpoint is at step 4: step 5 is lost and redone), then resume
    partial = train(*args, str(tmp_path / "killed"), stop_after_steps=5, **kwargs)
    assert partial == {"interrupted": "base", "step": 5}
    resumed = train(*args, str(tmp_path / "killed"), **kwargs)
    assert resumed["stages"] == full["stages"]
    a = load_model(tmp_path / "full" / "model").model
    b = load_model(tmp_path / "killed" / "model").model
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    lines = lambda d: (d / "base" / "log.jsonl").read_text().splitlines()  # noqa: E731
    assert [json.loads(x)["loss"] for x in lines(tmp_path / "full")] == [
        json.loads(x)["loss"] for x in lines(tmp_path / "killed")
    ]


def test_bad_inputs_give_clear_errors(synthetic, tmp_path, capsys):
    args = _train_args(synthetic, tmp_path / "r")
    i = args.index("--valid-citations")
    assert (
        main(
            [*args[:i], *args[i + 2 :], "--stages", "base", "--max-steps", "2", "--json", "--out", str(tmp_path / "r0")]
        )
        == 0
    )
    assert "validation" not in json.loads(
        capsys.readouterr().out
    )  # no validation file: selection needs none, nothing is reported
    (tmp_path / "none.tsv").write_text("X-1\tY-2\n")
    args[i + 1] = str(tmp_path / "none.tsv")
    assert main(args) == 2  # said at the end: the run never reads the validation file before its final report
    err = capsys.readouterr().err
    assert "no validation queries" in err and "the model is trained and saved" in err
    (tmp_path / "missing.tsv").unlink(missing_ok=True)
    args[i + 1] = str(tmp_path / "missing.tsv")
    assert main(args) == 2  # a path that does not exist: said before any training
    assert "--valid-citations" in capsys.readouterr().err and not (tmp_path / "r2").exists()


@pytest.mark.timeout(420)
def test_kill_9_from_the_cli_then_same_command_resumes(synthetic, tmp_path):
    """A real SIGKILL mid-stage; rerunning the command finishes with the weights of an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cfg = tmp_path / "cfg.yaml"
    import yaml

    data = yaml.safe_load((synthetic / "tiny.yaml").read_text())
    data["train"].update(
        stages=["base"], max_epochs=6, checkpoint_every_steps=1, early_stop_evals=100
    )  # runway: on a quiet machine 3 epochs ended within 0.3 s of the first checkpoint
    cfg.write_text(yaml.safe_dump(data))

    def command(out):
        args = _train_args(synthetic, out, "--device", "cpu")  # bit for bit: the CPU's promise (see above)
        args[args.index("--config") + 1] = str(cfg)
        return [sys.executable, "-m", "graphtx.cli", *args]

    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run(command(tmp_path / "full"), check=True, env=env, capture_output=True, timeout=180)
    proc = subprocess.Popen(command(tmp_path / "killed"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        checkpoint = tmp_path / "killed" / "base" / "checkpoint.pt"
        deadline = time.time() + 120
        while not checkpoint.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert not (tmp_path / "killed" / "base" / "done.json").exists(), "the run finished before it could be killed"
    subprocess.run(command(tmp_path / "killed"), check=True, env=env, capture_output=True, timeout=180)
    a = load_model(tmp_path / "full" / "model").model
    b = load_model(tmp_path / "killed" / "model").model
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    steps = [json.loads(x)["step"] for x in (tmp_path / "killed" / "base" / "log.jsonl").read_text().splitlines()]
    assert steps == sorted(set(steps)), "every step logged once"


def test_corpus_without_citations_trains_on_trivial_pairs_with_known_item_validation(synthetic, tmp_path, capsys):
    import yaml

    data = yaml.safe_load((synthetic / "tiny.yaml").read_text())
    data["train"].update(split="random", valid_share=0.2, test_share=0.1, max_epochs=3, stages=["base"])
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(data))
    args = [
        "train",
        "--config",
        str(cfg),
        "--corpus",
        str(synthetic / "corpus"),
        "--graphs",
        str(synthetic / "graphs"),
        "--tokens",
        str(synthetic / "tokens"),
        "--out",
        str(tmp_path / "run"),
        "--quiet",
        "--json",
    ]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    d = summary["data"]
    assert d["judgements"].startswith("known-item") and d["citation_pairs"] == 0
    # every document has distinct graphs: each trains, selects, validates or tests, once
    assert (
        d["trivial_pairs"] + d["selection"]["queries"] + summary["validation"]["queries"] + summary["test"]["queries"]
        == 96
    )
    assert d["selection"]["queries"] > 0 and summary["test"]["queries"] > 0 and 0 < summary["test"]["ndcg"] <= 1


def test_evaluations_during_warmup_spend_no_patience(synthetic, tmp_path):
    """With an LR too small to change anything every evaluation after the first is 'no gain':
    without warm-up the stage stops early; while the LR is still warming up it must not."""
    import dataclasses

    config = load_config(synthetic / "tiny.yaml")
    kwargs = dict(
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    stopped = {}
    for warmup in (0, 10_000):
        t = dataclasses.replace(
            config.train,
            stages=("base",),
            max_epochs=2,
            evals_per_epoch=3,
            early_stop_evals=1,
            plateau_patience=1,
            lr=1e-12,
            warmup_steps=warmup,
        )
        summary = train(
            dataclasses.replace(config, train=t),
            str(synthetic / "corpus"),
            str(synthetic / "graphs"),
            str(tmp_path / f"w{warmup}"),
            **kwargs,
        )
        stopped[warmup] = summary["stages"]["base"]["stopped"]
    assert stopped == {0: "early stop", 10_000: "max epochs"}


def test_token_lr_scale_zero_keeps_the_pretrained_token_table(synthetic, tmp_path):
    import dataclasses

    from graphtx.model.embed import init_model

    config = load_config(synthetic / "tiny.yaml")
    kwargs = dict(
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    start, _ = init_model(config.model.as_base(), synthetic / "tokens", config.seed)
    tables = {}
    for scale in (0.0, 1.0):
        t = dataclasses.replace(config.train, stages=("base",), max_steps=4, token_lr_scale=scale, evals_per_epoch=1)
        train(
            dataclasses.replace(config, train=t),
            str(synthetic / "corpus"),
            str(synthetic / "graphs"),
            str(tmp_path / f"s{scale}"),
            **kwargs,
        )
        model = load_model(tmp_path / f"s{scale}" / "base" / "best").model
        tables[scale] = model.swem.embedding.weight
        assert not torch.equal(model.swem.proj.weight, start.swem.proj.weight)  # the rest of the model trained
    assert torch.equal(tables[0.0], start.swem.embedding.weight)
    assert not torch.equal(tables[1.0], start.swem.embedding.weight)


def test_infonce_loss_also_learns_the_planted_citations(synthetic, tmp_path):
    import dataclasses

    config = load_config(synthetic / "tiny.yaml")
    t = dataclasses.replace(config.train, stages=("base",), loss="infonce", temperature=0.1)
    summary = train(
        dataclasses.replace(config, train=t),
        str(synthetic / "corpus"),
        str(synthetic / "graphs"),
        str(tmp_path / "run"),
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    untrained = json.loads((tmp_path / "run" / "base" / "evals.jsonl").read_text().splitlines()[0])["recall"]
    assert summary["stages"]["base"]["best_recall"] > untrained + 0.15


def test_select_metric_ndcg_keeps_the_best_ndcg_evaluation(synthetic, tmp_path):
    import dataclasses

    config = load_config(synthetic / "tiny.yaml")
    t = dataclasses.replace(config.train, stages=("base",), select_metric="ndcg", max_epochs=3)
    summary = train(
        dataclasses.replace(config, train=t),
        str(synthetic / "corpus"),
        str(synthetic / "graphs"),
        str(tmp_path / "run"),
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    evals = [
        json.loads(x)
        for x in (tmp_path / "run" / "base" / "evals.jsonl").read_text().splitlines()
        if not json.loads(x)["reference"]
    ]
    best = max(evals, key=lambda r: r["ndcg"])  # first of equals, as the strict '>' keeps
    stage = summary["stages"]["base"]
    assert (stage["best_ndcg"], stage["best_step"]) == (best["ndcg"], best["step"])
    assert [r["improved"] for r in evals].count(True) >= 1 and all(r["ndcg"] <= best["ndcg"] for r in evals)


def test_lexical_in_loss_scores_the_searched_vector(synthetic, tmp_path):
    """train.lexical_in_loss: the loss sees [graph ; lexical channel], so the same seed and batches give another loss; off, the channel changes nothing."""
    import dataclasses

    config = load_config(synthetic / "tiny.yaml")
    kwargs = dict(
        tokens_dir=str(synthetic / "tokens"),
        citations=str(synthetic / "train.tsv"),
        valid_citations=str(synthetic / "valid.tsv"),
        progress=False,
    )
    first_loss = {}
    for name, lexical_dim, in_loss in (("plain", 0, False), ("off", 16, False), ("on", 16, True)):
        model = dataclasses.replace(config.model, lexical_dim=lexical_dim)
        t = dataclasses.replace(
            config.train, stages=("base",), loss="infonce", max_steps=1, evals_per_epoch=1, lexical_in_loss=in_loss
        )
        train(
            dataclasses.replace(config, model=model, train=t),
            str(synthetic / "corpus"),
            str(synthetic / "graphs"),
            str(tmp_path / name),
            **kwargs,
        )
        first_loss[name] = json.loads((tmp_path / name / "base" / "log.jsonl").read_text().splitlines()[0])["loss"]
    assert first_loss["off"] == first_loss["plain"]  # the channel off the loss: training is unchanged
    assert abs(first_loss["on"] - first_loss["off"]) > 1e-4  # in the loss: the scores include the lexical cosine
    assert load_model(tmp_path / "on" / "model").config.lexical_dim == 16


@pytest.mark.timeout(300)
def test_train_fits_the_learned_ranker_on_its_held_out_queries(synthetic, tmp_path, capsys):
    """train.ranker_holdout > 0: `graphtx train` ends with rank-fit on the held-out queries (pools cut as eval.cutoff); a rerun keeps it."""
    pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")
    import yaml

    cfg = yaml.safe_load((synthetic / "tiny.yaml").read_text())
    cfg["train"] |= {"stages": ["base"], "ranker_holdout": 0.3, "max_epochs": 1}
    cfg["rank"] = {"depth": 20, "folds": 2, "min_data_in_leaf": 3, "num_leaves_grid": [3], "max_rounds": 10, "bag": 1}
    (tmp_path / "hold.yaml").write_text(yaml.safe_dump(cfg))
    args = _train_args(synthetic, tmp_path / "run", "--json")
    args[args.index("--config") + 1] = str(tmp_path / "hold.yaml")
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    meta = json.loads((tmp_path / "run" / "model" / "ranker" / "ranker.json").read_text())
    assert summary["ranker"]["report"]["cutoff"] == meta["report"]["cutoff"] == "priority"
    from graphtx.text.field import FieldProfile, read_model_profile

    learned_on = read_model_profile(tmp_path / "run" / "model")  # the model's corpus and the ranker's: the same one
    assert learned_on is not None and learned_on == FieldProfile.from_json(meta["corpus_profile"])
    assert (
        meta["report"]["citations"] == [str(tmp_path / "run" / "ranker_citations.tsv")]
        and summary["ranker"]["report"]["queries"] > 0
    )
    assert (
        main([a for a in args if a != "--json"]) == 0
    )  # the finished run again: the ranker fitted on this model is kept
    assert "already fitted on this model" in capsys.readouterr().out
    assert main([*[a for a in args if a != "--json"], "--no-rank-fit"]) == 0
    printed = capsys.readouterr().out
    assert "ranker (graphtx rank-fit" not in printed and "already fitted" not in printed
