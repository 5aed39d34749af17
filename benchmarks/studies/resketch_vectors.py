"""Sketch the lexical part of encoded vectors again at another size, or from each graph's heaviest tokens only.

    python benchmarks/studies/resketch_vectors.py VECTORS MODEL GRAPHS --dim 2048 --out OUT
    python benchmarks/studies/resketch_vectors.py VECTORS MODEL GRAPHS --dim 1024 --top-tokens 256 --out OUT

``graphtx encode`` writes [sqrt(1 - b) g ; sqrt(b) l] (graphtx/model/lexical.py): l is a count sketch of a graph's
IDF-weighted tokens in ``model.lexical_dim`` buckets. A description graph of the full texts holds a few hundred distinct
weighted tokens (the script prints how many), and some share a bucket of 1,024; a larger sketch, or one
of each graph's ``--top-tokens`` heaviest tokens only, collides less. The graph part g does not depend on the sketch,
so it is kept from VECTORS and only l is made again: MODEL's tokenizer and token IDF read GRAPHS' graphs of the kind
VECTORS holds (no transformer runs: 83-95 s for 42,356 description graphs on 2 cores, against about 400 s to encode
them). VECTORS must be MODEL's own (fingerprint checked). The result equals `benchmarks/studies/lexical_channel.py --dim N`
then `graphtx encode` (tests/eval/test_resketch_vectors.py), without the encode. The output goes to ``graphtx eval
citations --vectors OUT`` (benchmarks/results/full-text-dev-set.md, run 11).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vectors", help="vectors.parquet of `graphtx encode` (its graph part is kept)")
    p.add_argument("model", help="the model directory that wrote them (tokenizer, token IDF, graph width, weight)")
    p.add_argument("graphs", help="the graphs directory they were encoded from (`graphtx parse`)")
    p.add_argument("--dim", type=int, required=True, help="sketch buckets")
    p.add_argument(
        "--top-tokens", type=int, default=0, help="sketch each graph's N heaviest tokens only (default 0: all)"
    )
    p.add_argument("--out", required=True, help="vectors.parquet to write")
    args = p.parse_args(argv)
    if args.dim < 1 or args.top_tokens < 0:
        p.error("--dim must be >= 1 and --top-tokens >= 0")
    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics
    from reweight_vectors import check_written_by, join_parts, split_parts

    from graphtx.atomic import replacing
    from graphtx.graphs.parse import iter_graphs
    from graphtx.model.batch import collate
    from graphtx.model.embed import table_vectors, vectors_schema
    from graphtx.model.io import load_model
    from graphtx.model.lexical import LexicalChannel

    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    loaded = load_model(args.model)
    config = loaded.model.config
    if not config.lexical_dim:
        raise SystemExit(f"{args.model} has no lexical channel: nothing to sketch again")
    table = pq.read_table(args.vectors)
    ids, vectors, meta = table_vectors(table)
    check_written_by(meta, args.model, args.vectors)
    kinds = set(table.column("kind").to_pylist())
    if len(kinds) != 1:
        raise SystemExit(
            f"{args.vectors} holds graphs of {len(kinds)} kinds ({', '.join(sorted(map(str, kinds)))}): one kind a file"
        )
    kind = kinds.pop()
    graph_part, old_lexical = split_parts(np.asarray(vectors, dtype=np.float32), config.out_dim, config.lexical_weight)
    channel = LexicalChannel(config.vocab_size, args.dim)
    channel.idf.copy_(loaded.model.lexical.idf)
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    lexical = np.zeros((len(ids), args.dim), dtype=np.float32)  # (n, dim), rows in VECTORS' order
    seen = np.zeros(len(ids), dtype=bool)
    distinct = np.zeros(len(ids), dtype=np.int64)  # (n,) distinct weighted tokens of each graph
    graphs = iter_graphs(args.graphs, kind=kind, ids=set(ids))
    with torch.no_grad():
        for chunk in iter(lambda: list(itertools.islice(graphs, 256)), []):
            batch = collate(chunk, loaded.tokenizer, config.max_tokens_per_node)
            rows = [position[g.doc_id] for g in chunk]
            lexical[rows] = channel(
                batch.token_ids, batch.token_node, batch.node_graph, len(chunk), top_tokens=args.top_tokens
            ).numpy()
            distinct[rows] = channel.distinct_tokens(
                batch.token_ids, batch.token_node, batch.node_graph, len(chunk)
            ).numpy()
            seen[rows] = True
    if not seen.all():
        raise SystemExit(
            f"{args.graphs} lacks {int((~seen).sum())} of the {len(ids)} {kind} graphs of {args.vectors}: not the graphs it was encoded from"
        )
    print(
        f"distinct weighted tokens a graph: median {np.median(distinct):.0f}, 90th percentile {np.percentile(distinct, 90):.0f}, "
        f"max {distinct.max()}"
        + (
            f"; {int((distinct > args.top_tokens).sum()):,} of {len(ids):,} graphs hold more than {args.top_tokens}"
            if args.top_tokens
            else ""
        )
    )
    if args.dim == config.lexical_dim and not args.top_tokens:
        print(f"largest difference from the encoder's own sketch: {float(np.abs(lexical - old_lexical).max()):.2e}")
    out = join_parts(graph_part, lexical, config.lexical_weight)  # (n, out_dim + dim)
    # no longer the model's own vectors: the fingerprint says so (an index built from them matches no model)
    schema = vectors_schema(
        out.shape[1], f"{meta.get('model_fingerprint', '')}+lexical_dim={args.dim}+top_tokens={args.top_tokens}"
    )
    vector = pa.FixedSizeListArray.from_arrays(pa.array(out.reshape(-1), pa.float32()), out.shape[1])
    with replacing(Path(args.out)) as tmp:
        pq.write_table(
            pa.table({"doc_id": table.column("doc_id"), "kind": table.column("kind"), "vector": vector}, schema=schema),
            tmp,
            compression="zstd",
        )
    print(
        f"wrote {args.out}: {len(ids)} vectors, {config.out_dim} graph + {args.dim} lexical"
        + (f" (each graph's {args.top_tokens} heaviest tokens)" if args.top_tokens else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
