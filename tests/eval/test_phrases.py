"""Phrase similarity: reader, metrics, the untrained scorers, fine-tuning, the CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from scipy import stats

from graphtx.cli import main
from graphtx.eval.phrases import (
    PhraseConfig,
    PhrasePairs,
    PhraseSimilarityModel,
    cosent_loss,
    cpc_class,
    fine_tune,
    pearson_spearman,
    pretrained_model,
    read_phrase_pairs,
    score,
    split_by_anchor,
)
from tests.text import FIELDS

HEADER = "anchor,target,rating,score,context\n"
WORDS = sorted(w for words in FIELDS.values() for w in words)  # 30 words of three technical fields
FIELD_OF = {w: f for f, words in FIELDS.items() for w in words}


class WordTokenizer:
    """One id per known word (split on whitespace); 0 = pad, 1 = unknown."""

    pad_id = 0

    def __init__(self, words: list[str]):
        self.ids = {w: i + 2 for i, w in enumerate(words)}
        self.vocab_size = len(words) + 2

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [[self.ids.get(w, 1) for w in t.lower().split()] for t in texts]


def synthetic_pairs(contexts=("H01", "B60")) -> PhrasePairs:
    """Every ordered pair of distinct words; score 0.75 when both are of one field, else 0 (known function)."""
    rows = [
        (a, b, 0.75 if FIELD_OF[a] == FIELD_OF[b] else 0.0, contexts[(i + j) % len(contexts)])
        for (i, a), (j, b) in itertools.permutations(enumerate(WORDS), 2)
    ]
    anchor, target, gold, context = (np.array(col) for col in zip(*rows))
    return PhrasePairs(anchor, target, gold.astype(np.float64), context)


def random_vectors(vocab_size: int, dim: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(vocab_size, dim)).astype(np.float32)  # say nothing about fields
    vectors[0] = 0
    return vectors


TINY = PhraseConfig(epochs=4, batch_size=32, lr=0.03, dev_fraction=0.2, embedding_dropout=0.0)


# --- reader ----------------------------------------------------------------------


def test_reader_keeps_good_rows_and_lists_each_skipped_row_with_its_reason(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(
        HEADER
        + "auger housing,snow auger,2,0.75,A01\n"  # line 2: good
        + "battery,cell,1,0.5,h01,extra\n"  # 3: a field too many
        + "valve,seat,1\n"  # 4: too few
        + ",seat,1,0.5,F16\n"  # 5: empty anchor
        + "valve,seat,1,high,F16\n"  # 6: not a number
        + "valve,seat,1,1.5,F16\n"  # 7: out of range
        + "valve,seat,1,nan,F16\n"  # 8: nan
        + "valve,seat,1,0.5,\n"  # 9: empty context
        + '"stem, long",piston,0,0.25, f16 \n'  # 10: good (quoted comma, context normalised)
    )
    pairs = read_phrase_pairs(path)
    assert pairs.anchor.tolist() == ["auger housing", "stem, long"]
    assert pairs.score.tolist() == [0.75, 0.25] and pairs.context.tolist() == ["A01", "F16"]
    reasons = {s.line: s.reason for s in pairs.skipped}
    assert sorted(reasons) == [3, 4, 5, 6, 7, 8, 9]
    assert "6 fields" in reasons[3] and "too few" in reasons[4] and "empty anchor" in reasons[5]
    assert (
        "not a number" in reasons[6]
        and "[0, 1]" in reasons[7]
        and "[0, 1]" in reasons[8]
        and "empty context" in reasons[9]
    )
    assert "skipped=7" in repr(pairs)


def test_reader_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_phrase_pairs(tmp_path / "nope.csv")
    (tmp_path / "cols.csv").write_text("anchor,target,rating\na,b,1\n")
    with pytest.raises(ValueError, match="missing column.*score, context"):
        read_phrase_pairs(tmp_path / "cols.csv")
    (tmp_path / "bad.csv").write_text(HEADER + "a,b,1,x,A01\n")
    with pytest.raises(ValueError, match="no readable phrase pairs.*line 2: score 'x'"):
        read_phrase_pairs(tmp_path / "bad.csv")
    (tmp_path / "huge.csv").write_text(HEADER + "a,b,1,0.5,A01\n" + "x" * 200_000 + ",c,1,0.5,A01\n")
    with pytest.raises(ValueError, match="not readable as CSV after line 2.*field larger"):
        read_phrase_pairs(tmp_path / "huge.csv")


def test_dev_split_holds_out_whole_anchors():
    pairs = synthetic_pairs()
    fit, dev = split_by_anchor(pairs, 0.2, seed=0)
    assert len(fit) + len(dev) == len(pairs) and not set(fit) & set(dev)
    assert not set(pairs.anchor[fit]) & set(pairs.anchor[dev])
    assert len(set(pairs.anchor[dev])) == 6  # 20% of 30 anchors
    assert np.array_equal(split_by_anchor(pairs, 0.2, seed=0)[1], dev)
    assert not np.array_equal(split_by_anchor(pairs, 0.2, seed=1)[1], dev)
    assert len(split_by_anchor(pairs, 0.0, seed=0)[1]) == 0


# --- metrics and losses ----------------------------------------------------------


def test_pearson_spearman_equal_scipy_on_a_fixed_example():
    pred = [0.1, 0.4, 0.35, 0.8, 0.7, 0.2]
    gold = [0.0, 0.5, 0.25, 1.0, 0.75, 0.25]
    p, s = pearson_spearman(pred, gold)
    assert p == pytest.approx(stats.pearsonr(pred, gold)[0], abs=1e-12)
    assert s == pytest.approx(stats.spearmanr(pred, gold)[0], abs=1e-12)
    # by hand: Pearson = corrcoef; Spearman = Pearson of ranks, tied gold 0.25s share rank 2.5
    assert p == pytest.approx(np.corrcoef(pred, gold)[0, 1], abs=1e-12)
    assert s == pytest.approx(np.corrcoef([1, 4, 3, 6, 5, 2], [1, 4, 2.5, 6, 5, 2.5])[0, 1], abs=1e-12)
    assert all(math.isnan(x) for x in pearson_spearman([1, 1, 1], [0, 0.5, 1]))  # constant: nan, no warning
    with pytest.raises(ValueError, match="one length"):
        pearson_spearman([1, 2], [1, 2, 3])


def test_cosent_equals_its_pairwise_definition():
    cos = torch.tensor([0.9, 0.2, 0.5, 0.4], dtype=torch.float64)
    gold = torch.tensor([1.0, 0.5, 0.5, 0.0], dtype=torch.float64)
    terms = [math.exp(20 * (cos[j] - cos[i])) for i in range(4) for j in range(4) if gold[i] > gold[j]]
    assert float(cosent_loss(cos, gold, 20.0)) == pytest.approx(math.log(1 + sum(terms)), rel=1e-12)
    assert float(cosent_loss(cos, torch.ones(4, dtype=torch.float64))) == 0.0  # all tied: nothing to rank


# --- the untrained scorers -------------------------------------------------------


def _cos(x: np.ndarray, y: np.ndarray) -> float:
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def test_untrained_scorers_are_cosines_of_pooled_token_vectors():
    tok = WordTokenizer(WORDS)
    vectors = random_vectors(tok.vocab_size, 6).astype(np.float64)
    pairs = PhrasePairs(
        np.array(["battery cell", "valve"]),
        np.array(["cell anode cathode", "valve seat"]),
        np.array([0.5, 0.75]),
        np.array(["H01", "F16"]),
    )
    pooled = {}
    for phrase in set(pairs.anchor) | set(pairs.target):
        e = vectors[tok.encode_batch([phrase])[0]]
        pooled[phrase] = (e.mean(0), np.concatenate([e.mean(0), e.max(0)]))
    for k, pool in enumerate(["mean", "mean+max"]):
        got = score(pretrained_model(tok, vectors.astype(np.float32), pool), pairs)
        want = [_cos(pooled[a][k], pooled[b][k]) for a, b in zip(pairs.anchor, pairs.target)]
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_fine_tuning_model_starts_at_the_untrained_swem_and_maps_contexts():
    tok, pairs = WordTokenizer(WORDS), synthetic_pairs()
    vectors = random_vectors(tok.vocab_size, 6)
    model = PhraseSimilarityModel(tok, 6, contexts=["H01", "B60", "h01"], embedding_dropout=0.5)
    model.encoder.load_token_vectors(vectors)
    assert model.classes == ("[UNK]", "B60", "H01") and model.sections == ("[UNK]", "B", "H")
    classes, sections = model.context_rows(["H01", " b60x", "A47", ""])
    assert classes.tolist() == [2, 1, 0, 0] and sections.tolist() == [2, 1, 0, 0]  # unseen class and section -> unknown
    np.testing.assert_allclose(score(model, pairs), score(pretrained_model(tok, vectors), pairs), atol=1e-6)
    assert cpc_class(" a47b ") == "A47" and "FiLM" in repr(model)


# --- fine-tuning -----------------------------------------------------------------


def test_fine_tuning_learns_a_known_similarity_on_held_out_anchors():
    tok, pairs = WordTokenizer(WORDS), synthetic_pairs()
    model = fine_tune(pairs, tok, random_vectors(tok.vocab_size, 8), TINY, seed=0, progress=False)
    untrained, best = model.history[0], model.history[model.best_epoch]
    assert abs(untrained["dev_pearson"]) < 0.3  # random vectors know nothing of the fields
    assert model.best_epoch > 0 and best["dev_pearson"] > untrained["dev_pearson"] + 0.4
    assert len(model.history) == TINY.epochs + 1 and not model.training


def test_fine_tuning_is_deterministic_and_leaves_global_state_alone():
    tok, pairs = WordTokenizer(WORDS), synthetic_pairs()
    vectors = random_vectors(tok.vocab_size, 8)
    cfg = PhraseConfig(epochs=2, batch_size=32, lr=0.03, dev_fraction=0.2, embedding_dropout=0.2, context_dropout=0.2)
    rng_before, threads_before = torch.random.get_rng_state(), torch.get_num_threads()
    first = score(fine_tune(pairs, tok, vectors, cfg, seed=3, progress=False), pairs)
    assert torch.equal(torch.random.get_rng_state(), rng_before) and torch.get_num_threads() == threads_before
    assert np.array_equal(score(fine_tune(pairs, tok, vectors, cfg, seed=3, progress=False), pairs), first)
    assert not np.array_equal(score(fine_tune(pairs, tok, vectors, cfg, seed=4, progress=False), pairs), first)


def test_config_checks():
    with pytest.raises(ValueError, match="loss"):
        PhraseConfig(loss="hinge")
    with pytest.raises(ValueError, match="dev_fraction"):
        PhraseConfig(dev_fraction=1.0)
    with pytest.raises(ValueError, match="unknown key"):
        PhraseConfig.from_dict({"epoch": 3})
    assert PhraseConfig.from_dict({"epochs": 3}).epochs == 3


def test_config_loss_names_are_the_fine_tuning_losses():
    """The torch-free config checks names that the fine-tuning module maps to the losses of graphtx.train.loss."""
    from graphtx.eval.phrases.config import LOSS_NAMES
    from graphtx.eval.phrases.finetune import LOSSES

    assert tuple(LOSSES) == LOSS_NAMES
    for name in LOSS_NAMES:
        PhraseConfig(loss=name)


# --- CLI -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory):
    """A tokens directory (tiny BPE + random vectors) and train/valid CSVs of synthetic pairs."""
    from graphtx.text.bpe import train_bpe
    from graphtx.text.pretrain import VECTORS_FILE

    root = tmp_path_factory.mktemp("phrases")
    tokens = root / "tokens"
    tokenizer = train_bpe(iter(WORDS * 5), vocab_size=200, min_frequency=2)
    tokenizer.save(tokens)
    np.save(tokens / VECTORS_FILE, random_vectors(tokenizer.vocab_size, 8))
    (tokens / "manifest.json").write_text(json.dumps({"fingerprint": "tiny"}))
    pairs = synthetic_pairs()
    valid_anchors = set(WORDS[::5])
    lines = {"train": [], "valid": []}
    for a, t, s, c in zip(pairs.anchor, pairs.target, pairs.score, pairs.context):
        lines["valid" if a in valid_anchors else "train"].append(f"{a},{t},x,{s},{c}\n")
    (root / "train.csv").write_text(HEADER + "".join(lines["train"]))
    (root / "valid.csv").write_text(HEADER + "".join(lines["valid"]) + "valve,seat,x,oops,F16\n")
    return root


def test_cli_eval_phrases_end_to_end(tiny_files, tmp_path, capsys):
    args = [
        "eval",
        "phrases",
        "--tokens",
        str(tiny_files / "tokens"),
        "--train",
        str(tiny_files / "train.csv"),
        "--valid",
        str(tiny_files / "valid.csv"),
        "--epochs",
        "2",
        "--seed",
        "1",
        "--quiet",
    ]
    assert main([*args, "--json", "--out", str(tmp_path / "res")]) == 3  # finished, one valid row skipped
    summary = json.loads(capsys.readouterr().out)
    run = [r for r in summary["rows"] if r["run"]]
    assert [r["method"] for r in run] == [
        "FastText average (mean of token vectors)",
        "SWEM mean+max (pre-trained, no training)",
        "SWEM fine-tuned with CPC context",
    ]
    assert all(-1 <= r["pearson"] <= 1 and -1 <= r["spearman"] <= 1 for r in run)
    assert len(summary["rows"]) == 7 and all(r["split"] == "test" for r in summary["rows"] if not r["run"])
    assert summary["valid"]["pairs"] == 6 * 29 and summary["valid"]["skipped"][0]["reason"].startswith("score 'oops'")
    assert summary["seed"] == 1 and summary["tokens"]["fingerprint"] == "tiny" and len(summary["history"]) == 3
    assert json.loads((tmp_path / "res" / "results.json").read_text())["rows"] == summary["rows"]
    assert (tmp_path / "res" / "scatter.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "res" / "predictions.csv").read_text().count("\n") == 6 * 29 + 1

    assert main(args) == 3
    out = capsys.readouterr().out
    assert "| SWEM fine-tuned with CPC context" in out and "published, test split (not run here)" in out
    assert "line 176: score 'oops'" in out


def test_cli_eval_phrases_bad_input_is_a_usage_error(tiny_files, tmp_path, capsys):
    assert (
        main(
            [
                "eval",
                "phrases",
                "--tokens",
                str(tmp_path),
                "--train",
                str(tiny_files / "train.csv"),
                "--valid",
                str(tiny_files / "valid.csv"),
                "--quiet",
            ]
        )
        == 2
    )
    assert "not a tokens directory" in capsys.readouterr().err
