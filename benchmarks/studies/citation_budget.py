"""A citation budget: the pairs of N citing documents drawn from a citations TSV, nested across N for one seed.

    python benchmarks/studies/citation_budget.py citations_train.tsv --queries 100 --seed 0 --out train-100.tsv

How many citing documents must a corpus hold before training on them beats adapting to it without labels?
`graphtx build` trains from 200 (graphtx.build.MIN_TRAINING_QUERIES; 100 until measured) and `graphtx train`
from 1; the regressions citation-budget.yaml and build-citation-budget.yaml measure both sides. The citing
documents are ordered by a seeded permutation (numpy's ``default_rng(seed)`` over the distinct citing ids in sorted order) and the first ``--queries`` are kept
with every one of their pairs, rows unchanged and in the source's order, so for one seed a smaller budget is a
subset of a larger one (a learning curve, not independent draws). The file is written atomically, with the
source's header when it has one.

``--rest`` writes the other pairs instead: those of every citing document outside the budget of each of ``--seeds``
(default: ``--seed``), so that the rest of the largest budget of every seed is one query set that no budget's run was
given, the same for each seed (graded there, nothing chosen on them; seeds are averaged per query).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

HEADER = "citing_id"


def read_rows(citations: Path) -> tuple[list[str] | None, list[list[str]]]:
    """(the header row or None, the data rows) of a citations TSV."""
    with citations.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r]
    if rows and rows[0][0] == HEADER:
        return rows[0], rows[1:]
    return None, rows


def budget_citing(citing: list[str], queries: int, seed: int) -> set[str]:
    """The first ``queries`` distinct citing ids of a seeded permutation (nested: a smaller budget is a prefix)."""
    distinct = sorted(set(citing))
    if queries < 1:
        raise ValueError(f"--queries {queries}: at least one citing document")
    if queries > len(distinct):
        raise ValueError(f"--queries {queries} is above the file's {len(distinct)} citing documents")
    order = np.random.default_rng(seed).permutation(len(distinct))
    return {distinct[i] for i in order[:queries]}


def main(argv: list[str] | None = None) -> int:
    from graphtx.atomic import replacing

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("citations", type=Path, help="citations TSV (citing_id, cited_id[, category])")
    p.add_argument("--queries", type=int, required=True, help="citing documents to keep, with all their pairs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="the budget's citations TSV")
    p.add_argument(
        "--rest", action="store_true", help="write the pairs of the citing documents outside the budget instead"
    )
    p.add_argument("--seeds", help="with --rest: comma-separated seeds, outside the budget of each (default: --seed)")
    args = p.parse_args(argv)
    if args.seeds and not args.rest:
        p.error("--seeds names the budgets --rest stays outside of; a budget has one --seed")
    header, rows = read_rows(args.citations)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]  # --seeds comes with --rest
    try:
        keep = set().union(*(budget_citing([r[0] for r in rows], args.queries, seed) for seed in seeds))
    except ValueError as e:
        print(f"citation_budget: {e}", file=sys.stderr)
        return 2
    kept = [r for r in rows if (r[0] in keep) != args.rest]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(args.out) as tmp, Path(tmp).open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerows(([header] if header else []) + kept)
    which = f"outside the budget of {args.queries} of seeds {seeds}" if args.rest else f"of {args.queries}"
    print(f"{len(kept)} pairs of the citing documents {which} (of {len(rows)} pairs) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
