"""Systems under evaluation: anything that scores every corpus document for a query document.

A :class:`System` is fitted once on an :class:`~graphtx.eval.data.EvalCorpus` and then returns
score rows, ``scores(rows) -> (len(rows), len(corpus))`` float64, higher = more similar, ``-inf``
for a candidate it cannot score. Every system sees the same queries and the same candidates;
the protocols (:mod:`graphtx.eval.protocols`) turn rows into rankings.

graphtx itself enters in three ways:

* :class:`VectorSystem` — vectors files of ``graphtx encode`` (``doc_id, vector``): one file for
  both sides, or a query file (first-claim graphs) and a candidate file (description graphs);
* :class:`ModelSystem` — a model directory + a graphs directory, encoded here
  (``GraphEncoder.encode``; query kind ``first_claim``, candidate kind ``description`` by default);
* :func:`index_system` — HOOK for a graphtx index directory (``graphtx.index``, written separately):
  the index's model on a graphs directory.

The text baselines are in :mod:`graphtx.eval.baselines`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphtx.eval.data import EvalCorpus


class System:
    """Base class: ``name`` (short, the CLI's), ``label`` (the table's), ``fit``, ``scores``, ``info``."""

    name = "system"

    def __init__(self) -> None:
        self.label = self.name
        self.corpus: EvalCorpus | None = None

    def fit(self, corpus: EvalCorpus) -> System:
        self.corpus = corpus
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:  # (q, c) float64
        raise NotImplementedError

    def info(self) -> dict:
        """What a reader needs to rerun this system (paths, parameters, versions, coverage)."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"


# --- dense vectors ---------------------------------------------------------------


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a zero row stays zero (cosine 0 to everything)."""
    x = np.asarray(x, dtype=np.float64)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)


class DenseSystem(System):
    """Cosine of a query vector and each candidate vector (float64, so ties do not depend on BLAS).

    Subclasses set ``query_vectors`` (len(corpus), d) and ``candidate_vectors`` (len(corpus), d)
    in ``fit``, with ``query_known`` / ``candidate_known`` masks for documents without a vector:
    an unknown candidate scores ``-inf``; an unknown query scores 0 everywhere (ranked by id only).
    """

    def set_vectors(
        self,
        query: np.ndarray,
        candidate: np.ndarray,
        query_known: np.ndarray | None = None,
        candidate_known: np.ndarray | None = None,
    ) -> None:
        n = len(self.corpus)
        if query.shape[0] != n or candidate.shape[0] != n or query.shape[1] != candidate.shape[1]:
            raise ValueError(f"{self.label}: vectors {query.shape} / {candidate.shape} do not fit {n} documents")
        self.query_vectors, self.candidate_vectors = l2_normalise(query), l2_normalise(candidate)
        self.query_known = np.ones(n, bool) if query_known is None else query_known
        self.candidate_known = np.ones(n, bool) if candidate_known is None else candidate_known

    def scores(self, rows: np.ndarray) -> np.ndarray:
        s = self.query_vectors[rows] @ self.candidate_vectors.T  # (q, c)
        s[:, ~self.candidate_known] = -np.inf
        s[~self.query_known[rows]] = np.where(self.candidate_known, 0.0, -np.inf)
        return s

    def coverage(self) -> dict:
        return {
            "queries_without_vector": int((~self.query_known).sum()),
            "candidates_without_vector": int((~self.candidate_known).sum()),
        }


def vectors_by_id(
    ids: Sequence[str], vectors: np.ndarray, corpus: EvalCorpus, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """(matrix (len(corpus), d), known mask): rows in corpus order; ids outside the corpus are ignored."""
    if len(set(ids)) != len(ids):
        raise ValueError(f"{what}: a document id appears twice")
    out = np.zeros((len(corpus), vectors.shape[1]), dtype=np.float64)
    known = np.zeros(len(corpus), dtype=bool)
    for i, doc_id in enumerate(ids):
        row = corpus.position.get(doc_id)
        if row is not None:
            out[row] = vectors[i]
            known[row] = True
    if not known.any():
        raise ValueError(f"{what}: none of its {len(ids)} ids is a document of {corpus.source or 'the corpus'}")
    return out, known


# --- graphtx ---------------------------------------------------------------------


class VectorSystem(DenseSystem):
    """graphtx vectors files (``graphtx encode``): ``query_path`` for queries, ``candidate_path`` for candidates."""

    name = "graphtx"

    def __init__(self, query_path: str | Path, candidate_path: str | Path | None = None, label: str = ""):
        super().__init__()
        self.query_path, self.candidate_path = Path(query_path), Path(candidate_path or query_path)
        for path in {self.query_path, self.candidate_path}:
            if not path.is_file():
                raise FileNotFoundError(f"vectors file {path} does not exist (write one with `graphtx encode`)")
        self.label = label or "graphtx (vectors)"
        self.meta: dict = {}

    def fit(self, corpus: EvalCorpus) -> VectorSystem:
        from graphtx.model.embed import read_vectors

        super().fit(corpus)
        sides = {}
        for side, path in (("query", self.query_path), ("candidate", self.candidate_path)):
            ids, vectors, meta = read_vectors(path)
            sides[side] = vectors_by_id(ids, vectors, corpus, str(path))
            self.meta[side] = {
                "path": str(path),
                "model_fingerprint": meta.get("model_fingerprint", ""),
                "dim": int(vectors.shape[1]),
            }
        if self.meta["query"]["model_fingerprint"] != self.meta["candidate"]["model_fingerprint"]:
            raise ValueError(
                f"{self.query_path} and {self.candidate_path} were written by different models (fingerprints differ)"
            )
        (query, query_known), (cand, cand_known) = sides["query"], sides["candidate"]
        self.set_vectors(query, cand, query_known, cand_known)
        return self

    def info(self) -> dict:
        return {"vectors": self.meta, **self.coverage()}


class ModelSystem(DenseSystem):
    """A graphtx model directory encoding the graphs of a graphs directory (``graphtx parse``)."""

    name = "graphtx"

    def __init__(
        self,
        model_dir: str | Path,
        graphs_dir: str | Path,
        query_kind: str = "first_claim",
        candidate_kind: str = "description",
        batch_size: int = 64,
        label: str = "",
        query_kind_fixed: bool = True,
    ):
        """``query_kind_fixed`` False: when most documents have no claims, so that their claim-kind query graphs come
        from a fallback text (the abstract), query with ``candidate_kind``, the kind ``graphtx search --id`` uses."""
        super().__init__()
        self.model_dir, self.graphs_dir = Path(model_dir), Path(graphs_dir)
        for what, path in (("model", self.model_dir), ("graphs", self.graphs_dir)):
            if not path.is_dir():
                raise FileNotFoundError(f"{what} directory {path} does not exist")
        self.query_kind, self.candidate_kind, self.batch_size = query_kind, candidate_kind, batch_size
        self.fixed_label, self.query_kind_fixed = label, query_kind_fixed
        self.label = label or f"graphtx ({self.model_dir.name}; {query_kind} -> {candidate_kind})"
        self.fingerprint = ""
        self.query_kind_note = ""

    def _choose_query_kind(self, corpus: EvalCorpus) -> None:
        """Count the query graphs built from a fallback text; switch to the candidate kind when most are (unless fixed)."""
        from graphtx.graphs.parse import CLAIM_KINDS, FALLBACK_SOURCES, text_sources

        if self.query_kind not in CLAIM_KINDS or self.query_kind == self.candidate_kind:
            return
        sources = text_sources(self.graphs_dir, self.query_kind)
        present = [sources[d] for d in corpus.ids if d in sources]
        fallback = Counter(s for s in present if s in FALLBACK_SOURCES)
        if not fallback:
            return
        n = sum(fallback.values())
        what = f"{n} of {len(present)} {self.query_kind} query graphs come from a fallback text ({', '.join(f'{k} {v}' for k, v in fallback.most_common())}): those documents have no claims"
        if n * 2 > len(present) and not self.query_kind_fixed:
            self.query_kind_note = f"{what}; queried with {self.candidate_kind} graphs instead, as `graphtx search --id` does (--query-kind {self.query_kind} keeps the claim kind)"
            self.query_kind = self.candidate_kind
            self.label = (
                self.fixed_label or f"graphtx ({self.model_dir.name}; {self.query_kind} -> {self.candidate_kind})"
            )
        else:
            self.query_kind_note = what

    def _encode(self, model, tokenizer, kind: str, ids: set[str] | None) -> tuple[list[str], np.ndarray]:
        """(doc ids, (graphs, out_dim) vectors) of the ``kind`` graphs of ``ids``; from the model-vector cache when this
        model already encoded these graphs (graphtx/eval/vector_cache.py)."""
        from graphtx.eval.vector_cache import cached_vectors, vector_key
        from graphtx.graphs.parse import iter_graphs

        def encode() -> tuple[list[str], np.ndarray]:
            graphs = list(iter_graphs(self.graphs_dir, kind=kind, ids=ids))
            if not graphs:
                raise ValueError(f"{self.graphs_dir} has no {kind} graphs of the corpus documents")
            return [g.doc_id for g in graphs], model.encode(
                graphs, tokenizer, batch_size=self.batch_size
            ).float().numpy()

        return cached_vectors(vector_key(self.fingerprint, self.graphs_dir, kind, ids), encode)

    def _load(self):
        from graphtx.model.io import load_model

        loaded = load_model(self.model_dir)
        return loaded.model, loaded.tokenizer

    def fit(self, corpus: EvalCorpus) -> ModelSystem:
        import torch

        from graphtx.model.io import fingerprint

        super().fit(corpus)
        model, tokenizer = self._load()
        self.fingerprint = fingerprint(model, tokenizer=tokenizer)  # as the model directory and an index record it
        self._choose_query_kind(corpus)
        wanted = set(corpus.ids)
        with torch.inference_mode():
            cand = vectors_by_id(
                *self._encode(model, tokenizer, self.candidate_kind, wanted), corpus, f"{self.candidate_kind} graphs"
            )
            query = (
                cand
                if self.query_kind == self.candidate_kind
                else vectors_by_id(
                    *self._encode(model, tokenizer, self.query_kind, wanted), corpus, f"{self.query_kind} graphs"
                )
            )
        self.set_vectors(query[0], cand[0], query[1], cand[1])
        return self

    def info(self) -> dict:
        return {
            "model": str(self.model_dir),
            "graphs": str(self.graphs_dir),
            "model_fingerprint": self.fingerprint,
            "query_kind": self.query_kind,
            "candidate_kind": self.candidate_kind,
            **self.coverage(),
            **({"query_kind_note": self.query_kind_note} if self.query_kind_note else {}),
        }


# --- HOOK: graphtx index directory ---------------------------------------------------


def index_system(
    index_dir: str | Path,
    graphs_dir: str | Path | None,
    query_kind: str = "first_claim",
    candidate_kind: str | None = None,
    batch_size: int = 64,
    label: str = "",
    query_kind_fixed: bool = True,
) -> System:
    """HOOK (graphtx.index, written separately): evaluate the model of a graphtx index directory.

    Uses only ``graphtx.index.Index.open(path)`` and the opened index's ``model``, ``tokenizer`` and
    ``manifest`` (its ``kind`` = the candidate graph kind). Scores are exact cosines of that model's
    vectors of ``graphs_dir`` (as :class:`ModelSystem`), so the table measures the indexed model;
    what an approximate FAISS index (IVF-PQ, HNSW) loses against them is for graphtx.index's own
    benchmark. Without graphtx.index, pass ``--model`` and ``--graphs`` (or ``--vectors``) instead.
    """
    try:
        from graphtx.index import Index  # type: ignore[attr-defined]
    except ImportError as err:
        raise ValueError(
            f"--index needs graphtx.index, which is not available here ({err}); pass --vectors or --model and --graphs instead"
        ) from None
    if not hasattr(Index, "open"):
        raise ValueError("graphtx.index.Index has no open(path); pass --vectors or --model and --graphs instead")
    if graphs_dir is None:
        raise ValueError("--index needs --graphs (the graphs directory to encode queries and candidates from)")
    return IndexModelSystem(
        Index, index_dir, graphs_dir, query_kind, candidate_kind, batch_size, label, query_kind_fixed
    )


class IndexModelSystem(ModelSystem):
    """:class:`ModelSystem` whose model is the one a graphtx index directory was built with (see :func:`index_system`)."""

    def __init__(
        self,
        index_cls,
        index_dir,
        graphs_dir,
        query_kind: str,
        candidate_kind: str | None,
        batch_size: int,
        label: str,
        query_kind_fixed: bool = True,
    ):
        super().__init__(
            index_dir,
            graphs_dir,
            query_kind,
            candidate_kind or "description",
            batch_size,
            label=label or f"graphtx (index {Path(index_dir).name})",
            query_kind_fixed=query_kind_fixed,
        )
        self.index_cls, self.kind_from_index = index_cls, candidate_kind is None

    def _load(self):
        index = self.index_cls.open(self.model_dir)
        if self.kind_from_index and index.manifest.get("kind"):
            self.candidate_kind = index.manifest["kind"]
        return index.model, index.tokenizer

    def info(self) -> dict:
        return super().info() | {"index": str(self.model_dir)}
