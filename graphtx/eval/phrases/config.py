"""PhraseConfig: fine-tuning and scoring of ``graphtx eval phrases`` (kept free of torch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphtx.from_dict import from_dict

LOSS_NAMES = (
    "mse",
    "cosent",
)  # graphtx.eval.phrases.finetune.LOSSES: mse (SBERT's CosineSimilarityLoss) | cosent (ranking)


@dataclass(frozen=True)
class PhraseConfig:
    epochs: int = (
        8  # passes over the fit part of train; the best epoch on dev is kept (0 = untrained); dev plateaus by ~8
    )
    batch_size: int = 64  # pairs per step; CoSENT compares all pairs of a batch, so not tiny
    lr: float = 1e-3  # AdamW, for the projection and the context tables
    token_lr_scale: float = 1.0  # the token table's lr = lr * this; 0 = token vectors frozen at FastText's
    weight_decay: float = 0.01  # AdamW decoupled decay; pulls the FiLM rows back toward "no context"
    node_dim: int = 0  # phrase vector size; 0 = 2 * token_dim: the identity-initialised projection starts as mean+max
    embedding_dropout: float = 0.1  # train time: drop whole token types from a phrase (SWEMNodeEncoder)
    context_dropout: float = 0.1  # train time: a pair's CPC class -> "unknown", so that row is learned
    use_context: bool = True  # False: the same model without the CPC FiLM (an ablation)
    loss: str = (
        "mse"  # "mse" (cosine vs. score, SBERT's) or "cosent" (ranking within a batch); see the module docstring
    )
    cosent_scale: float = 20.0  # lam of CoSENT: sharpness of the pairwise ranking penalty (Su 2022 uses 20)
    dev_fraction: float = 0.1  # share of train anchors held out for early selection; 0 = keep the last epoch
    max_tokens_per_phrase: int = 16  # tokens kept per phrase (the first ones); phrases are 1-5 words
    eval_batch_size: int = 4096  # pairs per forward when scoring
    threads: int = (
        1  # torch intra-op threads while fine-tuning (restored after): steps this small only lose to OpenMP waits
    )

    def __post_init__(self) -> None:
        if min(self.epochs, self.batch_size, self.max_tokens_per_phrase, self.eval_batch_size, self.threads) < 1:
            raise ValueError(
                "phrases.epochs, batch_size, max_tokens_per_phrase, eval_batch_size and threads must be >= 1"
            )
        if self.lr <= 0 or self.weight_decay < 0 or self.cosent_scale <= 0 or self.token_lr_scale < 0:
            raise ValueError("phrases.lr and cosent_scale must be > 0, weight_decay and token_lr_scale >= 0")
        if self.node_dim < 0:
            raise ValueError("phrases.node_dim must be >= 0 (0 = 2 * token_dim)")
        for name in ("embedding_dropout", "context_dropout", "dev_fraction"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"phrases.{name} must be in [0, 1)")
        if self.loss not in LOSS_NAMES:
            raise ValueError(f"phrases.loss must be one of {sorted(LOSS_NAMES)}, got {self.loss!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "phrases config") -> PhraseConfig:
        """Unknown keys are errors naming ``where``."""
        return from_dict(cls, data, where)
