"""A user-sized corpus cut from a large one: every document of a citation set, then seeded random others.

    python benchmarks/studies/subset_corpus.py descriptions.parquet citations_all.tsv --size 2000 --seed 0 --out sub.parquet
    python benchmarks/studies/subset_corpus.py descriptions.parquet citations_all.tsv --size 42356 --drop description --out abstracts.parquet

Issue 47 asks what label-free adaptation gives on a corpus of a user's own size. The full-text development set's
queries and cited patents (both sides of every pair of CITATIONS) are kept, so its judgements hold unchanged in the
subset; the rest of ``--size`` is drawn uniformly, without replacement, from the other records (numpy's
``default_rng(seed)``, over the other ids in sorted order). The records are copied as they are (every column), in the
source's order, to a Parquet file written atomically; ``--drop`` leaves columns out (``--drop description``: the
same documents as an abstract-level corpus; ``--size`` the source's size keeps every record). Uniform filling keeps the
task's difficulty neutral between systems: a fill chosen by one system's neighbours (BM25's, say) would make the
distractors hard for that system only.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np


def citation_ids(citations: Path) -> set[str]:
    """Both sides of every pair of a citations TSV (a header row citing_id, cited_id is skipped)."""
    with citations.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and r[0] != "citing_id"]
    return {x for r in rows for x in r[:2]}


def choose(ids: list[str], keep: set[str], size: int, seed: int) -> set[str]:
    """``keep`` plus ``size - len(keep)`` seeded random others of ``ids``."""
    missing = sorted(keep - set(ids))
    if missing:
        raise ValueError(f"{len(missing)} cited or citing id(s) are not in the corpus, e.g. {missing[:3]}")
    if size < len(keep):
        raise ValueError(f"--size {size} is below the {len(keep)} documents of the citation set")
    rest = sorted(set(ids) - keep)
    if size - len(keep) > len(rest):
        raise ValueError(f"--size {size} is above the corpus's {len(ids)} documents")
    fill = np.random.default_rng(seed).choice(len(rest), size - len(keep), replace=False)
    return keep | {rest[i] for i in fill}


def main(argv: list[str] | None = None) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx.atomic import replacing

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("source", type=Path, help="a Parquet corpus file with an id column")
    p.add_argument("citations", type=Path, help="citations TSV whose documents are all kept")
    p.add_argument("--size", type=int, required=True, help="documents in the subset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="the subset's Parquet file")
    p.add_argument("--drop", default="", help="columns left out, comma-separated (e.g. description)")
    args = p.parse_args(argv)
    table = pq.read_table(args.source)
    drop = list(dict.fromkeys(c for c in args.drop.split(",") if c))  # each column once
    unknown = sorted(set(drop) - set(table.column_names))
    if unknown or "id" in drop:
        print(
            f"subset_corpus: --drop {args.drop}: {', '.join(unknown) or 'id'} cannot be left out of "
            f"{args.source} (its columns: {', '.join(table.column_names)}; id is kept)",
            file=sys.stderr,
        )
        return 2
    table = table.drop_columns(drop)
    ids = table.column("id").to_pylist()
    if len(set(ids)) != len(ids):
        print(
            f"subset_corpus: {args.source} repeats ids: a subset of it would not have --size records", file=sys.stderr
        )
        return 2
    cited = citation_ids(args.citations)
    try:
        chosen = choose(ids, cited, args.size, args.seed)
    except ValueError as e:
        print(f"subset_corpus: {e}", file=sys.stderr)
        return 2
    subset = table.filter(pa.array([i in chosen for i in ids]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(args.out) as tmp:
        pq.write_table(subset, tmp)
    dropped = f", without {', '.join(drop)}" if drop else ""
    print(f"{subset.num_rows} of {len(ids)} records to {args.out} ({len(cited)} from the citations{dropped})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
