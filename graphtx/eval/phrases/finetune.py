"""Fine-tuning of the phrase model: AdamW over seeded batches, the best dev-Pearson epoch kept."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np
import torch

from graphtx.eval.phrases.config import PhraseConfig
from graphtx.eval.phrases.model import PhraseSimilarityModel, _new_model, score
from graphtx.metrics import pearson_spearman
from graphtx.model.batch import Tokenizer
from graphtx.text.phrase_pairs import PhrasePairs, split_by_anchor
from graphtx.threads import torch_threads
from graphtx.train.loss import cosent_loss, mse_loss

LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]] = {
    "mse": mse_loss,
    "cosent": cosent_loss,
}  # keys = config.LOSS_NAMES


def fine_tune(
    train_pairs: PhrasePairs,
    tokenizer: Tokenizer,
    vectors: np.ndarray,
    cfg: PhraseConfig = PhraseConfig(),
    seed: int = 0,
    progress: bool | None = None,
) -> PhraseSimilarityModel:
    """Train a :class:`PhraseSimilarityModel` from the pre-trained token vectors; returns it in eval mode.

    Holds out a seeded ``dev_fraction`` of the anchors, trains ``epochs`` passes of AdamW over
    seeded permutations of the rest, and keeps the epoch (0 = untrained) with the best dev
    Pearson. The model's ``history`` (one dict per epoch) and ``best_epoch`` say what happened.
    All randomness comes from ``seed`` inside ``torch.random.fork_rng``: global RNG state is
    left as it was. Torch runs on ``cfg.threads`` intra-op threads meanwhile (restored after):
    a step is ~3 ms of tiny ops, and on a busy 2-core machine two OpenMP threads made it ~25x
    slower. Same seed, same data and same thread count give the same model.
    """
    from graphtx.progress import progress_bar

    fit_rows, dev_rows = split_by_anchor(train_pairs, cfg.dev_fraction, seed)
    fit, dev = train_pairs.subset(fit_rows), train_pairs.subset(dev_rows)
    model = _new_model(
        tokenizer,
        vectors,
        contexts=np.unique(fit.context).tolist(),
        node_dim=cfg.node_dim,
        embedding_dropout=cfg.embedding_dropout,
        use_context=cfg.use_context,
        max_tokens_per_phrase=cfg.max_tokens_per_phrase,
    )
    fit_data, dev_data = model.prepare(fit), model.prepare(dev) if len(dev) else None
    loss_fn = LOSSES[cfg.loss]

    def evaluate(epoch: int, train_loss: float) -> dict:
        p, s = (
            pearson_spearman(score(model, dev_data, cfg.eval_batch_size), dev.score)
            if dev_data
            else (math.nan, math.nan)
        )
        return {"epoch": epoch, "train_loss": train_loss, "dev_pearson": p, "dev_spearman": s}

    steps = math.ceil(len(fit) / cfg.batch_size)
    with torch_threads(cfg.threads), torch.random.fork_rng(devices=[]):
        history = [evaluate(0, math.nan)]
        best_key, best_state, best_epoch = _selection_key(history[0]), copy.deepcopy(model.state_dict()), 0
        torch.manual_seed(seed)  # embedding dropout draws from the global generator
        generator = torch.Generator().manual_seed(seed)  # order of pairs, context dropout
        optimizer = _optimizer(model, cfg)
        for epoch in range(1, cfg.epochs + 1):
            model.train()
            total = 0.0
            order = torch.randperm(len(fit), generator=generator).numpy()
            with progress_bar(
                total=steps, desc=f"phrases epoch {epoch}/{cfg.epochs}", unit="step", enabled=progress, leave=False
            ) as bar:
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
    groups = [{"params": rest}] + (
        [{"params": [table], "lr": cfg.lr * cfg.token_lr_scale}] if cfg.token_lr_scale > 0 else []
    )
    return torch.optim.AdamW(
        groups, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True
    )  # fused: 5x faster steps on CPU


def _selection_key(row: dict) -> float:
    p = row["dev_pearson"]
    return -math.inf if math.isnan(p) else p
