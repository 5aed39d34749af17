"""Aggregate `graphtx eval citations --out DIR` results over seeds: one markdown row per system.

    python benchmarks/seeds_table.py RUNS/s0/eval-priority RUNS/s1/eval-priority RUNS/s2/eval-priority

Each DIR holds the results.json of one seed (the same queries, the same BM25). A row gives Recall@k and nDCG@k as
mean ± sd over the seeds, the ratio of the means to BM25, and each seed's ratio with its paired-bootstrap 95% interval
(from results.json: queries resampled, BM25 under the same protocol). Systems are matched by their System.name
(graphtx, hybrid, late, convex, learned, learned-lexical, bm25, ...), so labels that carry a seed's path still match.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def load(directory: str) -> dict:
    data = json.loads((Path(directory) / "results.json").read_text())
    return {
        "cutoff": data["config"].get("cutoff", "none"),
        "citations": data["citations"],
        "systems": {r["name"]: r for r in data["retrieval"]},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="results directories of eval citations, one per seed")
    ap.add_argument("--recall", default="Recall@3")
    ap.add_argument("--ndcg", default="nDCG@150")
    args = ap.parse_args()
    seeds = [load(d) for d in args.dirs]
    cutoffs = {s["cutoff"] for s in seeds}
    c = seeds[0]["citations"]
    print(
        f"cut-off: {', '.join(sorted(cutoffs))}; {c['queries']} queries, {c['pairs_scored']} pairs, "
        f"{c.get('pairs_unreachable', 0)} of them unreachable under the cut-off; {len(seeds)} seeds"
    )
    print(
        f"\n| system | {args.recall} | {args.ndcg} | per seed {args.recall} ratio [interval] | per seed {args.ndcg} ratio [interval] |"
    )
    print("|---|---|---|---|---|")
    names = [n for n in seeds[0]["systems"] if all(n in s["systems"] for s in seeds)]
    bm25 = [s["systems"]["bm25"]["metrics"] for s in seeds]
    for name in ["bm25"] + [n for n in names if n != "bm25"]:
        rows = [s["systems"][name] for s in seeds]
        cells = []
        for metric, ref in ((args.recall, [b[args.recall] for b in bm25]), (args.ndcg, [b[args.ndcg] for b in bm25])):
            values = [r["metrics"][metric] for r in rows]
            mean = statistics.fmean(values)
            sd = statistics.stdev(values) if len(values) > 1 else 0.0
            ratio = mean / statistics.fmean(ref)
            cells.append(f"{mean:.4f} ± {sd:.4f} ({ratio:.2f}×)" if name != "bm25" else f"{mean:.4f}")
        per_seed = []
        for metric_index in (0, 1):
            parts = []
            for r in rows:
                intervals = r.get("bootstrap_to_bm25") or []
                if name == "bm25" or len(intervals) <= metric_index:
                    parts.append("1")
                    continue
                i = intervals[metric_index]
                parts.append(f"{i['ratio']:.2f} [{i['low']:.2f}, {i['high']:.2f}]")
            per_seed.append(", ".join(parts))
        label = rows[0]["system"]
        print(f"| {name}: {label} | {cells[0]} | {cells[1]} | {per_seed[0]} | {per_seed[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
