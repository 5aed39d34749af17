"""Weighted pooling: a graph vector as a learned convex combination of its node states.

Legend: n - nodes, b - graphs, d - node_dim.

    s_i = w . x_i + c                  (x_i: final LayerNorm'd node state)
    p_i = exp(s_i) / sum_{j in graph(i)} exp(s_j)
    g   = sum_{i in graph} p_i x_i

The weights ``p`` are returned too: they say which nodes a graph vector is made
of, which explains matches. The score starts at zero (``w = 0``), so a fresh
model mean-pools.
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.utils import scatter, softmax


class WeightedPooling(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.score = nn.Linear(dim, 1)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.zeros_(self.score.weight)
        nn.init.zeros_(self.score.bias)

    def forward(self, x: torch.Tensor, node_graph: torch.Tensor, num_graphs: int) -> tuple[torch.Tensor, torch.Tensor]:
        """x (n, d), node_graph (n,) → pooled (b, d), weights (n,) summing to 1 per non-empty graph."""
        s = self.score(x).squeeze(-1)  # (n,)
        p = softmax(s, index=node_graph, num_nodes=num_graphs)  # (n,)
        g = scatter(
            p.unsqueeze(-1) * x, node_graph, dim=0, dim_size=num_graphs, reduce="sum"
        )  # (b, d); 0 for an empty graph
        return g, p

    def extra_repr(self) -> str:
        return f"dim={self.dim}, score=Linear({self.dim}, 1), softmax per graph"
