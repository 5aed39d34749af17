"""Search speed, memory and recall of the FAISS index types, and end-to-end query time from claim text.

Backs benchmarks/results/speed-search.md "Search":

1. **Index types** (``--dims``, ``--sizes``, ``--types``): for flat (exact inner product), IVF-PQ
   and HNSW, built with graphtx's own code path (``graphtx.index.faiss_index``: the parameters
   ``resolve_spec`` picks from ``IndexConfig``), on n synthetic L2-normalised vectors: build time
   (IVF-PQ: training + adding), bytes per document (FAISS file size / n), resident memory of the
   loaded index (RSS growth when the file is read without mmap), single-query latency p50 / p99
   (k = 10, one query at a time, as the service answers), and recall@10 of each approximate
   index against the flat index's top 10 (same queries).
2. **End to end** (``--e2e-index``, ``--e2e-corpus``): claim text → first-claim graph (spaCy +
   rules) → vector (the index's model) → FAISS search, through ``Index.search``; p50 / p99 of
   each step over the first claims of the corpus's first ``--e2e-queries`` documents (the first
   query, which loads spaCy, is reported apart). Hybrid (dense + BM25, RRF) too.

Synthetic vectors: a mixture of 1,000 Gaussian clusters (centres N(0, I), spread 0.5 per
coordinate), L2-normalised, seeded; queries are fresh draws from the same mixture. Pure
uniform noise would make every approximate index look worse than on model vectors (no
neighbourhood structure), a single cluster better; a mixture sits between. Each (dim, n) runs
in its own subprocess so memory readings are its own. FAISS and torch use the threads
OMP_NUM_THREADS allows (the runs in results/speed-search.md: 1).

    python benchmarks/bench_search.py --dims 150 --sizes 10000 100000 1000000
    python benchmarks/bench_search.py --dims 2048 --sizes 10000 100000 --train-size 20000
    python benchmarks/bench_search.py --e2e-index INDEX_DIR --e2e-corpus CORPUS_DIR --e2e-queries 100
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import cpu_model

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))


# --- machine and helpers -------------------------------------------------------------


def machine() -> str:
    import faiss
    import torch

    cpu = cpu_model()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{cpu}; {os.cpu_count()} cores; {mem:.0f} GiB RAM; Python {platform.python_version()}; faiss {faiss.__version__} "
        f"({faiss.get_num_gpus()} GPUs); torch {torch.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
        f"load average (1 min) at the start {os.getloadavg()[0]:.2f}"
    )


def mixture(n: int, dim: int, seed: int, clusters: int = 1000, chunk: int = 100_000) -> np.ndarray:
    """(n, dim) float32, L2-normalised draws from a seeded mixture of Gaussians (fixed centres for a dim)."""
    centres = np.random.default_rng(dim).normal(size=(clusters, dim)).astype(np.float32)
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), np.float32)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        x = centres[rng.integers(0, clusters, b - a)] + 0.5 * rng.standard_normal((b - a, dim), dtype=np.float32)
        out[a:b] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def resident_mib(path: Path) -> float:
    """RSS growth of a fresh process reading the FAISS file without mmap: what a server holds for the index."""
    code = (
        "import faiss\n"
        "def rss():\n    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 1024\n"
        f"r0 = rss(); index = faiss.read_index({str(path)!r}); print(rss() - r0)"
    )
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    )


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


# --- one (dim, n) in a subprocess ------------------------------------------------------------


def run_one(
    dim: int,
    n: int,
    types: list[str],
    queries: int,
    k: int,
    train_size: int,
    hnsw_m: int,
    ef_construction: int,
    ef_searches: list[int],
    nprobes: list[int],
    pq_m: int,
) -> list[dict]:
    import faiss

    from graphtx.config import IndexConfig
    from graphtx.index import faiss_index

    t0 = time.perf_counter()
    x = mixture(n, dim, seed=1)
    q = mixture(queries, dim, seed=2)
    gen_s = time.perf_counter() - t0
    ids = np.arange(n, dtype=np.int64)
    rows, truth = [], None
    for name in ["flat", *[t for t in types if t != "flat"]]:
        index_type, _, refine = name.partition("+")  # "ivfpq+SQ8": IVF-PQ re-ranked with 8-bit codes
        cfg = IndexConfig(
            index_type=index_type,
            train_size=train_size,
            hnsw_m=hnsw_m,
            hnsw_ef_construction=ef_construction,
            hnsw_ef_search=ef_searches[0],
            ivf_nprobe=nprobes[0],
            pq_m=pq_m,
            ivf_refine=refine,
            use_gpu="never",
        )
        spec = faiss_index.resolve_spec(cfg, dim, n)
        t0 = time.perf_counter()
        sample = (
            x[np.random.default_rng(0).choice(n, size=min(n, train_size), replace=False)]
            if spec.needs_training
            else x[:0]
        )
        template = faiss_index.train(spec, sample, seed=0, use_gpu="never")
        train_s = time.perf_counter() - t0
        index = faiss_index.fill(template, x, ids, spec)
        build_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
            path = Path(tmp) / "index.faiss"
            faiss_index.write(index, path)
            size = path.stat().st_size
            del index, template
            memory = resident_mib(path)
            loaded = faiss_index.read(path, spec, mmap=False)
            variants = [spec]  # search-time parameters: one index, several nprobe / efSearch values
            if spec.index_type == "ivfpq":
                variants = [dataclasses.replace(spec, nprobe=min(v, spec.nlist)) for v in nprobes]
            elif spec.index_type == "hnsw":
                variants = [dataclasses.replace(spec, ef_search=v) for v in ef_searches]
            for variant in variants:
                latencies, found = [], []
                for i in range(queries):
                    t1 = time.perf_counter()
                    _, got = faiss_index.search_shards([loaded], q[i : i + 1], k, variant)
                    latencies.append((time.perf_counter() - t1) * 1000)
                    found.append(got[0])
                found = np.array(found)
                if name == "flat":
                    truth = found
                if name in types:
                    p50, p99 = percentiles(latencies)
                    recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(truth, found)]))
                    rows.append(
                        {
                            "dim": dim,
                            "n": n,
                            "type": name,
                            "factory": variant.factory,
                            "params": _params(variant),
                            "build_s": round(build_s, 2),
                            "train_s": round(train_s, 2),
                            "bytes_per_doc": round(size / n, 1),
                            "memory_mib": round(memory, 1),
                            "p50_ms": round(p50, 3),
                            "p99_ms": round(p99, 3),
                            "recall": round(recall, 4),
                            "generate_s": round(gen_s, 1),
                            "threads": faiss.omp_get_max_threads(),
                        }
                    )
            del loaded
    return rows


def _params(spec) -> str:
    if spec.index_type == "ivfpq":
        refine = f", re-rank {spec.k_factor}k by {spec.refine}" if spec.refine else ""
        return f"nlist {spec.nlist}, nprobe {spec.nprobe}, m {spec.pq_m}, {spec.pq_nbits} bits{refine}"
    if spec.index_type == "hnsw":
        return f"M {spec.hnsw_m}, efC {spec.ef_construction}, efS {spec.ef_search}"
    return "exact"


# --- end to end ---------------------------------------------------------------------------------


def run_e2e(index_dir: str, corpus_dir: str, n: int, k: int, rerank_depths: tuple[int, ...] = (100,)) -> dict:
    import torch

    from graphtx.corpus.store import iter_documents
    from graphtx.index.search import Index

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    claims = []
    for doc in iter_documents(corpus_dir):
        text = doc.first_claim or doc.abstract
        if text.strip():
            claims.append(text)
        if len(claims) == n + 1:
            break
    t0 = time.perf_counter()
    index = Index.open(index_dir)
    open_ms = (time.perf_counter() - t0) * 1000
    first = index.search(claims[0], k).timings_ms
    steps: dict[str, list[float]] = {}
    for text in claims[1:]:
        for name, ms in index.search(text, k).timings_ms.items():
            steps.setdefault(name, []).append(ms)
    index.search(claims[0], k, hybrid=True)  # BM25 loaded outside the timing
    hybrid = [index.search(text, k, hybrid=True).timings_ms["total"] for text in claims[1:]]
    late = {}
    if index.has_late:  # + late-interaction re-ranking of the dense (and hybrid) top N
        for depth in rerank_depths:
            for hyb in (False, True):
                runs = [
                    index.search(text, k, hybrid=hyb, rerank="late", rerank_depth=depth).timings_ms
                    for text in claims[1:]
                ]
                name = f"{'hybrid' if hyb else 'dense'} + late re-rank (top {depth})"
                late[name] = {
                    "late": [round(v, 2) for v in percentiles([t["late"] for t in runs])],
                    "total": [round(v, 2) for v in percentiles([t["total"] for t in runs])],
                }
    return {
        "late": late,
        "late_storage": index.manifest.get("late"),
        "index": index_dir,
        "documents": index.count,
        "dim": index.dim,
        "type": index.spec.index_type,
        "queries": len(claims) - 1,
        "open_ms": round(open_ms, 1),
        "first_query": first,
        "steps": {name: [round(v, 2) for v in percentiles(ms)] for name, ms in steps.items()},
        "hybrid_total": [round(v, 2) for v in percentiles(hybrid)],
        "mean_query_chars": round(float(np.mean([len(c) for c in claims[1:]])), 0),
    }


# --- entry point --------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", type=int, nargs="*", default=[])
    ap.add_argument("--sizes", type=int, nargs="*", default=[])
    ap.add_argument(
        "--types",
        nargs="+",
        default=["flat", "ivfpq", "hnsw"],
        help="flat, ivfpq, ivfpq+SQ8 (re-ranked: +SQ8, +SQfp16, +Flat), hnsw",
    )
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--train-size", type=int, default=100_000, help="IVF-PQ training sample (index.train_size)")
    ap.add_argument("--hnsw-m", type=int, default=32)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--ef-search", type=int, nargs="+", default=[128], help="HNSW efSearch values to measure")
    ap.add_argument("--nprobe", type=int, nargs="+", default=[16], help="IVF-PQ nprobe values to measure")
    ap.add_argument(
        "--pq-m", type=int, default=0, help="PQ sub-quantizers (0: index.pq_m's rule, a divisor near dim / 4)"
    )
    ap.add_argument("--e2e-index", help="index directory for the end-to-end measurement")
    ap.add_argument("--e2e-corpus", help="corpus directory whose first claims are the queries")
    ap.add_argument("--e2e-queries", type=int, default=50)
    ap.add_argument(
        "--e2e-rerank-depth",
        type=int,
        nargs="+",
        default=[100],
        help="an index with late-interaction node vectors: re-rank depths to time",
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: "dim,n" run in this process, JSON out
    args = ap.parse_args()
    opts = dict(
        types=args.types,
        queries=args.queries,
        k=args.k,
        train_size=args.train_size,
        hnsw_m=args.hnsw_m,
        ef_construction=args.ef_construction,
        ef_searches=args.ef_search,
        nprobes=args.nprobe,
        pq_m=args.pq_m,
    )
    if args.one:
        dim, n = map(int, args.one.split(","))
        print(json.dumps(run_one(dim, n, **opts)))
        return

    print(f"machine: {machine()}\n")
    rows = []
    for dim in args.dims:
        for n in args.sizes:
            cmd = [
                sys.executable,
                __file__,
                "--one",
                f"{dim},{n}",
                "--types",
                *args.types,
                "--queries",
                str(args.queries),
                "-k",
                str(args.k),
                "--train-size",
                str(args.train_size),
                "--hnsw-m",
                str(args.hnsw_m),
                "--ef-construction",
                str(args.ef_construction),
                "--ef-search",
                *map(str, args.ef_search),
                "--nprobe",
                *map(str, args.nprobe),
                "--pq-m",
                str(args.pq_m),
            ]
            t0 = time.time()
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode:
                print(f"dim {dim}, n {n}: failed\n{out.stderr[-3000:]}", file=sys.stderr)
                continue
            rows += json.loads(out.stdout.strip().splitlines()[-1])
            print(f"[dim {dim}, n {n:,}: {time.time() - t0:.0f} s]", file=sys.stderr)
    if rows:
        print(
            f"k = {args.k}; {args.queries} single queries; recall@{args.k} against flat; memory = RSS growth of a fresh process loading the file (no mmap)\n"
        )
        print("| dim | vectors | type | parameters | build s | bytes/doc | memory MiB | p50 ms | p99 ms | recall@10 |")
        print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            build = f"{r['build_s']}" + (f" (train {r['train_s']})" if r["type"].startswith("ivfpq") else "")
            print(
                f"| {r['dim']} | {r['n']:,} | {r['type']} | {r['params']} | {build} | {r['bytes_per_doc']:,} | {r['memory_mib']:,} | "
                f"{r['p50_ms']} | {r['p99_ms']} | {r['recall']:.3f} |"
            )
        print()
    if args.e2e_index:
        if not args.e2e_corpus:
            ap.error("--e2e-index needs --e2e-corpus")
        e = run_e2e(args.e2e_index, args.e2e_corpus, args.e2e_queries, args.k, tuple(args.e2e_rerank_depth))
        print(
            f"end to end: {e['queries']} first claims (mean {e['mean_query_chars']:.0f} characters) of {args.e2e_corpus} against "
            f"{e['documents']} documents ({e['dim']}-d, {e['type']}); index opened in {e['open_ms']} ms; "
            f"first query (loads spaCy) {e['first_query']['total']:.0f} ms\n"
        )
        print("| step | p50 ms | p99 ms |")
        print("|---|---:|---:|")
        for name, (p50, p99) in e["steps"].items():
            print(f"| {name} | {p50} | {p99} |")
        print(f"| total, hybrid (+ BM25, RRF) | {e['hybrid_total'][0]} | {e['hybrid_total'][1]} |")
        if e["late"]:
            st = e["late_storage"]
            print(
                f"\nlate-interaction node vectors: {st['storage']}, {st['dim']}-d, {st['mean_nodes_per_doc']} nodes a document, "
                f"{st['bytes_per_doc']} bytes a document = {st['gb_per_million_docs']} GB per 1M documents\n"
            )
            print("| search | late re-rank p50 ms | p99 ms | total p50 ms | p99 ms |")
            print("|---|---:|---:|---:|---:|")
            for name, r in e["late"].items():
                print(f"| {name} | {r['late'][0]} | {r['late'][1]} | {r['total'][0]} | {r['total'][1]} |")


if __name__ == "__main__":
    main()
