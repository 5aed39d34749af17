"""PhraseDistilConfig: ``graphtx distil-phrases`` (the ``distil_phrases:`` section), kept free of torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphtx.from_dict import from_dict
from graphtx.model.config import WORD_ORDERS


@dataclass(frozen=True)
class PhraseDistilConfig:
    peer: str = "minilm"  # the teacher: an offline peer (graphtx/text/peers.py), its sha256 checked
    max_tokens: int = 32  # teacher input cut; node phrases are a few words
    teacher_epochs: int = 2  # teacher passes over the labelled pairs (--pairs) before it teaches; 0 = as shipped
    teacher_lr: float = 2e-5  # AdamW, linear warm-up over the first 10% of steps then linear decay
    teacher_batch_size: int = 32  # pairs a step
    dev_fraction: float = 0.1  # share of the pairs' anchors held out to select the teacher's and the student's epoch
    max_phrases: int = 150_000  # corpus phrases distilled: the most frequent half, then a seeded draw from the rest
    max_words: int = 6  # feature-node phrases of at most this many words join the pool
    node_dim: int = 256  # the distilled projection's size = model.node_dim of the models meant to start from it
    word_order: str = (
        "none"  # the student's word-order channel (none | bigram | trigram) = model.word_order of those models
    )
    epochs: int = 40  # passes of the student over the pool; the best dev epoch is kept (the last without --pairs)
    batch_size: int = 512  # pool phrases a step, their teacher cosines matched all against all
    pair_batch_size: int = 128  # labelled pairs (both phrases) added to each step, so near pairs are matched too
    lr: float = 1e-3  # AdamW for the token table and the projection
    listwise_weight: float = 0.1  # + this x the listwise KL: each phrase's softmax over the batch, student against teacher (0 = the cosine MSE alone)
    listwise_temperature: float = 0.05  # of both softmaxes: low, so a phrase's nearest neighbours carry the term
    encode_batch_size: int = 256  # phrases per teacher forward

    def __post_init__(self) -> None:
        ints = (
            self.max_tokens,
            self.teacher_batch_size,
            self.max_phrases,
            self.max_words,
            self.node_dim,
            self.epochs,
            self.batch_size,
            self.encode_batch_size,
        )
        if min(ints) < 1 or self.teacher_epochs < 0 or self.pair_batch_size < 0:
            raise ValueError("distil_phrases sizes and epochs must be >= 1 (teacher_epochs and pair_batch_size >= 0)")
        if self.word_order not in WORD_ORDERS:
            raise ValueError(f"distil_phrases.word_order must be one of {WORD_ORDERS}, got {self.word_order!r}")
        if self.listwise_weight < 0 or self.listwise_temperature <= 0:
            raise ValueError("distil_phrases.listwise_weight must be >= 0 and listwise_temperature > 0")
        if self.lr <= 0 or self.teacher_lr <= 0:
            raise ValueError("distil_phrases.lr and teacher_lr must be > 0")
        if not 0.0 <= self.dev_fraction < 1.0:
            raise ValueError("distil_phrases.dev_fraction must be in [0, 1)")

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "distil_phrases config") -> PhraseDistilConfig:
        return from_dict(cls, data, where)
