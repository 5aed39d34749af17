"""Pre-LayerNorm graph transformer block: sparse attention + GEGLU feed-forward.

Legend: n - nodes, d - node_dim, f - ffn hidden size.

    x = x + drop(attn(ln1(x)))
    x = x + drop(ffn(ln2(x)))
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from graphtx.model.attention import SparseGraphAttention
from graphtx.model.config import ModelConfig


class GEGLU(nn.Module):
    """x, gate = W x; return x * gelu(gate)  (Shazeer 2020, "GLU Variants Improve Transformer")."""

    def __init__(self, dim_in: int, dim_out: int):
        super().__init__()
        self.dim_in, self.dim_out = dim_in, dim_out
        self.proj = nn.Linear(dim_in, 2 * dim_out)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.proj.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, gate = self.proj(x).chunk(2, dim=-1)  # (n, f), (n, f)
        return x * F.gelu(gate)  # (n, f)

    def extra_repr(self) -> str:
        return f"{self.dim_in} -> {self.dim_out}"


class FeedForward(nn.Module):
    """GEGLU → dropout → Linear, hidden size ``mult * dim``."""

    def __init__(self, dim: int, mult: int = 4, dropout: float = 0.0):
        super().__init__()
        self.dim, self.hidden = dim, mult * dim
        self.glu = GEGLU(dim, self.hidden)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(self.hidden, dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.glu.reset_parameters()
        self.out.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.drop(self.glu(x)))  # (n, d) -> (n, f) -> (n, d)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, hidden={self.hidden}"


class GraphTransformerBlock(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        c = config
        self.ln1 = nn.LayerNorm(c.node_dim)
        self.attn = SparseGraphAttention(
            c.node_dim,
            c.heads,
            attention_dropout=c.attention_dropout,
            qk_norm=c.qk_norm,
            qk_scale_init=c.qk_scale_init,
            edge_type_bias=c.edge_type_bias,
        )
        self.ln2 = nn.LayerNorm(c.node_dim)
        self.ffn = FeedForward(c.node_dim, c.ffn_mult, c.dropout)
        self.drop = nn.Dropout(c.dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in (self.ln1, self.attn, self.ln2, self.ffn):
            m.reset_parameters()

    def forward(
        self, x: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor, return_attention: bool = False
    ):
        """(n, d) → (n, d) [, attention weights (e_att, h), attention edges (2, e_att)]."""
        a, alpha, index = self.attn(self.ln1(x), edge_index, edge_type, return_attention=True)
        x = x + self.drop(a)  # (n, d)
        x = x + self.drop(self.ffn(self.ln2(x)))  # (n, d)
        return (x, alpha, index) if return_attention else x

    def extra_repr(self) -> str:
        return "pre_layernorm=True"
