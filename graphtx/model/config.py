"""ModelConfig: the shapes of the graph encoder, and two presets.

Kept free of torch so that ``graphtx.config`` (loaded by every CLI command) can
import it without paying for ``import torch``. ``from_dict`` is :func:`graphtx.from_dict.from_dict`.

``ModelConfig.small()`` is the CPU model of the demo and the tests;
``ModelConfig.paper()`` matches the paper's parameter budget (Björkqvist &
Kallio 2023: ~156M base model with 2048-d vectors, ~161M with the 150-d
mixture-of-experts head). A preset with ``reduced_dim > 0`` describes the
reduced model; ``cfg.as_base()`` is the base model trained first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

NUM_NODE_TYPES = 2  # feature, relation (graphtx.graphs.graph.NODE_TYPES)
NUM_EDGE_TYPES = 3  # part_of, example_of, functional (graphtx.graphs.graph.EDGE_TYPES)
WORD_ORDER_WIDTHS = {
    "none": (),
    "bigram": (2,),
    "trigram": (2, 3),
}  # SWEM: a bag of tokens, + convolutions of these widths over consecutive tokens
WORD_ORDERS = tuple(WORD_ORDER_WIDTHS)
TOKEN_WEIGHTINGS = ("none", "idf", "learned")  # SWEM's mean pooling: plain, IDF-weighted, IDF-initialised and trained


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 8000  # token embedding rows; must equal the tokenizer's vocab_size ([PAD]=0, [UNK]=1 included)
    token_dim: int = 64  # token embedding size = the FastText vector size (pretrain.dim)
    node_dim: int = 256  # SWEM output size = transformer width
    heads: int = 4  # attention heads; node_dim / heads = head size
    layers: int = 2  # graph transformer blocks
    ffn_mult: int = 4  # GEGLU hidden size = ffn_mult * node_dim
    dropout: float = 0.1  # on the input node states and on both residual branches
    attention_dropout: float = 0.1  # on attention weights (after the softmax over in-edges)
    embedding_dropout: float = 0.1  # train time: drop whole token types (vocab rows) from the node's bag of tokens
    qk_norm: bool = True  # L2-normalise q and k per head, learned per-head temperature (Henry et al. 2020)
    qk_scale_init: float = 10.0  # initial temperature of QK-norm; unused when qk_norm is False (then 1/sqrt(head))
    edge_type_bias: bool = True  # learned per-head logit bias per edge kind (3 types x 2 directions + self)
    base_dim: int = 256  # graph vector size of the base model; a Linear maps node_dim to it when they differ
    reduced_dim: int = 64  # 0 = base model; > 0 = a dense mixture-of-experts head base_dim -> reduced_dim
    num_experts: int = 4  # experts of the MoE head (each Linear(base_dim, reduced_dim)); unused when reduced_dim = 0
    max_tokens_per_node: int = 32  # tokens kept per node text (the first ones): long relation snippets are cut
    token_weighting: str = (
        "none"  # none | idf | learned: SWEM mean weighted by token IDF (rare technical terms survive pooling)
    )
    word_order: str = (
        "none"  # none | bigram | trigram: SWEM word order, width-2 (and 3) convolutions over a node's tokens
    )
    late_dim: int = (
        0  # > 0: a late-interaction head (node vectors of this size, learned query-node weights; graphtx.model.late)
    )
    lexical_dim: int = (
        0  # > 0: a lexical channel of this many count-sketch buckets appended to every vector (graphtx.model.lexical)
    )
    lexical_weight: float = (
        0.4  # its share b of the cosine: cos = (1 - b) cos(graph) + b cos(lexical); unused when lexical_dim is 0
    )

    def __post_init__(self) -> None:
        ints = (
            "vocab_size",
            "token_dim",
            "node_dim",
            "heads",
            "layers",
            "ffn_mult",
            "base_dim",
            "num_experts",
            "max_tokens_per_node",
        )
        low = [n for n in ints if getattr(self, n) < 1]
        if low:
            raise ValueError(f"model.{', model.'.join(low)} must be >= 1")
        if self.node_dim % self.heads:
            raise ValueError(f"model.node_dim ({self.node_dim}) must be divisible by model.heads ({self.heads})")
        if self.qk_norm and self.head_dim < 4:
            raise ValueError(
                f"QK-norm needs a head size >= 4 (got {self.head_dim}): L2-normalising tinier heads saturates"
            )
        if self.qk_scale_init <= 0:
            raise ValueError("model.qk_scale_init must be > 0")
        for name in ("dropout", "attention_dropout", "embedding_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"model.{name} must be in [0, 1)")
        if self.word_order not in WORD_ORDERS:
            raise ValueError(f"model.word_order must be one of {WORD_ORDERS}, got {self.word_order!r}")
        if self.token_weighting not in TOKEN_WEIGHTINGS:
            raise ValueError(f"model.token_weighting must be one of {TOKEN_WEIGHTINGS}, got {self.token_weighting!r}")
        if self.late_dim < 0:
            raise ValueError("model.late_dim must be >= 0 (0 = no late-interaction head)")
        if self.lexical_dim < 0 or not 0.0 < self.lexical_weight < 1.0:
            raise ValueError(
                "model.lexical_dim must be >= 0 (0 = no lexical channel) and model.lexical_weight in (0, 1)"
            )
        if self.reduced_dim < 0:
            raise ValueError("model.reduced_dim must be >= 0 (0 = base model without MoE head)")
        if self.reduced_dim >= self.base_dim:
            raise ValueError(f"model.reduced_dim ({self.reduced_dim}) must be < model.base_dim ({self.base_dim})")

    # --- derived ---------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.node_dim // self.heads

    @property
    def out_dim(self) -> int:
        """Size of the graph vectors the model outputs."""
        return self.reduced_dim or self.base_dim

    @property
    def vector_dim(self) -> int:
        """Size of the vectors the model emits for search: the graph vector, then the lexical channel."""
        return self.out_dim + self.lexical_dim

    def as_base(self) -> ModelConfig:
        """The same model without the MoE head (stage 1 of training)."""
        return dataclasses.replace(self, reduced_dim=0)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "model config") -> ModelConfig:
        """Unknown keys are errors naming ``where`` (a model directory's config.yaml, say)."""
        from graphtx.from_dict import from_dict

        return from_dict(cls, data, where)

    # --- presets ---------------------------------------------------------------
    @classmethod
    def small(cls, **changes: Any) -> ModelConfig:
        """CPU model (demo, tests): 2.72M parameters (base 2.65M) with an 8000-token vocabulary, and a
        1024-bucket lexical channel (no parameters) beside its graph vector."""
        return dataclasses.replace(cls(lexical_dim=1024), **changes)

    @classmethod
    def paper(cls, **changes: Any) -> ModelConfig:
        """The paper's budget: base 157.8M parameters (2048-d), reduced 162.8M (150-d).

        Shapes are ours (the paper gives totals, not shapes): 256-d token vectors
        over a 32k vocabulary, 14 blocks of width 1024 with 16 heads of 64 and a
        GEGLU of hidden size 2048, 16 linear experts for the 150-d head.
        """
        paper = cls(
            vocab_size=32_000,
            token_dim=256,
            node_dim=1024,
            heads=16,
            layers=14,
            ffn_mult=2,
            base_dim=2048,
            reduced_dim=150,
            num_experts=16,
            max_tokens_per_node=32,
        )
        return dataclasses.replace(paper, **changes)


PRESETS = {"small": ModelConfig.small, "paper": ModelConfig.paper}
