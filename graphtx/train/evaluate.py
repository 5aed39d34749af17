"""Validation during training: Recall@k and nDCG@k of held-out citations over the whole candidate corpus.

Queries are the citing documents of the held-out citations (the selection split during training;
validation and test once at the end), encoded from their
query graph (first claim); candidates are every document of the graph store,
encoded from their candidate graph (description); a query is left out of its own
ranking. Binary gain; Recall@k over (query, cited) pairs (graphtx.metrics).

``known_item=True`` is the protocol for a corpus without citations: each query's
one relevant document is its own candidate graph (first claim → own description),
so the query is *not* left out of its ranking.

``rerank_depth > 0`` with a model that has a late-interaction head (``train.select_rerank_depth``):
each query's dense top N is re-ranked by the late score before Recall@k / nDCG@k, so the
checkpoint that ships is the best one for ``graphtx search --rerank late``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from graphtx.corpus.schema import Citation
from graphtx.metrics import dense_rankings, ndcg_at_k, recall_at_k
from graphtx.model.encoder import GraphEncoder
from graphtx.train.data import GraphStore


@dataclass(frozen=True)
class EvalResult:
    recall: float  # Recall@k over (query, cited) pairs
    ndcg: float  # mean nDCG@ndcg_k over queries
    queries: int
    pairs: int
    candidates: int
    skipped: int  # held-out citations whose query or cited document has no graph


class CitationEvaluator:
    def __init__(
        self,
        citations: list[Citation],
        store: GraphStore,
        query_kind: str,
        candidate_kind: str,
        k: int,
        ndcg_k: int,
        batch_size: int = 128,
        known_item: bool = False,
        rerank_depth: int = 0,
    ):
        self.k, self.ndcg_k, self.batch_size, self.known_item = k, ndcg_k, batch_size, known_item
        self.rerank_depth = rerank_depth  # > 0 and a late head: the dense top N re-ranked by late interaction
        self.candidate_ids = sorted(store.ids_with(candidate_kind))
        candidates = set(self.candidate_ids)
        self.relevant: dict[str, dict[str, float]] = defaultdict(dict)
        self.skipped = 0
        for c in citations:
            if (
                store.has(c.citing_id, query_kind)
                and c.cited_id in candidates
                and (c.cited_id != c.citing_id) != known_item
            ):
                self.relevant[c.citing_id][c.cited_id] = 1.0
            else:
                self.skipped += 1
        self.query_ids = sorted(self.relevant)
        self.query_graphs = [store.get(q, query_kind) for q in self.query_ids]
        self.candidate_graphs = [store.get(d, candidate_kind) for d in self.candidate_ids]

    def __call__(self, model: GraphEncoder, tokenizer) -> EvalResult:
        q = model.encode(self.query_graphs, tokenizer, batch_size=self.batch_size)  # (queries, out_dim)
        c = model.encode(self.candidate_graphs, tokenizer, batch_size=self.batch_size)  # (candidates, out_dim)
        late = self.rerank_depth > 0 and getattr(model, "late", None) is not None
        depth = max(self.k, self.ndcg_k, self.rerank_depth if late else 0)
        rankings = dense_rankings(self.query_ids, q, self.candidate_ids, c, k=depth, leave_out_self=not self.known_item)
        if late:
            rankings = self._rerank_late(model, tokenizer, rankings)
        return EvalResult(
            recall=recall_at_k(rankings, self.relevant, self.k),
            ndcg=ndcg_at_k(rankings, self.relevant, self.ndcg_k),
            queries=len(self.query_ids),
            pairs=sum(len(v) for v in self.relevant.values()),
            candidates=len(self.candidate_ids),
            skipped=self.skipped,
        )

    def _rerank_late(self, model: GraphEncoder, tokenizer, rankings: dict[str, list[str]]) -> dict[str, list[str]]:
        """Each ranking's top ``rerank_depth`` ordered by late-interaction score (ties: dense order), the rest as it was."""
        from graphtx.model.late import late_scores

        qu, qw, qo = (t.numpy() for t in model.encode_nodes(self.query_graphs, tokenizer, batch_size=self.batch_size))
        cu, _, co = (
            t.numpy() for t in model.encode_nodes(self.candidate_graphs, tokenizer, batch_size=self.batch_size)
        )
        nodes = {d: cu[co[i] : co[i + 1]] for i, d in enumerate(self.candidate_ids)}
        out = {}
        for i, query in enumerate(self.query_ids):
            ranking = rankings[query]
            top = ranking[: self.rerank_depth]
            s = late_scores(qu[qo[i] : qo[i + 1]], qw[qo[i] : qo[i + 1]], [nodes[d] for d in top])
            order = sorted(range(len(top)), key=lambda j: (-s[j], j))
            out[query] = [top[j] for j in order] + ranking[self.rerank_depth :]
        return out
