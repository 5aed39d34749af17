"""Training pairs from citations, and leakage-free splits.

A pair is (citing document, cited document, category). The citing side is encoded
from its query graph (first claim), the cited side from its candidate graph
(description): the model learns to bring a claim near the documents an examiner
cited against it.

Every citation is accounted for: it becomes a pair, or is listed in ``skipped``
with a reason (a side without graphs, a self-citation, a duplicate).

Splits (``split_random``, ``split_by_year``) assign *citing families* to sets, and
every citation goes with its citing document: no family is in two sets, no
citation crosses sets. Training pairs whose cited document is a validation or
test query are dropped too (listed), so a held-out query's text is never a
training target.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from graphtx.corpus.schema import Citation
from graphtx.train.config import TrainConfig


@dataclass(frozen=True)
class Pair:
    citing: str
    cited: str
    category: str  # the margin category (after category_map); "trivial" for own-description pairs


@dataclass(frozen=True)
class Skipped:
    citing: str
    cited: str
    reason: str


def make_pairs(
    citations: Iterable[Citation], has_query: set[str], has_candidate: set[str], cfg: TrainConfig
) -> tuple[list[Pair], list[Skipped]]:
    """Citation pairs (deduplicated, in input order) and the citations left out, with reasons."""
    pairs, skipped, seen = [], [], set()
    for c in citations:
        reason = None
        if c.citing_id == c.cited_id:
            reason = "self-citation"
        elif c.citing_id not in has_query:
            reason = f"citing document has no graphs ({cfg.query_kind} or fallback)"
        elif c.cited_id not in has_candidate:
            reason = f"cited document has no graphs ({cfg.candidate_kind} or fallback)"
        elif (c.citing_id, c.cited_id) in seen:
            reason = "duplicate citation"
        if reason:
            skipped.append(Skipped(c.citing_id, c.cited_id, reason))
            continue
        seen.add((c.citing_id, c.cited_id))
        pairs.append(Pair(c.citing_id, c.cited_id, cfg.category_map.get(c.category, c.category)))
    return pairs, skipped


def trivial_pairs(doc_ids: Iterable[str], share: float, num_citation_pairs: int, seed: int) -> list[Pair]:
    """``round(share * num_citation_pairs)`` own-description pairs, documents drawn by seeded hash order.

    With no citation pairs at all (a corpus without citations), every document gets one.
    """
    ids = sorted(set(doc_ids), key=lambda d: _hash(d, seed))
    n = len(ids) if num_citation_pairs == 0 else min(len(ids), round(share * num_citation_pairs))
    return [Pair(d, d, "trivial") for d in ids[:n]]


def positives_by_citing(pairs: Iterable[Pair]) -> dict[str, set[str]]:
    """citing id → every document known relevant to it (its cited documents and itself)."""
    known: dict[str, set[str]] = defaultdict(set)
    for p in pairs:
        known[p.citing].update((p.cited, p.citing))
    return known


# --- splits ---------------------------------------------------------------------------


@dataclass
class Split:
    train: list[Citation]
    valid: list[Citation]
    test: list[Citation]
    skipped: list[Skipped]


def split_random(
    citations: list[Citation], family: Mapping[str, str], valid_share: float, test_share: float, seed: int
) -> Split:
    """Citing families → sets by a seeded hash; each citation follows its citing document."""

    def which(citing: str) -> str:
        u = _hash(family.get(citing) or citing, seed) / 2**64
        return "test" if u < test_share else "valid" if u < test_share + valid_share else "train"

    return _assign(citations, which, family)


def split_by_year(
    citations: list[Citation], year: Mapping[str, int], family: Mapping[str, str], valid_from: int, test_from: int = 0
) -> Split:
    """Citing year < valid_from → train; < test_from (or all later when 0) → valid; else test.

    A family with citing documents in several years goes to the latest set one of them
    falls in, so no family straddles sets.
    """
    rank = {"train": 0, "valid": 1, "test": 2}
    by_family: dict[str, str] = {}
    for c in citations:
        y = year.get(c.citing_id, 0)
        s = "train" if y < valid_from else "valid" if not test_from or y < test_from else "test"
        f = family.get(c.citing_id) or c.citing_id
        if rank[s] > rank[by_family.get(f, "train")]:
            by_family[f] = s
        by_family.setdefault(f, s)
    return _assign(citations, lambda citing: by_family[family.get(citing) or citing], family)


def _assign(citations: list[Citation], which, family: Mapping[str, str]) -> Split:
    sets: dict[str, list[Citation]] = {"train": [], "valid": [], "test": []}
    for c in citations:
        sets[which(c.citing_id)].append(c)
    held_out = {
        f for s in ("valid", "test") for c in sets[s] for f in (c.citing_id, family.get(c.citing_id) or c.citing_id)
    }
    train, skipped = [], []
    for c in sets["train"]:
        if c.cited_id in held_out or (family.get(c.cited_id) or c.cited_id) in held_out:
            skipped.append(
                Skipped(c.citing_id, c.cited_id, "cited document is a validation/test query (or its family)")
            )
        else:
            train.append(c)
    return Split(train, sets["valid"], sets["test"], skipped)


def carve_selection(
    citations: list[Citation], date: Mapping[str, str], family: Mapping[str, str], share: float, seed: int
) -> tuple[list[Citation], list[Citation], list[Skipped]]:
    """The selection split: the latest ``share`` of the training queries (citing families), by citing date
    (ties: a seeded hash), as validation is later than training. ``(train, selection, skipped)``.

    Selection queries select checkpoints and stages in place of the validation citations, which a run
    only scores at its end. A training citation whose cited document is a selection query (or of its
    family) is dropped and listed, so a selection query's text is never a training target. At least one
    family goes to each side when there are two or more.
    """
    key = lambda c: family.get(c.citing_id) or c.citing_id  # noqa: E731
    latest: dict[str, str] = {}
    for c in citations:
        f = key(c)
        latest[f] = max(latest.get(f, ""), date.get(c.citing_id, "") or "")
    order = sorted(latest, key=lambda f: (latest[f], _hash(f, seed + 29)))  # oldest first
    citing_per_family: dict[str, set[str]] = defaultdict(set)
    for c in citations:
        citing_per_family[key(c)].add(c.citing_id)
    total = sum(len(v) for v in citing_per_family.values())
    chosen: set[str] = set()
    taken = 0
    for f in reversed(order):
        if len(chosen) >= len(order) - 1 or taken >= share * total:
            break
        chosen.add(f)
        taken += len(citing_per_family[f])
    held = chosen | {q for f in chosen for q in citing_per_family[f]}
    train, selection, skipped = [], [], []
    for c in citations:
        if key(c) in chosen:
            selection.append(c)
        elif c.cited_id in held or (family.get(c.cited_id) or c.cited_id) in held:
            skipped.append(Skipped(c.citing_id, c.cited_id, "cited document is a selection query (or its family)"))
        else:
            train.append(c)
    return train, selection, skipped


def drop_held_out_targets(train: list[Citation], held_out_queries: set[str]) -> tuple[list[Citation], list[Skipped]]:
    """Pre-split files: drop training citations whose *citing* side is a held-out query (leak)."""
    keep, skipped = [], []
    for c in train:
        if c.citing_id in held_out_queries:
            skipped.append(Skipped(c.citing_id, c.cited_id, "citing document is also a validation/test query"))
        else:
            keep.append(c)
    return keep, skipped


def _hash(text: str, seed: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest(), "big")
