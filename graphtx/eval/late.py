"""Late-interaction re-ranking as an evaluated system: ``graphtx eval citations --late``.

:class:`LateScorer` holds the node-level late-interaction vectors (``graphtx.model.late``) of
every corpus document, encoded once by a model with a late head: candidate graphs stored as the
index stores them (``int8`` with a per-vector scale, ``fp16``, or ``float32``), query graphs in
float32. Its ``scores(query_id, candidate_ids)`` is the score the learned ranker takes as a
feature; it equals ``graphtx.index.Index.late_scores`` for the same model, graphs and storage.

:class:`LateRerankSystem` re-ranks a first stage (the dense system, or the RRF hybrid) as
``graphtx search --rerank late --rerank-depth N`` does: per query the first stage's top N
(score desc, then id; the query itself left out) are ordered by their late score (ties: first-stage
order), and every other candidate keeps its first-stage order below them.

Example::

    scorer = LateScorer("runs/late/model", "runs/ev/graphs")
    dense = ModelSystem("runs/late/model", "runs/ev/graphs")
    late = LateRerankSystem(dense, scorer, depth=100)
    report = evaluate_citations(corpus, citations, [dense, late, bm25], cfg)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphtx.eval.data import EvalCorpus
from graphtx.eval.fusion import ranks_by_row
from graphtx.eval.systems import System
from graphtx.index.late import dequantize, late_scores, quantize

LATE_STORAGES = ("int8", "fp16", "float32")


class LateScorer:
    """Late-interaction node vectors of a corpus's query and candidate graphs (see the module docstring)."""

    def __init__(
        self,
        model_dir: str | Path,
        graphs_dir: str | Path,
        query_kind: str = "first_claim",
        candidate_kind: str = "description",
        storage: str = "int8",
        batch_size: int = 64,
        model=None,
    ):
        if storage not in LATE_STORAGES:
            raise ValueError(f"late storage must be one of {LATE_STORAGES}, got {storage!r}")
        self.model_dir, self.graphs_dir = Path(model_dir), Path(graphs_dir)
        self.query_kind, self.candidate_kind, self.storage, self.batch_size = (
            query_kind,
            candidate_kind,
            storage,
            batch_size,
        )
        self._model = model  # (GraphEncoder, tokenizer), or None: loaded from model_dir
        self.corpus: EvalCorpus | None = None
        self.query_nodes: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # doc id -> (u (m, L), w (m,))
        self.candidate_nodes: dict[str, np.ndarray] = {}  # doc id -> (n, L) unit vectors as stored
        self.encode_seconds = 0.0
        self.nodes = 0  # candidate node vectors held

    def fit(self, corpus: EvalCorpus) -> LateScorer:
        import time

        import torch

        from graphtx.graphs.parse import iter_graphs

        if self.corpus is corpus:
            return self
        model, tokenizer = self._model or _load(self.model_dir)
        if getattr(model, "late", None) is None:
            raise ValueError(
                f"--late: the model {self.model_dir} has no late-interaction head (model.late_dim: 0); train one with model.late_dim > 0"
            )
        wanted = set(corpus.ids)
        t0 = time.perf_counter()
        with torch.inference_mode():
            for kind, is_query in ((self.candidate_kind, False), (self.query_kind, True)):
                graphs = list(iter_graphs(self.graphs_dir, kind=kind, ids=wanted))
                if not graphs:
                    raise ValueError(f"{self.graphs_dir} has no {kind} graphs of the corpus documents")
                u, w, offsets = model.encode_nodes(graphs, tokenizer, batch_size=self.batch_size)
                u, w, offsets = u.numpy(), w.numpy(), offsets.numpy()
                if not is_query and self.storage != "float32":
                    u = dequantize(*quantize(u, self.storage))  # the vectors as the index stores them
                for g, a, b in zip(graphs, offsets[:-1], offsets[1:]):
                    if is_query:
                        self.query_nodes[g.doc_id] = (u[a:b], w[a:b])
                    else:
                        self.candidate_nodes[g.doc_id] = u[a:b]
        self.encode_seconds = time.perf_counter() - t0
        self.nodes = sum(len(v) for v in self.candidate_nodes.values())
        self.corpus = corpus
        return self

    def scores(self, query_id: str, candidate_ids: list[str]) -> np.ndarray:
        """(len(candidate_ids),) float64 late scores; 0 for a query or candidate without a graph."""
        u, w = self.query_nodes.get(query_id, (np.zeros((0, 1), np.float32), np.zeros(0, np.float32)))
        empty = np.zeros((0, u.shape[1]), np.float32)
        return late_scores(u, w, [self.candidate_nodes.get(d, empty) for d in candidate_ids])

    def info(self) -> dict:
        L = next((v.shape[1] for v in self.candidate_nodes.values() if len(v)), 0)
        per_node = {"int8": L + 2, "fp16": 2 * L, "float32": 4 * L}[self.storage]
        docs = max(len(self.candidate_nodes), 1)
        return {
            "model": str(self.model_dir),
            "graphs": str(self.graphs_dir),
            "storage": self.storage,
            "late_dim": L,
            "candidate_nodes": self.nodes,
            "mean_nodes_per_doc": round(self.nodes / docs, 2),
            "bytes_per_doc": round(self.nodes / docs * per_node + 8, 1),
            "encode_seconds": round(self.encode_seconds, 2),
        }


def _load(model_dir: Path):
    from graphtx.model.io import load_model

    loaded = load_model(model_dir)
    return loaded.model, loaded.tokenizer


class LateRerankSystem(System):
    name = "late"

    def __init__(
        self, first: System, scorer: LateScorer, depth: int = 100, leave_out_self: bool = True, label: str = ""
    ):
        super().__init__()
        if depth < 1:
            raise ValueError("--rerank-depth must be >= 1")
        self.first, self.scorer, self.depth, self.leave_out_self = first, scorer, depth, leave_out_self
        self.fixed_label = label
        self.label = label or "late re-rank"
        self.rerank_seconds = 0.0
        self.queries = 0

    def fit(self, corpus: EvalCorpus) -> LateRerankSystem:
        if self.first.corpus is not corpus:
            self.first.fit(corpus)
        self.scorer.fit(corpus)
        self.corpus = corpus
        self.label = self.fixed_label or f"{self.first.label} + late re-rank (top {self.depth})"
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:
        import time

        from graphtx.rank.pool import apply_cutoff

        first = apply_cutoff(
            np.array(self.first.scores(rows), dtype=np.float64), self.corpus.candidate_mask(rows)
        )  # (q, c); cut-off -inf
        if self.leave_out_self:
            first[np.arange(len(rows)), rows] = -np.inf
        ranks = ranks_by_row(first)  # (q, c) 1-based
        out = -ranks.astype(np.float64)  # below the re-ranked top: first-stage order
        t0 = time.perf_counter()
        ids = self.corpus.ids
        for k, row in enumerate(rows):
            top = np.flatnonzero((ranks[k] <= self.depth) & np.isfinite(first[k]))  # (≤ depth,)
            late = self.scorer.scores(ids[row], [ids[j] for j in top])
            out[k, top] = (
                10.0 + late - 1e-9 * ranks[k, top]
            )  # late in [-1, 1]: above every other; ties by first-stage rank
        self.rerank_seconds += time.perf_counter() - t0
        self.queries += len(rows)
        out[~np.isfinite(first)] = -np.inf
        return out

    def info(self) -> dict:
        per_query = 1000 * self.rerank_seconds / self.queries if self.queries else 0.0
        return {
            "first_stage": self.first.label,
            "depth": self.depth,
            "late": self.scorer.info(),
            "rerank_ms_per_query": round(per_query, 2),
        }
