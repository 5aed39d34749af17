"""SWEM node encoder: a node's text → one vector, by pooling its token vectors.

Legend: t - tokens of the batch, n - nodes, c - token_dim, d - node_dim.

    h_i = W [mean_{t in i} e_t ; max_{t in i} e_t] + b + type_emb[type_i]

(Shen et al. 2018, "Baseline Needs More Love: On Simple Word-Embedding-Based
Models", SWEM-concat.) The token table is meant to start from FastText vectors
(``load_token_vectors``).

Token weighting (``weighting``): ``none`` is the plain mean above; ``idf`` replaces it by
the IDF-weighted mean Σ w_t e_t / Σ w_t with w = the tokens directory's IDF (a buffer,
saved with the weights), so a rare technical term ("separator", "electrolyte") is not
averaged away by the common words of its node; ``learned`` starts from the same IDF and
trains w (kept positive as exp of a parameter). The max half is unweighted.

Word order (``word_order``): a bag of tokens cannot tell "oxide of lithium nickel" from "nickel oxide of lithium".
``bigram`` adds a width-2 convolution over each node's consecutive tokens, ``g_i = GELU(B [e_i ; e_{i+1}] + b_B)``,
mean- and max-pooled over the node's token pairs and concatenated before the projection:
``W [mean ; max ; mean_i g_i ; max_i g_i]``; ``trigram`` adds a width-3 one beside it the same way. A node's tokens
must arrive contiguous and in text order (the tokenizer's order, as graph batches and ``PhraseTokens`` give them); a
node shorter than the window has none and pools to zeros there. ``none`` is the plain SWEM-concat above.

Embedding dropout (train mode only): each forward draws one keep/drop coin per
vocabulary row; every occurrence of a dropped token type leaves its node's bag
of tokens, as if the word were not in the text. Mean and max then run over the
remaining tokens, so no 1/(1-p) rescaling is needed. A node left with no tokens
pools to zeros — the same rule as a node whose text has no tokens at all.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import scatter

from graphtx.model.config import NUM_NODE_TYPES, WORD_ORDER_WIDTHS
from graphtx.model.config import TOKEN_WEIGHTINGS as WEIGHTINGS
from graphtx.model.config import WORD_ORDERS as ORDERS


class SWEMNodeEncoder(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        token_dim: int,
        node_dim: int,
        embedding_dropout: float = 0.0,
        num_node_types: int = NUM_NODE_TYPES,
        weighting: str = "none",
        word_order: str = "none",
    ):
        super().__init__()
        if weighting not in WEIGHTINGS:
            raise ValueError(f"token weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        if word_order not in ORDERS:
            raise ValueError(f"node word order must be one of {ORDERS}, got {word_order!r}")
        self.vocab_size, self.token_dim, self.node_dim = vocab_size, token_dim, node_dim
        self.embedding_dropout, self.weighting, self.word_order = embedding_dropout, weighting, word_order
        self.embedding = nn.Embedding(vocab_size, token_dim)
        if weighting == "idf":
            self.register_buffer(
                "token_log_weight", torch.zeros(vocab_size)
            )  # (vocab,) log IDF; 0 until load_token_weights
        elif weighting == "learned":
            self.token_log_weight = nn.Parameter(torch.zeros(vocab_size))  # (vocab,)
        self.widths = WORD_ORDER_WIDTHS[word_order]  # convolution widths over consecutive tokens
        self.ngram = nn.ModuleList(
            nn.Linear(w * token_dim, token_dim) for w in self.widths
        )  # [e_i ; ... ; e_{i+w-1}] -> g_i
        self.pooled_dim = (2 + 2 * len(self.widths)) * token_dim  # what the projection reads
        self.proj = nn.Linear(self.pooled_dim, node_dim)
        self.type_embedding = nn.Embedding(num_node_types, node_dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.embedding.weight, std=self.token_dim**-0.5)  # unit-norm-ish rows until FastText is loaded
        self.proj.reset_parameters()
        for layer in self.ngram:
            layer.reset_parameters()
        nn.init.zeros_(self.type_embedding.weight)

    @torch.no_grad()
    def load_token_vectors(self, matrix: np.ndarray | torch.Tensor) -> None:
        """Copy a (vocab_size, token_dim) matrix (e.g. FastText vectors, row i = token id i) into the table."""
        matrix = torch.as_tensor(matrix)
        if tuple(matrix.shape) != tuple(self.embedding.weight.shape):
            raise ValueError(
                f"token vectors have shape {tuple(matrix.shape)}, the table needs {tuple(self.embedding.weight.shape)}"
            )
        self.embedding.weight.copy_(matrix.to(self.embedding.weight))

    @torch.no_grad()
    def load_projection(
        self,
        weight: np.ndarray | torch.Tensor,
        bias: np.ndarray | torch.Tensor,
        ngram: tuple[tuple[np.ndarray, np.ndarray], ...] = (),
    ) -> None:
        """Copy a (node_dim, pooled_dim) weight and (node_dim,) bias into the projection, and one (weight, bias) per
        n-gram convolution of the word-order channel (e.g. ``graphtx distil-phrases``' NodeProjection)."""
        if len(ngram) != len(self.ngram):
            raise ValueError(
                f"{len(ngram)} n-gram layers given, this node encoder (word order {self.word_order!r}) has {len(self.ngram)}"
            )
        pairs = [(self.proj, weight, bias)] + [(layer, w, b) for layer, (w, b) in zip(self.ngram, ngram)]
        pairs = [(layer, torch.as_tensor(w), torch.as_tensor(b)) for layer, w, b in pairs]
        for layer, w, b in pairs:
            if tuple(w.shape) != tuple(layer.weight.shape) or tuple(b.shape) != tuple(layer.bias.shape):
                raise ValueError(f"layer {tuple(w.shape)} + {tuple(b.shape)} does not fit {tuple(layer.weight.shape)}")
        for layer, w, b in pairs:
            layer.weight.copy_(w.to(layer.weight))
            layer.bias.copy_(b.to(layer.bias))

    def projection_arrays(self) -> tuple[np.ndarray, np.ndarray, tuple[tuple[np.ndarray, np.ndarray], ...]]:
        """(weight, bias, n-gram layers) as numpy: what ``load_projection`` takes back."""

        def numpy(x: torch.Tensor) -> np.ndarray:
            return x.detach().cpu().numpy()

        return (
            numpy(self.proj.weight),
            numpy(self.proj.bias),
            tuple((numpy(m.weight), numpy(m.bias)) for m in self.ngram),
        )

    @torch.no_grad()
    def load_token_weights(self, weights: np.ndarray | torch.Tensor) -> None:
        """Copy positive per-token weights (vocab_size,), e.g. the tokens directory's IDF, into the weighting."""
        if self.weighting == "none":
            raise ValueError("this node encoder has no token weighting (model.token_weighting: none)")
        weights = torch.as_tensor(weights).to(self.token_log_weight)
        if tuple(weights.shape) != (self.vocab_size,) or not bool((weights > 0).all()):
            raise ValueError(
                f"token weights must be {self.vocab_size} positive numbers, got shape {tuple(weights.shape)}"
            )
        self.token_log_weight.copy_(weights.log().to(self.token_log_weight))

    def forward(self, token_ids: torch.Tensor, token_node: torch.Tensor, node_type: torch.Tensor) -> torch.Tensor:
        """(t,), (t,), (n,) → (n, d)."""
        num_nodes = node_type.numel()
        if self.training and self.embedding_dropout > 0:
            keep_type = torch.rand(self.vocab_size, device=token_ids.device) >= self.embedding_dropout  # (vocab,)
            keep = keep_type[token_ids]  # (t,)
            token_ids, token_node = token_ids[keep], token_node[keep]
        e = self.embedding(token_ids)  # (t, c)
        if self.weighting == "none":
            mean = scatter(
                e, token_node, dim=0, dim_size=num_nodes, reduce="mean"
            )  # (n, c); 0 for a node without tokens
        else:
            w = self.token_log_weight[token_ids].exp().unsqueeze(1)  # (t, 1)
            total = scatter(w, token_node, dim=0, dim_size=num_nodes, reduce="sum")  # (n, 1)
            mean = scatter(e * w, token_node, dim=0, dim_size=num_nodes, reduce="sum") / total.clamp(
                min=1e-12
            )  # (n, c)
        max_ = scatter(e, token_node, dim=0, dim_size=num_nodes, reduce="max")  # (n, c); 0 for a node without tokens
        pooled = [mean, max_]
        for width, layer in zip(self.widths, self.ngram):
            pooled += self.pooled_ngrams(e, token_node, num_nodes, width, layer)
        return self.proj(torch.cat(pooled, dim=-1)) + self.type_embedding(node_type)  # (n, d)

    @staticmethod
    def pooled_ngrams(
        e: torch.Tensor, token_node: torch.Tensor, num_nodes: int, width: int, layer: nn.Linear
    ) -> list[torch.Tensor]:
        """(t, c) token vectors in text order, (t,) their nodes (non-decreasing) -> [mean, max] of GELU(layer(window))
        over each node's windows of ``width`` consecutive tokens, (n, c) each."""
        t = len(token_node)
        if t < width:  # no window at all (the slices below assume t >= width)
            return [e.new_zeros(num_nodes, layer.out_features)] * 2
        inside = (
            token_node[width - 1 :] == token_node[: t - width + 1]
        )  # (t-w+1,) the window starting at i lies in one node
        start = inside.nonzero().squeeze(1)  # (p,) first token of each window; index_select's backward is the fast one
        window = torch.cat([e.index_select(0, start + k) for k in range(width)], dim=-1)  # (p, w*c)
        g = F.gelu(layer(window))  # (p, c)
        window_node = token_node.index_select(0, start)  # (p,)
        return [scatter(g, window_node, dim=0, dim_size=num_nodes, reduce=r) for r in ("mean", "max")]  # (n, c) each

    def extra_repr(self) -> str:
        mean = "mean" if self.weighting == "none" else f"{self.weighting}-weighted mean"
        order = "".join(f"+{w}-gram mean+max" for w in self.widths)
        return f"vocab={self.vocab_size}, token_dim={self.token_dim}, node_dim={self.node_dim}, pool={mean}+max{order}, embedding_dropout={self.embedding_dropout}"


class PhraseTokens:
    """Short texts (node phrases) tokenised once into flat CSR arrays; ``node_inputs(rows)`` gives the encoder's
    ``(token_ids, token_node)`` for those texts, in that order. Texts keep their first ``max_tokens`` tokens.

    Legend: n - texts asked for, t - their tokens.
    """

    def __init__(self, tokenizer, texts: list[str], max_tokens: int = 16):
        ids = tokenizer.encode_batch(texts) if texts else []
        self.lengths = np.fromiter((min(len(x), max_tokens) for x in ids), dtype=np.int64, count=len(ids))  # (texts,)
        self.starts = np.cumsum(self.lengths) - self.lengths  # (texts,)
        self.flat = np.fromiter(
            (t for x in ids for t in x[:max_tokens]), dtype=np.int64, count=int(self.lengths.sum())
        )  # (tokens,)

    def __len__(self) -> int:
        return len(self.lengths)

    def node_inputs(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """(n,) text rows -> token ids (t,) and the position in ``rows`` of each token's text (t,)."""
        lengths = self.lengths[rows]  # (n,)
        within = np.arange(int(lengths.sum())) - np.repeat(
            np.cumsum(lengths) - lengths, lengths
        )  # (t,) position in its text
        token_ids = self.flat[np.repeat(self.starts[rows], lengths) + within]  # (t,)
        return torch.from_numpy(token_ids), torch.from_numpy(np.repeat(np.arange(len(rows)), lengths))
