"""A distillation teacher scored as a retriever: is it worth distilling on this set?

    python benchmarks/teacher_alone.py CORPUS TEACHER_DIR CITATIONS.tsv --per-query teacher.csv
    python benchmarks/compare_runs.py --reference bm25=E/run.csv:bm25 teacher=teacher.csv untrained=E/untrained.csv

TEACHER_DIR is a `graphtx teacher` directory or a training run's ``teacher/`` (the vectors stage pretrain distils:
all-MiniLM-L6-v2 over title + abstract by default). Each citing document of CITATIONS is a query; its cosine to every
document of CORPUS ranks them under the cut-off of ``--cutoff`` (default ``priority``, the searcher's protocol, the
evaluation's own rule: graphtx/eval/cutoff.py). Reuses the vectors a run wrote, so a 42k-document teacher costs
seconds here instead of re-encoding it (`graphtx eval --baselines minilm` reads up to its own token cut, which may
differ). Prints the machine, the load and one row; ``--per-query`` writes the per-query CSV of `graphtx eval citations`
(columns system, query, relevant, hits@3, Recall@3, nDCG@150) that compare_runs.py pairs with the eval's.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
from pathlib import Path

import numpy as np

RECALL_K = 3
NDCG_K = 150
DEPTH = 1000


def load_vectors(teacher_dir: Path, ids: list[str]) -> np.ndarray:
    """(c, D) L2-normalised teacher vectors in ``ids`` order; a corpus document without one is an error."""
    from graphtx.text.teacher import load_teacher_vectors

    teacher = load_teacher_vectors(teacher_dir)
    row = {d: i for i, d in enumerate(teacher.doc_ids)}
    missing = [d for d in ids if d not in row]
    if missing:
        raise SystemExit(f"{teacher_dir}: {len(missing):,} corpus documents have no teacher vector (first: {missing[0]})")
    vectors = np.asarray(teacher.vectors[[row[d] for d in ids]], dtype=np.float32)  # (c, D)
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)


def judged(path: Path) -> dict[str, set[str]]:
    """citing_id -> cited ids, from a citations TSV with a header."""
    out: dict[str, set[str]] = {}
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            out.setdefault(r["citing_id"], set()).add(r["cited_id"])
    return out


def score_queries(vectors: np.ndarray, ids: list[str], cutoff, relevant: dict[str, set[str]]) -> list[dict]:
    """One row per query in the corpus: hits in the top RECALL_K and nDCG@NDCG_K (binary gains), cut-off applied."""
    from graphtx.eval.cutoff import apply_cutoff

    position = {d: i for i, d in enumerate(ids)}
    rows = []
    for query, cited in relevant.items():
        if query not in position:
            print(f"skipped query {query}: not in the corpus", file=sys.stderr)
            continue
        q = np.array([position[query]])
        scores = apply_cutoff((vectors[q] @ vectors.T).astype(np.float64), cutoff.mask(q))[0]  # (c,)
        if cutoff.mask(q) is None:
            scores[q[0]] = -np.inf
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        rank = {ids[j]: k + 1 for k, j in enumerate(order) if np.isfinite(scores[j])}
        ranks = [rank.get(c, DEPTH + 1) for c in cited]
        hits = sum(r <= RECALL_K for r in ranks)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(cited), NDCG_K)))
        ndcg = sum(1 / math.log2(r + 1) for r in ranks if r <= NDCG_K) / ideal
        rows.append({"query": query, "relevant": len(cited), "hits@3": hits, "Recall@3": hits / len(cited), "nDCG@150": ndcg})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="corpus directory (documents.parquet)")
    p.add_argument("teacher", type=Path, help="a `graphtx teacher` directory or a run's teacher/")
    p.add_argument("citations", type=Path, help="citations TSV (citing_id, cited_id)")
    p.add_argument("--cutoff", default="priority", choices=("none", "priority", "year"))
    p.add_argument("--per-query", type=Path, help="write the per-query CSV here")
    args = p.parse_args(argv)

    import pyarrow.parquet as pq
    from machine import basics

    from graphtx.corpus.codes import id_key
    from graphtx.eval.cutoff import CandidateCutoff

    docs = pq.read_table(args.corpus / "documents.parquet", columns=["id", "date", "priority_date", "family_id"]).to_pydict()
    ids = docs["id"]
    families = [f or id_key(d) for f, d in zip(docs["family_id"], ids)]  # as the evaluation keys them
    cutoff = CandidateCutoff.build(args.cutoff, docs["date"], [p or "" for p in docs["priority_date"]], families)
    vectors = load_vectors(args.teacher, ids)
    rows = score_queries(vectors, ids, cutoff, judged(args.citations))
    if not rows:
        raise SystemExit("no query of the citations is in the corpus")
    label = f"teacher {args.teacher} (cut-off {args.cutoff})"
    recall = sum(r["hits@3"] for r in rows) / sum(r["relevant"] for r in rows)
    ndcg = float(np.mean([r["nDCG@150"] for r in rows]))
    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n| system | queries | pairs | Recall@3 | nDCG@150 |\n|---|---|---|---|---|\n"
          f"| {label} | {len(rows)} | {sum(r['relevant'] for r in rows)} | {recall:.4f} | {ndcg:.4f} |")  # fmt: skip
    if args.per_query:
        with open(args.per_query, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["system", "query", "relevant", "hits@3", "Recall@3", "nDCG@150"])
            w.writeheader()
            w.writerows({"system": label, **r} for r in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
