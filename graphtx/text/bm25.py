"""Okapi BM25, built in one place: ``bm25s`` (Lù 2024) over lower-cased ``\\w\\w+`` tokens, English stop words and the
Snowball stemmer (PyStemmer) by default. The index's BM25 (graphtx.index.hybrid), the evaluation's baseline
(graphtx.eval.baselines), training's hard negatives (graphtx.train.negatives) and the pre-training's BM25 teacher
(graphtx.train.pretrain_graph) all build and score through :class:`Bm25`, so they tokenise and score alike; each
chooses only what it indexes (and k1, b, the variant, the stop words and the stemmer, from its config).

Example::

    bm25 = Bm25.build(["a snowthrower with an auger", "a battery pack"])
    bm25.scores("auger housing")          # (2,) float32: the first document scores, the second 0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class LexicalTokens:
    """The bm25s tokeniser with a stop-word list and a stemmer ("" for none); shared by BM25 and TF-IDF."""

    def __init__(self, stopwords: str = "en", stemmer: str = "english"):
        self.stopwords, self.stemmer_language = stopwords, stemmer
        if stemmer:
            import Stemmer

            self.stemmer = Stemmer.Stemmer(stemmer)
        else:
            self.stemmer = None

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(
            list(texts), stopwords=self.stopwords or None, stemmer=self.stemmer, return_ids=False, show_progress=False
        )

    def describe(self) -> str:
        return f"stop words {self.stopwords or 'none'}, stemmer {self.stemmer_language or 'none'}"


class Bm25:
    """A bm25s retriever over token lists, with the tokeniser that made them."""

    def __init__(self, retriever, tokens: LexicalTokens):
        self.retriever, self.tokens = retriever, tokens

    @classmethod
    def build(
        cls,
        texts: Sequence[str] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        tokens: LexicalTokens | None = None,
        token_lists: list[list[str]] | None = None,
    ) -> Bm25:
        """Index ``texts`` (or ``token_lists`` already made by ``tokens``)."""
        import bm25s

        tokens = tokens or LexicalTokens()
        if token_lists is None:
            token_lists = tokens(texts or [])
        retriever = bm25s.BM25(k1=k1, b=b, method=method)
        retriever.index(token_lists, show_progress=False)
        return cls(retriever, tokens)

    @property
    def num_docs(self) -> int:
        return int(self.retriever.scores["num_docs"])

    def scores_of_tokens(self, terms: Sequence[str]) -> np.ndarray:
        """(num_docs,) float32 BM25 scores of a tokenised query; a term no document has adds nothing (all unknown: zeros)."""
        known = [t for t in terms if t and t in self.retriever.vocab_dict]
        if not known:
            return np.zeros(self.num_docs, np.float32)
        return np.asarray(self.retriever.get_scores(known), dtype=np.float32)

    def scores(self, text: str) -> np.ndarray:
        """(num_docs,) float32 BM25 scores of a query text."""
        return self.scores_of_tokens(self.tokens([text])[0])


def bm25_text(row: dict, max_chars: int) -> str:
    """What an index's BM25 reads of a corpus row: title, abstract, claims and description, joined, at most ``max_chars``
    (``index.bm25_max_chars``). The index (graphtx.index.documents) and a corpus's term profile (graphtx.text.field)
    read it here."""
    parts = [row.get("title") or "", row.get("abstract") or ""]
    parts += [c["text"] for c in row.get("claims") or () if c.get("text")]
    parts.append(row.get("description") or "")
    text = "\n".join(p for p in parts if p.strip())
    return text[:max_chars]
