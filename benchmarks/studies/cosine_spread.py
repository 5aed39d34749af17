"""How much of a model's cosine the graph part and the lexical channel each carry.

    python benchmarks/studies/cosine_spread.py GRAPHS MODEL [MODEL ...] [--kind description --docs 400 --seed 0]

A model's search vector is [sqrt(1 - b) g ; sqrt(b) l] (graphtx/model/lexical.py), so its cosine is
(1 - b) cos(g) + b cos(l) with b = model.lexical_weight fixed. What ranks documents is each term's *spread* over
document pairs, not b alone: a part whose cosines are nearly constant adds almost nothing to the order. For each model
this encodes ``--docs`` seeded graphs of GRAPHS, takes the cosines of every pair within each part and prints their
mean and standard deviation, the share of the fused cosine's spread each part carries ((1 - b) sd_g against b sd_l)
and the parts' correlation. Prints the machine and the load first.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np


def part_spreads(vectors: np.ndarray, graph_dim: int, lexical_weight: float) -> dict[str, float]:
    """vectors (n, graph_dim + lexical_dim), as GraphEncoder.encode returns them, n >= 3 -> statistics of both parts' pair cosines.

    ``graph_share`` = (1 - b) sd_g / ((1 - b) sd_g + b sd_l): the graph part's share of the fused cosine's spread."""
    if len(vectors) < 3 or not 0 < graph_dim < vectors.shape[1]:
        raise ValueError(
            f"need >= 3 vectors with a graph part and a lexical part, got shape {vectors.shape} and graph_dim {graph_dim}"
        )
    upper = np.triu_indices(len(vectors), 1)
    cos = {}  # part -> (pairs,) cosines
    for name, part in (("graph", vectors[:, :graph_dim]), ("lexical", vectors[:, graph_dim:])):
        unit = part / np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)  # (n, d)
        cos[name] = (unit @ unit.T)[upper]
    stats = {f"{name}_{what}": float(getattr(c, what)()) for name, c in cos.items() for what in ("mean", "std")}
    g, lex = (1 - lexical_weight) * stats["graph_std"], lexical_weight * stats["lexical_std"]
    stats["graph_share"] = g / (g + lex) if g + lex > 0 else float("nan")
    stats["correlation"] = float(np.corrcoef(cos["graph"], cos["lexical"])[0, 1]) if g > 0 and lex > 0 else float("nan")
    return stats


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graphs", help="a `graphtx parse` output directory")
    p.add_argument("models", nargs="+", help="model directories (with a lexical channel)")
    p.add_argument("--kind", default="description", help="graph kind to encode (default: description)")
    p.add_argument("--docs", type=int, default=400, help="documents drawn (default: 400)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import torch

    from graphtx.graphs.parse import iter_graphs
    from graphtx.model.io import load_model

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    graphs = list(iter_graphs(args.graphs, kind=args.kind))
    graphs = [graphs[i] for i in np.random.default_rng(args.seed).permutation(len(graphs))[: args.docs]]
    print(f"{len(graphs)} {args.kind} graphs of {args.graphs}\n")
    print(
        "| model | graph cos mean | graph cos sd | lexical cos mean | lexical cos sd | graph share of the spread | correlation |"
    )
    print("|---|---|---|---|---|---|---|")
    for path in args.models:
        loaded = load_model(path)
        model, cfg = loaded.model.eval(), loaded.model.config
        if not cfg.lexical_dim:
            print(f"| {path} | no lexical channel |  |  |  |  |  |")
            continue
        with torch.no_grad():
            vectors = (
                model.encode(graphs, loaded.tokenizer, batch_size=64).float().numpy()
            )  # (n, out_dim + lexical_dim)
        s = part_spreads(vectors, vectors.shape[1] - cfg.lexical_dim, cfg.lexical_weight)
        print(
            f"| {path} | {s['graph_mean']:.3f} | {s['graph_std']:.3f} | {s['lexical_mean']:.3f} | {s['lexical_std']:.3f} | "
            f"{s['graph_share']:.2f} | {s['correlation']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
