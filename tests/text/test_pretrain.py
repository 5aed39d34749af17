"""The pretrain stage end to end: corpus directories -> tokens directory -> (tokenizer, vectors), and the CLI."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.config import REPO_ROOT, PretrainConfig, config_from_dict, load_config
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter, iter_documents
from graphtx.text.pretrain import (
    TOKENS_FILES,
    document_texts,
    load_tokens,
    pretrain,
    tokens_fingerprint,
)
from tests.text import patent_sentence

CFG = PretrainConfig(vocab_size=300, dim=16, epochs=2, buckets=10_000)
TINY = ["--vocab-size", "300", "--dim", "16", "--epochs", "2"]


def _document(i: int, rng: random.Random) -> PatentDocument:
    field = ("battery", "snow", "valve")[i % 3]
    claims = tuple(Claim(n, patent_sentence(rng, field), n == 1, () if n == 1 else (1,)) for n in range(1, 4))
    description = "\n".join(patent_sentence(rng, field) for _ in range(6))
    return PatentDocument(
        f"T-{i}",
        "test",
        "-",
        title=f"{field} device",
        abstract=patent_sentence(rng, field),
        claims=claims,
        description=description,
    )


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list:
    rng, dirs = random.Random(0), []
    for c, n in enumerate((40, 20)):
        out = tmp_path_factory.mktemp(f"corpus{c}")
        with CorpusWriter(out) as w:
            for i in range(n):
                w.add_document(_document(100 * c + i, rng), (), "-", str(i))
        dirs.append(out)
    return dirs


@pytest.fixture(scope="module")
def tokens(corpora, tmp_path_factory):
    out = tmp_path_factory.mktemp("tokens")
    return out, pretrain(corpora, out, CFG, seed=5, progress=False)


def test_document_texts_in_order_and_cut_at_a_paragraph_end():
    doc = PatentDocument(
        "X",
        "test",
        "-",
        title="Valve",
        abstract="A valve.\nIt seals.",
        claims=(Claim(1, "A valve comprising a seat.", True),),
        description="First paragraph.\n\nSecond paragraph is here.",
    )
    assert document_texts(doc, 10_000) == [
        "Valve",
        "A valve.",
        "It seals.",
        "A valve comprising a seat.",
        "First paragraph.",
        "Second paragraph is here.",
    ]
    assert document_texts(doc, 22) == ["Valve", "A valve.", "It seals."]  # 5 + 8 + 9 = 22 fits
    assert document_texts(doc, 21) == ["Valve", "A valve."]  # stops before the paragraph that would pass the cap
    assert document_texts(doc, 3) == ["Val"]  # a first paragraph longer than the cap is cut inside
    assert document_texts(PatentDocument("E", "test", "-"), 100) == []


def test_pretrain_writes_a_tokens_directory_with_matching_manifest(corpora, tokens):
    out, report = tokens
    assert all((out / name).exists() for name in TOKENS_FILES)
    tok, vectors = load_tokens(out)
    assert vectors.shape == (tok.vocab_size, 16) and vectors.dtype == np.float32 and not vectors[0].any()
    manifest = json.loads((out / "manifest.json").read_text())
    texts = [t for c in corpora for d in iter_documents(c) for t in document_texts(d, CFG.max_chars_per_document)]
    assert manifest["documents"] == report.documents == 60
    assert [c["documents"] for c in manifest["corpora"]] == [40, 20]
    assert manifest["texts"] == report.texts == manifest["fasttext_sentences"] == len(texts)
    assert manifest["fasttext_tokens"] == sum(len(tok.encode(t)) for t in texts)
    assert manifest["vocab_size"] == tok.vocab_size and manifest["dim"] == 16 and manifest["seed"] == 5
    assert sum(manifest["rows"].values()) == tok.vocab_size and manifest["rows"]["pad"] == 1
    assert manifest["rows"]["word"] > 0 and not manifest["fasttext_sentences_capped"]
    assert manifest["fingerprint"] == report.fingerprint == tokens_fingerprint(out)
    assert set(manifest["versions"]) == {"tokenizers", "gensim", "numpy"}
    assert tok.tokens("comprising battery") == ["comprising", "battery"]


def test_same_seed_same_bytes(corpora, tokens, tmp_path):
    out, report = tokens
    again = pretrain(corpora, tmp_path / "again", CFG, seed=5, progress=False)
    assert (tmp_path / "again" / "tokenizer.json").read_bytes() == (out / "tokenizer.json").read_bytes()
    assert np.array_equal(np.load(tmp_path / "again" / "token_vectors.npy"), np.load(out / "token_vectors.npy"))
    assert again.fingerprint == report.fingerprint


def test_caps_on_documents_and_fasttext_sentences(corpora, tmp_path):
    report = pretrain(
        corpora,
        tmp_path / "t",
        PretrainConfig(vocab_size=300, dim=8, epochs=1, buckets=5000, max_documents=45, max_fasttext_sentences=100),
        progress=False,
    )
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    assert report.documents == 45 and [c["documents"] for c in manifest["corpora"]] == [40, 5]
    assert report.sentences == 100 < report.texts and manifest["fasttext_sentences_capped"]


def test_load_tokens_of_another_directory_is_a_clear_error(corpora):
    with pytest.raises(
        FileNotFoundError, match=r"not a tokens directory: tokenizer.json is missing \(run `graphtx pretrain` first\)"
    ):
        load_tokens(corpora[0])


def test_config_sections_and_checks():
    assert load_config(REPO_ROOT / "configs" / "small.yaml").pretrain.vocab_size == 8000
    assert load_config(REPO_ROOT / "configs" / "paper.yaml").pretrain.dim == 256
    with pytest.raises(ValueError, match="pretrain.min_frequency, dim"):
        config_from_dict({"pretrain": {"dim": 0}})
    with pytest.raises(ValueError, match="unknown key"):
        config_from_dict({"pretrain": {"vector_size": 8}})


# --- CLI -------------------------------------------------------------------------


def test_cli_pretrain_json(corpora, tmp_path, capsys):
    argv = ["pretrain", *map(str, corpora), "--out", str(tmp_path / "t"), "--quiet", "--json", "--seed", "3", *TINY]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["documents"] == 60 and summary["dim"] == 16 and summary["seed"] == 3
    assert summary["vocab_size"] == sum(summary["rows"].values()) <= 300


def test_cli_pretrain_text_summary_takes_the_seed_from_the_config(corpora, tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("seed: 11\npretrain:\n  vocab_size: 300\n  dim: 8\n  epochs: 1\n  buckets: 5000\n")
    assert main(["pretrain", str(corpora[1]), "--out", str(tmp_path / "t"), "--quiet", "--config", str(config)]) == 0
    assert "pretrained on 20 documents" in capsys.readouterr().out
    assert json.loads((tmp_path / "t" / "manifest.json").read_text())["seed"] == 11


def test_cli_pretrain_of_a_missing_corpus_is_a_clear_error(corpora, tmp_path, capsys):
    assert main(["pretrain", str(corpora[0]), str(tmp_path / "missing"), "--out", str(tmp_path / "t"), "--quiet"]) == 2
    assert "run `graphtx ingest` first" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()  # checked before any work


def test_cli_pretrain_bad_setting_is_a_usage_error(corpora, tmp_path, capsys):
    assert main(["pretrain", str(corpora[0]), "--out", str(tmp_path / "t"), "--quiet", "--dim", "0"]) == 2
    assert "dim" in capsys.readouterr().err


def test_token_idf_is_written_and_rare_tokens_weigh_more(corpora, tokens):
    from graphtx.text.pretrain import IDF_FILE, load_token_idf

    tokens, _ = tokens
    tokenizer, _ = load_tokens(tokens)
    idf = load_token_idf(tokens)
    assert (
        (tokens / IDF_FILE).is_file()
        and idf.shape == (tokenizer.vocab_size,)
        and idf.dtype == np.float32
        and (idf >= 1.0).all()
    )
    n = sum(1 for c in corpora for _ in iter_documents(c))
    df = np.zeros(tokenizer.vocab_size)
    for c in corpora:
        for d in iter_documents(c):
            df[np.unique(tokenizer.encode(" ".join(document_texts(d, CFG.max_chars_per_document))))] += 1
    np.testing.assert_allclose(idf, np.log((1 + n) / (1 + df)) + 1, rtol=1e-6)  # smoothed IDF over documents
    common, rare = int(np.argmax(df)), int(np.argmin(np.where(df > 0, df, np.inf)))
    assert idf[rare] > idf[common]


def test_tokens_without_idf_give_a_clear_error_only_when_idf_weighting_is_asked(tokens, tmp_path):
    import shutil

    from graphtx.model.config import ModelConfig
    from graphtx.model.embed import init_model
    from graphtx.text.pretrain import IDF_FILE

    tokens, _ = tokens
    old = tmp_path / "old-tokens"
    shutil.copytree(tokens, old)
    (old / IDF_FILE).unlink()
    init_model(ModelConfig.small(lexical_dim=0), old, seed=0)  # plain mean pooling, no lexical channel: no IDF needed
    with pytest.raises(FileNotFoundError, match="lexical_dim: 0"):
        init_model(ModelConfig.small(), old, seed=0)  # the lexical channel reads the IDF
    with pytest.raises(FileNotFoundError, match="re-run `graphtx pretrain`"):
        init_model(ModelConfig(token_weighting="idf"), old, seed=0)
    model, _ = init_model(ModelConfig(token_weighting="idf"), tokens, seed=0)
    np.testing.assert_allclose(model.swem.token_log_weight.exp().numpy(), np.load(tokens / IDF_FILE), rtol=1e-5)
