"""A teacher's encoding on this machine: fp32 against bf16 autocast, the same texts, and how far apart the vectors are.

The first ``--documents`` documents of a corpus, read as `graphtx teacher` reads them (title + abstract), are encoded
by the peer in fp32 and under bf16 autocast (graphtx/text/peers.py ``encode_texts``, the teacher's batch size), the two
interleaved for ``--rounds`` rounds so a drifting load falls on both; no cache is read or written. Then the vectors
of the last round are compared: each document's cosine between its two vectors, and how many of each document's ten
nearest others (by each precision's cosines) are the same.

    python benchmarks/bench_teacher_precision.py W/ftabs/size-2000/corpus --peer mpnet --documents 512 --rounds 2
    python benchmarks/bench_teacher_precision.py W/ftabs/size-2000/corpus --peer mpnet --documents 300 --rounds 1 \
        --bf16-weights       # and the weights themselves in bf16

Prints the machine, the load at each encoding's start and end, and a table; ``--json F`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from machine import basics


def load() -> float:
    return os.getloadavg()[0]


def unit(a: np.ndarray) -> np.ndarray:
    """Each row of (n, dim) ``a`` normalised: bf16 weights give vectors normalised in bf16, a little off unit length."""
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def neighbour_overlap(a: np.ndarray, b: np.ndarray, k: int = 10) -> float:
    """Mean share of each row's k nearest other rows (by cosine) that two (n, dim) vector sets agree on."""
    a, b = unit(a), unit(b)  # (n, dim) each
    sa, sb = a @ a.T, b @ b.T  # (n, n)
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    ta, tb = np.argsort(-sa, 1)[:, :k], np.argsort(-sb, 1)[:, :k]  # (n, k)
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(ta, tb)]))


def cosine_summary(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Min, 1st percentile and median of each row's cosine between two (n, dim) vector sets."""
    a, b = unit(a), unit(b)  # (n, dim) each
    cos = (a * b).sum(1)  # (n,)
    return {"min": float(cos.min()), "p1": float(np.percentile(cos, 1)), "median": float(np.median(cos))}


def main() -> None:
    from graphtx.corpus.store import iter_documents
    from graphtx.hardware import cpu_has_native_bf16
    from graphtx.text.peers import encode_texts, load_peer, peer_path
    from graphtx.text.teacher import teacher_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a corpus directory (`graphtx ingest`)")
    ap.add_argument("--peer", choices=("mpnet", "minilm"), default="mpnet")
    ap.add_argument("--max-tokens", type=int, default=384, help="the cut (eval.mpnet_max_tokens 384, minilm 256)")
    ap.add_argument("--documents", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument(
        "--bf16-weights",
        action="store_true",
        help="add a third encoding with the weights themselves in bf16 (load_peer dtype bfloat16), the road not taken",
    )
    args = ap.parse_args()
    import torch

    print("machine:", basics(), f"; bf16 in hardware: {cpu_has_native_bf16()}; torch threads {torch.get_num_threads()}")
    texts = []
    for doc in iter_documents(args.corpus):
        text = teacher_text(doc, ("title", "abstract"))
        if text:
            texts.append(text)
        if len(texts) == args.documents:
            break
    model = load_peer(peer_path(args.peer), args.max_tokens)
    encode_texts(model, texts[:8], args.batch_size)  # warm-up: the first forward's one-off costs
    variants = [("fp32", model, False), ("bf16 autocast", model, True)]
    if args.bf16_weights:
        weights_bf16 = load_peer(peer_path(args.peer), args.max_tokens, dtype="bfloat16")
        encode_texts(weights_bf16, texts[:8], args.batch_size)
        variants.append(("bf16 weights", weights_bf16, False))
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    vectors: dict[str, np.ndarray] = {}
    print(f"{len(texts)} documents of {args.corpus}, {args.peer}, cut at {args.max_tokens} tokens")
    for r in range(args.rounds):
        for name, peer, autocast in variants:
            before, start = load(), time.perf_counter()
            vectors[name] = encode_texts(peer, texts, args.batch_size, autocast_bf16=autocast)  # (n, dim)
            took = time.perf_counter() - start
            seconds[name].append(took)
            print(
                f"  round {r + 1} {name:14s} {took:7.1f} s  {len(texts) / took:6.2f} docs/s  load {before:.2f} -> {load():.2f}"
            )
    fp32_s, bf16_s = statistics.median(seconds["fp32"]), statistics.median(seconds["bf16 autocast"])
    figures = {
        "documents": len(texts),
        "peer": args.peer,
        "max_tokens": args.max_tokens,
        "seconds": seconds,
        "median_seconds": {"fp32": fp32_s, "bf16 autocast": bf16_s},
        "share": bf16_s / fp32_s,
        "cosine": cosine_summary(vectors["fp32"], vectors["bf16 autocast"]),
        "top10_overlap": neighbour_overlap(vectors["fp32"], vectors["bf16 autocast"]),
        "machine": basics(),
    }
    if args.bf16_weights:
        w_s = statistics.median(seconds["bf16 weights"])
        figures["median_seconds"]["bf16 weights"] = w_s
        figures["bf16_weights"] = {
            "share": w_s / fp32_s,
            "cosine": cosine_summary(vectors["fp32"], vectors["bf16 weights"]),
            "top10_overlap": neighbour_overlap(vectors["fp32"], vectors["bf16 weights"]),
        }
    print()
    print("| precision | median s | docs/s | share of fp32's time |")
    print("|---|---|---|---|")
    for name, s in figures["median_seconds"].items():
        print(f"| {name} | {s:.1f} | {len(texts) / s:.2f} | {s / fp32_s:.2f} |")
    compared = [("bf16 autocast", figures["cosine"], figures["top10_overlap"])]
    if args.bf16_weights:
        compared.append(("bf16 weights", figures["bf16_weights"]["cosine"], figures["bf16_weights"]["top10_overlap"]))
    for name, c, overlap in compared:
        print(
            f"\n{name} against fp32, cosine of a document's two vectors: min {c['min']:.5f}, 1st percentile "
            f"{c['p1']:.5f}, median {c['median']:.5f}; ten nearest others in common: {overlap:.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
