"""FastText vectors for BPE tokens, and the token embedding matrix built from them.

FastText (skip-gram) is trained on texts written as BPE token strings; each
token's vector is its own vector plus the mean of its character n-grams
(``<bat``, ``batt``, ... with ``<``/``>`` marking the token's ends), so tokens
that share spelling share information.

Reproducibility (gensim 4.4): with ``workers=1`` and the same ``seed``, the
same sentences in the same order give identical vectors. With more workers the
order in which threads update the shared weights varies, so results differ run
to run. gensim's docs also ask for a fixed ``PYTHONHASHSEED`` because its
default ``hashfxn`` is Python's salted ``hash``; gensim 4.4 initialises
FastText vectors from ``seed`` alone (``prep_vectors``) and hashes n-grams with
its own fixed hash, but :func:`train_fasttext` passes :func:`stable_hash`
anyway, so no path depends on ``PYTHONHASHSEED``.

Rows of the embedding matrix (:func:`embedding_matrix`), one rule each, in order:

=========  ==============================================================================
pad        ``[PAD]`` (id 0): zeros
word       the token was in FastText's vocabulary (seen >= ``min_count`` times): its vector
subword    otherwise, the mean of its n-gram bucket vectors that training touched (buckets
           of some vocabulary token's n-grams); BPE makes many such tokens, e.g. the
           intermediate merge ``batt`` that never survives as a token of its own
random     no trained n-gram bucket (and special tokens not in the vocabulary):
           N(0, 0.1) from ``np.random.default_rng(seed)``, drawn in id order
=========  ==============================================================================
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from graphtx.text.bpe import SPECIAL_TOKENS, PatentTokenizer

if TYPE_CHECKING:  # gensim is needed to train tokens, not to load them (encode, train, search import this module)
    from gensim.models import FastText

ROW_SOURCES = ("pad", "word", "subword", "random")
RANDOM_STD = 0.1  # std of the random init of rows FastText says nothing about
MIN_N, MAX_N = 3, 6  # character n-gram lengths (FastText's defaults)


def stable_hash(text: str) -> int:
    """A hash that does not change with ``PYTHONHASHSEED`` (gensim's ``hashfxn``)."""
    return zlib.crc32(text.encode("utf-8"))


def _epoch_callback(on_epoch_end: Callable[[], None]):
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochCallback(CallbackAny2Vec):
        def on_epoch_end(self, model) -> None:
            on_epoch_end()

    return EpochCallback()


def train_fasttext(
    token_sequences: list[list[str]],
    dim: int,
    epochs: int,
    window: int,
    min_count: int,
    seed: int,
    workers: int = 1,
    buckets: int = 200_000,
    on_epoch_end: Callable[[], None] | None = None,
) -> FastText:
    """Skip-gram FastText over token strings; reproducible with ``workers=1``.

    ``token_sequences`` is read ``epochs + 1`` times (vocabulary, then training),
    so it must be a list, not a one-shot iterator. gensim cuts sentences longer
    than 10,000 tokens; one paragraph per sentence stays far below that.
    """
    from gensim.models import FastText

    if not token_sequences:
        raise ValueError("no token sequences to train FastText on (is the corpus empty?)")
    model = FastText(
        vector_size=dim,
        window=window,
        min_count=min_count,
        sg=1,
        min_n=MIN_N,
        max_n=MAX_N,
        bucket=buckets,
        workers=workers,
        seed=seed,
        hashfxn=stable_hash,
    )
    model.build_vocab(corpus_iterable=token_sequences)
    if not model.wv.key_to_index:
        raise ValueError(f"no token occurs min_count={min_count} times; FastText has nothing to learn")
    model.train(
        corpus_iterable=token_sequences,
        total_examples=model.corpus_count,
        total_words=model.corpus_total_words,
        epochs=epochs,
        callbacks=[_epoch_callback(on_epoch_end)] if on_epoch_end else (),
    )
    return model


# --- token embedding matrix ------------------------------------------------------


def _trained_buckets(ft_model: FastText) -> np.ndarray:
    """Mask over n-gram buckets: True where some vocabulary token has an n-gram (training touched it)."""
    from gensim.models.fasttext import ft_ngram_hashes

    wv = ft_model.wv
    mask = np.zeros(wv.bucket, dtype=bool)
    for word in wv.index_to_key:
        mask[ft_ngram_hashes(word, wv.min_n, wv.max_n, wv.bucket)] = True
    return mask


def _plan_rows(tokenizer: PatentTokenizer, ft_model: FastText) -> tuple[list[str], list[list[int]]]:
    """Per token id: which rule gives its row, and for ``subword`` rows the buckets to average."""
    from gensim.models.fasttext import ft_ngram_hashes

    wv = ft_model.wv
    trained = _trained_buckets(ft_model)
    sources, buckets = [], []
    for i in range(tokenizer.vocab_size):
        token = tokenizer.id_to_token(i)
        usable: list[int] = []
        if i == tokenizer.pad_id:
            source = "pad"
        elif token in wv.key_to_index:
            source = "word"
        elif token in SPECIAL_TOKENS:
            source = "random"  # "[UNK]"'s spelling says nothing about its meaning
        else:
            usable = sorted({h for h in ft_ngram_hashes(token, wv.min_n, wv.max_n, wv.bucket) if trained[h]})
            source = "subword" if usable else "random"
        sources.append(source)
        buckets.append(usable)
    return sources, buckets


def row_sources(tokenizer: PatentTokenizer, ft_model: FastText) -> list[str]:
    """For each token id, the rule (one of :data:`ROW_SOURCES`) that :func:`embedding_matrix` applies."""
    return _plan_rows(tokenizer, ft_model)[0]


def embedding_matrix(tokenizer: PatentTokenizer, ft_model: FastText, seed: int) -> np.ndarray:
    """``(vocab_size, dim)`` float32, row i = vector of token id i (rules in the module docstring)."""
    wv = ft_model.wv
    sources, buckets = _plan_rows(tokenizer, ft_model)
    rng = np.random.default_rng(seed)
    out = np.zeros((tokenizer.vocab_size, wv.vector_size), dtype=np.float32)  # (vocab, dim)
    for i, (source, usable) in enumerate(zip(sources, buckets)):
        if source == "word":
            out[i] = wv.get_vector(tokenizer.id_to_token(i))
        elif source == "subword":
            out[i] = wv.vectors_ngrams[usable].mean(axis=0)  # (n_usable, dim) -> (dim,)
        elif source == "random":
            out[i] = rng.normal(0.0, RANDOM_STD, wv.vector_size)
    return out
