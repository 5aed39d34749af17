"""Parse throughput, --engine local against --engine ray, on the same documents of one machine.

    python benchmarks/bench_ray.py [--corpus graphtx/data/demo] [--limit 60] [--workers 2]

Ingests the corpus (the embedded demo grants by default), keeps its first ``--limit`` documents, and parses
them with the local engine at 1 and ``--workers`` processes and with the Ray engine at ``--workers`` actors
on a local Ray (started once; its start-up is timed apart). Documents/s include loading spaCy in every
worker or actor. Prints the machine and a table; needs the extra graphtx[ray].
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from machine import basics

from graphtx.config import IngestConfig, ParseConfig
from graphtx.corpus.ingest import ingest
from graphtx.corpus.store import CorpusWriter, iter_documents
from graphtx.graphs.parse import iter_graphs, parse_corpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="graphtx/data/demo", help="input `graphtx ingest` reads (default: the embedded demo grants)")
    ap.add_argument("--limit", type=int, default=60, help="documents parsed per run")
    ap.add_argument("--workers", type=int, default=2, help="processes / Ray actors")
    args = ap.parse_args()
    import ray

    print(f"machine: {basics()}; ray {ray.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ingest([args.corpus], root / "full", IngestConfig(), progress=False)
        with CorpusWriter(root / "corpus") as w:
            for i, doc in enumerate(iter_documents(root / "full")):
                if i == args.limit:
                    break
                w.add_document(doc, (), "-", str(i))
        rows, reference = [], None
        for engine, workers in (("local", 1), ("local", args.workers), ("ray", args.workers)):
            if engine == "ray":
                t0 = time.time()
                ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
                print(f"local Ray start-up: {time.time() - t0:.1f} s (not in the table)")
            out = root / f"{engine}{workers}"
            t0 = time.time()
            report = parse_corpus(root / "corpus", out, ParseConfig(workers=workers, chunk_size=4), progress=False, engine=engine)
            seconds = time.time() - t0
            graphs = list(iter_graphs(out))
            reference = reference or graphs
            rows.append((engine, workers, report.documents, seconds, report.documents / seconds, graphs == reference))
        ray.shutdown()
    print(f"\n{'engine':<7} {'workers':>7} {'docs':>5} {'seconds':>8} {'docs/s':>7}  same graphs as local/1")
    for engine, workers, docs, seconds, rate, same in rows:
        print(f"{engine:<7} {workers:>7} {docs:>5} {seconds:>8.1f} {rate:>7.2f}  {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
