"""A build's sample of another size: the documents `graphtx build` would adapt on, drawn as it draws them.

    python benchmarks/studies/build_sample.py BUILD --size 6000 --seed 0 --out OUT

Issue 47 asks whether a large corpus adapts better on fewer passes over more documents at the same steps: the build
reads ``steps * batch / 15`` documents 15 times (graphtx/train/adapt.py's adapt_sample_size), and that rule is a
judgement, not a measured optimum. This draws ``--size`` of BUILD's parsed documents with the build's own draw
(graphtx/build/sample.py: numpy ``default_rng(seed)`` over the sorted ids) and writes OUT/corpus and OUT/graphs as
the build's sample step does (sealed, the citations between them kept), for `graphtx pretrain` and `graphtx adapt`.
BUILD is a `graphtx build` directory parsed at least (``--until parse``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build", type=Path, help="a graphtx build directory (corpus/ and graphs/)")
    p.add_argument("--size", type=int, required=True, help="documents to draw")
    p.add_argument("--seed", type=int, required=True, help="the draw's seed (the build's --seed)")
    p.add_argument("--out", type=Path, required=True, help="sample directory to write (OUT/corpus, OUT/graphs)")
    args = p.parse_args(argv)
    from graphtx.build.sample import draw_sample, graph_document_ids, write_sample

    if args.size < 1:
        p.error("--size must be at least 1")
    for part in ("corpus", "graphs"):
        if not (args.build / part / "manifest.json").is_file():
            p.error(f"{args.build / part} is not written: run `graphtx build ... --until parse` first")
    if args.out.resolve() == (args.build / "sample").resolve():  # the build's own sample is the build's to write
        p.error(
            f"--out {args.out} is the build's own sample, which a resumed build would read as its own: write elsewhere"
        )
    every = graph_document_ids(args.build / "graphs")
    if args.size >= len(every):
        print(
            f"--size {args.size:,} covers all {len(every):,} parsed documents: the sample is all of them",
            file=sys.stderr,
        )
    ids = draw_sample(every, args.size, args.seed)
    result = write_sample(args.build / "corpus", args.build / "graphs", args.out, ids, args.seed)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
