"""Parse and encode throughput, --engine local against --engine ray, at 1 and N workers on the same data of one machine.

    python benchmarks/bench_ray.py [--corpus graphtx/data/demo] [--limit 40] [--workers 2]
                                   [--graphs GRAPHS --tokens TOKENS]

Parse: ingests the corpus (the embedded demo grants by default), keeps its first ``--limit`` documents and parses
them with the local engine at 1 and ``--workers`` processes and with the Ray engine at 1 and ``--workers`` actors
(shards of ``--shard-size`` documents, journaled as on a cluster). Encode: the ``description`` graphs of
``--graphs`` (default: the graphs parsed here) through a small-config model built from ``--tokens`` (default:
token vectors pre-trained here on the corpus, 1 epoch), local (one process) against Ray at 1 and ``--workers``
actors. Ray runs use one local Ray (started once, its start-up timed apart); documents/s include loading spaCy
or the model in every worker or actor. Every row prints the 1-minute load average before and after it: on a
shared machine the rates move with the load. Needs the extra graphtx[ray].
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from machine import basics

from graphtx.config import IngestConfig, ParseConfig, load_config
from graphtx.corpus.ingest import ingest
from graphtx.corpus.store import CorpusWriter, iter_documents
from graphtx.graphs.parse import count_graphs, iter_graphs, parse_corpus


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def table(title: str, rows: list[tuple]) -> None:
    print(f"\n{title}\n")
    print(
        "| engine | workers | items | seconds | items/s | per worker-second | load before | load after | same output as local/1 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for engine, workers, n, seconds, before, after, same in rows:
        print(
            f"| {engine} | {workers} | {n} | {seconds:.1f} | {n / seconds:.2f} | {n / seconds / workers:.2f} | {before} | {after} | {same} |"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus", default="graphtx/data/demo", help="input `graphtx ingest` reads (default: the embedded demo grants)"
    )
    ap.add_argument("--limit", type=int, default=40, help="documents parsed per run")
    ap.add_argument("--workers", type=int, default=2, help="processes / Ray actors of the larger runs")
    ap.add_argument("--shard-size", type=int, default=8, help="documents per Ray parse shard")
    ap.add_argument("--graphs", help="graphs directory for the encode runs (default: the graphs parsed here)")
    ap.add_argument(
        "--tokens", help="pre-trained tokens for the encode model (default: pre-trained here on the corpus)"
    )
    ap.add_argument(
        "--batch-size", type=int, default=16, help="graphs per forward pass (a chunk, the Ray shard, is 16 batches)"
    )
    args = ap.parse_args()
    import ray

    from graphtx.model.embed import embed_graphs, init_model, read_vectors
    from graphtx.model.io import save_model
    from graphtx.text.bpe import PatentTokenizer

    print(
        f"machine: {basics()}; ray {ray.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
        f"load average (1 min) at the start {load()} (a shared machine: see the load columns)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ingest([args.corpus], root / "full", IngestConfig(), progress=False)
        with CorpusWriter(root / "corpus") as w:
            for i, doc in enumerate(iter_documents(root / "full")):
                if i == args.limit:
                    break
                w.add_document(doc, (), "-", str(i))

        # --- parse ---
        rows, reference, ray_up = [], None, False
        for engine, workers in (("local", 1), ("local", args.workers), ("ray", 1), ("ray", args.workers)):
            if engine == "ray" and not ray_up:
                t0 = time.time()
                ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
                print(f"local Ray start-up: {time.time() - t0:.1f} s (not in the tables)")
                ray_up = True
            out, before = root / f"{engine}{workers}", load()
            t0 = time.time()
            report = parse_corpus(
                root / "corpus",
                out,
                ParseConfig(workers=workers, chunk_size=4, shard_size=args.shard_size),
                progress=False,
                engine=engine,
            )
            seconds = time.time() - t0
            graphs = list(iter_graphs(out))
            reference = reference or graphs
            rows.append((engine, workers, report.documents, seconds, before, load(), graphs == reference))
        table(
            f"parse: {args.limit} documents, all three graphs, chunks of 4 (local), shards of {args.shard_size} (ray); documents/s",
            rows,
        )

        # --- encode ---
        graphs_dir = Path(args.graphs) if args.graphs else root / "local1"
        config = load_config("configs/small.yaml")
        tokens = args.tokens
        if tokens is None:
            from dataclasses import replace

            from graphtx.text.pretrain import pretrain

            pretrain([root / "corpus"], root / "tokens", replace(config.pretrain, epochs=1), seed=0, progress=False)
            tokens = root / "tokens"
        model, tokenizer = init_model(config.model.as_base(), tokens, config.seed)
        save_model(root / "model", model, tokenizer=tokenizer)
        model_dir = root / "model"
        n_graphs = count_graphs(graphs_dir, "description")
        rows, reference = [], None
        for engine, workers in (("local", 1), ("ray", 1), ("ray", args.workers)):
            out, before = root / f"vectors-{engine}{workers}.parquet", load()
            t0 = time.time()
            n = embed_graphs(
                model,
                PatentTokenizer.load(model_dir),
                graphs_dir,
                "description",
                out,
                batch_size=args.batch_size,
                progress=False,
                engine=engine,
                model_dir=model_dir,
                ray_workers=workers,
            )
            seconds = time.time() - t0
            ids, vectors, _ = read_vectors(out)
            reference = reference if reference is not None else (ids, vectors)
            same = ids == reference[0] and bool((vectors == reference[1]).all())
            rows.append((engine, workers, n, seconds, before, load(), same))
        table(
            f"encode: {n_graphs} description graphs of {graphs_dir.name} (small config, {model.num_parameters():,} parameters), "
            f"batches of {args.batch_size}, chunks (Ray shards) of {args.batch_size * 16}; graphs/s",
            rows,
        )
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
