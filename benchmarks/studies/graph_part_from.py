"""Candidates' vectors with the graph part of another of their graphs: [g of one graph ; l of another], no encode.

    python benchmarks/studies/graph_part_from.py DESCRIPTION_VECTORS ABSTRACT_VECTORS MODEL \
        --out-candidates mixed.parquet --out-queries queries.parquet
    graphtx eval citations CORPUS --query-vectors queries.parquet --candidate-vectors mixed.parquet ...

``graphtx encode`` writes [sqrt(1 - b) g ; sqrt(b) l] (graphtx/model/lexical.py). A model that read abstracts (its
teacher reads title + abstract) indexes a full text by its description graph: the graph part then reads a view it was
never taught on, while the lexical part reads the whole text, as BM25 does. The perfect student of
transfer-ft-42k-read (the teacher's title + abstract vector beside the description graph's lexical part) is well
above the model's own description vectors. This asks the same of the model's own graph part: each candidate gets the
graph part of its abstract graph (ABSTRACT_VECTORS: `graphtx encode --kind first_claim`, where a full text without
claims has its abstract) beside the lexical part of its description graph (DESCRIPTION_VECTORS), joined at the
model's weight. The queries keep their own abstract vectors (ABSTRACT_VECTORS itself), written again under the same
fingerprint suffix so the evaluation pairs the two files. A candidate without an abstract vector keeps its own
(counted). Nothing is trained or selected; it reads vectors only.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

SUFFIX = "+graph_part_from=first_claim"  # the fingerprint suffix both written files carry


def mixed_vectors(
    candidates: np.ndarray,
    candidate_ids: list[str],
    source: np.ndarray,
    source_ids: list[str],
    graph_dim: int,
    weight: float,
) -> tuple[np.ndarray, int]:
    """(n, D + L), ids, (m, D + L), ids -> ((n, D + L) candidates' lexical part beside the source's graph part of the
    same document, how many had no source row and kept their own graph part)."""
    from reweight_vectors import join_parts, split_parts

    graph, lexical = split_parts(candidates.astype(np.float32), graph_dim, weight)  # (n, D), (n, L): new arrays
    source_graph, _ = split_parts(source.astype(np.float32), graph_dim, weight)  # (m, D)
    row = {doc_id: i for i, doc_id in enumerate(source_ids)}
    at = np.array([row.get(doc_id, -1) for doc_id in candidate_ids])  # (n,) source row or -1
    have = at >= 0
    graph[have] = source_graph[at[have]]
    return join_parts(graph, lexical, weight), int((~have).sum())


def write_like(table, vectors: np.ndarray, path: Path) -> None:
    """``table`` (a vectors file's) with ``vectors`` (n, dim) in place and the fingerprint suffixed; replaced atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx.atomic import replacing

    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), vectors.shape[1])
    table = table.set_column(table.schema.get_field_index("vector"), table.schema.field("vector"), column)
    metadata = dict(table.schema.metadata or {})
    # no longer the model's own vectors: the fingerprint says so (an index built from them matches no model)
    metadata[b"model_fingerprint"] = metadata.get(b"model_fingerprint", b"") + SUFFIX.encode()
    with replacing(path) as tmp:
        pq.write_table(table.replace_schema_metadata(metadata), tmp, compression="zstd")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "candidates", help="vectors.parquet of `graphtx encode` over the candidates' graphs (lexical part kept)"
    )
    p.add_argument(
        "source", help="vectors.parquet of the same model over other graphs of the same documents (graph part taken)"
    )
    p.add_argument(
        "model", help="the model directory that wrote both (graph width, lexical weight; fingerprints checked)"
    )
    p.add_argument("--out-candidates", type=Path, required=True, help="the mixed candidates' vectors.parquet")
    p.add_argument("--out-queries", type=Path, required=True, help="the source vectors again, under the same suffix")
    args = p.parse_args(argv)
    import pyarrow.parquet as pq
    from reweight_vectors import check_written_by

    from graphtx.model.embed import table_vectors
    from graphtx.model.io import load_config_file

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    config = load_config_file(args.model)
    if not config.lexical_dim:
        raise SystemExit(f"{args.model} has no lexical channel: there is no lexical part to keep")
    tables, read = [], []
    for path in (args.candidates, args.source):
        table = pq.read_table(path)
        ids, vectors, meta = table_vectors(table)
        check_written_by(meta, args.model, path)
        if vectors.shape[1] != config.out_dim + config.lexical_dim:
            raise SystemExit(
                f"{path} holds {vectors.shape[1]}-d vectors, {args.model} writes {config.out_dim + config.lexical_dim}-d"
            )
        tables.append(table)
        read.append((ids, vectors))
    (candidate_ids, candidates), (source_ids, source) = read
    mixed, kept = mixed_vectors(candidates, candidate_ids, source, source_ids, config.out_dim, config.lexical_weight)
    write_like(tables[0], mixed, args.out_candidates)
    write_like(tables[1], source.astype(np.float32), args.out_queries)
    print(
        f"wrote {args.out_candidates}: {len(candidate_ids)} candidates, the graph part of {len(candidate_ids) - kept} "
        f"from {args.source} ({kept} kept their own); {args.out_queries}: {len(source_ids)} query vectors"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
