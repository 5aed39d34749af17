"""Patent phrase similarity: how well the SWEM node encoder's phrase vectors agree with experts.

Data: Google's Patent Phrase Similarity dataset (Aslanyan & Wetherbee 2022): pairs of short
phrases (``anchor``, ``target``), an expert ``score`` in {0, .25, .5, .75, 1} and the CPC class
the pair was rated in (``context``, e.g. ``A47``). Scores are Pearson and Spearman correlations
of predicted similarity with ``score`` over all pairs of the split (no per-anchor averaging).

Methods (``graphtx eval phrases`` prints one row each):

* **FastText average** — cosine of the means of the phrases' pre-trained token vectors. Our
  tokens are BPE pieces, not words, so this is close to, not the same as, the published FastText.
* **SWEM mean+max (pre-trained)** — cosine of ``[mean ; max]`` of the token vectors: the SWEM node
  encoder with its projection set to the identity (an untrained SWEM's projection is random).
* **SWEM fine-tuned + CPC context** — :class:`PhraseSimilarityModel` trained on the train split.

Both untrained rows *are* :class:`PhraseSimilarityModel` s (no second pooling code): the
projection starts as ``eye_`` over the pooled ``[mean ; max]`` coordinates, so ``node_dim =
2 * token_dim`` starts as mean+max and ``node_dim = token_dim`` as the plain mean, and the context
starts switched off. Fine-tuning therefore starts exactly at the "SWEM mean+max" row, and that
starting point (epoch 0) takes part in the early selection.

Context (FiLM, Perez et al. 2018): both phrases of a pair are rated in one CPC class ``k`` of
section ``s``; each phrase vector becomes ``h * (1 + a_k + a_s) + b_k + b_s``. The scale ``a``
lets a class decide which phrase dimensions matter (a "bolt" in fasteners vs. in lightning
protection); the shift ``b`` moves both phrases toward a shared class direction, raising every
cosine of that class, which calibrates per-class base rates. A plain ``h + W c`` can only do the
latter. All rows start at zero (the context-free encoder). Row 0 of the class table is "unknown"
(a class not seen in training); it is trained by *context dropout*: a training pair's class is
replaced by "unknown" with probability ``context_dropout``, so it learns the average class, and
the section table (8 letters, all seen) carries the coarse context for it.

Loss: ``"mse"`` = mean squared error of cosine vs. score (sentence-transformers'
CosineSimilarityLoss, as SBERT is trained on STS), or ``"cosent"`` = CoSENT (Su 2022; in
sentence-transformers as CoSENTLoss): ``log(1 + sum_{s_i > s_j} exp(lam * (cos_j - cos_i)))``
over the pairs of a batch, a ranking loss that only asks that higher-rated pairs get higher
cosines — what Spearman measures — and ignores the absolute cosine scale. On the dev split
(64-d small-config tokens) the two tie on the mean of Pearson and Spearman (MSE 0.529 / 0.518,
CoSENT 0.506 / 0.537); MSE is the default because the selection metric is Pearson and it is
the reference objective; CoSENT trades about 0.02 Pearson for 0.02 Spearman.

Early selection: the dev split is a seeded ``dev_fraction`` of the train split's *anchors* (all
pairs of an anchor go to one side), because the official splits share no anchor; a random
pair split would let dev reward memorised anchors. The epoch (0 = untrained) with the best dev
Pearson is kept. The validation split is only scored, never looked at while training.

Example::

    train = read_phrase_pairs("train.csv"); valid = read_phrase_pairs("validation.csv")
    tokenizer, vectors = load_tokens("tokens/")
    model = fine_tune(train, tokenizer, vectors, PhraseConfig(), seed=0)
    pearson_spearman(score(model, valid), valid.score)
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from graphtx.atomic import atomic_write_text, replacing
from graphtx.graphs.graph import NODE_TYPES
from graphtx.model.batch import Tokenizer
from graphtx.model.swem import SWEMNodeEncoder

REQUIRED_COLUMNS = ("anchor", "target", "score", "context")
UNKNOWN = "[UNK]"  # row 0 of the class and section tables
FEATURE_TYPE = NODE_TYPES.index("feature")  # phrases are feature nodes of an invention graph

# Published numbers on the *test* split (not in ../shared/data), as quoted in the issue; never run here.
PUBLISHED = (
    ("FastText", 0.402, 0.467),
    ("SBERT", 0.598, 0.577),
    ("RA-Sim (self-supervised)", 0.633, 0.629),
    ("RA-Sim (supervised)", 0.741, 0.721),
)
PUBLISHED_NOTE = "published, test split (not run here)"


# --- config ----------------------------------------------------------------------


@dataclass(frozen=True)
class PhraseConfig:
    epochs: int = 8  # passes over the fit part of train; the best epoch on dev is kept (0 = untrained); dev plateaus by ~8
    batch_size: int = 64  # pairs per step; CoSENT compares all pairs of a batch, so not tiny
    lr: float = 1e-3  # AdamW, for the projection and the context tables
    token_lr_scale: float = 1.0  # the token table's lr = lr * this; 0 = token vectors frozen at FastText's
    weight_decay: float = 0.01  # AdamW decoupled decay; pulls the FiLM rows back toward "no context"
    node_dim: int = 0  # phrase vector size; 0 = 2 * token_dim: the identity-initialised projection starts as mean+max
    embedding_dropout: float = 0.1  # train time: drop whole token types from a phrase (SWEMNodeEncoder)
    context_dropout: float = 0.1  # train time: a pair's CPC class -> "unknown", so that row is learned
    use_context: bool = True  # False: the same model without the CPC FiLM (an ablation)
    loss: str = "mse"  # "mse" (cosine vs. score, SBERT's) or "cosent" (ranking within a batch); see the module docstring
    cosent_scale: float = 20.0  # lam of CoSENT: sharpness of the pairwise ranking penalty (Su 2022 uses 20)
    dev_fraction: float = 0.1  # share of train anchors held out for early selection; 0 = keep the last epoch
    max_tokens_per_phrase: int = 16  # tokens kept per phrase (the first ones); phrases are 1-5 words
    eval_batch_size: int = 4096  # pairs per forward when scoring
    threads: int = 1  # torch intra-op threads while fine-tuning (restored after): steps this small only lose to OpenMP waits

    def __post_init__(self) -> None:
        if min(self.epochs, self.batch_size, self.max_tokens_per_phrase, self.eval_batch_size, self.threads) < 1:
            raise ValueError("phrases.epochs, batch_size, max_tokens_per_phrase, eval_batch_size and threads must be >= 1")
        if self.lr <= 0 or self.weight_decay < 0 or self.cosent_scale <= 0 or self.token_lr_scale < 0:
            raise ValueError("phrases.lr and cosent_scale must be > 0, weight_decay and token_lr_scale >= 0")
        if self.node_dim < 0:
            raise ValueError("phrases.node_dim must be >= 0 (0 = 2 * token_dim)")
        for name in ("embedding_dropout", "context_dropout", "dev_fraction"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"phrases.{name} must be in [0, 1)")
        if self.loss not in LOSSES:
            raise ValueError(f"phrases.loss must be one of {sorted(LOSSES)}, got {self.loss!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PhraseConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown key(s) in phrases config: {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
        return cls(**data)


# --- data ------------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedRow:
    line: int  # line of the CSV file where the row ends (1 = header)
    reason: str


@dataclass(frozen=True, eq=False)  # eq=False: arrays have no truth value to compare by
class PhrasePairs:
    anchor: np.ndarray  # (p,) str
    target: np.ndarray  # (p,) str
    score: np.ndarray  # (p,) float64 in [0, 1]
    context: np.ndarray  # (p,) str: CPC class, e.g. "A47"
    source: str = ""  # file the pairs were read from
    skipped: tuple[SkippedRow, ...] = ()  # rows of that file that were not read, with why

    def __len__(self) -> int:
        return len(self.score)

    def subset(self, rows: np.ndarray) -> PhrasePairs:
        return PhrasePairs(self.anchor[rows], self.target[rows], self.score[rows], self.context[rows], self.source)

    def __repr__(self) -> str:
        return f"PhrasePairs({len(self)} pairs, {len(set(self.anchor))} anchors, skipped={len(self.skipped)}, source={self.source!r})"


def read_phrase_pairs(csv_path: str | Path) -> PhrasePairs:
    """Read ``anchor,target,score,context`` (other columns, e.g. ``rating``, are ignored).

    A missing column is an error; a row with the wrong number of fields, an empty phrase or
    context, or a score that is not a number in [0, 1] is skipped and listed in ``.skipped``.
    """
    path = Path(csv_path)
    if not path.is_file():
        raise FileNotFoundError(f"phrase pairs file {path} does not exist")
    anchor, target, score, context, skipped = [], [], [], [], []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        try:
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing:
                raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; the header has {', '.join(header) or 'nothing'}; needs {', '.join(REQUIRED_COLUMNS)}")
            for row in reader:
                reason = _row_problem(row, len(header))
                if reason:
                    skipped.append(SkippedRow(reader.line_num, reason))
                    continue
                anchor.append(row["anchor"].strip())
                target.append(row["target"].strip())
                score.append(float(row["score"]))
                context.append(row["context"].strip().upper())
        except csv.Error as err:  # broken quoting, NUL bytes: the rest of the file cannot be trusted
            raise ValueError(f"{path}: not readable as CSV after line {reader.line_num} ({err})") from err
    if not score:
        raise ValueError(f"{path}: no readable phrase pairs ({len(skipped)} rows skipped" + (f", first: line {skipped[0].line}: {skipped[0].reason})" if skipped else ")"))
    return PhrasePairs(np.array(anchor, dtype=str), np.array(target, dtype=str), np.array(score, dtype=np.float64), np.array(context, dtype=str), str(path), tuple(skipped))


def _row_problem(row: dict, n_columns: int) -> str:
    if None in row:  # DictReader puts surplus fields under the key None
        return f"{n_columns + len(row[None])} fields, the header has {n_columns}"
    absent = [c for c in REQUIRED_COLUMNS if row.get(c) is None]
    if absent:
        return f"too few fields: no {', '.join(absent)}"
    empty = [c for c in ("anchor", "target", "context") if not row[c].strip()]
    if empty:
        return f"empty {', '.join(empty)}"
    try:
        value = float(row["score"])
    except ValueError:
        return f"score {row['score']!r} is not a number"
    if not 0.0 <= value <= 1.0:  # also false for nan
        return f"score {row['score']!r} is not in [0, 1]"
    return ""


def split_by_anchor(pairs: PhrasePairs, dev_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, dev rows): a seeded ``dev_fraction`` of the anchors (at least one) and all their pairs go to dev."""
    if dev_fraction <= 0:
        return np.arange(len(pairs)), np.arange(0)
    anchors = np.unique(pairs.anchor)  # sorted: the split depends on the set of anchors, not the row order
    if len(anchors) < 2:
        raise ValueError("early selection needs pairs of at least two anchors (or dev_fraction 0)")
    n_dev = min(len(anchors) - 1, max(1, round(dev_fraction * len(anchors))))
    dev_anchors = np.random.default_rng(seed).permutation(anchors)[:n_dev]
    is_dev = np.isin(pairs.anchor, dev_anchors)
    return np.flatnonzero(~is_dev), np.flatnonzero(is_dev)


# --- metrics ---------------------------------------------------------------------


def pearson_spearman(pred: Sequence[float] | np.ndarray, gold: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Pearson and Spearman correlation (scipy.stats) over all pairs; nan where either side is constant."""
    from scipy import stats

    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if pred.ndim != 1 or pred.shape != gold.shape:
        raise ValueError(f"pred and gold must be 1-d and of one length, got {pred.shape} and {gold.shape}")
    if len(pred) < 2 or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return math.nan, math.nan
    return float(stats.pearsonr(pred, gold).statistic), float(stats.spearmanr(pred, gold).statistic)


# --- model -----------------------------------------------------------------------


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
        self, tokenizer: Tokenizer, token_dim: int, contexts: Sequence[str] = (), node_dim: int = 0,
        embedding_dropout: float = 0.0, use_context: bool = True, max_tokens_per_phrase: int = 16,
    ):  # fmt: skip
        super().__init__()
        self.tokenizer = tokenizer
        self.max_tokens_per_phrase = max_tokens_per_phrase
        self.use_context = use_context
        self.encoder = SWEMNodeEncoder(tokenizer.vocab_size, token_dim, node_dim or 2 * token_dim, embedding_dropout)
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

    def embed(self, token_ids: torch.Tensor, token_node: torch.Tensor, class_id: torch.Tensor, section_id: torch.Tensor) -> torch.Tensor:
        """(t,), (t,), (n,), (n,) -> (n, d): phrase vectors in their contexts."""
        h = self.encoder(token_ids, token_node, torch.full_like(class_id, FEATURE_TYPE))  # (n, d)
        if not self.use_context:
            return h
        scale_k, shift_k = self.class_film(class_id).chunk(2, dim=-1)  # (n, d) each
        scale_s, shift_s = self.section_film(section_id).chunk(2, dim=-1)  # (n, d) each
        return h * (1 + scale_k + scale_s) + shift_k + shift_s  # (n, d)

    def forward(self, batch: PairBatch) -> torch.Tensor:
        """-> (p,) cosine similarity of each pair."""
        h = self.embed(batch.token_ids, batch.token_node, batch.class_id.repeat(2), batch.section_id.repeat(2))  # (2p, d)
        anchor, target = h.chunk(2)  # (p, d) each
        return F.cosine_similarity(anchor, target, dim=-1)  # (p,); 0 where a phrase has no tokens and no context

    def extra_repr(self) -> str:
        return f"classes={len(self.classes) - 1}+unknown, sections={len(self.sections) - 1}+unknown, context={'FiLM' if self.use_context else 'off'}, similarity=cosine"


class _PairTensors:
    """The distinct phrases of a pair set as flat token arrays (CSR), and per-pair rows into them."""

    def __init__(self, model: PhraseSimilarityModel, pairs: PhrasePairs):
        phrases, inverse = np.unique(np.concatenate([pairs.anchor, pairs.target]), return_inverse=True)
        self.anchor_row, self.target_row = inverse[: len(pairs)], inverse[len(pairs) :]  # (p,) each
        m = model.max_tokens_per_phrase
        ids = model.tokenizer.encode_batch(phrases.tolist()) if len(phrases) else []
        self.lengths = np.fromiter((min(len(x), m) for x in ids), dtype=np.int64, count=len(ids))  # (phrases,)
        self.starts = np.cumsum(self.lengths) - self.lengths  # (phrases,)
        self.flat = np.fromiter(chain.from_iterable(x[:m] for x in ids), dtype=np.int64, count=int(self.lengths.sum()))  # (tokens,)
        self.class_id, self.section_id = (torch.from_numpy(a) for a in model.context_rows(pairs.context.tolist()))  # (p,) each
        self.score = torch.from_numpy(pairs.score.astype(np.float32))  # (p,)

    def __len__(self) -> int:
        return self.score.numel()

    def batch(self, rows: np.ndarray, context_dropout: float = 0.0, generator: torch.Generator | None = None) -> PairBatch:
        phrase = np.concatenate([self.anchor_row[rows], self.target_row[rows]])  # (2p,)
        lengths = self.lengths[phrase]  # (2p,)
        within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)  # (t,) position in its phrase
        token_ids = self.flat[np.repeat(self.starts[phrase], lengths) + within]  # (t,)
        token_node = np.repeat(np.arange(len(phrase)), lengths)  # (t,)
        rows_t = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        class_id = self.class_id[rows_t]
        if context_dropout > 0:
            class_id = class_id.masked_fill(torch.rand(len(rows_t), generator=generator) < context_dropout, 0)
        return PairBatch(torch.from_numpy(token_ids), torch.from_numpy(token_node), class_id, self.section_id[rows_t], self.score[rows_t])


# --- scoring ---------------------------------------------------------------------


def pretrained_model(tokenizer: Tokenizer, vectors: np.ndarray, pool: str = "mean+max", max_tokens_per_phrase: int = 16) -> PhraseSimilarityModel:
    """An untrained scorer over the pre-trained token vectors: ``"mean"`` (FastText average) or ``"mean+max"`` (SWEM)."""
    if pool not in ("mean", "mean+max"):
        raise ValueError(f"pool must be 'mean' or 'mean+max', got {pool!r}")
    token_dim = vectors.shape[1]
    node_dim = token_dim if pool == "mean" else 2 * token_dim
    return _new_model(tokenizer, vectors, node_dim=node_dim, use_context=False, max_tokens_per_phrase=max_tokens_per_phrase).eval()


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


# --- fine-tuning -----------------------------------------------------------------


def mse_loss(cos: torch.Tensor, gold: torch.Tensor, scale: float = 0.0) -> torch.Tensor:
    """Mean squared error of cosine vs. score (sentence-transformers' CosineSimilarityLoss)."""
    return F.mse_loss(cos, gold)


def cosent_loss(cos: torch.Tensor, gold: torch.Tensor, scale: float = 20.0) -> torch.Tensor:
    """CoSENT: ``log(1 + sum over (i, j) with gold_i > gold_j of exp(scale * (cos_j - cos_i)))``.

    References: Su, J. (2022) "CoSENT"; sentence-transformers ``CoSENTLoss``. Zero-loss floor is
    the ``1 +`` term; a batch where all scores tie gives log(1) = 0.
    """
    diff = scale * (cos[None, :] - cos[:, None])  # (p, p): [i, j] = scale * (cos_j - cos_i)
    ranked = gold[:, None] > gold[None, :]  # (p, p): pair i should score above pair j
    return torch.logsumexp(torch.cat([diff.new_zeros(1), diff[ranked]]), dim=0)


LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]] = {"mse": mse_loss, "cosent": cosent_loss}


def fine_tune(
    train_pairs: PhrasePairs, tokenizer: Tokenizer, vectors: np.ndarray, cfg: PhraseConfig = PhraseConfig(), seed: int = 0,
    progress: bool | None = None,
) -> PhraseSimilarityModel:  # fmt: skip
    """Train a :class:`PhraseSimilarityModel` from the pre-trained token vectors; returns it in eval mode.

    Holds out a seeded ``dev_fraction`` of the anchors, trains ``epochs`` passes of AdamW over
    seeded permutations of the rest, and keeps the epoch (0 = untrained) with the best dev
    Pearson. The model's ``history`` (one dict per epoch) and ``best_epoch`` say what happened.
    All randomness comes from ``seed`` inside ``torch.random.fork_rng``: global RNG state is
    left as it was. Torch runs on ``cfg.threads`` intra-op threads meanwhile (restored after):
    a step is ~3 ms of tiny ops, and on a busy 2-core machine two OpenMP threads made it ~25x
    slower. Same seed, same data and same thread count give the same model.
    """
    from tqdm import tqdm

    fit_rows, dev_rows = split_by_anchor(train_pairs, cfg.dev_fraction, seed)
    fit, dev = train_pairs.subset(fit_rows), train_pairs.subset(dev_rows)
    model = _new_model(
        tokenizer, vectors, contexts=np.unique(fit.context).tolist(), node_dim=cfg.node_dim,
        embedding_dropout=cfg.embedding_dropout, use_context=cfg.use_context, max_tokens_per_phrase=cfg.max_tokens_per_phrase,
    )  # fmt: skip
    fit_data, dev_data = model.prepare(fit), model.prepare(dev) if len(dev) else None
    loss_fn = LOSSES[cfg.loss]

    def evaluate(epoch: int, train_loss: float) -> dict:
        p, s = pearson_spearman(score(model, dev_data, cfg.eval_batch_size), dev.score) if dev_data else (math.nan, math.nan)
        return {"epoch": epoch, "train_loss": train_loss, "dev_pearson": p, "dev_spearman": s}

    steps = math.ceil(len(fit) / cfg.batch_size)
    disable = None if progress is None else not progress
    with _torch_threads(cfg.threads), torch.random.fork_rng(devices=[]):
        history = [evaluate(0, math.nan)]
        best_key, best_state, best_epoch = _selection_key(history[0]), copy.deepcopy(model.state_dict()), 0
        torch.manual_seed(seed)  # embedding dropout draws from the global generator
        generator = torch.Generator().manual_seed(seed)  # order of pairs, context dropout
        optimizer = _optimizer(model, cfg)
        for epoch in range(1, cfg.epochs + 1):
            model.train()
            total = 0.0
            order = torch.randperm(len(fit), generator=generator).numpy()
            with tqdm(total=steps, desc=f"phrases epoch {epoch}/{cfg.epochs}", unit="step", disable=disable, file=sys.stderr, leave=False) as bar:
                for start in range(0, len(fit), cfg.batch_size):
                    batch = fit_data.batch(order[start : start + cfg.batch_size], cfg.context_dropout, generator)
                    loss = loss_fn(model(batch), batch.score, cfg.cosent_scale)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    optimizer.step()
                    total += loss.item() * batch.num_pairs
                    bar.update(1)
            history.append(evaluate(epoch, total / len(fit)))
            key = _selection_key(history[-1])
            if dev_data is None or key > best_key:
                best_key, best_state, best_epoch = key, copy.deepcopy(model.state_dict()), epoch
    model.load_state_dict(best_state)
    model.history, model.best_epoch = history, best_epoch
    model.dev_anchors = len(np.unique(dev.anchor))
    return model.eval()


def _optimizer(model: PhraseSimilarityModel, cfg: PhraseConfig) -> torch.optim.AdamW:
    table = model.encoder.embedding.weight
    if cfg.token_lr_scale == 0:
        table.requires_grad_(False)
    rest = [p for p in model.parameters() if p is not table]
    groups = [{"params": rest}] + ([{"params": [table], "lr": cfg.lr * cfg.token_lr_scale}] if cfg.token_lr_scale > 0 else [])
    return torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)  # fused: 5x faster steps on CPU


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _selection_key(row: dict) -> float:
    p = row["dev_pearson"]
    return -math.inf if math.isnan(p) else p


# --- the protocol ----------------------------------------------------------------


@dataclass
class PhraseEvalReport:
    rows: list[dict]  # {"method", "pearson", "spearman", "split", "run"}; published rows have run=False
    train: dict  # path, pairs, anchors, skipped
    valid: dict
    tokens: dict  # path, vocab_size, dim, fingerprint
    config: dict  # PhraseConfig as a dict
    seed: int
    history: list[dict]  # per epoch: train_loss, dev_pearson, dev_spearman (dev = held-out train anchors)
    best_epoch: int
    seconds: dict  # fine_tune, total
    predictions: dict = field(default_factory=dict)  # method -> (p,) predicted similarity on valid
    gold: np.ndarray | None = None  # (p,) valid scores
    valid_pairs: PhrasePairs | None = None

    def to_json(self) -> dict:
        keys = ("rows", "train", "valid", "tokens", "config", "seed", "history", "best_epoch", "seconds")
        return _json_safe({k: getattr(self, k) for k in keys})


FASTTEXT_ROW = "FastText average (mean of token vectors)"
SWEM_ROW = "SWEM mean+max (pre-trained, no training)"
TUNED_ROW = "SWEM fine-tuned with CPC context"


def evaluate_phrases(
    tokens_dir: str | Path, train_csv: str | Path, valid_csv: str | Path, cfg: PhraseConfig = PhraseConfig(), seed: int = 0,
    progress: bool | None = None,
) -> PhraseEvalReport:  # fmt: skip
    """Score the three methods on ``valid_csv`` (fine-tuning on ``train_csv``) and add the published rows."""
    from graphtx.text.pretrain import load_tokens

    started = time.time()
    tokenizer, vectors = load_tokens(tokens_dir)
    train, valid = read_phrase_pairs(train_csv), read_phrase_pairs(valid_csv)
    predictions = {
        FASTTEXT_ROW: score(pretrained_model(tokenizer, vectors, "mean", cfg.max_tokens_per_phrase), valid, cfg.eval_batch_size),
        SWEM_ROW: score(pretrained_model(tokenizer, vectors, "mean+max", cfg.max_tokens_per_phrase), valid, cfg.eval_batch_size),
    }
    t0 = time.time()
    model = fine_tune(train, tokenizer, vectors, cfg, seed, progress)
    t_fine_tune = time.time() - t0
    predictions[TUNED_ROW if cfg.use_context else "SWEM fine-tuned (no context)"] = score(model, valid, cfg.eval_batch_size)

    rows = []
    for method, pred in predictions.items():
        p, s = pearson_spearman(pred, valid.score)
        rows.append({"method": method, "pearson": p, "spearman": s, "split": "validation", "run": True})
    rows += [{"method": m, "pearson": p, "spearman": s, "split": "test", "run": False} for m, p, s in PUBLISHED]
    manifest = Path(tokens_dir) / "manifest.json"
    fingerprint = json.loads(manifest.read_text()).get("fingerprint", "") if manifest.exists() else ""
    return PhraseEvalReport(
        rows=rows,
        train=_describe(train) | {"dev_anchors": model.dev_anchors},
        valid=_describe(valid),
        tokens={"path": str(tokens_dir), "vocab_size": tokenizer.vocab_size, "dim": int(vectors.shape[1]), "fingerprint": fingerprint},
        config=dataclasses.asdict(cfg),
        seed=seed,
        history=model.history,
        best_epoch=model.best_epoch,
        seconds={"fine_tune": round(t_fine_tune, 2), "total": round(time.time() - started, 2)},
        predictions=predictions,
        gold=valid.score,
        valid_pairs=valid,
    )


def _describe(pairs: PhrasePairs) -> dict:
    return {
        "path": pairs.source, "pairs": len(pairs), "anchors": len(np.unique(pairs.anchor)),
        "skipped": [dataclasses.asdict(s) for s in pairs.skipped],
    }  # fmt: skip


def format_table(report: PhraseEvalReport) -> list[str]:
    """Markdown table: method | Pearson | Spearman, our rows first, then the published ones."""
    width = max(len(r["method"]) + (len(PUBLISHED_NOTE) + 2 if not r["run"] else 0) for r in report.rows)
    lines = [f"| {'method':<{width}} | Pearson | Spearman |", f"|{'-' * (width + 2)}|--------:|---------:|"]
    for r in report.rows:
        name = r["method"] if r["run"] else f"{r['method']}, {PUBLISHED_NOTE}"
        lines.append(f"| {name:<{width}} | {r['pearson']:7.3f} | {r['spearman']:8.3f} |")
    return lines


def write_results(report: PhraseEvalReport, out_dir: str | Path) -> dict[str, Path]:
    """``results.json``, ``predictions.csv`` (validation pairs, gold, each method) and ``scatter.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": out / "results.json", "predictions": out / "predictions.csv", "scatter": out / "scatter.png"}
    valid = report.valid_pairs
    with replacing(paths["predictions"]) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        methods = list(report.predictions)
        writer.writerow(["anchor", "target", "context", "score", *methods])
        for i in range(len(valid)):
            writer.writerow([valid.anchor[i], valid.target[i], valid.context[i], valid.score[i], *(f"{report.predictions[m][i]:.6f}" for m in methods)])
    method = list(report.predictions)[-1]  # the fine-tuned model
    plot_scatter(report.predictions[method], report.gold, paths["scatter"], title=f"{method}: validation split", seed=report.seed)
    atomic_write_text(paths["results"], json.dumps(report.to_json(), indent=2) + "\n")  # the summary, last
    return paths


def plot_scatter(pred: np.ndarray, gold: np.ndarray, path: str | Path, title: str = "", seed: int = 0) -> Path:
    """Predicted vs. gold score; gold takes five values, so points get a seeded horizontal jitter
    and each gold level's mean prediction is marked. Agg canvas via the object API (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    pearson, spearman = pearson_spearman(pred, gold)
    jitter = np.random.default_rng(seed).uniform(-0.04, 0.04, size=len(gold))
    fig = Figure(figsize=(6, 4.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.scatter(gold + jitter, pred, s=4, alpha=0.25, color="tab:blue", linewidths=0, label="pair")
    levels = np.unique(gold)
    ax.plot(levels, [pred[gold == g].mean() for g in levels], "o-", color="tab:red", label="mean per gold score")
    ax.set_xlabel("gold score (jittered)")
    ax.set_ylabel("predicted cosine similarity")
    ax.set_title(f"{title}\nPearson {pearson:.3f}, Spearman {spearman:.3f}, {len(gold)} pairs", fontsize=9)
    ax.set_xticks(levels)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp, format="png", facecolor="white")
    return Path(path)


def _json_safe(value: Any) -> Any:
    """nan -> None (JSON has no nan), numpy scalars -> Python."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
