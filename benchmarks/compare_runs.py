"""Compare systems over seeds with a paired bootstrap: mean over seeds per query, then queries resampled.

    python benchmarks/compare_runs.py --reference untrained=E/untrained-s0.csv,E/untrained-s1.csv,E/untrained-s2.csv \\
        teacher=E/teach-s0.csv,E/teach-s1.csv,E/teach-s2.csv  bm25=E/teach-s0.csv:bm25

Each group is NAME=CSV[,CSV...], the per-query CSVs of `graphtx eval citations --per-query` (one per seed); a CSV
holds every system of its run (separate the CSVs with ';' when a system name holds a comma), and the group takes its graphtx row (``--system``, default the first that is not a
baseline) or, with CSV:NAME, the rows of the system whose label starts with NAME (``bm25``, ``hybrid``, ...).
A group's per-query value is its mean over seeds (Recall@3: hits summed over pairs, as the evaluation counts it),
so the interval is that of the seed-averaged system against the seed-averaged reference on the same queries.
Prints the machine, the load and one markdown row per group: Recall@3, nDCG@150, each as a ratio to the
reference with its 95% interval (10,000 resamples, graphtx/eval/bootstrap.py).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
from collections import defaultdict

from graphtx.eval.bootstrap import paired_ratio

BASELINE_PREFIXES = ("BM25", "TF-IDF", "FastText", "all-MiniLM", "all-mpnet")
COLUMNS = ("hits@3", "relevant", "Recall@3", "nDCG@150")


def read_rows(spec: str) -> tuple[list[dict], str]:
    path, _, want = spec.partition(":")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    labels = list(dict.fromkeys(r["system"] for r in rows))
    if want and "*" in want:  # a pattern: "graphtx*(RRF)" picks the fused row, not graphtx's own
        import fnmatch

        label = next((x for x in labels if fnmatch.fnmatchcase(x.lower(), want.lower())), None)
    elif want:
        label = next((x for x in labels if x.lower().startswith(want.lower())), None)
    else:
        label = next((x for x in labels if not x.startswith(BASELINE_PREFIXES)), None)
    if label is None:
        raise SystemExit(f"{path}: no system {want or 'graphtx'} among {labels}")
    return [r for r in rows if r["system"] == label], label


def split_specs(files: str) -> list[str]:
    """CSV[,CSV...]; with a ';' anywhere the files are split on ';'. Without one, a comma splits only where a
    .csv path follows it, so a label with commas ("learned, no graph features") needs no ';'."""
    if ";" in files:
        return [f for f in files.split(";") if f]
    if ".csv" not in files:  # files named otherwise: every comma splits
        return files.split(",")
    return re.split(r",(?=[^,:]*\.csv)", files)


def group_rows(specs: list[str]) -> tuple[list[dict], list[float], list[float], str]:
    """Per-query rows averaged over seeds, and each seed's Recall@3 and nDCG@150."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    recalls, ndcgs, label, queries = [], [], "", None
    for spec in specs:
        rows, label = read_rows(spec)
        if (
            queries is not None and {r["query"] for r in rows} != queries
        ):  # a mean over seeds needs every seed's queries
            raise SystemExit(
                f"{spec}: its queries differ from the first seed's ({len(rows)} against {len(queries)}): not the same evaluation"
            )
        queries = {r["query"] for r in rows}
        recalls.append(sum(float(r["hits@3"]) for r in rows) / max(1.0, sum(float(r["relevant"]) for r in rows)))
        ndcgs.append(statistics.fmean(float(r["nDCG@150"]) for r in rows))
        for r in rows:
            for c in COLUMNS:
                sums[r["query"]][c] += float(r[c]) / len(specs)
    return [{"query": q, **v} for q, v in sums.items()], recalls, ndcgs, label


def sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", required=True, help="NAME=CSV[,CSV...]: the group the others are divided by")
    ap.add_argument("groups", nargs="+", help="NAME=CSV[,CSV...] (CSV:SYSTEM picks a system of the CSV)")
    args = ap.parse_args()
    ref_name, _, ref_specs = args.reference.partition("=")
    reference, *_ = group_rows(split_specs(ref_specs))
    print(
        f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}; reference: {ref_name}; {len(reference)} queries"
    )
    print(
        f"\n| system | seeds | Recall@3 mean ± sd | nDCG@150 mean ± sd | Recall@3 / {ref_name} [95%] | nDCG@150 / {ref_name} [95%] |"
    )
    print("|---|---|---|---|---|---|")
    for spec in args.groups:
        name, _, files = spec.partition("=")
        rows, recalls, ndcgs, _label = group_rows(split_specs(files))
        r = paired_ratio(rows, reference, "Recall@3", "hits@3")
        n = paired_ratio(rows, reference, "nDCG@150")
        print(
            f"| {name} | {len(recalls)} | {statistics.fmean(recalls):.4f} ± {sd(recalls):.4f} | {statistics.fmean(ndcgs):.4f} ± {sd(ndcgs):.4f} | {r} | {n} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
