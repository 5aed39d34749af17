"""The label-free distillation's step on this machine: fp32 against bf16 autocast, optionally an older checkout and
the batches built ahead by N processes (``--batch-workers N``).

Each variant is its own ``graphtx adapt --steps N --seed 0`` process over the same prepared corpus (the same seed: the
same batches), the variants interleaved for ``--rounds`` rounds so a drifting load falls on all of them; the median
seconds a step after step 20 comes from each run's ``pretrain/log.jsonl``. ``--older CHECKOUT`` adds that checkout's
code (a ``git worktree add DIR COMMIT``), run with its own default config.

    # 4,000 of the software abstracts, as benchmarks/RESULTS.md (Speed) timed them
    python benchmarks/studies/subset_corpus.py W/ftabs/abstracts.parquet W/ft/mined/citations_all.tsv --size 4000 \\
        --seed 0 --out P/sub4k.parquet
    graphtx ingest P/sub4k.parquet --out P/corpus && graphtx parse P/corpus --out P/graphs --config configs/small.yaml
    graphtx pretrain P/corpus --out P/tokens --config configs/small.yaml && graphtx teacher P/corpus --peer mpnet --out P/teacher
    python benchmarks/bench_adapt_step.py --prepared P --steps 200 --rounds 2 --older /tmp/gx-old
    python benchmarks/bench_adapt_step.py --prepared P --steps 200 --rounds 2 --no-fp32 --batch-workers 1

Prints the machine, the load at each run's start and end, and a table of median seconds a step by round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import basics

REPO = Path(__file__).resolve().parents[1]


def load() -> float:
    return os.getloadavg()[0]


def median_step(run: Path) -> float:
    log = run / "pretrain" / "log.jsonl"
    seconds = [json.loads(line)["seconds"] for line in log.read_text().splitlines() if '"seconds"' in line]
    return statistics.median(seconds[20:]) if len(seconds) > 20 else float("nan")


def adapt(checkout: Path, prepared: Path, config: Path, steps: int, out: Path) -> None:
    p = prepared
    cmd = [sys.executable, "-m", "graphtx", "adapt", "--corpus", str(p / "corpus"), "--graphs", str(p / "graphs")]
    cmd += ["--tokens", str(p / "tokens"), "--teacher", str(p / "teacher"), "--out", str(out)]
    cmd += ["--steps", str(steps), "--seed", "0", "--config", str(config), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(checkout)}  # that checkout's graphtx, not the installed one
    subprocess.run(cmd, cwd=checkout, env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepared", type=Path, required=True, help="a folder with corpus/, graphs/, tokens/, teacher/")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--older", type=Path, help="an older checkout of graphtx to time beside this one")
    ap.add_argument(
        "--batch-workers",
        type=int,
        default=0,
        help="add this code's default with N processes building the batches ahead",
    )
    ap.add_argument("--no-fp32", action="store_true", help="leave out the fp32 row")
    args = ap.parse_args()
    print("machine:", basics(), "; load average (1 min)", f"{load():.2f}")
    fp32 = REPO / "benchmarks" / "regressions" / "transfer" / "fp32.yaml"  # configs/small.yaml, train.amp off
    with tempfile.TemporaryDirectory() as tmp:
        variants = [] if args.no_fp32 else [("this code, fp32 (train.amp: false)", REPO, fp32)]
        variants.append(("this code, its default (bf16 where the CPU has it)", REPO, REPO / "configs" / "small.yaml"))
        if args.batch_workers:
            ahead = (
                Path(tmp) / "workers.yaml"
            )  # configs/small.yaml, the batches built ahead (graphtx/train/prefetch.py)
            ahead.write_text(
                f"extends: {REPO / 'configs' / 'small.yaml'}\ntrain:\n  pretrain_batch_workers: {args.batch_workers}\n"
            )
            variants.append((f"this code, its default, {args.batch_workers} batch workers", REPO, ahead))
        if args.older:
            variants.insert(0, (f"older checkout {args.older}", args.older, args.older / "configs" / "small.yaml"))
        medians: dict[str, list[float]] = {name: [] for name, _, _ in variants}
        for r in range(args.rounds):
            for i, (name, checkout, config) in enumerate(variants):
                out = Path(tmp) / f"run-{r}-{i}"
                before = load()
                adapt(checkout, args.prepared, config, args.steps, out)
                medians[name].append(median_step(out))
                print(f"round {r + 1}, {name}: {medians[name][-1]:.4f} s a step (load {before:.2f} -> {load():.2f})")
    first = statistics.mean(next(iter(medians.values())))
    print(f"\n| code | {' | '.join(f'round {r + 1}' for r in range(args.rounds))} | against the first row |")
    print(f"|---|{'---:|' * args.rounds}---:|")
    for name, values in medians.items():
        cells = " | ".join(f"{v:.4f}" for v in values)
        print(f"| {name} | {cells} | {first / statistics.mean(values):.2f}x as fast |")


if __name__ == "__main__":
    main()
