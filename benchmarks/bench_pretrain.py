"""Graph pre-training (stage pretrain) on the EV-battery citations: zero-shot, fine-tuned, from scratch.

Backs the "Graph pre-training" study, benchmarks/results/graph-pretraining.md. Steps (each skipped when its output
exists, so a killed benchmark resumes):

1. ``graphtx train --config configs/pretrain-graph.yaml --stages pretrain`` on the EV graphs plus
   ``--pretrain-graphs`` (no citations; the validation citations select the best step);
2. per seed, citation fine-tuning from it: ``graphtx train --config configs/small.yaml --init
   PRE/model --stages base`` (the from-scratch rows: ``--scratch RUN ...``, runs of the same
   command with ``--tokens`` instead of ``--init``, or trained here with ``--train-scratch``);
3. ``graphtx eval citations ... --baselines bm25 --hybrid`` for every model: Recall@3, nDCG@150 and
   the paired-bootstrap interval of their ratio to BM25, dense alone and fused with BM25 (RRF).

    OMP_NUM_THREADS=1 python benchmarks/bench_pretrain.py --data ../shared/data/citations-ev-battery \\
        --corpus EV/corpus --graphs EV/graphs --tokens EV/tokens --pretrain-graphs FT/graphs AB/graphs \\
        --scratch EV/runs/base-s0 EV/runs/base-s1 --seeds 0 1 --out /tmp/pre-bench

Prints the machine and one table: per row the mean over seeds (and min–max), the ratios to BM25
with their 95% intervals (one interval per seed).
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

ROOT = Path(__file__).resolve().parents[1]


def machine() -> str:
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"machine: {cpu_model()}; {os.cpu_count()} cores; Python {platform.python_version()}; torch {torch.__version__}; "
        f"OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS', 'unset')}; load average (1 min) {load:.2f}"
    )


def run(cmd: list[str]) -> float:
    print("$", " ".join(cmd), flush=True)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    return time.perf_counter() - t


def gx() -> list[str]:
    return [sys.executable, "-m", "graphtx"]


def train_args(a, out: Path) -> list[str]:
    return [
        "train",
        "--corpus",
        a.corpus,
        "--graphs",
        a.graphs,
        "--citations",
        str(Path(a.data) / "citations_train.tsv"),
        "--valid-citations",
        str(Path(a.data) / "citations_validation.tsv"),
        "--out",
        str(out),
        "--quiet",
    ]


def evaluate(a, model: Path, name: str, out: Path) -> dict:
    if not (out / "results.json").exists():
        run(
            gx()
            + [
                "eval",
                "citations",
                a.corpus,
                "--citations",
                str(Path(a.data) / "citations_validation.tsv"),
                "--baselines",
                "bm25",
                "--model",
                str(model),
                "--graphs",
                a.graphs,
                "--name",
                name,
                "--hybrid",
                "--out",
                str(out),
                "--quiet",
            ]
        )
    results = json.loads((out / "results.json").read_text())
    rows = {}
    for r in results["retrieval"]:
        kind = "bm25" if r["name"] == "bm25" else ("hybrid" if "(RRF)" in r["system"] else "dense")
        ci = {i["metric"]: i for i in r.get("bootstrap_to_bm25", [])}
        rows[kind] = {"recall": r["metrics"]["Recall@3"], "ndcg": r["metrics"]["nDCG@150"], "ci": ci}
    return rows


def fmt_ci(ci: dict, metric: str) -> str:
    i = ci.get(metric)
    return f"{i['ratio']:.2f}x [{i['low']:.2f}, {i['high']:.2f}]" if i else "-"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--data", required=True, help="citations-ev-battery folder (citations_train.tsv, citations_validation.tsv)"
    )
    p.add_argument("--corpus", required=True, help="EV corpus directory (graphtx ingest of docs.jsonl)")
    p.add_argument("--graphs", required=True, help="EV graphs directory (graphtx parse, small config)")
    p.add_argument("--tokens", required=True, help="tokens directory (graphtx pretrain, small config)")
    p.add_argument("--pretrain-graphs", nargs="*", default=[], help="more graphs directories for stage pretrain")
    p.add_argument("--config", default="configs/pretrain-graph.yaml", help="config of the pretrain run")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument(
        "--finetune-epochs",
        type=int,
        help="cap the fine-tuning (and --train-scratch) runs at this many epochs (default: configs/small.yaml, early stop)",
    )
    p.add_argument(
        "--scratch",
        nargs="*",
        default=[],
        help="from-scratch run directories (configs/small.yaml, --stages base), one per seed",
    )
    p.add_argument(
        "--train-scratch",
        action="store_true",
        help="train the from-scratch runs here (OUT/scratch-sN) when --scratch is not given",
    )
    p.add_argument("--out", required=True)
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    print(machine(), flush=True)

    pre = out / "pretrain"
    seconds = {}
    if not (pre / "summary.json").exists():
        extra = ["--pretrain-graphs", *a.pretrain_graphs] if a.pretrain_graphs else []
        seconds["pretrain"] = run(
            gx() + train_args(a, pre) + ["--config", a.config, "--tokens", a.tokens, "--stages", "pretrain", *extra]
        )
    cap = ["--max-epochs", str(a.finetune_epochs)] if a.finetune_epochs else []
    fine = []
    for s in a.seeds:
        run_dir = out / f"finetune-s{s}"
        if not (run_dir / "summary.json").exists():
            seconds[f"finetune-s{s}"] = run(
                gx()
                + train_args(a, run_dir)
                + [
                    "--config",
                    "configs/small.yaml",
                    "--init",
                    str(pre / "model"),
                    "--stages",
                    "base",
                    "--seed",
                    str(s),
                    *cap,
                ]
            )
        fine.append(run_dir)
    scratch = [Path(x) for x in a.scratch]
    if not scratch and a.train_scratch:
        for s in a.seeds:
            run_dir = out / f"scratch-s{s}"
            if not (run_dir / "summary.json").exists():
                seconds[f"scratch-s{s}"] = run(
                    gx()
                    + train_args(a, run_dir)
                    + [
                        "--config",
                        "configs/small.yaml",
                        "--tokens",
                        a.tokens,
                        "--stages",
                        "base",
                        "--seed",
                        str(s),
                        *cap,
                    ]
                )
            scratch.append(run_dir)

    systems = {
        "pretrained, no fine-tuning (zero-shot)": [
            evaluate(a, pre / "model", "graphtx pretrained zero-shot", out / "eval-zeroshot")
        ]
    }
    systems["pretrained + citation fine-tuning"] = [
        evaluate(a, r / "model", f"graphtx pretrained, fine-tuned {r.name}", out / f"eval-{r.name}") for r in fine
    ]
    if scratch:
        systems["from scratch (citation training only)"] = [
            evaluate(a, r / "model", f"graphtx scratch {r.name}", out / f"eval-scratch-{r.name}") for r in scratch
        ]

    bm25 = next(iter(systems.values()))[0]["bm25"]
    print(
        f"\nEV-battery validation (257 queries, 661 pairs, 3,602 candidates); BM25 Recall@3 {bm25['recall']:.4f}, nDCG@150 {bm25['ndcg']:.4f}\n"
    )
    print(
        "| model | ranker | seeds | Recall@3 mean (min-max) | nDCG@150 mean (min-max) | Recall@3 / BM25, 95% CI per seed | nDCG@150 / BM25, 95% CI per seed |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, runs in systems.items():
        for kind in ("dense", "hybrid"):
            rows = [r[kind] for r in runs if kind in r]
            if not rows:
                continue
            rec, nd = [x["recall"] for x in rows], [x["ndcg"] for x in rows]
            print(
                f"| {label} | {'dense alone' if kind == 'dense' else '+ BM25 (RRF)'} | {len(rows)} | {statistics.mean(rec):.4f} ({min(rec):.4f}-{max(rec):.4f}) | "
                f"{statistics.mean(nd):.4f} ({min(nd):.4f}-{max(nd):.4f}) | {'; '.join(fmt_ci(x['ci'], 'Recall@3') for x in rows)} | "
                f"{'; '.join(fmt_ci(x['ci'], 'nDCG@150') for x in rows)} |"
            )
    if seconds:
        print("\nwall time (s): " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()))
    if (pre / "pretrain" / "log.jsonl").exists():
        log = [json.loads(x) for x in (pre / "pretrain" / "log.jsonl").read_text().splitlines()]
        print(
            f"pretrain: {len(log)} steps, {sum(r['seconds'] for r in log):.0f} s training, {statistics.median(r['graphs'] for r in log):.0f} graphs "
            f"and {statistics.median(r['nodes'] for r in log):.0f} nodes per step (median)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
