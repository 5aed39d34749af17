"""Can the model fit a fixed set of citation pairs? (optimisation check behind benchmarks/results/training.md)

Takes ``--pairs`` training citations of the EV-battery set (seeded choice), and trains the small
config's base model on them as one full batch for ``--steps`` AdamW steps (no dropout-free
shortcut: the model is in train mode, as in ``graphtx train``). Prints, before and every 10 steps,
the loss, the active triplets and, over those same pairs in eval mode, the share of anchors whose
cited graph ranks in the top 3 among the batch's allowed candidates, and the mean cosine of
anchor-positive and anchor-negative pairs. A model that reaches 1.0 here but does not improve on
validation citations has an optimisation that works and a generalisation problem.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_fit.py --graphs /tmp/ev-bench/graphs --tokens /tmp/tokens-small
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from machine import basics

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", required=True, help="graphs directory of the EV-battery documents (graphtx parse)")
    ap.add_argument("--tokens", required=True, help="tokens directory (graphtx pretrain)")
    ap.add_argument(
        "--citations", default=str(ROOT.parent / "shared" / "data" / "citations-ev-battery" / "citations_train.tsv")
    )
    ap.add_argument("--config", default=str(ROOT / "configs" / "small.yaml"))
    ap.add_argument("--pairs", type=int, default=192)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--loss", choices=["triplet", "infonce"], default="triplet")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import numpy as np
    import torch

    from graphtx.config import load_config
    from graphtx.corpus.citations import read_citations
    from graphtx.model.batch import collate
    from graphtx.model.embed import init_model
    from graphtx.train.data import GraphStore
    from graphtx.train.loss import allowed_negatives, contrastive_loss, triplet_loss
    from graphtx.train.pairs import Pair, positives_by_citing

    config = load_config(args.config)
    cfg = config.train
    torch.manual_seed(args.seed)
    model, tokenizer = init_model(config.model.as_base(), args.tokens, args.seed)
    store = GraphStore.load(args.graphs, {cfg.query_kind, cfg.candidate_kind})
    cites = [
        c
        for c in read_citations(args.citations)
        if store.has(c.citing_id, cfg.query_kind) and store.has(c.cited_id, cfg.candidate_kind)
    ]
    chosen = [cites[i] for i in np.random.default_rng(args.seed).choice(len(cites), args.pairs, replace=False)]
    known = positives_by_citing(
        Pair(c.citing_id, c.cited_id, c.category) for c in cites
    )  # every training citation of an anchor is a positive, never a negative
    anchors = collate(
        [store.get(c.citing_id, cfg.query_kind) for c in chosen], tokenizer, model.config.max_tokens_per_node
    )
    cited = collate(
        [store.get(c.cited_id, cfg.candidate_kind) for c in chosen], tokenizer, model.config.max_tokens_per_node
    )
    allowed = allowed_negatives([c.citing_id for c in chosen], [c.cited_id for c in chosen], known)  # (b, b)
    positive = torch.arange(len(chosen))
    margins = torch.tensor([cfg.margin(c.category) for c in chosen])

    @torch.no_grad()
    def measure() -> tuple[float, float, float]:
        model.eval()
        s = model(anchors) @ model(cited).T  # (b, b) cosine
        model.train()
        pos = s.diagonal()
        ahead = ((s > pos.unsqueeze(1)) & allowed).sum(1)  # allowed candidates above the positive
        return float((ahead < 3).float().mean()), float(pos.mean()), float(s[allowed].mean())

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=cfg.weight_decay)
    print(f"machine: {basics()}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(
        f"{len(chosen)} of {len(cites)} training citations (seed {args.seed}), {args.loss} loss, lr {args.lr}, {args.steps} full-batch steps\n"
    )
    print("| step | loss | active | top-3 share | mean cos positive | mean cos negative | seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    top3, cpos, cneg = measure()
    print(f"| 0 | | | {top3:.3f} | {cpos:.3f} | {cneg:.3f} | 0 |")
    started = time.perf_counter()
    for step in range(1, args.steps + 1):
        a, c = model(anchors), model(cited)
        if args.loss == "infonce":
            total, denom, active = contrastive_loss(a, c, positive, allowed, cfg.temperature)
        else:
            total, denom, active = triplet_loss(a, c, positive, allowed, margins, cfg.distance, cfg.mining)
        loss = total / denom.clamp(min=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps:
            top3, cpos, cneg = measure()
            print(
                f"| {step} | {float(loss.detach()):.4f} | {int(active)} | {top3:.3f} | {cpos:.3f} | {cneg:.3f} | {time.perf_counter() - started:.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
