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
from tqdm import tqdm

from graphtx.atomic import replacing
from graphtx.graphs.parse import count_graphs, iter_graphs
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder
from graphtx.model.io import fingerprint


def init_model(config: ModelConfig, tokens_dir: str | Path, seed: int) -> tuple[GraphEncoder, object]:
    """(model, tokenizer): weights seeded, token embeddings from ``tokens_dir``.

    ``config.vocab_size`` and ``config.token_dim`` are taken from the tokens (BPE may
    learn fewer tokens than asked for); any other mismatch is the caller's config.
    """
    from graphtx.text.pretrain import load_token_idf, load_tokens

    tokenizer, vectors = load_tokens(tokens_dir)
    config = dataclasses.replace(config, vocab_size=tokenizer.vocab_size, token_dim=int(vectors.shape[1]))
    model = GraphEncoder(config, seed=seed)
    model.swem.load_token_vectors(vectors)
    if config.token_weighting != "none":
        model.swem.load_token_weights(load_token_idf(tokens_dir))
    if model.lexical is not None:
        model.lexical.load_token_idf(load_token_idf(tokens_dir))
    return model, tokenizer


def init_report(model: GraphEncoder, tokenizer: object, tokens_dir: str | Path, out: str | Path) -> tuple[dict, list[str]]:
    """(``--json`` summary, printed lines) of ``graphtx init-model``."""
    from graphtx.model.io import fingerprint

    summary = {"out": str(out), "parameters": model.num_parameters(), "out_dim": model.out_dim, "fingerprint": fingerprint(model, tokenizer=tokenizer)}
    return summary, [
        f"initialised a {'reduced' if model.config.reduced_dim else 'base'} model ({model.num_parameters():,} parameters, "
        f"{model.out_dim}-d output) with the token vectors of {tokens_dir} into {out}",
    ]  # fmt: skip


def encode_report(vectors: int, dim: int, kind: str, out: str | Path) -> tuple[dict, list[str]]:
    """(``--json`` summary, printed lines) of ``graphtx encode``."""
    return {"out": str(out), "vectors": vectors, "dim": dim}, [f"wrote {vectors} {dim}-d vectors of {kind} graphs to {out}"]


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
) -> int:
    """Write the vectors of every ``kind`` graph in ``graphs_dir``; returns how many.

    ``engine="ray"``: chunks encoded by ``ray_workers`` Ray actors that load ``model_dir`` (graphtx/ray_engine.py);
    the same file as ``local``."""
    from graphtx.ray_engine import check_engine

    check_engine(engine)
    if engine == "ray" and model_dir is None:
        raise ValueError("engine='ray' needs model_dir (the actors load the model from it)")
    out_path = Path(out_path)
    schema = vectors_schema(model.out_dim, fingerprint(model, tokenizer=tokenizer))
    total = count_graphs(graphs_dir, kind)
    written = 0
    graphs = iter_graphs(graphs_dir, kind=kind)
    # written beside and renamed over out_path when complete: a previous vectors file stays whole until then
    with replacing(out_path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer, tqdm(
        total=total, desc=f"encode {kind}", unit="graph", disable=None if progress is None else not progress, file=sys.stderr
    ) as bar:
        chunks = iter(lambda: list(itertools.islice(graphs, batch_size * 16)), [])
        if engine == "ray":
            from graphtx.ray_engine import encode_chunks

            encoded = ((c, r[0]) for c, r in encode_chunks(chunks, model_dir, device="cpu", batch_size=batch_size, late=False,
                                                           workers=ray_workers, address=ray_address))  # fmt: skip
        else:
            encoded = ((c, model.encode(c, tokenizer, batch_size=batch_size).to(torch.float32).numpy()) for c in chunks)
        for chunk, vectors in encoded:  # vectors: (b, out_dim) float32
            writer.write_table(
                pa.table(
                    {
                        "doc_id": [g.doc_id for g in chunk],
                        "kind": [g.kind for g in chunk],
                        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), model.out_dim),
                    },
                    schema=schema,
                )
            )
            written += len(chunk)
            bar.update(len(chunk))
    return written


def read_vectors(path: str | Path) -> tuple[list[str], np.ndarray, dict]:
    """(doc ids, vectors (n, dim) float32, schema metadata) of a vectors file."""
    table = pq.read_table(path)
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    dim = int(meta["dim"])
    flat = table.column("vector").combine_chunks().flatten().to_numpy()
    return table.column("doc_id").to_pylist(), flat.reshape(-1, dim), meta
