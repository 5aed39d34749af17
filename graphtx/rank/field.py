"""Is an index of the field its fitted ranker learned on? The term profile of a corpus, and the check that compares two.

A ranker fitted on one field's citations weighs the graph model's features as they helped there. Searched over another
field with a model that was not adapted to it, those features cost: on the 42,356 software full texts the EV-fitted
ranker was 0.81x BM25 at Recall@3 with them and 0.98x without them (benchmarks/results/transfer.md). So ``rank-fit``
records the profile of the corpus it was fitted on, and a search with ``search.ranker: auto`` compares it with the
index's documents: below ``search.same_field`` it ranks with ``learned-lexical`` (the same fit without the graph
features) and says why.

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

from collections import Counter
from dataclasses import dataclass

import numpy as np

TOP_TERMS = 2000  # terms a profile keeps, most frequent first
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
        keep = [c for c in np.argsort(-df, kind="stable") if df[c] > 0 and terms[c]][:top]  # (<= top,) columns
        return cls(int(documents), {str(terms[c]): int(df[c]) for c in keep}, tokens)

    @classmethod
    def from_token_lists(cls, token_lists, tokens: str = "") -> FieldProfile:
        """From tokenised documents (an iterable of token lists; streamed, nothing kept but the counts)."""
        counts: Counter = Counter()
        documents = 0
        for toks in token_lists:
            counts.update(set(toks))
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
    """The index's documents against the corpus a ranker was fitted on."""

    similarity: float | None  # None: either side has fewer than MIN_DOCUMENTS documents
    fitted_documents: int
    index_documents: int
    threshold: float  # search.same_field

    @property
    def other_field(self) -> bool:
        return self.similarity is not None and self.similarity < self.threshold

    def describe(self) -> str:
        if self.similarity is None:
            return (
                f"too few documents to tell whether the index ({self.index_documents:,}) is of the field the ranker was "
                f"fitted on ({self.fitted_documents:,} documents; {MIN_DOCUMENTS} needed on each side)"
            )
        relation = "below" if self.other_field else "at or above"
        return (
            f"the index's documents have a term profile {self.similarity:.2f} like the {self.fitted_documents:,} documents "
            f"the ranker was fitted on, {relation} search.same_field {self.threshold:g}"
        )


def check_field(fitted: FieldProfile | None, index: FieldProfile, threshold: float) -> FieldCheck | None:
    """None when the ranker recorded no profile (fitted before graphtx recorded them), the two were tokenised otherwise,
    or ``threshold`` is 0 (check off)."""
    if fitted is None or threshold <= 0:
        return None
    if fitted.tokens and index.tokens and fitted.tokens != index.tokens:
        return None  # another stemmer or stop-word list: the terms themselves differ
    enough = min(fitted.documents, index.documents) >= MIN_DOCUMENTS
    return FieldCheck(
        round(fitted.similarity(index), 4) if enough else None, fitted.documents, index.documents, threshold
    )
