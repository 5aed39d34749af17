"""Is an index of the field its fitted ranker and its model learned on? The term profile of a corpus, and the check.

A ranker fitted on one field's citations weighs the graph model's features as they helped there. Searched over another
field with a model that was not adapted to it, those features cost: on the 42,356 software full texts the EV-fitted
ranker was 0.81x BM25 at Recall@3 with them and 0.98x without them (benchmarks/results/transfer.md). So ``rank-fit``
records the profile of the corpus it was fitted on, ``train`` and ``adapt`` the profile of the corpus the model learned
on (``MODEL/corpus_profile.json``), and a search with ``search.ranker: auto`` compares them with the index's documents:
when the ranker's corpus is below ``search.same_field`` and the model's is not known to be at or above it, it ranks
with ``learned-lexical`` (the same fit without the graph features) and says why. Over a model adapted to the index's
corpus a ranker from another field gained from those features (1.12x Recall@3 on EV and on the full texts), so that
case keeps them.

A profile is the document frequency of a corpus's ``TOP_TERMS`` most frequent BM25 terms and its size, over the text an
index's BM25 reads (title, abstract, claims and description, ``index.bm25_max_chars``, its stop words and stemmer) on
both sides: rank-fit profiles its corpus that way, whatever fields its own pools read. Two profiles are compared by
the cosine of their document frequencies over the union of their top terms: a statistic of the words a field uses,
blind to the corpus's size. Measured on the sets here (benchmarks/results/transfer.md, "Which field is an index of?"):

    random samples of a corpus against the rest of it    0.955-0.996 (100 documents and more), 0.865-0.922 at 30
    EV abstracts of 2005 and before against 2009-2010    0.948
    the software abstracts against CPC G06F abstracts    0.972-0.975
    CPC subclasses against each other                    0.41-0.79 (G06F against H04L 0.92)
    EV abstracts against software texts and CPC groups   0.31-0.59
    abstracts against full texts of one field            0.75-0.77 (counted as another field: another kind of text)

(the minimum of 20 draws for samples; ``benchmarks/studies/field_profile.py`` prints them).

Example::

    fitted = FieldProfile.from_token_lists(tokens(texts), tokens.describe())   # rank-fit: the corpus as an index reads it
    check = check_field(fitted, FieldProfile.from_bm25s(retriever, tokens.describe()), threshold=0.85)
    check.other_field, check.describe()
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TOP_TERMS = 2000  # terms a profile keeps, most frequent first
MODEL_PROFILE_FILE = "corpus_profile.json"  # in a model directory: the corpus it was trained or adapted on
MIN_DOCUMENTS = 30  # below this on either side a sample's own noise reaches the threshold (0.70-0.80 at 10 documents)


@dataclass(frozen=True)
class FieldProfile:
    documents: int  # the corpus's size
    df: dict  # term -> documents holding it, the TOP_TERMS most frequent terms
    tokens: str = ""  # the tokeniser's settings (LexicalTokens.describe()); profiles of other tokenisers do not compare

    @classmethod
    def from_counts(
        cls, df: np.ndarray, vocab: dict, documents: int, tokens: str = "", top: int = TOP_TERMS
    ) -> FieldProfile:
        """``df`` (vocab,) documents holding each term; ``vocab`` term -> column."""
        df = np.asarray(df)
        terms = np.empty(len(df), dtype=object)
        for term, col in vocab.items():
            if 0 <= col < len(df):
                terms[col] = term
        # most frequent first, ties by the term itself: a vocabulary's column order may follow string hashing (bm25s
        # collects its terms in a set)
        cols = np.array([c for c in range(len(df)) if df[c] > 0 and terms[c]], dtype=np.int64)  # (kept,) columns
        keep = cols[np.lexsort((terms[cols].astype(str), -df[cols]))][:top]  # (<= top,)
        return cls(int(documents), {str(terms[c]): int(df[c]) for c in keep}, tokens)

    @classmethod
    def from_token_lists(cls, token_lists, tokens: str = "") -> FieldProfile:
        """From tokenised documents (an iterable of token lists; streamed, nothing kept but the counts)."""
        counts: Counter = Counter()
        documents = 0
        for toks in token_lists:
            counts.update(set(toks))  # its order follows string hashing: from_counts breaks ties by the term
            documents += 1
        vocab = {term: i for i, term in enumerate(counts)}
        return cls.from_counts(
            np.fromiter(counts.values(), dtype=np.int64, count=len(counts)), vocab, documents, tokens
        )

    @classmethod
    def from_bm25s(cls, retriever, tokens: str = "") -> FieldProfile:
        """From a fitted ``bm25s.BM25`` (an index's BM25): its CSC score matrix has one column per term."""
        s = retriever.scores
        return cls.from_counts(
            np.diff(np.asarray(s["indptr"], dtype=np.int64)), retriever.vocab_dict, int(s["num_docs"]), tokens
        )

    def similarity(self, other: FieldProfile) -> float:
        """Cosine of the two document-frequency vectors over the union of their terms, in [0, 1]."""
        terms = sorted(set(self.df) | set(other.df))
        a = np.array([self.df.get(t, 0) for t in terms], dtype=np.float64)
        b = np.array([other.df.get(t, 0) for t in terms], dtype=np.float64)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b / norm) if norm else 0.0

    def to_json(self) -> dict:
        return {"documents": self.documents, "tokens": self.tokens, "df": self.df}

    @classmethod
    def from_json(cls, data: dict | None) -> FieldProfile | None:
        """None for a ranker fitted before profiles were recorded (or a malformed entry)."""
        if not data or not isinstance(data.get("df"), dict):
            return None
        return cls(
            int(data.get("documents", 0)), {str(k): int(v) for k, v in data["df"].items()}, str(data.get("tokens", ""))
        )


@dataclass(frozen=True)
class FieldCheck:
    """The index's documents against one corpus: the one a ranker was fitted on, or the one a model learned on."""

    similarity: float | None  # None: either side has fewer than MIN_DOCUMENTS documents
    fitted_documents: int
    index_documents: int
    threshold: float  # search.same_field
    what: str = "the ranker was fitted on"  # whose corpus, in words

    @property
    def other_field(self) -> bool:
        return self.similarity is not None and self.similarity < self.threshold

    @property
    def same_field(self) -> bool:
        return self.similarity is not None and self.similarity >= self.threshold

    def describe(self) -> str:
        if self.similarity is None:
            return (
                f"too few documents to tell whether the index ({self.index_documents:,}) is of the field {self.what} "
                f"({self.fitted_documents:,} documents; {MIN_DOCUMENTS} needed on each side)"
            )
        relation = "below" if self.other_field else "at or above"
        return (
            f"the index's documents have a term profile {self.similarity:.2f} like the {self.fitted_documents:,} documents "
            f"{self.what}, {relation} search.same_field {self.threshold:g}"
        )


def check_field(
    fitted: FieldProfile | None, index: FieldProfile, threshold: float, what: str = "the ranker was fitted on"
) -> FieldCheck | None:
    """None when there is no profile to compare (a ranker fitted, or a model saved, before graphtx recorded them), the
    two were tokenised otherwise, or ``threshold`` is 0 (check off)."""
    if fitted is None or threshold <= 0:
        return None
    if fitted.tokens and index.tokens and fitted.tokens != index.tokens:
        return None  # another stemmer or stop-word list: the terms themselves differ
    enough = min(fitted.documents, index.documents) >= MIN_DOCUMENTS
    return FieldCheck(
        round(fitted.similarity(index), 4) if enough else None, fitted.documents, index.documents, threshold, what
    )


@dataclass(frozen=True)
class IndexField:
    """An index's documents against its fitted ranker's corpus and its model's (None: not recorded or not comparable).

    The graph features are left out (``leave_out_graph``) when the ranker is of another field and the model is not known
    to be of this one: zero-shot, they cost; over a model adapted here, a ranker from elsewhere gained from them.
    """

    ranker: FieldCheck | None
    model: FieldCheck | None = None

    @property
    def ranker_elsewhere(self) -> bool:
        return self.ranker is not None and self.ranker.other_field

    @property
    def leave_out_graph(self) -> bool:
        return self.ranker_elsewhere and not (self.model is not None and self.model.same_field)

    def describe(self) -> str:
        parts = [self.ranker.describe()] if self.ranker is not None else []
        if self.model is not None:
            parts.append(self.model.describe())
        else:
            parts.append("the model records no corpus profile comparable with the index's")
        return "; ".join(parts)


# --- a corpus's profile, as an index's BM25 reads it -------------------------------------------


def corpus_profile(
    corpus_dir: str | Path, max_chars: int = 10_000, stopwords: str = "en", stemmer: str = "english"
) -> FieldProfile:
    """The profile of a corpus's documents as an index's BM25 reads them (graphtx.text.bm25.bm25_text: title, abstract,
    claims and description cut at ``max_chars`` = ``index.bm25_max_chars``; ``index.stopwords``, ``index.stemmer``);
    streamed a row group batch at a time."""
    import pyarrow.parquet as pq

    from graphtx.corpus.store import documents_path
    from graphtx.text.bm25 import LexicalTokens, bm25_text

    tokens = LexicalTokens(stopwords, stemmer)
    f = pq.ParquetFile(documents_path(corpus_dir))
    columns = [c for c in ("title", "abstract", "claims", "description") if c in f.schema_arrow.names]

    def token_lists():
        for batch in f.iter_batches(batch_size=512, columns=columns):
            yield from tokens([bm25_text(row, max_chars) for row in batch.to_pylist()])

    return FieldProfile.from_token_lists(token_lists(), tokens.describe())


def learned_corpus_profile(corpus_dir: str | Path, index_cfg=None) -> FieldProfile:
    """The profile train and adapt record for the corpus a model learned on, read as the index section of the
    experiment's config (``index_cfg``: its ``bm25_max_chars``, ``stopwords``, ``stemmer``; None: their defaults)
    would have an index read it. Training names no index config (it sits below the index), so it passes what it has."""
    if index_cfg is None:
        return corpus_profile(corpus_dir)
    return corpus_profile(corpus_dir, index_cfg.bm25_max_chars, index_cfg.stopwords, index_cfg.stemmer)


def write_model_profile(model_dir: str | Path, profile: FieldProfile) -> None:
    """``MODEL/corpus_profile.json`` (train and adapt, into the model directory they are about to move in place; not
    part of the model's fingerprint: it changes no vector)."""
    (Path(model_dir) / MODEL_PROFILE_FILE).write_text(json.dumps(profile.to_json()) + "\n")


def read_model_profile(model_dir: str | Path | None) -> FieldProfile | None:
    """The profile of the corpus a model learned on; None for a model saved without one (init-model, older runs)."""
    path = Path(model_dir) / MODEL_PROFILE_FILE if model_dir is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return FieldProfile.from_json(json.loads(path.read_text()))
    except (json.JSONDecodeError, ValueError, TypeError, AttributeError):
        return None  # damaged: the check goes by the ranker alone
