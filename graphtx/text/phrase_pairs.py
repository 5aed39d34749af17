"""Phrase pairs (Google's Patent Phrase Similarity format): the ``anchor,target,score,context`` CSV reader and the seeded
dev split by anchor. Read by the phrase evaluation (graphtx/eval/phrases/) and by node-phrase distillation
(graphtx/train/phrase_distil.py), so it lives in the text stage both come after."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REQUIRED_COLUMNS = ("anchor", "target", "score", "context")


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
                raise ValueError(
                    f"{path}: missing column(s) {', '.join(missing)}; the header has {', '.join(header) or 'nothing'}; needs {', '.join(REQUIRED_COLUMNS)}"
                )
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
        raise ValueError(
            f"{path}: no readable phrase pairs ({len(skipped)} rows skipped"
            + (f", first: line {skipped[0].line}: {skipped[0].reason})" if skipped else ")")
        )
    return PhrasePairs(
        np.array(anchor, dtype=str),
        np.array(target, dtype=str),
        np.array(score, dtype=np.float64),
        np.array(context, dtype=str),
        str(path),
        tuple(skipped),
    )


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
