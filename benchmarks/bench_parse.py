"""Parse speed and graph sizes on real US grants.

Backs the claims in benchmarks/results/speed-parse.md "Parse": grants/s per core for each graph kind,
node and edge counts per graph (median, p95), feature nodes without an edge, peak memory.

    python benchmarks/bench_parse.py --grants ../shared/data/uspto-grants [--limit N]

Each kind is timed alone (a builder that makes only that kind), on one process, so
grants/s is per core; "all three" is what `graphtx parse` does per document.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
from machine import cpu_model
from memory import peak_mib

from graphtx.config import IngestConfig, ParseConfig
from graphtx.corpus.ingest import ingest
from graphtx.corpus.store import iter_documents
from graphtx.graphs.builder import GraphBuilder
from graphtx.graphs.graph import GRAPH_KINDS


def machine() -> str:
    import spacy
    import torch

    cpu = cpu_model()
    return f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; spaCy {spacy.__version__}; torch {torch.__version__}"


def is_utility(doc) -> bool:
    """Design patents (US-D...) claim "the ornamental design for X": one sentence, two or three features."""
    return not doc.id.startswith("US-D")


def pct(values, q) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grants", required=True, help="folder of USPTO grant XML files")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N grants (0 = all)")
    ap.add_argument("--config", default=None, help="YAML config for parse settings")
    args = ap.parse_args()

    from graphtx.config import load_config

    base = load_config(args.config).parse if args.config else ParseConfig()
    with tempfile.TemporaryDirectory() as tmp:
        ingest([args.grants], tmp, IngestConfig(), progress=False)
        docs = list(iter_documents(tmp))
    docs = [d for d in docs if d.claims]
    if args.limit:
        docs = docs[: args.limit]
    print(f"machine: {machine()}")
    print(
        f"grants with claims: {len(docs)}; config: max_feature_nodes={base.max_feature_nodes}, "
        f"max_relation_nodes={base.max_relation_nodes}, max_description_chars={base.max_description_chars}"
    )
    print()
    builder = GraphBuilder(base)
    builder.build(docs[0])  # warm-up: first call allocates spaCy's buffers

    rows = []
    for kinds in [(k,) for k in GRAPH_KINDS] + [GRAPH_KINDS]:
        b = GraphBuilder(dataclasses.replace(base, kinds=kinds), nlp=builder.nlp, rules=builder.rules)
        start = time.perf_counter()
        graphs = [b.build(d) for d in docs]
        rate = len(docs) / (time.perf_counter() - start)
        if len(kinds) > 1:
            rows.append(["all three (what `graphtx parse` does)", f"all ({len(docs)})", f"{rate:.2f}"] + [""] * 9)
            continue
        for population, keep in (
            ("all", lambda d: True),
            ("utility", is_utility),
            ("design", lambda d: not is_utility(d)),
        ):
            gs = [g[kinds[0]] for d, g in zip(docs, graphs) if keep(d)]
            if not gs:
                continue
            feats = [len(g.feature_indices) for g in gs]
            rels = [g.num_nodes - len(g.feature_indices) for g in gs]
            edges = [g.num_edges for g in gs]
            rows.append(
                [kinds[0], f"{population} ({len(gs)})", f"{rate:.2f}" if population == "all" else ""]
                + [
                    f"{v:g}"
                    for v in (
                        statistics.median(feats),
                        pct(feats, 95),
                        statistics.median(rels),
                        pct(rels, 95),
                        statistics.median(edges),
                        pct(edges, 95),
                        sum(len(g.isolated_features()) for g in gs),
                        sum(g.meta["isolated_dropped"] for g in gs),
                        sum(g.truncated for g in gs),
                    )
                ]
            )
    peak_mb = peak_mib()
    print(
        "| graph kind | grants | grants/s per core | features median | p95 | relations median | p95 | edges median | p95 | features without edge | isolated dropped | truncated graphs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print(f"peak memory (max RSS): {peak_mb:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
