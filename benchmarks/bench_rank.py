"""Query latency of the rankers: dense, BM25, RRF hybrid, convex and learned, through ``Index.search``.

Backs the ranker latency tables of benchmarks/results/lexical-channel-rankers.md (the latest in
benchmarks/RESULTS.md, Speed). Queries are the texts of ``--queries`` documents of the index's corpus
(claim text or abstract: each is parsed into a graph, encoded, searched), the same for every ranker, one
at a time as the service answers them, k = 10. The first query of a ranker (which loads spaCy, builds the
ranker's caches) is reported apart. p50 / p99 of the whole search and of its ranking step (``timings_ms``: search + bm25 + rank) per ranker.

    python benchmarks/bench_rank.py --index INDEX_DIR --corpus CORPUS_DIR --queries 200
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from machine import basics  # noqa: E402


def machine() -> str:
    import faiss
    import torch

    try:
        import lightgbm

        lgb = lightgbm.__version__
    except ImportError:
        lgb = "absent"
    return (
        f"{basics()}; faiss {faiss.__version__}; torch {torch.__version__}; lightgbm {lgb}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; load average (1 min) at the start {os.getloadavg()[0]:.2f}"
    )


def query_texts(corpus: str, n: int) -> list[str]:
    from graphtx.corpus.store import iter_documents

    out = []
    for doc in iter_documents(corpus):
        text = doc.first_claim or doc.abstract
        if text.strip():
            out.append(text)
        if len(out) == n:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--corpus", required=True, help="corpus directory whose documents' texts are the queries")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rankers", default="dense,bm25,hybrid,convex,learned")
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()

    from graphtx.index.search import Index

    print(machine())
    index = Index.open(args.index)
    texts = query_texts(args.corpus, args.queries)
    print(
        f"index {args.index}: {index.count} documents; {len(texts)} queries; ranker pool depth {index.ranker.depth if index.ranker else '-'}\n"
    )
    print(
        "| ranker | first query (ms) | total p50 (ms) | total p99 (ms) | ranking step p50 (ms) | ranking step p99 (ms) |"
    )
    print("|---|---|---|---|---|---|")
    for kind in args.rankers.split(","):
        t0 = time.perf_counter()
        index.search(texts[0], k=args.k, ranker=kind)
        first = (time.perf_counter() - t0) * 1000
        total, step = [], []
        for text in texts[1:]:
            t0 = time.perf_counter()
            result = index.search(text, k=args.k, ranker=kind)
            total.append((time.perf_counter() - t0) * 1000)
            t = result.timings_ms
            step.append(sum(t.get(name, 0.0) for name in ("search", "bm25", "rank")))
        p = lambda xs, q: float(np.percentile(xs, q))  # noqa: E731
        print(
            f"| {kind} | {first:.0f} | {p(total, 50):.1f} | {p(total, 99):.1f} | {p(step, 50):.2f} | {p(step, 99):.2f} |"
        )


if __name__ == "__main__":
    main()
