"""Has the graph part learned its teacher? How closely a vectors file's part follows a teacher's similarities.

    python benchmarks/studies/teacher_imitation.py TEACHER_DIR CITATIONS.tsv --model MODEL untrained=vec/u-go.parquet \
        trained=vec/t-go.parquet lexical=vec/u-go.parquet:lexical

For each query of CITATIONS.tsv (its citing ids) the cosines of the query to every document of the vectors file, from
the chosen part (``graph``, the first ``--graph-dim`` columns, the model's out_dim with ``--model``; default; ``lexical``, the rest; `graphtx encode` writes
[graph ; lexical]), are set against the teacher's cosines over the same documents: the share of the teacher's top
``--top`` also in the part's top ``--top``, and the Spearman correlation over ``--sample`` seeded documents. No cut-off
and no judgement: an agreement, not a retrieval score (`teacher_alone.py` scores the teacher as a retriever). A part
that learned the teacher moves towards 1 on both (full-text development set, run 9: 0.18 → 0.31 and 0.48 → 0.58).
Prints the machine, the load and one row per file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np


def agreement(
    part: np.ndarray, teacher: np.ndarray, rows: list[int], top: int, sample: int, seed: int = 0
) -> tuple[float, float]:
    """(mean top-``top`` overlap, mean Spearman over ``sample`` seeded documents) of ``part`` (n, d) against ``teacher``
    (n, D), both unit rows in the same document order, over the query ``rows`` (the query itself left out)."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    overlaps, rhos = [], []
    for i in rows:
        mine, theirs = part @ part[i], teacher @ teacher[i]  # (n,)
        mine[i] = theirs[i] = -np.inf
        overlaps.append(len(set(np.argsort(-mine)[:top]) & set(np.argsort(-theirs)[:top])) / top)
        pick = rng.choice(np.delete(np.arange(len(part)), i), size=min(sample, len(part) - 1), replace=False)
        rhos.append(float(spearmanr(mine[pick], theirs[pick]).statistic))
    return float(np.mean(overlaps)), float(np.mean(rhos))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("teacher", type=Path, help="a `graphtx teacher` directory or a run's teacher/")
    p.add_argument("citations", type=Path, help="citations TSV: its citing ids are the queries")
    p.add_argument(
        "files",
        nargs="+",
        help="NAME=VECTORS.parquet[:graph|:lexical] (`graphtx encode` output, e.g. re-mixed by reweight_vectors.py)",
    )
    width = p.add_mutually_exclusive_group(required=True)
    width.add_argument(
        "--model", type=Path, help="the model that wrote the vectors: its out_dim is the graph part's width"
    )
    width.add_argument(
        "--graph-dim",
        type=int,
        help="columns of the graph part (the model's out_dim: small config 256, 64 with its MoE head)",
    )
    p.add_argument("--top", type=int, default=100, help="the top this many of each ranking are compared (default 100)")
    p.add_argument("--sample", type=int, default=2000, help="documents in each Spearman correlation (default 2000)")
    args = p.parse_args(argv)
    if args.top < 1 or args.sample < 2:
        p.error("--top must be >= 1 and --sample >= 2")
    if args.model:
        from graphtx.model.io import load_model

        args.graph_dim = load_model(args.model).model.config.out_dim

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    from graphtx.corpus.citations import read_citations
    from graphtx.eval.systems import l2_normalise
    from graphtx.model.embed import read_vectors
    from graphtx.text.teacher import load_teacher_vectors

    teacher = load_teacher_vectors(args.teacher)
    teacher_row = {d: i for i, d in enumerate(teacher.doc_ids)}
    citing = sorted({c.citing_id for c in read_citations(args.citations)})
    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"\n| vectors ({teacher.label}) | queries | top-{args.top} overlap with the teacher | Spearman over {args.sample:,} |\n|---|---|---|---|"
    )
    for spec in args.files:
        name, _, rest = spec.partition("=")
        path, _, which = rest.partition(":")
        if not name or not path or which not in ("", "graph", "lexical"):
            p.error(f"{spec!r}: give NAME=VECTORS.parquet[:graph|:lexical]")
        ids, vectors, _ = read_vectors(path)
        if not 0 < args.graph_dim < vectors.shape[1]:
            p.error(f"{path}: --graph-dim {args.graph_dim} does not split its {vectors.shape[1]} columns")
        part = vectors[:, args.graph_dim :] if which == "lexical" else vectors[:, : args.graph_dim]
        keep = [i for i, d in enumerate(ids) if d in teacher_row]  # documents both have
        ids = [ids[i] for i in keep]
        row = {d: i for i, d in enumerate(ids)}
        rows = [row[q] for q in citing if q in row]
        if args.top >= len(ids) - 1:
            p.error(f"{path}: --top {args.top} leaves nothing out of {len(ids)} documents")
        if not rows:
            p.error(f"{path}: none of the {len(citing)} queries has a vector and a teacher vector")
        overlap, rho = agreement(
            l2_normalise(part[keep]),
            l2_normalise(teacher.vectors[[teacher_row[d] for d in ids]]),
            rows,
            args.top,
            args.sample,
        )
        print(f"| {name}{':' + which if which else ''} | {len(rows)} | {overlap:.3f} | {rho:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
