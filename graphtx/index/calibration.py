"""When a claim chart may say "found by the model": a threshold calibrated on the index's own documents.

A fixed cosine (the old ``search.found_similarity: 0.9``) means nothing across models: an untrained or
weakly trained encoder puts every pair of node states near 0.95, so any feature is "found" anywhere. The
calibration measures what the model gives a query feature in a document it has no reason to match:

    for S sampled indexed documents (the queries) and R other sampled documents each (unrelated: a random
    pair of a corpus is almost never prior art of each other), every feature node of the query whose words
    no node of the other document holds -> its best cosine there (the "null" similarities)

``threshold`` is the ``1 - false_rate`` quantile of the null: a feature counts as found by the model only
when its best cosine beats what ``1 - false_rate`` of unrelated documents give (``search.found_false_rate``,
1% by default). ``confidence(sim)`` is the share of null similarities below ``sim``: the per-match
confidence a searcher reads ("0.998: higher than 99.8% of matches in unrelated documents").

Computed in memory when an index first explains a hit (seeded by the index's model fingerprint, so the
same index gives the same calibration); an index is never written to by a reader.

Example::

    cal = calibrate_found(model, tokenizer, graphs, false_rate=0.01, seed=0)
    cal.threshold, cal.confidence(0.97)     # 0.991, 0.42 for a weakly trained model
"""

from __future__ import annotations

import random

import torch
from torch import nn

from graphtx.index.explain import _words, node_details
from graphtx.index.found import FoundCalibration, FoundRule, _quantiles

__all__ = ["FoundCalibration", "FoundRule", "calibrate_found"]


@torch.no_grad()
def calibrate_found(
    model, tokenizer, graphs: list, false_rate: float = 0.01, seed: int = 0, others: int = 4, batch_size: int = 32
) -> FoundCalibration | None:
    """The null distribution of best feature cosines between each of ``graphs`` and ``others`` random other ones of them.

    None when there are too few (fewer than 2 graphs with nodes, or fewer than 50 feature-document pairs)."""
    from graphtx.model.batch import collate

    graphs = [g for g in graphs if g.num_nodes]
    if len(graphs) < 2:
        return None
    states = []
    for start in range(0, len(graphs), batch_size):
        chunk = graphs[start : start + batch_size]
        batch = collate(chunk, tokenizer, model.config.max_tokens_per_node)
        states += [nn.functional.normalize(u, dim=-1) for u, _, _ in node_details(model, batch)]  # (n, D) each
    words = [[_words(t) for t in g.node_text] for g in graphs]
    rng = random.Random(seed)
    null: list[float] = []
    for i, g in enumerate(graphs):
        features = [n for n, kind in enumerate(g.node_type) if kind == "feature" and words[i][n]]
        if not features:
            continue
        for j in rng.sample([k for k in range(len(graphs)) if k != i], min(others, len(graphs) - 1)):
            sims = states[i][features] @ states[j].T  # (f, n_j)
            for row, n in enumerate(features):
                if any(words[i][n] <= w for w in words[j]):  # found by its words there: not the model's decision
                    continue
                null.append(float(sims[row].max()))
    if len(null) < 50:
        return None
    q = _quantiles(null)
    threshold = sorted(null)[min(len(null) - 1, int((1.0 - false_rate) * len(null)))]
    return FoundCalibration(q, false_rate, threshold, len(null), len(graphs))
