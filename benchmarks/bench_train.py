"""Citation-supervised training on the EV-battery set, scored next to BM25 in the same run.

Backs the "Training" study, benchmarks/results/training.md: wall time of both stages on this
CPU, training throughput (graphs/s, triplets/s), and Recall@3 / nDCG@150 of the base and
reduced models on the validation citations over all 3,603 documents, with Okapi BM25
(bm25s defaults, stemmed, English stop words) on the same queries and candidates.

    python benchmarks/bench_train.py --data ../shared/data/citations-ev-battery --tokens TOKENS_DIR --out /tmp/ev-bench

Steps (each skipped when its output exists, so a killed benchmark resumes): ingest docs.jsonl,
parse it (small config), ``graphtx train`` (both stages), evaluation. ``--run RUN_DIR`` scores an
existing run instead of training. TOKENS_DIR comes from ``graphtx pretrain`` (see benchmarks/results/tokens-phrases.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import cpu_model
from memory import peak_mib

ROOT = Path(__file__).resolve().parents[1]


def machine() -> str:
    import torch

    cpu = cpu_model()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"machine: {cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; torch {torch.__version__}; "
        f"torch threads {torch.get_num_threads()}; load average (1 min) {load:.2f}"
    )


def run(cmd: list[str]) -> float:
    print("$", " ".join(cmd), flush=True)
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t


def stage_stats(stage_dir: Path) -> dict:
    log = (
        [json.loads(x) for x in (stage_dir / "log.jsonl").read_text().splitlines()]
        if (stage_dir / "log.jsonl").exists()
        else []
    )
    evals = (
        [json.loads(x) for x in (stage_dir / "evals.jsonl").read_text().splitlines()]
        if (stage_dir / "evals.jsonl").exists()
        else []
    )
    if not log:
        return {}
    step_s = sum(r["seconds"] for r in log)
    eval_s = sum(r["seconds"] for r in evals)
    return {
        "steps": len(log),
        "epochs": log[-1]["epoch"] + 1,
        "evals": len(evals),
        "train_s": step_s,
        "eval_s": eval_s,
        "graphs_per_s": sum(r["graphs"] for r in log) / step_s,
        "triplets_per_s": sum(r["pairs"] for r in log) / step_s,
        "median_pairs_per_batch": statistics.median(r["pairs"] for r in log),
        "median_nodes_per_batch": statistics.median(r["nodes"] for r in log),
        "start": next((r for r in evals if r.get("reference")), None),
        "best": max((r for r in evals if not r.get("reference")), key=lambda r: r["recall"], default=None),
    }


def _pair(record: dict | None) -> str:
    return f"{record['recall']:.4f} / {record['ndcg']:.4f}" if record else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--data",
        required=True,
        help="citations-ev-battery folder (docs.jsonl, citations_train.tsv, citations_validation.tsv)",
    )
    ap.add_argument("--tokens", help="tokens directory of graphtx pretrain (needed unless --run)")
    ap.add_argument("--out", required=True, help="work directory (corpus, graphs, run)")
    ap.add_argument("--config", default=str(ROOT / "configs" / "small.yaml"))
    ap.add_argument("--run", help="score this finished run directory instead of training one")
    ap.add_argument("--max-epochs", type=int, default=10)
    ap.add_argument(
        "--stages",
        default="base",
        help="stages to train (default base: the citation stage these figures are of; "
        "small.yaml's own pretrain,base adds its teacher's distillation)",
    )
    args = ap.parse_args()

    import torch

    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gx = [sys.executable, "-m", "graphtx.cli"]
    timings = {}
    if not (out / "corpus" / "documents.parquet").exists():
        timings["ingest"] = run(gx + ["ingest", str(data / "docs.jsonl"), "--out", str(out / "corpus"), "--quiet"])
    if not (out / "graphs" / "graphs.parquet").exists():
        timings["parse"] = run(
            gx
            + [
                "parse",
                str(out / "corpus"),
                "--out",
                str(out / "graphs"),
                "--config",
                args.config,
                "--cache",
                "",
                "--quiet",
            ]
        )
    run_dir = Path(args.run) if args.run else out / "run"
    if not args.run:
        if not args.tokens:
            ap.error("--tokens is needed to train (or give --run)")
        timings["train"] = run(
            gx
            + [
                "train",
                "--config",
                args.config,
                "--corpus",
                str(out / "corpus"),
                "--graphs",
                str(out / "graphs"),
                "--tokens",
                args.tokens,
                "--citations",
                str(data / "citations_train.tsv"),
                "--valid-citations",
                str(data / "citations_validation.tsv"),
                "--out",
                str(run_dir),
                "--max-epochs",
                str(args.max_epochs),
                "--stages",
                args.stages,
                "--quiet",
            ]
        )

    from graphtx.config import load_config
    from graphtx.eval.baselines import BM25System
    from graphtx.eval.fusion import FusionSystem
    from graphtx.eval.run import evaluate_citations
    from graphtx.eval.systems import ModelSystem

    config = load_config(args.config)
    cfg = config.eval
    base = ModelSystem(
        run_dir / "base" / "best", out / "graphs", cfg.query_kind, cfg.candidate_kind, 128, label="graphtx base (small)"
    )
    reduced = ModelSystem(
        run_dir / "reduced" / "best",
        out / "graphs",
        cfg.query_kind,
        cfg.candidate_kind,
        128,
        label="graphtx reduced (small, MoE)",
    )
    bm25 = BM25System.from_config(cfg)
    hybrid = FusionSystem.from_config([reduced, bm25], cfg, label="graphtx reduced + BM25 (RRF)")
    systems = [base, reduced, hybrid, bm25]
    report = evaluate_citations(
        out / "corpus",
        data / "citations_validation.tsv",
        systems,
        cfg,
        protocols=("retrieval",),
        seed=config.seed,
        progress=False,
    )

    print(machine())
    summary = json.loads((run_dir / "summary.json").read_text())
    d = summary["data"]
    print(
        f"training data: {d['citation_pairs']} citation pairs + {d['trivial_pairs']} trivial pairs, {d['groups']} batch groups ({d['group_by']}); "
        f"selection {d['selection']['queries']} queries / {d['selection']['pairs']} pairs over {d['candidates']} candidates "
        f"({d['selection']['rule']})"
    )
    if timings:
        print("wall time: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    print()
    print(
        "| stage | steps | epochs | evaluations | training s | evaluation s | graphs/s | pairs/s | pairs/batch (median) | nodes/batch (median) | stopped | selection R@3 / nDCG@150 at start | best (step) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for stage in ("base", "reduced"):
        s = stage_stats(run_dir / stage)
        if s:
            print(
                f"| {stage} | {s['steps']} | {s['epochs']} | {s['evals']} | {s['train_s']:.0f} | {s['eval_s']:.0f} | {s['graphs_per_s']:.1f} | "
                f"{s['triplets_per_s']:.1f} | {s['median_pairs_per_batch']:.0f} | {s['median_nodes_per_batch']:.0f} | {summary['stages'][stage]['stopped']} | "
                f"{_pair(s['start'])} | {_pair(s['best'])} ({s['best']['step'] if s['best'] else '-'}) |"
            )
    print()
    results = report.retrieval
    bm25 = next(r for r in results if r.name == "bm25")
    print(
        f"| system (EV-battery validation, {bm25.queries} queries, {bm25.pairs} pairs, {bm25.candidates} candidates) | Recall@3 | nDCG@150 | MAP | ratio R@3 / BM25 | ratio nDCG / BM25 |"
    )
    print("|---|---|---|---|---|---|")
    for r in results:
        m = r.metrics
        r3, nd = m["Recall@3"], m["nDCG@150"]
        print(
            f"| {r.system} | {r3:.4f} | {nd:.4f} | {m.get('MAP', float('nan')):.4f} | {r3 / bm25.metrics['Recall@3']:.2f} | {nd / bm25.metrics['nDCG@150']:.2f} |"
        )
    print(f"\npeak RSS of this process: {peak_mib():.0f} MiB; torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
