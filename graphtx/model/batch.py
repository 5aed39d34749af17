"""GraphBatch: many InventionGraphs as flat tensors (PyG-style disjoint union).

Legend: b - graphs, n - nodes of the batch, t - tokens of the batch, e - edges of the batch.

Nodes of graph ``g`` are a contiguous run of node indices; edges carry per-graph
offsets so they index the batch's nodes. Tokens are flat too: ``token_node``
says which node each token belongs to (a node's tokens are contiguous and in
text order).

Empty nodes: a node whose text yields no tokens (empty or whitespace-only text)
gets *no* token rows. The node encoder then pools an empty bag to zeros, so the
node still exists (node-type embedding + structure) and still takes part in
attention and pooling. No pad token is ever emitted, so nothing needs masking.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import chain
from typing import Protocol

import numpy as np
import torch

from graphtx.graphs.graph import EDGE_TYPES, NODE_TYPES, InventionGraph

_NODE_TYPE_ID = {t: i for i, t in enumerate(NODE_TYPES)}
_EDGE_TYPE_ID = {t: i for i, t in enumerate(EDGE_TYPES)}


class Tokenizer(Protocol):
    """What the model needs of a tokenizer (graphtx.text.bpe.PatentTokenizer is one)."""

    vocab_size: int
    pad_id: int

    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...


@dataclass
class GraphBatch:
    token_ids: torch.Tensor  # (t,) long: vocabulary ids
    token_node: torch.Tensor  # (t,) long: node of each token, non-decreasing
    node_graph: torch.Tensor  # (n,) long: graph of each node, non-decreasing
    node_type: torch.Tensor  # (n,) long: index into NODE_TYPES
    edge_index: torch.Tensor  # (2, e) long: (source, target) = the graphs' directed edges, batch node ids
    edge_type: torch.Tensor  # (e,) long: index into EDGE_TYPES
    num_graphs: int  # b; graphs without nodes are counted too

    @property
    def num_nodes(self) -> int:
        return self.node_graph.numel()

    @property
    def num_tokens(self) -> int:
        return self.token_ids.numel()

    def nodes_per_graph(self) -> torch.Tensor:
        """(b,) long: node count of each graph (0 for an empty graph)."""
        return torch.bincount(self.node_graph, minlength=self.num_graphs)

    def ptr(self) -> torch.Tensor:
        """(b + 1,) long: graph g owns nodes ``ptr[g]:ptr[g + 1]``."""
        counts = self.nodes_per_graph()
        return torch.cat([counts.new_zeros(1), counts.cumsum(0)])

    def to(self, device: torch.device | str, non_blocking: bool = False) -> GraphBatch:
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in moved.items():
            if isinstance(value, torch.Tensor):
                moved[name] = value.to(device, non_blocking=non_blocking)
        return GraphBatch(**moved)

    def __repr__(self) -> str:
        return f"GraphBatch(graphs={self.num_graphs}, nodes={self.num_nodes}, edges={self.edge_index.size(1)}, tokens={self.num_tokens})"


def collate(graphs: list[InventionGraph], tokenizer: Tokenizer, max_tokens_per_node: int) -> GraphBatch:
    """Tokenise all node texts of ``graphs`` in one ``encode_batch`` call and flatten.

    Each node keeps its first ``max_tokens_per_node`` tokens. Python loops run
    over nodes and graphs, never over tokens.
    """
    if max_tokens_per_node < 1:
        raise ValueError("max_tokens_per_node must be >= 1")
    m = max_tokens_per_node
    texts = [text for g in graphs for text in g.node_text]
    ids = tokenizer.encode_batch(texts) if texts else []
    if len(ids) != len(texts):
        raise ValueError(f"tokenizer returned {len(ids)} encodings for {len(texts)} texts")

    lengths = np.fromiter((min(len(x), m) for x in ids), dtype=np.int64, count=len(ids))  # (n,)
    token_ids = np.fromiter(chain.from_iterable(x[:m] for x in ids), dtype=np.int64, count=int(lengths.sum()))  # (t,)
    token_node = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)  # (t,)

    nodes_per_graph = np.fromiter((g.num_nodes for g in graphs), dtype=np.int64, count=len(graphs))  # (b,)
    node_graph = np.repeat(np.arange(len(graphs), dtype=np.int64), nodes_per_graph)  # (n,)
    node_type = np.fromiter(
        (_NODE_TYPE_ID[t] for g in graphs for t in g.node_type), dtype=np.int64, count=len(texts)
    )  # (n,)

    offsets = np.cumsum(nodes_per_graph) - nodes_per_graph  # (b,) first node of each graph
    edges_per_graph = np.fromiter((g.num_edges for g in graphs), dtype=np.int64, count=len(graphs))  # (b,)
    num_edges = int(edges_per_graph.sum())
    edge_offset = np.repeat(offsets, edges_per_graph)  # (e,)
    src = np.fromiter(chain.from_iterable(g.edge_src for g in graphs), dtype=np.int64, count=num_edges) + edge_offset
    dst = np.fromiter(chain.from_iterable(g.edge_dst for g in graphs), dtype=np.int64, count=num_edges) + edge_offset
    edge_type = np.fromiter((_EDGE_TYPE_ID[t] for g in graphs for t in g.edge_type), dtype=np.int64, count=num_edges)

    return GraphBatch(
        token_ids=torch.from_numpy(token_ids),
        token_node=torch.from_numpy(token_node),
        node_graph=torch.from_numpy(node_graph),
        node_type=torch.from_numpy(node_type),
        edge_index=torch.from_numpy(np.stack([src, dst])),  # (2, e)
        edge_type=torch.from_numpy(edge_type),
        num_graphs=len(graphs),
    )
