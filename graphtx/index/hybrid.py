"""BM25 over the indexed documents' text (the hybrid ranker fuses it with the dense ranking: graphtx.rank.rankers.hybrid).

BM25 (bm25s, Lucene variant) ranks the text each document was indexed with (title, abstract,
claims, description; see ``documents.bm25_text``), stemmed with PyStemmer and without English
stop words. Its document order is the live id map's (ascending FAISS id); ``bm25/graphtx.json``
records the digest of those ids, so a BM25 index that no longer matches the documents (after
an add or a removal) is rebuilt instead of answering with the wrong documents.

Example::

    bm25 = BM25Index.build(texts, IndexConfig())
    order, scores = bm25.top("snowthrower auger housing", k=100)   # positions into texts
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphtx.atomic import replacing
from graphtx.index.config import IndexConfig
from graphtx.text.bm25 import Bm25, LexicalTokens

META_FILE = "graphtx.json"

log = logging.getLogger(__name__)


class BM25Index:
    """The index's BM25 (graphtx.text.bm25.Bm25) with the digest of the documents it was built over."""

    def __init__(self, retriever, stopwords: str, stemmer: str, digest: str = ""):
        self.engine = Bm25(retriever, LexicalTokens(stopwords, stemmer))
        self.retriever = retriever
        self.stopwords, self.stemmer_name = stopwords, stemmer
        self.digest = digest  # ids_digest of the documents, in order

    @property
    def num_docs(self) -> int:
        return self.engine.num_docs

    @classmethod
    def build(cls, texts: Sequence[str], cfg: IndexConfig, digest: str = "") -> BM25Index:
        engine = Bm25.build(texts, cfg.bm25_k1, cfg.bm25_b, tokens=LexicalTokens(cfg.stopwords, cfg.stemmer))
        return cls(engine.retriever, cfg.stopwords, cfg.stemmer, digest)

    def tokens(self, text: str) -> list[str]:
        return self.engine.tokens([text])[0]

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every document for ``text``: (num_docs,) float32; zeros when no query term is known."""
        return self.engine.scores(text)

    def top(self, text: str, k: int, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions (k',), scores (k',)) of the best documents with a score > 0, best first.

        ``exclude``: positions never returned. Ties by position (= FAISS id order).
        """
        s = self.scores(text)
        if exclude is not None and len(exclude):
            s[exclude] = 0.0
        candidates = np.flatnonzero(s > 0)
        if len(candidates) > k:
            candidates = candidates[np.argpartition(-s[candidates], k - 1)[:k]]
        order = candidates[np.lexsort((candidates, -s[candidates]))]
        return order, s[order]

    # --- files -----------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write to a sibling folder, then swap it in: a reader sees the old index or the new one."""
        with replacing(directory) as tmp:  # graphtx/atomic.py: fsynced, swapped in whole
            self.retriever.save(str(tmp), show_progress=False)
            (tmp / META_FILE).write_text(
                json.dumps({"digest": self.digest, "stopwords": self.stopwords, "stemmer": self.stemmer_name}) + "\n"
            )

    @classmethod
    def load(cls, directory: Path, mmap: bool = True) -> BM25Index | None:
        """The saved index, or None when there is none."""
        import bm25s

        meta_path = directory / META_FILE
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text())
        retriever = bm25s.BM25.load(str(directory), mmap=mmap)
        return cls(retriever, meta["stopwords"], meta["stemmer"], meta["digest"])

    @staticmethod
    def saved_digest(directory: Path) -> str | None:
        meta_path = directory / META_FILE
        return json.loads(meta_path.read_text())["digest"] if meta_path.exists() else None


class IndexBm25:
    """The BM25 state of an open index: loaded from ``bm25/`` when current and intact, else built in memory at first
    use. Searching never writes into the index directory (it may be read-only media, or a writer may be adding to
    it): missing or stale state is built for this process only, with a warning naming the command that persists it
    (``graphtx index --out DIR --bm25``)."""

    def __init__(self, store, ids, manifest: dict):
        """``store``: the index's IndexStore; ``ids``: its live id map; ``manifest``: its manifest."""
        self.store, self.ids, self.manifest = store, ids, manifest
        self.loaded: BM25Index | None = None
        self._lock = threading.Lock()

    def get(self) -> BM25Index:
        from graphtx import integrity
        from graphtx.index.store import BM25_DIR, index_config_of

        with self._lock:
            if self.loaded is None:
                digest = self.manifest["live_digest"]
                path = self.store.dir / BM25_DIR
                saved = BM25Index.saved_digest(path)
                recorded = {
                    n: e
                    for n, e in self.manifest.get(integrity.CHECKSUMS_KEY, {}).items()
                    if n.startswith(BM25_DIR + "/")
                }
                intact = not integrity.check(
                    self.store.dir, recorded, hash_limit=None
                )  # damaged: rebuilt from the parts
                bm25 = BM25Index.load(path) if intact and saved == digest else None
                if bm25 is None:
                    why = "has no BM25 state" if saved is None else "has BM25 state older than its documents"
                    log.warning(
                        "index %s %s: building it in memory for this process (%d documents); persist it with "
                        "`graphtx index --out %s --bm25`",
                        self.store.dir,
                        why,
                        len(self.ids),
                        self.store.dir,
                    )
                    bm25 = BM25Index.build(self.store.read_texts(self.ids), index_config_of(self.manifest), digest)
                self.loaded = bm25
            return self.loaded

    def at_hand(self) -> BM25Index | None:
        """The state when it costs no build: loaded already, or persisted and current; else None."""
        from graphtx.index.store import BM25_DIR

        if self.loaded is None and BM25Index.saved_digest(self.store.dir / BM25_DIR) != self.manifest["live_digest"]:
            return None
        return self.get()
