"""One training step of the graph transformer, the model alone: fp32 against bf16 autocast, small and paper shapes.

The batch is built once from real graphs (collate is CPU work, measured apart), then the forward + backward + AdamW
step is repeated on ``--device``; bf16 as the distillation runs it (a GPU, or a CPU with bf16 in hardware).
Separates what the GPU does from what the CPU feeds it: ``graphtx train`` on a GPU is bounded by the collate when
the model is small.

    python benchmarks/bench_train_step.py --graphs EV/graphs --tokens TOKENS --device cuda --graphs-per-batch 160 320

Prints the machine, the load and a table: milliseconds a step (median of ``--repeats`` after 5 warm-ups) and graphs/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from machine import basics

from graphtx.hardware import trains_in_bf16
from graphtx.model.batch import collate
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder
from graphtx.text.pretrain import load_tokens
from graphtx.train.data import GraphStore
from graphtx.train.distributed import bf16_autocast


def machine(device: str) -> str:
    gpu = f"; GPU {torch.cuda.get_device_name(0)}" if device.startswith("cuda") else ""
    return f"{basics()}{gpu}; torch {torch.__version__}; load average (1 min) {os.getloadavg()[0]:.2f}"


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step_ms(model: GraphEncoder, batch, device: torch.device, amp: bool, repeats: int) -> float:
    """Median ms of forward + backward + optimizer step on one fixed batch."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for i in range(repeats + 5):
        sync(device)
        t0 = time.perf_counter()
        with bf16_autocast(device, amp, on_cpu=True):  # as the distillation trains: bf16 on a GPU or a CPU that has it
            vectors = model(batch).float()  # (graphs, D)
        loss = (vectors @ vectors.T).logsumexp(1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sync(device)
        if i >= 5:
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", required=True, help="graphs directory (graphtx parse)")
    ap.add_argument("--tokens", required=True, help="tokens directory (graphtx pretrain): its tokenizer")
    ap.add_argument("--kind", default="description")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--graphs-per-batch", type=int, nargs="+", default=[160])
    ap.add_argument("--configs", nargs="+", default=["small", "paper"], choices=["small", "paper"])
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    device = torch.device(args.device)
    print("machine:", machine(args.device))
    store = GraphStore.load(args.graphs, {args.kind})
    tokenizer, _ = load_tokens(args.tokens)
    graphs = [store.get(d, args.kind) for d in store.doc_ids]
    print(
        "| config | graphs a batch | nodes | collate ms (CPU) | fp32 ms a step | bf16 ms a step | fp32 graphs/s | bf16 graphs/s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.configs:
        config = getattr(ModelConfig, name)(reduced_dim=0)  # the ids of an 8000-token tokenizer fit both vocabularies
        for n in args.graphs_per_batch:
            t0 = time.perf_counter()
            batch = collate(graphs[:n], tokenizer, config.max_tokens_per_node)
            collate_ms = (time.perf_counter() - t0) * 1000
            batch = batch.to(device)
            row = {}
            for amp in (False, True) if trains_in_bf16(device.type, True, on_cpu=True) else (False,):
                model = GraphEncoder(config, seed=0).to(device).train()
                row[amp] = step_ms(model, batch, device, amp, args.repeats)
            bf16 = (f"{row[True]:.1f}", f"{n / row[True] * 1000:.0f}") if True in row else ("- (no bf16 here)", "-")
            print(
                f"| {name} | {n} | {batch.num_nodes} | {collate_ms:.0f} | {row[False]:.1f} | {bf16[0]} | "
                f"{n / row[False] * 1000:.0f} | {bf16[1]} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
