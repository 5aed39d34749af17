"""Validation during training: Recall@k and nDCG@k of held-out citations over the whole candidate corpus.

Queries are the citing documents of the validation citations, encoded from their
query graph (first claim); candidates are every document of the graph store,
encoded from their candidate graph (description); a query is left out of its own
ranking. Binary gain; Recall@k over (query, cited) pairs (graphtx.metrics).

``known_item=True`` is the protocol for a corpus without citations: each query's
one relevant document is its own candidate graph (first claim → own description),
so the query is *not* left out of its ranking.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from graphtx.metrics import dense_rankings, ndcg_at_k, recall_at_k
from graphtx.model.encoder import GraphEncoder
from graphtx.train.data import GraphStore
from graphtx.train.pairs import Citation


@dataclass(frozen=True)
class EvalResult:
    recall: float  # Recall@k over (query, cited) pairs
    ndcg: float  # mean nDCG@ndcg_k over queries
    queries: int
    pairs: int
    candidates: int
    skipped: int  # validation citations whose query or cited document has no graph


class CitationEvaluator:
    def __init__(self, citations: list[Citation], store: GraphStore, query_kind: str, candidate_kind: str, k: int, ndcg_k: int, batch_size: int = 128, known_item: bool = False):
        self.k, self.ndcg_k, self.batch_size, self.known_item = k, ndcg_k, batch_size, known_item
        self.candidate_ids = sorted(store.ids_with(candidate_kind))
        candidates = set(self.candidate_ids)
        self.relevant: dict[str, dict[str, float]] = defaultdict(dict)
        self.skipped = 0
        for c in citations:
            if store.has(c.citing, query_kind) and c.cited in candidates and (c.cited != c.citing) != known_item:
                self.relevant[c.citing][c.cited] = 1.0
            else:
                self.skipped += 1
        self.query_ids = sorted(self.relevant)
        self.query_graphs = [store.get(q, query_kind) for q in self.query_ids]
        self.candidate_graphs = [store.get(d, candidate_kind) for d in self.candidate_ids]

    def __call__(self, model: GraphEncoder, tokenizer) -> EvalResult:
        q = model.encode(self.query_graphs, tokenizer, batch_size=self.batch_size)  # (queries, out_dim)
        c = model.encode(self.candidate_graphs, tokenizer, batch_size=self.batch_size)  # (candidates, out_dim)
        rankings = dense_rankings(self.query_ids, q, self.candidate_ids, c, k=max(self.k, self.ndcg_k), leave_out_self=not self.known_item)
        return EvalResult(
            recall=recall_at_k(rankings, self.relevant, self.k),
            ndcg=ndcg_at_k(rankings, self.relevant, self.ndcg_k),
            queries=len(self.query_ids),
            pairs=sum(len(v) for v in self.relevant.values()),
            candidates=len(self.candidate_ids),
            skipped=self.skipped,
        )
