"""Node-level late interaction: a query graph scores a document graph node by node (ColBERT's MaxSim).

Legend: n - nodes, m - query nodes, b - query graphs, c - candidate graphs, L - late_dim, d - node_dim.

From the final node states x (n, d) of the graph transformer::

    u_i = normalize(W_u x_i)                          (n, L)  a node's late vector
    w_i = softmax_{i' in graph(i)} (v . x_i + c)      (n,)    a query node's weight (sums to 1 per graph)

    s(q, d) = sum_{i in q} w_i  max_{j in d} cos(u_i, u_j)

so s is in [-1, 1] like the pooled cosine (one InfoNCE temperature serves both), and it splits
exactly into per-query-node contributions w_i * max_j cos (``graphtx.index.late`` explains hits
with them). The weight layer starts at zero: a fresh head averages the MaxSims uniformly. An
empty query graph scores 0; a query node facing an empty document contributes 0.

References: Khattab & Zaharia 2020, "ColBERT: Efficient and Effective Passage Search via
Contextualized Late Interaction over BERT".

Example::

    u, w = head(node_states, batch.node_graph, batch.num_graphs)      # (n, L), (n,)
    s = late_score_matrix(u_q, w_q, graph_q, b, u_d, graph_d, c)      # (b, c)
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import scatter, softmax


class LateInteractionHead(nn.Module):
    def __init__(self, node_dim: int, late_dim: int):
        super().__init__()
        self.node_dim, self.late_dim = node_dim, late_dim
        self.proj = nn.Linear(node_dim, late_dim)
        self.weight = nn.Linear(node_dim, 1)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.proj.reset_parameters()
        nn.init.zeros_(self.weight.weight)
        nn.init.zeros_(self.weight.bias)

    def forward(self, x: torch.Tensor, node_graph: torch.Tensor, num_graphs: int) -> tuple[torch.Tensor, torch.Tensor]:
        """x (n, d), node_graph (n,) → late vectors (n, L) unit length, query weights (n,) summing to 1 per graph."""
        u = F.normalize(self.proj(x), dim=-1)  # (n, L)
        w = softmax(self.weight(x).squeeze(-1), index=node_graph, num_nodes=num_graphs)  # (n,)
        return u, w

    def extra_repr(self) -> str:
        return f"{self.node_dim} -> {self.late_dim}, weights=softmax(Linear({self.node_dim}, 1)) per graph"


def late_score_matrix(
    query_vectors: torch.Tensor,  # (m, L) unit length
    query_weights: torch.Tensor,  # (m,)
    query_graph: torch.Tensor,  # (m,) long: query graph of each node, in [0, b)
    num_queries: int,
    doc_vectors: torch.Tensor,  # (n, L)
    doc_graph: torch.Tensor,  # (n,) long: document of each node, in [0, c)
    num_docs: int,
) -> torch.Tensor:
    """(b, c): s(q, d) for every query graph and document of a batch, exact, without padding.

    One (m, n) similarity matmul, a segment max over each document's nodes, a weighted segment
    sum over each query's nodes; differentiable (the max passes its gradient to the argmax).
    Memory: m x n floats (a training batch of 6000 nodes: at most 3000 x 3000).
    """
    sim = query_vectors @ doc_vectors.T  # (m, n)
    if doc_vectors.size(0) == 0:
        best = sim.new_zeros(query_vectors.size(0), num_docs)  # (m, c)
    else:
        best = scatter(sim, doc_graph, dim=1, dim_size=num_docs, reduce="max")  # (m, c); 0 for an empty document
    return scatter(query_weights.unsqueeze(1) * best, query_graph, dim=0, dim_size=num_queries, reduce="sum")  # (b, c)


def late_score_brute_force(query_vectors, query_weights, doc_vectors) -> float:
    """s(q, d) by the definition, one pair, in Python loops: the reference the tests compare against."""
    if len(query_vectors) == 0 or len(doc_vectors) == 0:
        return 0.0
    total = 0.0
    for u, w in zip(query_vectors, query_weights):
        total += float(w) * max(float((u * v).sum()) for v in doc_vectors)
    return total


def late_scores(query_vectors: np.ndarray, query_weights: np.ndarray, docs: list[np.ndarray]) -> np.ndarray:
    """(c,) float64: s(q, d) of one query (u (m, L), w (m,)) against each document's node vectors (n_d, L).

    One (m, Σn) float64 matmul and a segment max; an empty query or document scores 0.
    """
    out = np.zeros(len(docs), np.float64)
    sizes = np.array([len(d) for d in docs], np.int64)
    if len(query_vectors) == 0 or sizes.sum() == 0:
        return out
    nodes = np.concatenate([d for d in docs if len(d)]).astype(np.float64)  # (Σn, L)
    sim = np.asarray(query_vectors, np.float64) @ nodes.T  # (m, Σn); float64: a score does not depend on its batch
    starts = np.concatenate([[0], np.cumsum(sizes[sizes > 0])[:-1]])
    best = np.maximum.reduceat(sim, starts, axis=1)  # (m, c') over the non-empty documents
    out[sizes > 0] = np.asarray(query_weights, np.float64) @ best
    return out
