"""Where a label-free distillation step's time goes: torch's profiler over steps 20-50 of `graphtx adapt` on a CPU.

    python benchmarks/studies/profile_adapt_steps.py P [--config CONFIG]

P holds corpus/, graphs/, tokens/ and teacher/ (benchmarks/bench_adapt_step.py's docstring prepares it). Prints the
ops by self CPU time (forward and backward), the table benchmarks/results/cpu-bf16.md reads its shares from. Since the
batches are built outside the trainer's step (graphtx/train/prefetch.py; in line on a CPU), the window holds the
batch builds of steps FIRST + 1 to LAST; when that table was made the step built its own, FIRST to LAST.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from torch.profiler import ProfilerActivity, profile

import graphtx.train.pretrain_graph as pretrain_graph
from graphtx.cli import main as graphtx_main

FIRST, LAST = 20, 50  # the steps profiled: after the first steps' warm-up


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prepared")
    ap.add_argument("--config", default="configs/small.yaml")
    args = ap.parse_args()
    step, state = pretrain_graph.PretrainTrainer._step, {"n": 0, "profile": None}

    def profiled_step(self, *args):  # (prepared batch, seconds waited for it)
        state["n"] += 1
        if state["n"] == FIRST:
            state["profile"] = profile(activities=[ProfilerActivity.CPU])
            state["profile"].__enter__()
        record = step(self, *args)
        if state["n"] == LAST:
            state["profile"].__exit__(None, None, None)
            table = state["profile"].key_averages().table(sort_by="self_cpu_time_total", row_limit=30)
            print(f"steps {FIRST}-{LAST}, by self CPU time:\n{table}")
        return record

    pretrain_graph.PretrainTrainer._step = profiled_step
    p = args.prepared
    with tempfile.TemporaryDirectory() as out:
        return graphtx_main(
            ["adapt", "--corpus", f"{p}/corpus", "--graphs", f"{p}/graphs", "--tokens", f"{p}/tokens"]
            + ["--teacher", f"{p}/teacher", "--out", out, "--steps", str(LAST), "--seed", "0"]
            + ["--config", args.config, "--quiet"]
        )


if __name__ == "__main__":
    sys.exit(main())
