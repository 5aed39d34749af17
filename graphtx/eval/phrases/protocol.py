"""The phrase protocol: the three methods scored on the validation split, beside the published rows."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphtx.eval.phrases.config import PhraseConfig
from graphtx.eval.phrases.finetune import fine_tune
from graphtx.eval.phrases.model import distilled_model, pretrained_model, score
from graphtx.metrics import pearson_spearman
from graphtx.text.phrase_pairs import PhrasePairs, read_phrase_pairs

# Published numbers on the *test* split (not in ../shared/data), as quoted in the issue; never run here.
PUBLISHED = (
    ("FastText", 0.402, 0.467),
    ("SBERT", 0.598, 0.577),
    ("RA-Sim (self-supervised)", 0.633, 0.629),
    ("RA-Sim (supervised)", 0.741, 0.721),
)
PUBLISHED_NOTE = "published, test split (not run here)"


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
DISTILLED_ROW = "SWEM node encoder as distilled (graphtx distil-phrases, no training here)"


def evaluate_phrases(
    tokens_dir: str | Path,
    train_csv: str | Path,
    valid_csv: str | Path,
    cfg: PhraseConfig = PhraseConfig(),
    seed: int = 0,
    progress: bool | None = None,
) -> PhraseEvalReport:
    """Score the three methods on ``valid_csv`` (fine-tuning on ``train_csv``) and add the published rows."""
    from graphtx.text.pretrain import load_node_projection, load_tokens

    started = time.time()
    tokenizer, vectors = load_tokens(tokens_dir)
    train, valid = read_phrase_pairs(train_csv), read_phrase_pairs(valid_csv)
    predictions = {
        FASTTEXT_ROW: score(
            pretrained_model(tokenizer, vectors, "mean", cfg.max_tokens_per_phrase), valid, cfg.eval_batch_size
        ),
        SWEM_ROW: score(
            pretrained_model(tokenizer, vectors, "mean+max", cfg.max_tokens_per_phrase), valid, cfg.eval_batch_size
        ),
    }
    projection = load_node_projection(tokens_dir)
    if projection is not None:  # the node encoder a graph model over these tokens starts from
        predictions[DISTILLED_ROW] = score(
            distilled_model(tokenizer, vectors, projection, cfg.max_tokens_per_phrase), valid, cfg.eval_batch_size
        )
    t0 = time.time()
    model = fine_tune(train, tokenizer, vectors, cfg, seed, progress)
    t_fine_tune = time.time() - t0
    predictions[TUNED_ROW if cfg.use_context else "SWEM fine-tuned (no context)"] = score(
        model, valid, cfg.eval_batch_size
    )

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
        tokens={
            "path": str(tokens_dir),
            "vocab_size": tokenizer.vocab_size,
            "dim": int(vectors.shape[1]),
            "fingerprint": fingerprint,
        },
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
        "path": pairs.source,
        "pairs": len(pairs),
        "anchors": len(np.unique(pairs.anchor)),
        "skipped": [dataclasses.asdict(s) for s in pairs.skipped],
    }


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
