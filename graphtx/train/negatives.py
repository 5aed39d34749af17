"""Extra negatives added to a training batch beside the in-batch ones, per citing document.

``paecter`` (PaECTER's sampling): one hard negative cited by the anchor's cited documents but not
by the anchor, and one easy negative from the anchor's batch group.

``bm25`` (Karpukhin et al. 2020, DPR: one BM25 negative per question gave +10 points top-5):
the anchor's top BM25 hits over the candidate documents' text that are not known relevant to it,
not itself and not of its family. These are the documents a lexical engine would put first and
an examiner did not cite: exactly the ranking errors the graph model must learn to avoid.
Scored with the evaluation's BM25 (bm25s, Lucene variant, k1 1.5, b 0.75, English stop words,
Snowball stemmer) on the title + abstract (or first claim) text of each document.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


def paecter_negatives(pairs, doc_group: dict[str, str], candidates: set[str], seed: int) -> dict[str, list[str]]:
    """Per citing document: one hard negative (cited by its cited documents, not by itself) and one
    easy negative (same group, not cited), drawn with a seeded generator; either may be missing."""
    cites: dict[str, set[str]] = defaultdict(set)
    for p in pairs:
        if p.category != "trivial":
            cites[p.citing].add(p.cited)
    by_group: dict[str, list[str]] = defaultdict(list)
    for d in sorted(candidates):
        by_group[doc_group.get(d, "")].append(d)
    rng = np.random.default_rng([seed, 7])
    out = {}
    for a in sorted(cites):
        own = cites[a] | {a}
        hard = sorted({x for c in cites[a] for x in cites.get(c, ())} - own)
        easy = [d for d in by_group.get(doc_group.get(a, ""), []) if d not in own]
        picks = [hard[rng.integers(len(hard))]] if hard else []
        if easy:
            picks.append(easy[rng.integers(len(easy))])
        if picks:
            out[a] = picks
    return out


def bm25_negatives(
    anchors: list[str],
    candidates: list[str],
    text: dict[str, str],
    known: dict[str, set[str]],
    family: dict[str, str],
    per_anchor: int,
) -> dict[str, list[str]]:
    """Per anchor: its ``per_anchor`` best BM25 candidates that are not itself, not known relevant, not of its family.

    ``candidates``: documents that have a candidate graph; ``text``: id → the text BM25 reads;
    ``known``: anchor → documents known relevant (every training citation and trivial pair).
    Deterministic: BM25 ties broken by candidate order (sorted ids).
    """
    from graphtx.text.bm25 import Bm25

    anchors = sorted(set(anchors))
    candidates = sorted(candidates)
    if not anchors or not candidates or per_anchor < 1:
        return {}
    bm25 = Bm25.build([text.get(d, "") for d in candidates])
    out: dict[str, list[str]] = {}
    for a, tokens in zip(anchors, bm25.tokens([text.get(a, "") for a in anchors])):
        scores = bm25.scores_of_tokens(tokens)  # (candidates,)
        if not scores.any():
            continue
        skip = known.get(a, set()) | {a}
        fam = family.get(a, "")
        picks = []
        for j in np.lexsort((np.arange(len(candidates)), -scores)):  # best first, ties by id
            if scores[j] <= 0:
                break
            d = candidates[j]
            if d in skip or (fam and family.get(d) == fam):
                continue
            picks.append(d)
            if len(picks) == per_anchor:
                break
        if picks:
            out[a] = picks
    return out
