"""A model from a config and pre-trained tokens, and graph vectors written to Parquet.

``init_model`` makes the (untrained) model the training stage starts from: the
vocabulary size comes from the tokenizer, the embedding table from the FastText
token vectors. ``embed_graphs`` streams one graph kind of a graphs directory
through a model into ``vectors.parquet``::

    doc_id  string
    kind    string
    vector  fixed_size_list<float32>[out_dim]   (L2-normalised)

with the model fingerprint in the Parquet schema metadata.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from graphtx.atomic import replacing
from graphtx.graphs.parse import count_graphs, iter_graphs
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder
from graphtx.model.io import fingerprint
from graphtx.progress import progress_bar


def init_model(config: ModelConfig, tokens_dir: str | Path, seed: int) -> tuple[GraphEncoder, object]:
    """(model, tokenizer): weights seeded, token embeddings from ``tokens_dir``.

    ``config.vocab_size`` and ``config.token_dim`` are taken from the tokens (BPE may
    learn fewer tokens than asked for); any other mismatch is the caller's config.
    A tokens directory written by ``graphtx distil-phrases`` also gives the SWEM projection (and
    word-order layers) distilled with its vectors: a model of that ``node_dim`` and ``word_order``
    starts from them (another keeps its seeded layers, and stderr says so).
    """
    from graphtx.text.pretrain import load_node_projection, load_token_idf, load_tokens

    tokenizer, vectors = load_tokens(tokens_dir)
    config = dataclasses.replace(config, vocab_size=tokenizer.vocab_size, token_dim=int(vectors.shape[1]))
    model = GraphEncoder(config, seed=seed)
    model.swem.load_token_vectors(vectors)
    projection = load_node_projection(tokens_dir)
    if projection is not None:
        if projection.word_order != config.word_order:
            print(
                f"note: {tokens_dir}'s node encoder was distilled with word order {projection.word_order!r}, the model's "
                f"model.word_order is {config.word_order!r}: the model keeps its seeded projection (set model.word_order: "
                f"{projection.word_order})",
                file=sys.stderr,
            )
        elif tuple(projection.weight.shape) == tuple(model.swem.proj.weight.shape):
            model.swem.load_projection(projection.weight, projection.bias, projection.ngram)
        else:
            print(
                f"note: {tokens_dir}'s distilled node projection is {projection.weight.shape[0]}-d, the model's node_dim is "
                f"{config.node_dim}: the model keeps its seeded projection (distil with --node-dim {config.node_dim})",
                file=sys.stderr,
            )
    if config.token_weighting != "none":
        model.swem.load_token_weights(load_token_idf(tokens_dir))
    if model.lexical is not None:
        model.lexical.load_token_idf(load_token_idf(tokens_dir))
    return model, tokenizer


def init_report(
    model: GraphEncoder, tokenizer: object, tokens_dir: str | Path, out: str | Path
) -> tuple[dict, list[str]]:
    """(``--json`` summary, printed lines) of ``graphtx init-model``."""
    from graphtx.model.io import fingerprint

    summary = {
        "out": str(out),
        "parameters": model.num_parameters(),
        "out_dim": model.out_dim,
        "fingerprint": fingerprint(model, tokenizer=tokenizer),
    }
    return summary, [
        f"initialised a {'reduced' if model.config.reduced_dim else 'base'} model ({model.num_parameters():,} parameters, "
        f"{model.out_dim}-d output) with the token vectors of {tokens_dir} into {out}",
    ]


def encode_report(vectors: int, dim: int, kind: str, out: str | Path) -> tuple[dict, list[str]]:
    """(``--json`` summary, printed lines) of ``graphtx encode``."""
    return {"out": str(out), "vectors": vectors, "dim": dim}, [
        f"wrote {vectors} {dim}-d vectors of {kind} graphs to {out}"
    ]


def vectors_schema(dim: int, model_fingerprint: str) -> pa.Schema:
    return pa.schema(
        [("doc_id", pa.string()), ("kind", pa.string()), ("vector", pa.list_(pa.float32(), dim))],
        metadata={"model_fingerprint": model_fingerprint, "dim": str(dim)},
    )


def embed_graphs(
    model: GraphEncoder,
    tokenizer,
    graphs_dir: str | Path,
    kind: str,
    out_path: str | Path,
    batch_size: int = 64,
    progress: bool | None = None,
    engine: str = "local",
    model_dir: str | Path | None = None,
    ray_address: str | None = None,
    ray_workers: int = 2,
    ray_gpus: float | None = None,
) -> int:
    """Write the vectors of every ``kind`` graph in ``graphs_dir``; returns how many.

    Graphs go to the model in chunks of ``16 * batch_size``. ``engine="ray"``: the chunks are encoded by
    ``ray_workers`` Ray actors that load ``model_dir`` (graphtx/ray_engine.py; ``ray_gpus`` GPUs each, None:
    one per actor when the cluster has GPUs), and each is a resumable shard: written into
    ``.OUT.shards/`` beside the output with a journal (:mod:`graphtx.shards`) as it comes back, so the
    same command after a kill encodes only the chunks not yet there. The same file as ``local`` either way."""
    from graphtx.ray_engine import check_engine

    check_engine(engine)
    if engine == "ray" and model_dir is None:
        raise ValueError("engine='ray' needs model_dir (the actors load the model from it)")
    out_path = Path(out_path)
    schema = vectors_schema(model.out_dim, fingerprint(model, tokenizer=tokenizer))
    total = count_graphs(graphs_dir, kind)
    graphs = iter_graphs(graphs_dir, kind=kind)
    chunk_size = batch_size * 16
    chunks = iter(lambda: list(itertools.islice(graphs, chunk_size)), [])
    bar = progress_bar(total=total, desc=f"encode {kind}", unit="graph", enabled=progress)
    with bar:
        if engine == "ray":
            return _embed_on_ray(
                chunks,
                schema,
                graphs_dir,
                kind,
                out_path,
                batch_size,
                model_dir,
                ray_address,
                ray_workers,
                ray_gpus,
                bar,
            )
        written = 0
        # written beside and renamed over out_path when complete: a previous vectors file stays whole until then
        with replacing(out_path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for chunk in chunks:
                vectors = (
                    model.encode(chunk, tokenizer, batch_size=batch_size).to(torch.float32).numpy()
                )  # (b, out_dim)
                writer.write_table(_vectors_table(chunk, vectors, schema))
                written += len(chunk)
                bar.update(len(chunk))
    return written


def _vectors_table(chunk: list, vectors: np.ndarray, schema: pa.Schema) -> pa.Table:
    """Rows of a vectors file: the chunk's graphs and their vectors (b, dim) float32."""
    dim = int(schema.metadata[b"dim"])
    return pa.table(
        {
            "doc_id": [g.doc_id for g in chunk],
            "kind": [g.kind for g in chunk],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), dim),
        },
        schema=schema,
    )


def _embed_on_ray(
    chunks, schema, graphs_dir, kind, out_path: Path, batch_size, model_dir, address, workers, gpus, bar
) -> int:
    """The Ray engine of ``embed_graphs``: chunk i is shard i, journaled in ``.OUT.shards/`` as it comes back."""
    import contextlib
    from collections import deque

    from graphtx.atomic import atomic_write_table
    from graphtx.graphs.parse import graphs_path
    from graphtx.model.chunks import encode_chunk, load_chunk_encoder
    from graphtx.ray_engine import map_ordered
    from graphtx.shards import ShardJournal, file_identity

    key = {
        "stage": "encode",
        "graphs": file_identity(graphs_path(graphs_dir)),
        "kind": kind,
        "model": schema.metadata[b"model_fingerprint"].decode(),
        "chunk": batch_size * 16,
    }
    journal = ShardJournal(out_path.with_name(f".{out_path.name}.shards"), key)
    done = journal.open()
    order: deque[int] = deque()  # shards sent, in the order their results come back
    shards = 0

    def todo():
        nonlocal shards
        for i, chunk in enumerate(chunks):
            shards = i + 1
            if i in done:
                bar.update(len(chunk))
                continue
            order.append(i)
            yield chunk

    encoded = map_ordered(
        todo(),
        load_chunk_encoder,
        (str(Path(model_dir).resolve()), batch_size, False),
        encode_chunk,
        workers=workers,
        num_gpus=gpus,
        address=address,
    )
    with contextlib.closing(encoded):
        for chunk, (vectors, _, _, _) in encoded:
            i = order.popleft()
            atomic_write_table(journal.path(i, ".parquet"), _vectors_table(chunk, vectors, schema))
            journal.commit(i, [journal.path(i, ".parquet")], graphs=len(chunk))
            bar.update(len(chunk))
    written = 0
    with replacing(out_path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
        for i in range(shards):
            table = pq.read_table(journal.path(i, ".parquet"))
            writer.write_table(table)
            written += table.num_rows
    journal.remove()
    return written


def read_vectors(path: str | Path) -> tuple[list[str], np.ndarray, dict]:
    """(doc ids, vectors (n, dim) float32, schema metadata) of a vectors file."""
    return table_vectors(pq.read_table(path))


def table_vectors(table: pa.Table) -> tuple[list[str], np.ndarray, dict]:
    """(doc ids, vectors (n, dim) float32, schema metadata) of a vectors file's table, read once by the caller."""
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    dim = int(meta["dim"])
    flat = table.column("vector").combine_chunks().flatten().to_numpy()
    return table.column("doc_id").to_pylist(), flat.reshape(-1, dim), meta
