"""The CPU kernels behind a distillation step, at a step's shapes: bf16 against fp32 products, advanced indexing's
backward against index_select's, dropout's masks. Median ms of 20 after a warm-up, this machine's threads.

    python benchmarks/studies/cpu_kernels.py

5,324 nodes and 20,000 gathered rows: what a `graphtx adapt` step over the software abstracts holds
(benchmarks/results/cpu-bf16.md).
"""

from __future__ import annotations

import os
import statistics
import time

import torch

NODES, HIDDEN, DIM, EDGES = 5_324, 2_048, 256, 20_000


def ms(fn, repeats: int = 20) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.2f}")
    a, w = torch.randn(NODES, DIM), torch.randn(HIDDEN, DIM)
    ab, wb = a.bfloat16(), w.bfloat16()
    q = torch.randn(NODES, 4, 64, requires_grad=True)
    index = torch.randint(0, NODES, (EDGES,))
    h = torch.randn(NODES, 1_024)

    def gather_backward(select: bool) -> None:
        q.grad = None
        (q.index_select(0, index) if select else q[index]).sum().backward()

    rows = {
        f"({NODES:,} x {DIM}) @ ({DIM} x {HIDDEN:,}), fp32": lambda: a @ w.T,
        f"({NODES:,} x {DIM}) @ ({DIM} x {HIDDEN:,}), bf16": lambda: ab @ wb.T,
        f"q[index] forward + backward, q ({NODES:,}, 4, 64), {EDGES:,} rows": lambda: gather_backward(False),
        "q.index_select(0, index) forward + backward, the same": lambda: gather_backward(True),
        f"dropout(p=0.1) of ({NODES:,} x 1,024): bernoulli_ masks": lambda: torch.dropout(h, 0.1, True),
        "the same masks from torch.rand": lambda: h * (torch.rand(h.shape) >= 0.1) * (1 / 0.9),
    }
    print("| kernel | ms |\n|---|---:|")
    for name, fn in rows.items():
        print(f"| {name} | {ms(fn):.1f} |")


if __name__ == "__main__":
    main()
