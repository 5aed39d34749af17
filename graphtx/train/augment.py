"""Training-time augmentations: graph-type swap and size-dependent node dropout.

Graph-type augmentation (the paper): with probability p one side of a pair — the
citing graph or the cited graph, never both — is replaced by the document's
all-claims graph, so the model sees claims-vs-claims and description-vs-description
matches too.

Node dropout: each node of a graph of n nodes is dropped with
p(n) = p_max · n / (n + n_half); a 5-node claim graph loses almost nothing, a
200-node description graph close to p_max. Edges of a dropped node go with it;
every graph keeps at least one node. Works on a collated GraphBatch, no Python
loop over nodes.
"""

from __future__ import annotations

import numpy as np
import torch

from graphtx.model.batch import GraphBatch


def choose_kinds(
    num_pairs: int, p: float, query_kind: str, candidate_kind: str, augment_kind: str, rng: np.random.Generator
) -> list[tuple[str, str]]:
    """(citing kind, cited kind) per pair: with probability p, one side (fair coin) becomes augment_kind."""
    swap = rng.random(num_pairs) < p  # (pairs,)
    side = rng.random(num_pairs) < 0.5  # (pairs,) True: the citing side
    return [
        ((augment_kind if s and c else query_kind), (augment_kind if s and not c else candidate_kind))
        for s, c in zip(swap.tolist(), side.tolist())
    ]


def node_dropout(batch: GraphBatch, p_max: float, n_half: int, generator: torch.Generator) -> GraphBatch:
    """A copy of ``batch`` without dropped nodes (tokens and edges re-indexed)."""
    if p_max <= 0 or batch.num_nodes == 0:
        return batch
    counts = batch.nodes_per_graph().to(torch.float32)  # (b,)
    p_graph = p_max * counts / (counts + n_half)  # (b,)
    p_node = p_graph[batch.node_graph]  # (n,)
    keep = torch.rand(batch.num_nodes, generator=generator) >= p_node  # (n,)
    # every non-empty graph keeps its first node if dropout took them all
    kept_per_graph = torch.bincount(batch.node_graph[keep], minlength=batch.num_graphs)  # (b,)
    first = batch.ptr()[:-1]  # (b,)
    rescue = (kept_per_graph == 0) & (counts > 0)  # (b,)
    keep[first[rescue]] = True
    if bool(keep.all()):
        return batch
    new_index = torch.cumsum(keep.to(torch.long), 0) - 1  # (n,) new id of a kept node
    token_keep = keep[batch.token_node]  # (t,)
    src, dst = batch.edge_index
    edge_keep = keep[src] & keep[dst]  # (e,)
    return GraphBatch(
        token_ids=batch.token_ids[token_keep],
        token_node=new_index[batch.token_node[token_keep]],
        node_graph=batch.node_graph[keep],
        node_type=batch.node_type[keep],
        edge_index=new_index[batch.edge_index[:, edge_keep]],  # (2, e')
        edge_type=batch.edge_type[edge_keep],
        num_graphs=batch.num_graphs,
    )
