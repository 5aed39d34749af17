"""What search filters cost: query time and hits returned at several filter selectivities.

Backs benchmarks/results/speed-search.md "Search filters". For the first ``--queries`` documents of an index,
an id query (dense unless ``--ranker``) runs unfiltered and under each filter: a date cut-off, an
IPC prefix (the index's most common subclass, and a rare one), both, and grouping by family. Each
row: the share of documents that pass (mean over queries), the mean number of hits returned (k
whenever k pass), and the query time p50 / p99 in ms (the mask is built once per filter and
cached; the first query of a filter pays it and is included).

    python benchmarks/bench_filters.py --index runs/demo/index --queries 100 -k 10
    python benchmarks/bench_filters.py --synthetic 1000000

``--synthetic N``: the filter data alone at index scale, N made-up documents (20 years of dates,
50 IPC groups, two-member families): the one-off build per index version, and the mask of a new
date cut-off (each id query has its own), an IPC prefix (cached after the first) and a kind.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import cpu_model  # noqa: E402

from graphtx.index import Index, SearchFilters  # noqa: E402


def synthetic(n: int) -> None:
    from graphtx.index.filters import FilterData

    rows = [
        {
            "date": f"{2000 + i % 20}-0{1 + i % 9}-1{i % 10}",
            "kind": "B2",
            "family_id": f"F{i // 2}",
            "ipc": (f"H01M {i % 50}/00",),
        }
        for i in range(n)
    ]
    ids = [f"US-{i}-B2" for i in range(n)]
    t0 = time.perf_counter()
    data = FilterData(ids, rows)
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}\n"
    )
    print(
        f"| {n:,} documents | passing | ms |\n|---|---:|---:|\n| build FilterData (once per index version) | | {(time.perf_counter() - t0) * 1000:.0f} |"
    )
    for name, f, cutoff in (
        ("date cut-off 2010-05-05 + family of one document out", SearchFilters(), "2010-05-05"),
        ("IPC prefix H01M 3 (first time; then cached)", SearchFilters(ipc=("H01M 3",)), None),
        ("kind B", SearchFilters(kind=("B",)), None),
    ):
        t0 = time.perf_counter()
        mask = data.mask(f, cutoff, data.family[5] if cutoff else None)
        print(f"| {name} | {int(mask.sum()):,} | {(time.perf_counter() - t0) * 1000:.1f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index")
    p.add_argument("--synthetic", type=int, metavar="N", help="time the filter data of N made-up documents instead")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--ranker", default="dense")
    args = p.parse_args()
    if args.synthetic:
        return synthetic(args.synthetic)
    if not args.index:
        p.error("give --index INDEX_DIR or --synthetic N")

    import faiss
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    index = Index.open(args.index)
    data = index.filter_data()
    subclasses = collections.Counter(c[:4] for codes in data.ipc for c in set(x[:4] for x in codes))
    common, rare = subclasses.most_common(1)[0][0], subclasses.most_common()[-1][0]
    dates = sorted(d for d in data.raw_dates if d)
    median_date = dates[len(dates) // 2][:10]
    filters = {
        "none (filters=None)": None,
        "defaults of an id query (before its priority date, family out)": SearchFilters(),
        f"IPC {common} (most common), no date": SearchFilters(ipc=(common,), before="none"),
        f"IPC {rare} (rarest), no date": SearchFilters(ipc=(rare,), before="none"),
        f"before {median_date} + IPC {common}": SearchFilters(before=median_date, ipc=(common,)),
        "group by family, no date": SearchFilters(group_by_family=True, before="none"),
    }
    queries = index.ids.doc_id[: args.queries]
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}, faiss {faiss.__version__}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}"
    )
    print(
        f"index {args.index}: {index.count} documents, {index.spec.index_type}; {len(queries)} id queries, k={args.k}, ranker {args.ranker}\n"
    )
    print("| filter | passing share | mean hits | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, f in filters.items():
        times, hits, shares = [], [], []
        for d in queries:
            t0 = time.perf_counter()
            result = index.search(doc_id=d, k=args.k, ranker=args.ranker, filters=f)
            times.append((time.perf_counter() - t0) * 1000)
            hits.append(len(result))
            shares.append(result.filters.get("passing", index.count) / index.count if f is not None else 1.0)
        print(
            f"| {name} | {np.mean(shares):.3f} | {np.mean(hits):.2f} | {np.percentile(times, 50):.2f} | {np.percentile(times, 99):.2f} |"
        )


if __name__ == "__main__":
    main()
