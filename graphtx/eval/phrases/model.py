"""PhraseSimilarityModel: ``cos(FiLM_k(SWEM(anchor)), FiLM_k(SWEM(target)))``, its inputs, and scoring.

The untrained rows of the table are the same model (:func:`pretrained_model`): an identity
projection over ``[mean ; max]`` and the context switched off (see the package docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from graphtx.graphs.graph import NODE_TYPES
from graphtx.model.batch import Tokenizer

if TYPE_CHECKING:
    from graphtx.text.pretrain import NodeProjection
from graphtx.model.swem import PhraseTokens, SWEMNodeEncoder
from graphtx.text.phrase_pairs import PhrasePairs

UNKNOWN = "[UNK]"  # row 0 of the class and section tables
FEATURE_TYPE = NODE_TYPES.index("feature")  # phrases are feature nodes of an invention graph


def cpc_class(context: str) -> str:
    """``" a47b "`` -> ``"A47"``: the 3-character CPC class of a context string."""
    return context.strip().upper()[:3]


@dataclass
class PairBatch:
    token_ids: torch.Tensor  # (t,) long: tokens of the 2p phrases, anchors first, then targets
    token_node: torch.Tensor  # (t,) long: phrase (0 .. 2p-1) of each token
    class_id: torch.Tensor  # (p,) long: row of the class table, 0 = unknown
    section_id: torch.Tensor  # (p,) long: row of the section table, 0 = unknown
    score: torch.Tensor  # (p,) float: gold score

    @property
    def num_pairs(self) -> int:
        return self.score.numel()


class PhraseSimilarityModel(nn.Module):
    """``cos(FiLM_k(SWEM(anchor)), FiLM_k(SWEM(target)))`` for a pair rated in CPC class ``k``.

    Legend: p - pairs, t - tokens, d - node_dim.

    The tokenizer is kept (a plain attribute) so that :func:`score` can take raw phrases.
    ``reset_parameters`` re-draws the token table too: call ``encoder.load_token_vectors`` after it.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        token_dim: int,
        contexts: Sequence[str] = (),
        node_dim: int = 0,
        embedding_dropout: float = 0.0,
        use_context: bool = True,
        max_tokens_per_phrase: int = 16,
        word_order: str = "none",
    ):
        super().__init__()
        self.tokenizer = tokenizer
        self.max_tokens_per_phrase = max_tokens_per_phrase
        self.use_context = use_context
        self.encoder = SWEMNodeEncoder(
            tokenizer.vocab_size, token_dim, node_dim or 2 * token_dim, embedding_dropout, word_order=word_order
        )
        d = self.encoder.node_dim
        classes = sorted({cpc_class(c) for c in contexts} - {""}) if use_context else []
        self.classes = (UNKNOWN, *classes)
        self.sections = (UNKNOWN, *sorted({c[0] for c in classes}))
        self._class_row = {c: i for i, c in enumerate(self.classes)}
        self._section_row = {s: i for i, s in enumerate(self.sections)}
        self.class_film = nn.Embedding(len(self.classes), 2 * d)  # (scale delta ; shift) per class
        self.section_film = nn.Embedding(len(self.sections), 2 * d)  # (scale delta ; shift) per section
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.encoder.reset_parameters()
        with torch.no_grad():
            nn.init.eye_(self.encoder.proj.weight)  # identity on the first node_dim pooled coordinates
            nn.init.zeros_(self.encoder.proj.bias)
        nn.init.zeros_(self.class_film.weight)  # no context until trained
        nn.init.zeros_(self.section_film.weight)

    # --- inputs ----------------------------------------------------------------

    def prepare(self, pairs: PhrasePairs) -> _PairTensors:
        """Tokenise the pairs' distinct phrases once; batches are then gathered by row."""
        return _PairTensors(self, pairs)

    def context_rows(self, contexts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(class rows, section rows) of context strings; unseen ones (and all when use_context is off) -> 0."""
        classes = [cpc_class(c) for c in contexts]
        return (
            np.fromiter((self._class_row.get(c, 0) for c in classes), dtype=np.int64, count=len(classes)),
            np.fromiter((self._section_row.get(c[:1], 0) for c in classes), dtype=np.int64, count=len(classes)),
        )

    # --- forward ---------------------------------------------------------------

    def embed(
        self, token_ids: torch.Tensor, token_node: torch.Tensor, class_id: torch.Tensor, section_id: torch.Tensor
    ) -> torch.Tensor:
        """(t,), (t,), (n,), (n,) -> (n, d): phrase vectors in their contexts."""
        h = self.encoder(token_ids, token_node, torch.full_like(class_id, FEATURE_TYPE))  # (n, d)
        if not self.use_context:
            return h
        scale_k, shift_k = self.class_film(class_id).chunk(2, dim=-1)  # (n, d) each
        scale_s, shift_s = self.section_film(section_id).chunk(2, dim=-1)  # (n, d) each
        return h * (1 + scale_k + scale_s) + shift_k + shift_s  # (n, d)

    def forward(self, batch: PairBatch) -> torch.Tensor:
        """-> (p,) cosine similarity of each pair."""
        h = self.embed(
            batch.token_ids, batch.token_node, batch.class_id.repeat(2), batch.section_id.repeat(2)
        )  # (2p, d)
        anchor, target = h.chunk(2)  # (p, d) each
        return F.cosine_similarity(anchor, target, dim=-1)  # (p,); 0 where a phrase has no tokens and no context

    def extra_repr(self) -> str:
        return f"classes={len(self.classes) - 1}+unknown, sections={len(self.sections) - 1}+unknown, context={'FiLM' if self.use_context else 'off'}, similarity=cosine"


class _PairTensors:
    """The distinct phrases of a pair set as flat token arrays (CSR), and per-pair rows into them."""

    def __init__(self, model: PhraseSimilarityModel, pairs: PhrasePairs):
        phrases, inverse = np.unique(np.concatenate([pairs.anchor, pairs.target]), return_inverse=True)
        self.anchor_row, self.target_row = inverse[: len(pairs)], inverse[len(pairs) :]  # (p,) each
        self.tokens = PhraseTokens(model.tokenizer, phrases.tolist(), model.max_tokens_per_phrase)
        self.class_id, self.section_id = (
            torch.from_numpy(a) for a in model.context_rows(pairs.context.tolist())
        )  # (p,) each
        self.score = torch.from_numpy(pairs.score.astype(np.float32))  # (p,)

    def __len__(self) -> int:
        return self.score.numel()

    def batch(
        self, rows: np.ndarray, context_dropout: float = 0.0, generator: torch.Generator | None = None
    ) -> PairBatch:
        phrase = np.concatenate([self.anchor_row[rows], self.target_row[rows]])  # (2p,)
        token_ids, token_node = self.tokens.node_inputs(phrase)  # (t,) each
        rows_t = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        class_id = self.class_id[rows_t]
        if context_dropout > 0:
            class_id = class_id.masked_fill(torch.rand(len(rows_t), generator=generator) < context_dropout, 0)
        return PairBatch(token_ids, token_node, class_id, self.section_id[rows_t], self.score[rows_t])


# --- scoring ---------------------------------------------------------------------


def pretrained_model(
    tokenizer: Tokenizer, vectors: np.ndarray, pool: str = "mean+max", max_tokens_per_phrase: int = 16
) -> PhraseSimilarityModel:
    """An untrained scorer over the pre-trained token vectors: ``"mean"`` (FastText average) or ``"mean+max"`` (SWEM)."""
    if pool not in ("mean", "mean+max"):
        raise ValueError(f"pool must be 'mean' or 'mean+max', got {pool!r}")
    token_dim = vectors.shape[1]
    node_dim = token_dim if pool == "mean" else 2 * token_dim
    return _new_model(
        tokenizer, vectors, node_dim=node_dim, use_context=False, max_tokens_per_phrase=max_tokens_per_phrase
    ).eval()


def distilled_model(
    tokenizer: Tokenizer, vectors: np.ndarray, projection: NodeProjection, max_tokens_per_phrase: int = 16
) -> PhraseSimilarityModel:
    """The node encoder of a ``graphtx distil-phrases`` tokens directory as it is: its token vectors, projection and
    word-order layers, no context."""
    model = _new_model(
        tokenizer,
        vectors,
        node_dim=int(projection.weight.shape[0]),
        use_context=False,
        max_tokens_per_phrase=max_tokens_per_phrase,
        word_order=projection.word_order,
    )
    model.encoder.load_projection(projection.weight, projection.bias, projection.ngram)
    return model.eval()


def _new_model(tokenizer: Tokenizer, vectors: np.ndarray, **kwargs: Any) -> PhraseSimilarityModel:
    """A model with the token vectors loaded. Built inside ``fork_rng``: the draws of the layers'
    default inits (all overwritten: token table, identity projection, zero context rows) leave
    the global generator as it was."""
    with torch.random.fork_rng(devices=[]):
        model = PhraseSimilarityModel(tokenizer, vectors.shape[1], **kwargs)
    model.encoder.load_token_vectors(np.asarray(vectors))
    return model


@torch.no_grad()
def score(model: PhraseSimilarityModel, pairs: PhrasePairs | _PairTensors, batch_size: int = 4096) -> np.ndarray:
    """(p,) float64 predicted similarity (cosine) of each pair, in eval mode."""
    data = pairs if isinstance(pairs, _PairTensors) else model.prepare(pairs)
    was_training = model.training
    model.eval()
    out = [model(data.batch(np.arange(i, min(i + batch_size, len(data))))) for i in range(0, len(data), batch_size)]
    model.train(was_training)
    return torch.cat(out).double().numpy() if out else np.zeros(0)
