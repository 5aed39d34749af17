"""Command start-up: wall time of `graphtx` answering --help and refusing bad arguments (issue 26: under 1 s).

    python benchmarks/bench_cli.py [--runs 7]

Each command runs ``--runs`` times as a fresh process (the installed ``graphtx`` script beside this Python);
the table gives the median and the slowest. ``tests/test_startup.py`` checks the cause (no torch, spaCy or
FAISS loaded before the answer); this script measures the effect.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import basics

COMMANDS = [
    ["--help"],
    ["search", "--help"],
    ["eval", "citations", "--help"],
    ["search", "--index", "nowhere", "--text", "a battery", "--before", "01/01/2008"],
    ["index", "--out", "nowhere", "--bogus"],
    ["serve", "--index", "nowhere", "--port", "99999"],
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    script = Path(sys.executable).with_name("graphtx")
    print(f"machine: {basics()}; load average {os.getloadavg()[0]:.2f} at start")
    print("\n| command | median s | slowest s |\n|---|---|---|")
    for argv in COMMANDS:
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run([str(script), *argv], capture_output=True, timeout=120)
            times.append(time.perf_counter() - t)
        print(f"| `graphtx {' '.join(argv)}` | {statistics.median(times):.2f} | {max(times):.2f} |")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
