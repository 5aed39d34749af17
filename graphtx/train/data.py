"""Graphs held in memory for training, with the per-kind fallback of abstract-only documents.

``GraphStore.get(doc, kind)`` returns the document's graph of that kind, or the
closest one it has (first_claim → all_claims → description, and back), so a
document without claims still takes part with the graph its text gave.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch

from graphtx.graphs.graph import GRAPH_KINDS, InventionGraph
from graphtx.graphs.parse import iter_graphs

_FALLBACK = {
    "first_claim": ("first_claim", "all_claims", "description"),
    "all_claims": ("all_claims", "first_claim", "description"),
    "description": ("description", "all_claims", "first_claim"),
}


class GraphStore:
    def __init__(self, graphs: Iterable[InventionGraph]):
        self._graphs: dict[tuple[str, str], InventionGraph] = {}
        for g in graphs:
            if g.num_nodes:  # an empty graph carries no signal; the document falls back to another kind
                self._graphs[(g.doc_id, g.kind)] = g
        self.doc_ids = sorted({d for d, _ in self._graphs})

    @classmethod
    def load(cls, graphs_dir: str | Path, kinds: Iterable[str] = GRAPH_KINDS) -> GraphStore:
        kinds = set(kinds)
        return cls(g for g in iter_graphs(graphs_dir) if g.kind in kinds)

    def get(self, doc_id: str, kind: str) -> InventionGraph | None:
        for k in _FALLBACK[kind]:
            g = self._graphs.get((doc_id, k))
            if g is not None:
                return g
        return None

    def has(self, doc_id: str, kind: str) -> bool:
        return self.get(doc_id, kind) is not None

    def ids_with(self, kind: str) -> set[str]:
        return {d for d in self.doc_ids if self.has(d, kind)}

    def num_nodes(self, doc_id: str, kind: str) -> int:
        g = self.get(doc_id, kind)
        return g.num_nodes if g is not None else 0

    def __len__(self) -> int:
        return len(self._graphs)

    def without(self, doc_ids: Iterable[str]) -> GraphStore:
        """The same graphs less those of ``doc_ids`` (documents held out of training)."""
        drop = set(doc_ids)
        return GraphStore(g for (d, _), g in self._graphs.items() if d not in drop)


# --- batch groups -----------------------------------------------------------------------


def class_groups(doc_classes: dict[str, tuple[str, ...]], level: int = 4) -> dict[str, str]:
    """doc id → its first class code cut to ``level`` characters ("H01M 10/44" → "H01M"); "" when none."""
    return {d: (codes[0].replace(" ", "")[:level] if codes else "") for d, codes in doc_classes.items()}


def cluster_groups(
    doc_ids: list[str], texts: list[str], tokenizer, token_vectors: np.ndarray, k: int, seed: int, iters: int = 20
) -> dict[str, str]:
    """doc id → k-means cluster of its averaged token vectors (cosine), seeded.

    For corpora without classification codes (the EV-battery abstracts): batches
    of one cluster hold topically close documents, whose negatives are harder.
    """
    if not doc_ids:
        return {}
    vecs = torch.from_numpy(np.asarray(token_vectors, dtype=np.float32))
    rows = []
    for ids in tokenizer.encode_batch(texts):
        rows.append(vecs[ids].mean(0) if ids else torch.zeros(vecs.shape[1]))
    x = torch.nn.functional.normalize(torch.stack(rows), dim=-1)  # (docs, dim)
    k = min(k, len(doc_ids))
    g = torch.Generator().manual_seed(seed)
    centres = x[torch.randperm(len(doc_ids), generator=g)[:k]].clone()  # (k, dim)
    for _ in range(iters):
        assign = (x @ centres.T).argmax(1)  # (docs,)
        for c in range(k):
            members = x[assign == c]
            if len(members):
                centres[c] = torch.nn.functional.normalize(members.mean(0), dim=0)
    assign = (x @ centres.T).argmax(1)
    return {d: f"c{int(a)}" for d, a in zip(doc_ids, assign)}
