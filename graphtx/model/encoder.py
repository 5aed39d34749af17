"""GraphEncoder: a batch of invention graphs → one vector per graph.

Legend: t - tokens, n - nodes, e - attention edges, h - heads, b - graphs,
d - node_dim, D - base_dim, R - reduced_dim.

    node texts ──SWEM──▶ (n, d) ──LayerNorm, dropout──▶ L × GraphTransformerBlock
      ──LayerNorm──▶ WeightedPooling (b, d) ──Linear──▶ (b, D) [──DenseMoEHead──▶ (b, R)]
      ──L2-normalise──▶ graph vectors
    final node states ──LateInteractionHead──▶ (n, L) node vectors, (n,) query-node weights   (late_dim > 0)

Training runs in two stages: the base model (``reduced_dim = 0``) first, then
``with_reduction`` copies it under a fresh MoE head for the reduced model.

A graph without nodes gets the zero vector (cosine 0 to everything), not the
projection's bias.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from graphtx.graphs.graph import InventionGraph
from graphtx.model.batch import GraphBatch, Tokenizer, collate
from graphtx.model.block import GraphTransformerBlock
from graphtx.model.config import ModelConfig
from graphtx.model.late import LateInteractionHead
from graphtx.model.lexical import LexicalChannel, join
from graphtx.model.moe import DenseMoEHead
from graphtx.model.pooling import WeightedPooling
from graphtx.model.swem import SWEMNodeEncoder


@dataclass
class EncoderOutput:
    vectors: torch.Tensor  # (b, out_dim): graph vectors (L2-normalised unless normalize=False)
    node_states: torch.Tensor  # (n, d): final LayerNorm'd node states
    node_weights: torch.Tensor  # (n,): pooling weights, sum to 1 per non-empty graph
    attention: list[torch.Tensor]  # per block: (e, h) weights over attention_edges
    attention_edges: torch.Tensor  # (2, e): (source, target), graph edges both ways + self loops
    gates: torch.Tensor | None  # (b, experts) MoE gates; None for the base model
    late_vectors: torch.Tensor | None = None  # (n, L) unit node vectors of the late-interaction head; None without one
    late_weights: torch.Tensor | None = None  # (n,) query-node weights, sum to 1 per non-empty graph


class GraphEncoder(nn.Module):
    def __init__(self, config: ModelConfig, seed: int | None = None):
        """``seed`` makes the initial weights reproducible without touching the global RNG."""
        super().__init__()
        self.config = c = config
        with torch.random.fork_rng(devices=[], enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(seed)
            self.swem = SWEMNodeEncoder(
                c.vocab_size,
                c.token_dim,
                c.node_dim,
                c.embedding_dropout,
                weighting=c.token_weighting,
                word_order=c.word_order,
            )
            self.ln_in = nn.LayerNorm(c.node_dim)
            self.drop = nn.Dropout(c.dropout)
            self.blocks = nn.ModuleList(GraphTransformerBlock(c) for _ in range(c.layers))
            self.ln_f = nn.LayerNorm(c.node_dim)
            self.pool = WeightedPooling(c.node_dim)
            self.proj = nn.Linear(c.node_dim, c.base_dim) if c.base_dim != c.node_dim else nn.Identity()
            self.moe = DenseMoEHead(c.base_dim, c.reduced_dim, c.num_experts) if c.reduced_dim else None
            self.late = (
                LateInteractionHead(c.node_dim, c.late_dim) if c.late_dim else None
            )  # last: the other weights start as without it
        self.lexical = (
            LexicalChannel(c.vocab_size, c.lexical_dim) if c.lexical_dim else None
        )  # no weights drawn: buffers only

    def reset_parameters(self) -> None:
        for m in (self.swem, self.ln_in, *self.blocks, self.ln_f, self.pool, self.proj, self.moe, self.late):
            if m is not None and hasattr(m, "reset_parameters"):
                m.reset_parameters()

    @property
    def out_dim(self) -> int:
        """Size of the vectors ``encode`` returns (the graph vector, then the lexical channel if any)."""
        return self.config.vector_dim

    def forward(self, batch: GraphBatch, return_details: bool = False, normalize: bool = True, lexical: bool = False):
        """GraphBatch → vectors (b, config.out_dim), or an EncoderOutput with ``return_details``.

        ``lexical``: append the lexical channel (graphtx.model.lexical), as ``encode`` does: (b, out_dim + lexical_dim).
        Training turns it on with ``train.lexical_in_loss`` (the loss then scores what FAISS searches)."""
        x = self.swem(batch.token_ids, batch.token_node, batch.node_type)  # (n, d)
        x = self.drop(self.ln_in(x))  # (n, d)
        attention, index = [], None
        for block in self.blocks:
            x, alpha, index = block(
                x, batch.edge_index, batch.edge_type, return_attention=True
            )  # (n, d), (e, h), (2, e)
            attention.append(alpha)
        x = self.ln_f(x)  # (n, d)
        g, weights = self.pool(x, batch.node_graph, batch.num_graphs)  # (b, d), (n,)
        g = self.proj(g)  # (b, D)
        gates = None
        if self.moe is not None:
            g, gates = self.moe(g, return_gates=True)  # (b, R), (b, experts)
        has_nodes = torch.bincount(batch.node_graph, minlength=batch.num_graphs) > 0  # (b,)
        g = g * has_nodes.unsqueeze(-1).to(g.dtype)  # an empty graph → zero vector
        if normalize:
            g = F.normalize(g, dim=-1)  # (b, out_dim); the zero vector stays zero
        if lexical and self.lexical is not None:
            lex = self.lexical(
                batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs
            )  # (b, lexical_dim)
            g = join(g, lex, self.config.lexical_weight)  # (b, out_dim + lexical_dim)
        if not return_details:
            return g
        late_vectors = late_weights = None
        if self.late is not None:
            late_vectors, late_weights = self.late(x, batch.node_graph, batch.num_graphs)  # (n, L), (n,)
        return EncoderOutput(g, x, weights, attention, index, gates, late_vectors, late_weights)

    @torch.no_grad()
    def encode_nodes(
        self, graphs: Sequence[InventionGraph], tokenizer: Tokenizer, batch_size: int = 64
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Late-interaction node vectors of ``graphs`` on CPU, eval mode: vectors (N, L), query weights (N,),
        offsets (len(graphs) + 1,) long (graph g owns rows ``offsets[g]:offsets[g + 1]``)."""
        if self.late is None:
            raise ValueError(
                "this model has no late-interaction head (model.late_dim: 0); train one with model.late_dim > 0"
            )
        was_training = self.training
        self.eval()
        device = next(self.parameters()).device
        vectors, weights, counts = [], [], []
        try:
            for i in range(0, len(graphs), batch_size):
                batch = collate(list(graphs[i : i + batch_size]), tokenizer, self.config.max_tokens_per_node).to(device)
                out = self(batch, return_details=True)
                vectors.append(out.late_vectors.float().cpu())
                weights.append(out.late_weights.float().cpu())
                counts.append(batch.nodes_per_graph().cpu())
        finally:
            self.train(was_training)
        L = self.config.late_dim
        if not vectors:
            return torch.zeros(0, L), torch.zeros(0), torch.zeros(1, dtype=torch.long)
        counts_all = torch.cat(counts)  # (graphs,)
        offsets = torch.cat([counts_all.new_zeros(1), counts_all.cumsum(0)])  # (graphs + 1,)
        return torch.cat(vectors), torch.cat(weights), offsets

    @torch.no_grad()
    def encode(
        self, graphs: Sequence[InventionGraph], tokenizer: Tokenizer, batch_size: int = 64, normalize: bool = True
    ) -> torch.Tensor:
        """Graph vectors (len(graphs), out_dim) on CPU, in eval mode (the previous mode is restored)."""
        was_training = self.training
        self.eval()
        device = next(self.parameters()).device
        try:
            out = [
                self(
                    collate(list(graphs[i : i + batch_size]), tokenizer, self.config.max_tokens_per_node).to(device),
                    normalize=normalize,
                    lexical=True,
                ).cpu()
                for i in range(0, len(graphs), batch_size)
            ]
        finally:
            self.train(was_training)
        dtype = next(self.parameters()).dtype
        return torch.cat(out) if out else torch.zeros(0, self.out_dim, dtype=dtype)

    def _copy_under(self, config: ModelConfig, fresh: str, seed: int | None = None) -> GraphEncoder:
        """A model of ``config`` holding this model's weights, except the part named ``fresh`` (a state-dict prefix), left new."""
        param = next(self.parameters())
        out = GraphEncoder(config, seed=seed).to(device=param.device, dtype=param.dtype)
        kept = {k: v for k, v in self.state_dict().items() if not k.startswith(fresh)}
        missing, unexpected = out.load_state_dict(kept, strict=False)
        assert not unexpected and all(k.startswith(fresh) for k in missing), (missing, unexpected)
        return out

    def with_reduction(self, reduced_dim: int, num_experts: int, seed: int | None = None) -> GraphEncoder:
        """A reduced model: a copy of this model's weights (any old MoE head dropped) under a fresh MoE head."""
        return self._copy_under(
            dataclasses.replace(self.config, reduced_dim=reduced_dim, num_experts=num_experts), "moe.", seed
        )

    def with_lexical_channel(self, dim: int, weight: float, token_idf) -> GraphEncoder:
        """A copy of this model with a lexical channel of ``dim`` buckets (graphtx.model.lexical) and the tokens' IDF.

        The channel has no trained weights, so a trained model gains it without retraining (benchmarks/studies/lexical_channel.py)."""
        out = self._copy_under(dataclasses.replace(self.config, lexical_dim=dim, lexical_weight=weight), "lexical.")
        out.lexical.load_token_idf(token_idf)
        return out.train(self.training)

    def num_parameters(self, trainable_only: bool = False) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable_only)

    def extra_repr(self) -> str:
        c = self.config
        head = f", moe={c.base_dim}->{c.reduced_dim}x{c.num_experts}" if c.reduced_dim else ""
        head += f", late_dim={c.late_dim}" if c.late_dim else ""
        return f"out_dim={self.out_dim}, node_dim={c.node_dim}, layers={c.layers}, heads={c.heads}{head}, params={self.num_parameters():,}"
