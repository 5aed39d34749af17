"""The documents a build's label-free adaptation reads when the corpus is larger than its steps can read well.

A distillation step reads ``train.pretrain_batch_docs`` anchors; the default's 1,500 steps read 3,200 documents 15 times
(graphtx/train/adapt.py, ``ADAPT_MAX_EPOCHS``), or 42,356 full texts 1.1 times. Measured on those full texts
(benchmarks/results/transfer.md, one seed, 49 in-text citation queries over all 42,356): 1.1 passes over all of them
(MiniLM, a model step of 2.1 h on 2 cores) left the student 0.94x its untrained self at nDCG@150 and its fusion with
BM25 0.76x / 0.91x BM25 (Recall@3 / nDCG@150); 15 passes over a uniform 2,000 (the model step 44 min) made a model that
indexed all 42,356 at 1.27x / 1.03x its untrained self, its fusion 0.95x / 1.02x BM25 (0.86x / 0.99x with the build's
own draws, three seeds), and a ranker fitted on another field's citations over it 1.14x / 1.15x BM25. The model alone
stays below BM25 there (0.67x / 0.86x; 0.62x / 0.83x over the build's three seeds): adapting on documents helps those
documents most (a sample holding the judged documents scored 1.35x BM25 at nDCG@150). So a build on a corpus its steps
would read fewer than ``ADAPT_FEW_PASSES`` times (5: more than 9,600 documents at the default's 1,500 steps of 32)
adapts on a seeded uniform sample of the documents they read ``ADAPT_MAX_EPOCHS`` times (3,200; at least 2,000) (tokens,
teacher and distillation: the teacher encodes only the sample, which is what makes mpnet affordable on a CPU) and
indexes every document. ``--steps`` sets the sample: more steps, more documents, until all are read.

Layout: ``BUILD/sample/corpus`` (the sampled documents and the citations between them, as ``graphtx ingest`` writes a
corpus) and ``BUILD/sample/graphs`` (their graphs from ``BUILD/graphs``, sealed as ``graphtx parse`` seals them), each
replaced whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphtx import integrity
from graphtx.atomic import MANIFEST_FILE, StagedDir
from graphtx.corpus.store import CITATIONS_FILE, DOCUMENTS_FILE, count_documents
from graphtx.graphs.parse import GRAPHS_FILE, graphs_path


def draw_sample(ids: list[str], size: int, seed: int) -> list[str]:
    """``size`` of ``ids`` drawn uniformly without replacement (numpy ``default_rng(seed)`` over the ids in sorted
    order, as benchmarks/studies/subset_corpus.py draws its fill), sorted; all of them when ``size`` covers them."""
    ordered = sorted(set(ids))
    if size >= len(ordered):
        return ordered
    picked = np.random.default_rng(seed).choice(len(ordered), size, replace=False)
    return sorted(ordered[i] for i in picked)


def graph_document_ids(graphs_dir: str | Path) -> list[str]:
    """The ids of the documents that have a graph in a graphs directory (a parse skips documents without text); the
    graphs file checked against its manifest's checksum first (a damaged file is not copied into a sealed sample)."""
    column = pq.read_table(graphs_path(graphs_dir), columns=["doc_id"]).column("doc_id")
    return sorted(set(column.to_pylist()))


def write_sample(
    corpus_dir: str | Path, graphs_dir: str | Path, out_dir: str | Path, ids: list[str], seed: int
) -> dict:
    """Write OUT/corpus and OUT/graphs: the documents of ``ids``, the citations between them and their graphs.
    Returns what the build records: the sample's size, the corpus's, the seed."""
    corpus_dir, graphs_dir, out = Path(corpus_dir), Path(graphs_dir), Path(out_dir)
    keep = pa.array(sorted(ids), type=pa.string())
    citations_path = corpus_dir / CITATIONS_FILE
    citations = pq.read_table(citations_path) if citations_path.is_file() else None
    if citations is not None:
        both = pc.and_(
            pc.is_in(citations.column("citing_id"), value_set=keep),
            pc.is_in(citations.column("cited_id"), value_set=keep),
        )
        citations = citations.filter(both)
    of = count_documents(corpus_dir)
    with StagedDir(out / "corpus", "`graphtx build` sample", (DOCUMENTS_FILE, CITATIONS_FILE)) as staged:
        kept = copy_rows(corpus_dir / DOCUMENTS_FILE, staged.path(DOCUMENTS_FILE), "id", keep, lambda batch: None)
        if citations is not None:
            pq.write_table(citations, staged.path(CITATIONS_FILE))
        staged.commit(
            {
                "documents": kept,
                "citations": 0 if citations is None else citations.num_rows,
                "sample_of": str(corpus_dir),
                "sample_of_documents": of,
                "seed": seed,
            }
        )
    source = integrity.read_manifest(graphs_dir / MANIFEST_FILE, what="graphs directory", mend="") or {}
    counts: dict[str, int] = {}
    nodes: dict[str, int] = {}
    with_graphs: set[str] = set()

    def count(batch: pa.RecordBatch) -> None:  # each kind's graphs and nodes, for the manifest's mean_nodes
        sizes = pc.list_value_length(batch.column("node_text")).to_pylist()
        for doc_id, kind, n in zip(
            batch.column("doc_id").to_pylist(), batch.column("kind").to_pylist(), sizes, strict=True
        ):
            with_graphs.add(doc_id)
            counts[kind] = counts.get(kind, 0) + 1
            nodes[kind] = nodes.get(kind, 0) + (n or 0)

    with StagedDir(out / "graphs", "`graphtx build` sample", (GRAPHS_FILE,)) as staged:
        copy_rows(graphs_dir / GRAPHS_FILE, staged.path(GRAPHS_FILE), "doc_id", keep, count)
        manifest = {
            "corpus": str(out / "corpus"),
            "documents": len(with_graphs),
            "graphs": counts,
            "mean_nodes": {k: round(nodes[k] / counts[k], 1) for k in counts},
            "sample_of": str(graphs_dir),
            "seed": seed,
            "config": source.get("config", {}),  # the parse's settings, as the graphs were parsed
            integrity.CHECKSUMS_KEY: integrity.record(staged.partial, [GRAPHS_FILE]),
        }
        staged.commit(integrity.seal(manifest))
    return {"documents": kept, "of": of, "seed": seed}


def copy_rows(source: Path, target: Path, column: str, keep: pa.Array, seen) -> int:
    """Copy the rows of Parquet file ``source`` whose ``column`` is in ``keep`` to ``target``, one row group at a time
    (a corpus of full texts does not fit in memory whole); ``seen`` is called with each kept batch. Returns the rows."""
    reader = pq.ParquetFile(source)
    rows = 0
    with pq.ParquetWriter(target, reader.schema_arrow) as writer:
        for batch in reader.iter_batches(batch_size=1024):
            kept = batch.filter(pc.is_in(batch.column(column), value_set=keep))
            if kept.num_rows:
                writer.write_batch(kept)
                seen(kept)
                rows += kept.num_rows
    return rows
