"""Phrase similarity of a peer text embedder: what a teacher of the node encoder would itself score.

    python benchmarks/studies/peer_phrases.py --valid ../shared/data/phrase-similarity/validation.csv --peer minilm

Each pair's anchor and target phrase are encoded alone (no context, 64 tokens), and the cosine is compared with the
pair's score: Pearson and Spearman over the pairs, as `graphtx eval phrases` reports for the SWEM node encoder.
Prints the machine, the load and one markdown row.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from graphtx.text.peers import PEER_NAMES, PEERS, encode_texts, load_peer, peer_path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--valid", required=True, help="phrase pairs CSV (anchor,target,rating,score,context)")
    ap.add_argument("--peer", choices=PEERS, default="minilm")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    with open(args.valid, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    model = load_peer(peer_path(args.peer), 64)
    started = time.time()
    anchors = encode_texts(model, [r["anchor"] for r in rows])  # (n, dim)
    targets = encode_texts(model, [r["target"] for r in rows])  # (n, dim)
    seconds = time.time() - started
    cosine = (anchors * targets).sum(1)
    score = np.array([float(r["score"]) for r in rows])
    print(f"machine: {basics()}; load average {os.getloadavg()[0]:.2f}; {len(rows)} pairs; encoded in {seconds:.1f} s")
    print("\n| encoder | Pearson | Spearman |\n|---|---|---|")
    print(
        f"| {PEER_NAMES[args.peer]} (alone, 64 tokens) | {pearsonr(cosine, score)[0]:.3f} | {spearmanr(cosine, score)[0]:.3f} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
