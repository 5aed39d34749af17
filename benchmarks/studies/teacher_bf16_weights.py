"""A teacher directory whose vectors come from the peer with its weights themselves in bf16: a study of the candidate
benchmarks/results/cpu-bf16.md names (3.5x fp32's speed on 2 cores against bf16 autocast's 2.2x, cosines to fp32's
vectors >= 0.9998), not the product's teacher, which runs under bf16 autocast on such a CPU.

    python benchmarks/studies/teacher_bf16_weights.py CORPUS --peer mpnet --out DIR

Writes DIR as `graphtx teacher CORPUS --peer PEER --out DIR` would (title + abstract, the peer's default cut), every
vector encoded here with bf16 weights (graphtx/text/peers.py ``load_peer`` dtype bfloat16; ``encode_texts`` normalises
them again in fp32) and no peer vector cache read or written, so nothing else ever takes them for fp32's or
autocast's; its manifest says ``precision: bf16-weights``. A build reads it with ``--teacher DIR``
(benchmarks/regressions/cpu-bf16-weights-teacher.yaml).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from graphtx import integrity
from graphtx.atomic import atomic_write_json
from graphtx.hardware import TEACHER_BF16
from graphtx.text import teacher as teacher_module
from graphtx.text.peers import encode_texts, load_peer

PRECISION = "bf16-weights"
DEFAULT_MAX_TOKENS = {"mpnet": 384, "minilm": 256}  # eval.mpnet_max_tokens, eval.minilm_max_tokens


def bf16_weights_encoder(path, max_tokens: int, batch_size: int, dtype="float32", device="cpu", passages=1, **_):
    """``lazy_encoder``'s shape (graphtx/text/peers.py), the peer loaded with bf16 weights at the first call."""
    if passages != 1:
        raise ValueError("this study encodes one passage a document")
    model = None

    def encode(texts: list[str]):
        nonlocal model
        if model is None:
            model = load_peer(path, max_tokens, "bfloat16", device)
        return encode_texts(model, texts, batch_size)  # (len(texts), dim) float32 unit vectors

    return encode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--peer", choices=sorted(DEFAULT_MAX_TOKENS), default="mpnet")
    ap.add_argument("--max-tokens", type=int, help="default: the peer's evaluation cut (mpnet 384, minilm 256)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.out.exists() and any(args.out.iterdir()):  # never reuse another run's chunks as bf16-weights vectors
        found = args.out / teacher_module.MANIFEST_FILE
        if found.exists() and json.loads(found.read_text()).get("precision") == PRECISION:
            print(f"{args.out} already holds this study's vectors")
            return 0
        sys.exit(
            f"{args.out} holds other vectors or an unfinished run (this study's too): delete it or give a fresh --out"
        )
    started = time.perf_counter()
    teacher_module.lazy_encoder = bf16_weights_encoder  # this process only: the writer's encoder
    report = teacher_module.write_teacher_vectors(
        [args.corpus],
        args.out,
        peer=args.peer,
        max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS[args.peer],
        batch_size=args.batch_size,
        vector_cache_dir="",  # no cache: these vectors are nobody else's
        precision=TEACHER_BF16,  # the writer's CPU-only check; the manifest is corrected below
        progress=False,
    )
    path = args.out / teacher_module.MANIFEST_FILE
    manifest = integrity.read_manifest(path, what="teacher vectors", mend="run this study again")
    manifest = {**manifest, "precision": PRECISION, "job": {**manifest["job"], "precision": PRECISION}}
    atomic_write_json(path, integrity.seal(manifest))
    teacher_module.load_teacher_vectors(args.out)  # the seal and the vectors' checksums hold
    print(
        f"{report.documents:,} documents of {args.corpus} encoded by {args.peer} with bf16 weights into {args.out} "
        f"in {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
