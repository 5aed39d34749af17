"""Pretrain stage: corpus directories → tokens directory (BPE tokenizer + FastText token vectors).

Layout of a tokens directory::

    tokenizer.json       the BPE tokenizer (HuggingFace ``tokenizers`` format)
    token_vectors.npy    float32 (vocab_size, dim); row i = vector of token id i, row 0 ([PAD]) zeros
    token_idf.npy        float32 (vocab_size,); smoothed IDF of token id i over the documents
                         (``model.token_weighting: idf`` weights SWEM's mean pooling by it)
    node_projection.npz  only in a directory written by ``graphtx distil-phrases``: the SWEM node encoder's
                         projection (``weight`` (node_dim, pooled), ``bias`` (node_dim,)) distilled with
                         these token vectors, its word-order channel (``word_order``: none | bigram | trigram, and
                         ``ngram{i}_weight`` (dim, w * dim), ``ngram{i}_bias`` (dim,) per convolution width
                         w); a model of that node_dim and model.word_order starts from it
    manifest.json        corpora, counts, sizes, seed, row sources, versions, seconds, fingerprint;
                         written last, so its presence marks a complete directory (the files are
                         staged in ``.partial/`` and committed whole: graphtx/atomic.py)

Texts of a document, in order: title, abstract, each claim, each description
paragraph (every field split at newlines), up to ``max_chars_per_document``
(cut at a paragraph end; a first paragraph longer than that is cut inside).

Two passes over the corpora: the first streams texts into the BPE trainer; the
second tokenizes them in batches into token-string sequences for FastText. Those
sequences are kept in memory (gensim reads them once per epoch), at most
``max_fasttext_sentences`` of them: each token is an 8-byte reference to a
shared string, so 2M paragraphs of ~60 tokens take about 1 GB, and the corpora
used here (a few hundred thousand paragraphs) a few hundred MB at most.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from graphtx.atomic import StagedDir
from graphtx.corpus.schema import PatentDocument
from graphtx.corpus.store import (
    MANIFEST_FILE,
    count_documents,
    documents_path,
    iter_documents,
)
from graphtx.progress import progress_bar
from graphtx.text.bpe import TOKENIZER_FILE, PatentTokenizer, train_bpe
from graphtx.text.config import PretrainConfig
from graphtx.text.fasttext import (
    ROW_SOURCES,
    embedding_matrix,
    row_sources,
    train_fasttext,
)

VECTORS_FILE = "token_vectors.npy"
IDF_FILE = "token_idf.npy"
NODE_PROJECTION_FILE = (
    "node_projection.npz"  # graphtx distil-phrases: the SWEM projection distilled with the token vectors
)
TOKENS_FILES = (TOKENIZER_FILE, VECTORS_FILE, MANIFEST_FILE)
BATCH_TEXTS = 2048  # texts per encode_batch call


# --- texts -----------------------------------------------------------------------


def document_texts(doc: PatentDocument, max_chars: int) -> list[str]:
    """The paragraphs of a document that pre-training reads (see the module docstring)."""
    fields = [doc.title, doc.abstract, *(c.text for c in doc.claims), doc.description]
    out, used = [], 0
    for line in itertools.chain.from_iterable(f.split("\n") for f in fields):
        line = line.strip()
        if not line:
            continue
        if used + len(line) > max_chars and out:
            break
        out.append(line[:max_chars])
        used += len(line)
    return out


@dataclass
class _StreamCounts:
    documents: Counter = field(default_factory=Counter)  # per corpus dir
    texts: int = 0
    characters: int = 0


def _iter_texts(corpus_dirs: list[Path], cfg: PretrainConfig, counts: _StreamCounts, bar: tqdm) -> Iterator[str]:
    seen = 0
    for corpus in corpus_dirs:
        for doc in iter_documents(corpus):
            if cfg.max_documents and seen >= cfg.max_documents:
                return
            seen += 1
            counts.documents[str(corpus)] += 1
            texts = document_texts(doc, cfg.max_chars_per_document)
            counts.texts += len(texts)
            counts.characters += sum(map(len, texts))
            bar.update(1)
            yield from texts


def _batched(items: Iterator[str], n: int) -> Iterator[list[str]]:
    while batch := list(itertools.islice(items, n)):
        yield batch


# --- the stage -------------------------------------------------------------------


@dataclass(frozen=True)
class PretrainReport:
    out_dir: Path
    documents: int
    texts: int
    sentences: int  # texts given to FastText (<= max_fasttext_sentences)
    tokens: int  # BPE tokens in those sentences
    vocab_size: int
    dim: int
    rows: dict  # ROW_SOURCES -> number of token rows filled by that rule
    seconds: float
    fingerprint: str

    def summary(self, seed: int) -> dict:
        """``graphtx pretrain --json``."""
        return {
            "out": str(self.out_dir),
            "documents": self.documents,
            "texts": self.texts,
            "fasttext_sentences": self.sentences,
            "fasttext_tokens": self.tokens,
            "vocab_size": self.vocab_size,
            "dim": self.dim,
            "rows": self.rows,
            "seed": seed,
            "seconds": self.seconds,
            "fingerprint": self.fingerprint,
        }

    def lines(self) -> list[str]:
        """What ``graphtx pretrain`` prints."""
        return [
            f"pretrained on {self.documents} documents ({self.texts} texts, {self.tokens} tokens for FastText) into {self.out_dir}",
            f"vocabulary: {self.vocab_size} tokens x {self.dim} dims; rows from "
            + ", ".join(f"{source}: {n}" for source, n in self.rows.items()),
            f"seconds: {self.seconds}; fingerprint {self.fingerprint[:16]}",
        ]


def tokens_fingerprint(tokens_dir: str | Path) -> str:
    """sha256 of ``tokenizer.json`` bytes followed by ``token_vectors.npy`` bytes (and ``node_projection.npz``'s, where
    ``graphtx distil-phrases`` wrote one)."""
    path, digest = Path(tokens_dir), hashlib.sha256()
    distilled = [NODE_PROJECTION_FILE] if (path / NODE_PROJECTION_FILE).exists() else []
    for name in [TOKENIZER_FILE, VECTORS_FILE, *distilled]:
        digest.update((path / name).read_bytes())
    return digest.hexdigest()


def pretrain(
    corpus_dirs: list,
    out_dir: str | Path,
    cfg: PretrainConfig = PretrainConfig(),
    seed: int = 0,
    progress: bool | None = None,
) -> PretrainReport:
    """Train the BPE tokenizer and FastText token vectors on ``corpus_dirs``; write ``out_dir``."""
    corpora = [Path(c) for c in corpus_dirs]
    if not corpora:
        raise ValueError("pretrain needs at least one corpus directory")
    for corpus in corpora:
        documents_path(corpus)  # a clear error before any work
    out = Path(out_dir)
    started = time.time()
    total = sum(count_documents(c) for c in corpora)
    total = min(total, cfg.max_documents) if cfg.max_documents else total

    # pass 1: BPE on the text stream
    counts = _StreamCounts()
    with progress_bar(total=total, desc="pretrain bpe", unit="doc", enabled=progress) as bar:
        tokenizer = train_bpe(_iter_texts(corpora, cfg, counts, bar), cfg.vocab_size, cfg.min_frequency)
    if counts.texts == 0:
        raise ValueError(f"no text in {', '.join(map(str, corpora))}: nothing to pretrain on")
    t_bpe = time.time()

    # pass 2: token-string sequences for FastText, in memory
    sequences: list[list[str]] = []
    n_tokens = 0
    with progress_bar(total=total, desc="pretrain tokenize", unit="doc", enabled=progress) as bar:
        texts = _iter_texts(corpora, cfg, _StreamCounts(), bar)
        for batch in _batched(texts, BATCH_TEXTS):
            batch = batch[: cfg.max_fasttext_sentences - len(sequences)]
            for seq in tokenizer.tokens_batch(batch):
                if seq:
                    sequences.append(seq)
                    n_tokens += len(seq)
            if len(sequences) >= cfg.max_fasttext_sentences:
                break
    t_tokenize = time.time()

    # FastText, then one row per BPE token
    with progress_bar(total=cfg.epochs, desc="pretrain fasttext", unit="epoch", enabled=progress) as bar:
        ft = train_fasttext(
            sequences,
            cfg.dim,
            cfg.epochs,
            cfg.window,
            cfg.min_count,
            seed,
            cfg.workers,
            cfg.buckets,
            on_epoch_end=lambda: bar.update(1),
        )
    n_sentences, fasttext_vocabulary = len(sequences), len(ft.wv.key_to_index)
    del sequences
    vectors = embedding_matrix(tokenizer, ft, seed)  # (vocab, dim)
    rows = Counter(row_sources(tokenizer, ft))
    t_fasttext = time.time()

    with progress_bar(total=total, desc="pretrain idf", unit="doc", enabled=progress) as bar:
        idf = token_idf(corpora, tokenizer, cfg, bar)
    staged = StagedDir(
        out, "`graphtx pretrain`", (TOKENIZER_FILE, VECTORS_FILE, IDF_FILE, NODE_PROJECTION_FILE)
    ).__enter__()  # owns: a distilled projection left there goes
    try:
        tokenizer.save(staged.partial)
        np.save(staged.path(VECTORS_FILE), vectors)
        np.save(staged.path(IDF_FILE), idf)
        fingerprint = tokens_fingerprint(staged.partial)
    except BaseException as err:
        staged.__exit__(type(err), err, err.__traceback__)
        raise
    report = PretrainReport(
        out,
        sum(counts.documents.values()),
        counts.texts,
        n_sentences,
        n_tokens,
        tokenizer.vocab_size,
        cfg.dim,
        {s: rows[s] for s in ROW_SOURCES},
        round(time.time() - started, 2),
        fingerprint,
    )
    manifest = {
        "corpora": [{"path": str(c), "documents": counts.documents[str(c)]} for c in corpora],
        "documents": report.documents,
        "texts": report.texts,
        "characters": counts.characters,
        "fasttext_sentences": report.sentences,
        "fasttext_tokens": report.tokens,
        "fasttext_sentences_capped": report.sentences < report.texts,  # max_fasttext_sentences reached
        "fasttext_vocabulary": fasttext_vocabulary,
        "vocab_size": report.vocab_size,
        "dim": report.dim,
        "seed": seed,
        "rows": report.rows,
        "config": dataclasses.asdict(cfg),
        "versions": _versions(),
        "seconds": {
            "bpe": round(t_bpe - started, 2),
            "tokenize": round(t_tokenize - t_bpe, 2),
            "fasttext": round(t_fasttext - t_tokenize, 2),
            "total": report.seconds,
        },
        "fingerprint": fingerprint,
    }
    with staged:  # manifest last; the previous tokens directory stays whole until here
        staged.commit(manifest)
    return report


def token_idf(
    corpus_dirs: list[Path], tokenizer: PatentTokenizer, cfg: PretrainConfig, bar: tqdm | None = None
) -> np.ndarray:
    """(vocab_size,) float32 smoothed IDF, ln((1 + N) / (1 + df)) + 1, over the documents pre-training reads.

    A token no document holds gets the largest value (it is as specific as a term can be).
    """
    df = np.zeros(tokenizer.vocab_size, dtype=np.int64)
    n = 0
    documents = (d for corpus in corpus_dirs for d in iter_documents(corpus))
    if cfg.max_documents:
        documents = itertools.islice(documents, cfg.max_documents)
    for batch in _batched(documents, 256):
        texts = [" ".join(document_texts(d, cfg.max_chars_per_document)) for d in batch]
        for ids in tokenizer.encode_batch(texts):
            df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
        n += len(batch)
        if bar is not None:
            bar.update(len(batch))
    return (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)


def load_token_idf(tokens_dir: str | Path) -> np.ndarray:
    """The (vocab_size,) token IDF of a tokens directory (clear error for one made before it existed)."""
    path = Path(tokens_dir) / IDF_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{tokens_dir} has no {IDF_FILE} (made before IDF weighting): re-run `graphtx pretrain`, "
            "or set model.token_weighting: none and model.lexical_dim: 0 (the two parts that read it)"
        )
    return np.load(path)


@dataclass(frozen=True)
class NodeProjection:
    """The SWEM node encoder's layers over the token table, as ``graphtx distil-phrases`` distilled them."""

    weight: np.ndarray  # (node_dim, pooled_dim): pooled_dim = (2 + 2 x len(ngram)) x dim
    bias: np.ndarray  # (node_dim,)
    word_order: str = "none"  # the word-order channel (model.word_order) they were distilled with
    ngram: tuple[tuple[np.ndarray, np.ndarray], ...] = ()  # per convolution width w: weight (dim, w * dim), bias (dim,)

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``node_projection.npz`` holds."""
        out = {"weight": self.weight, "bias": self.bias, "word_order": np.array(self.word_order)}
        for i, (weight, bias) in enumerate(self.ngram):
            out |= {f"ngram{i}_weight": weight, f"ngram{i}_bias": bias}
        return out


def load_node_projection(tokens_dir: str | Path) -> NodeProjection | None:
    """The SWEM layers distilled with these token vectors (``graphtx distil-phrases``), or None for a directory
    written by ``graphtx pretrain``. A file from before word order has no ``word_order``: a plain bag-of-tokens SWEM."""
    path = Path(tokens_dir) / NODE_PROJECTION_FILE
    if not path.exists():
        return None
    with np.load(path) as z:
        ngram = []
        while f"ngram{len(ngram)}_weight" in z:
            ngram.append((z[f"ngram{len(ngram)}_weight"], z[f"ngram{len(ngram)}_bias"]))
        return NodeProjection(
            z["weight"], z["bias"], str(z["word_order"]) if "word_order" in z else "none", tuple(ngram)
        )


def _versions() -> dict:
    import gensim
    import tokenizers

    return {"tokenizers": tokenizers.__version__, "gensim": gensim.__version__, "numpy": np.__version__}


# --- reading back ----------------------------------------------------------------


def load_tokens(tokens_dir: str | Path, mmap: bool = False) -> tuple[PatentTokenizer, np.ndarray]:
    """The tokenizer and the (vocab_size, dim) float32 token vectors of a tokens directory."""
    path = Path(tokens_dir)
    for name in TOKENS_FILES:
        if not (path / name).exists():
            raise FileNotFoundError(
                f"{tokens_dir} is not a tokens directory: {name} is missing (run `graphtx pretrain` first)"
            )
    tokenizer = PatentTokenizer.load(path)
    vectors = np.load(path / VECTORS_FILE, mmap_mode="r" if mmap else None)
    if vectors.shape[0] != tokenizer.vocab_size:
        raise ValueError(f"{tokens_dir}: {vectors.shape[0]} vector rows for {tokenizer.vocab_size} tokens")
    return tokenizer, vectors
