"""FastText token vectors and the embedding matrix built from them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from graphtx.text.bpe import PatentTokenizer, train_bpe
from graphtx.text.fasttext import (
    ROW_SOURCES,
    embedding_matrix,
    row_sources,
    train_fasttext,
)
from tests.text import patent_sentences

REPO = Path(__file__).resolve().parents[2]
ARGS = dict(dim=16, epochs=2, window=5, min_count=2, seed=7, workers=1, buckets=10_000)


@pytest.fixture(scope="module")
def trained() -> tuple[PatentTokenizer, list[list[str]], object]:
    texts = patent_sentences(2000)
    tok = train_bpe(iter(texts), vocab_size=300, min_frequency=2)
    sequences = tok.tokens_batch(texts)
    return tok, sequences, train_fasttext(sequences, **ARGS)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_matrix_shape_dtype_and_rows(trained):
    tok, _, ft = trained
    m = embedding_matrix(tok, ft, seed=0)
    assert m.shape == (tok.vocab_size, 16) and m.dtype == np.float32
    assert not m[tok.pad_id].any()
    sources = row_sources(tok, ft)
    counts = Counter(sources)
    assert set(counts) <= set(ROW_SOURCES) and sum(counts.values()) == tok.vocab_size
    assert counts["pad"] == 1 and counts["word"] == len(ft.wv.key_to_index)
    battery = tok.token_to_id("battery")
    assert sources[battery] == "word" and np.array_equal(m[battery], ft.wv["battery"])
    assert sources[tok.unk_id] == "random"  # [UNK] never occurs in this text
    assert np.all(np.linalg.norm(m[[s != "pad" for s in sources]], axis=1) > 0)


def test_tokens_that_co_occur_are_closer(trained):
    tok, _, ft = trained
    m = embedding_matrix(tok, ft, seed=0)
    row = {w: m[tok.token_to_id(w)] for w in ("battery", "cell", "auger", "chute")}
    assert _cos(row["battery"], row["cell"]) > _cos(row["battery"], row["auger"]) + 0.2
    assert _cos(row["auger"], row["chute"]) > _cos(row["auger"], row["cell"]) + 0.2


def test_an_unseen_bpe_piece_gets_a_vector_from_its_spelling(trained):
    tok, _, ft = trained
    m, sources = embedding_matrix(tok, ft, seed=0), row_sources(tok, ft)
    batter = tok.token_to_id("batter")  # an intermediate merge: "battery" always wins, so FastText never sees it
    assert batter is not None and sources[batter] == "subword"
    assert _cos(m[batter], m[tok.token_to_id("battery")]) > _cos(m[batter], m[tok.token_to_id("auger")])


def test_only_random_rows_depend_on_the_seed(trained):
    tok, _, ft = trained
    a, b = embedding_matrix(tok, ft, seed=0), embedding_matrix(tok, ft, seed=1)
    random_rows = np.array([s == "random" for s in row_sources(tok, ft)])
    assert np.array_equal(a[~random_rows], b[~random_rows])
    assert not np.isclose(a[random_rows], b[random_rows]).all(axis=1).any()
    assert np.array_equal(a, embedding_matrix(tok, ft, seed=0))


def test_training_is_deterministic_with_one_worker(trained):
    tok, sequences, ft = trained
    again = train_fasttext(sequences, **ARGS)
    assert np.array_equal(again.wv.vectors, ft.wv.vectors)
    assert np.array_equal(again.wv.vectors_ngrams, ft.wv.vectors_ngrams)


_SUBPROCESS = """
import hashlib, sys
from graphtx.text.fasttext import train_fasttext
from tests.text import patent_sentences
ft = train_fasttext([s.split() for s in patent_sentences(300)], dim=8, epochs=1, window=3, min_count=1, seed=3, buckets=5000)
print(hashlib.sha256(ft.wv.vectors.tobytes() + ft.wv.vectors_ngrams.tobytes()).hexdigest())
"""


def test_vectors_do_not_depend_on_pythonhashseed():
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", _SUBPROCESS],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        digests.add(run.stdout.strip())
    assert len(digests) == 1


def test_no_sequences_is_a_clear_error():
    with pytest.raises(ValueError, match="no token sequences"):
        train_fasttext([], **ARGS)
    with pytest.raises(ValueError, match="min_count=5"):
        train_fasttext([["a", "b"]], **{**ARGS, "min_count": 5})
