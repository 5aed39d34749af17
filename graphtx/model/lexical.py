"""Lexical channel: a graph's exact terms as a fixed count sketch, appended to its vector.

A graph encoder trained from scratch on ~10^3 citation pairs does not learn BM25's exact matching
of rare technical terms (benchmarks/results/lexical-channel-rankers.md, "Beating BM25"). This channel keeps them in the one
vector FAISS searches. A graph's bag of BPE tokens (the tokens of all its node texts, as the model
reads them), each weighted (1 + log tf) * IDF (the tokens directory's IDF), is hashed into ``dim``
buckets with a +-1 sign per token (a count sketch: Charikar et al. 2002; feature hashing: Weinberger
et al. 2009; inner products are kept in expectation, error about 1/sqrt(dim)) and L2-normalised.
:meth:`graphtx.model.encoder.GraphEncoder.encode` appends it to the graph vector:

    v = [sqrt(1 - b) * g ; sqrt(b) * l]   so   cos(v_q, v_d) = (1 - b) cos(g_q, g_d) + b cos(l_q, l_d)

with ``b = model.lexical_weight``. Nothing here is trained. With ``train.lexical_in_loss`` (configs/small.yaml) the
loss scores this joined vector, so the graph part learns what the exact terms miss (a residual). The
buckets and signs come from a fixed seed and are saved with the weights as buffers, so a model's
vectors are the same on any machine. [PAD] (0) and [UNK] (1) carry no weight.

Legend: t - tokens of the batch, n - nodes, b - graphs, L - ``dim``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SKETCH_SEED = 20261123  # buckets and signs of the count sketch (fixed: part of what a saved model means)
SPECIAL_TOKENS = 2  # [PAD] = 0 and [UNK] = 1 carry no lexical weight


class LexicalChannel(nn.Module):
    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        self.vocab_size, self.dim = vocab_size, dim
        g = torch.Generator().manual_seed(SKETCH_SEED)
        self.register_buffer("bucket", torch.randint(0, dim, (vocab_size,), generator=g))  # (vocab,) long
        self.register_buffer("sign", torch.randint(0, 2, (vocab_size,), generator=g).float() * 2 - 1)  # (vocab,) +-1
        self.register_buffer("idf", torch.zeros(vocab_size))  # (vocab,) 0 until load_token_idf

    @torch.no_grad()
    def load_token_idf(self, idf: np.ndarray | torch.Tensor) -> None:
        """Copy the tokens directory's IDF (vocab_size,) positive numbers; special tokens get 0."""
        idf = torch.as_tensor(idf, dtype=torch.float32)
        if tuple(idf.shape) != (self.vocab_size,) or not bool((idf > 0).all()):
            raise ValueError(f"token IDF must be {self.vocab_size} positive numbers, got shape {tuple(idf.shape)}")
        self.idf.copy_(idf)
        self.idf[:SPECIAL_TOKENS] = 0.0

    def _weighted_pairs(
        self, token_ids: torch.Tensor, token_node: torch.Tensor, node_graph: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """Each distinct (graph, token) of the batch: graph (p,), token (p,), weight (p,) = (1 + log tf) * IDF."""
        pair, tf = torch.unique(node_graph[token_node] * self.vocab_size + token_ids, return_counts=True)
        token = pair % self.vocab_size
        return pair // self.vocab_size, token, (1.0 + tf.float().log()) * self.idf[token]

    def token_weights(
        self, token_ids: torch.Tensor, token_node: torch.Tensor, node_graph: torch.Tensor, num_graphs: int
    ) -> list[dict[int, float]]:
        """Per graph: token id -> the weight the sketch hashes (tokens of weight 0 left out)."""
        out: list[dict[int, float]] = [{} for _ in range(num_graphs)]
        if token_ids.numel():
            for graph, token, weight in zip(
                *(x.tolist() for x in self._weighted_pairs(token_ids, token_node, node_graph))
            ):
                if weight > 0:
                    out[graph][token] = weight
        return out

    def distinct_tokens(
        self, token_ids: torch.Tensor, token_node: torch.Tensor, node_graph: torch.Tensor, num_graphs: int
    ) -> torch.Tensor:
        """(t,), (t,), (n,) -> (b,) long: how many distinct weighted tokens each graph's sketch hashes."""
        if token_ids.numel() == 0:
            return torch.zeros(num_graphs, dtype=torch.long, device=token_ids.device)
        graph, _, weight = self._weighted_pairs(token_ids, token_node, node_graph)  # (p,) each
        return torch.bincount(graph[weight > 0], minlength=num_graphs)

    def forward(
        self,
        token_ids: torch.Tensor,
        token_node: torch.Tensor,
        node_graph: torch.Tensor,
        num_graphs: int,
        normalize: bool = True,
        top_tokens: int = 0,
    ) -> torch.Tensor:
        """(t,), (t,), (n,) -> (b, L) sketches, unit length unless ``normalize`` is False (zero for a graph without weighted tokens).

        ``top_tokens`` > 0: each graph's heaviest tokens only (ties by token id); a study option
        (benchmarks/studies/resketch_vectors.py), not something a saved model does."""
        out = torch.zeros(num_graphs, self.dim, device=token_ids.device)  # (b, L)
        if token_ids.numel() == 0:
            return out
        graph, token, weight = self._weighted_pairs(token_ids, token_node, node_graph)  # (p,) each, sorted by graph
        if top_tokens > 0:
            order = torch.sort(-weight, stable=True).indices  # heaviest first ...
            order = order[torch.sort(graph[order], stable=True).indices]  # ... within each graph
            first = torch.searchsorted(graph[order], graph[order])  # (p,) first pair of each pair's graph
            keep = order[torch.arange(len(order), device=order.device) - first < top_tokens]
            graph, token, weight = graph[keep], token[keep], weight[keep]
        out.index_put_((graph, self.bucket[token]), weight * self.sign[token], accumulate=True)
        return F.normalize(out, dim=-1) if normalize else out


def join(graph_vectors: torch.Tensor, lexical: torch.Tensor, weight: float) -> torch.Tensor:
    """(b, D), (b, L) -> (b, D + L): [sqrt(1 - weight) * g ; sqrt(weight) * l]."""
    return torch.cat([graph_vectors * (1.0 - weight) ** 0.5, lexical.to(graph_vectors.dtype) * weight**0.5], dim=-1)
