"""Rebuild the embedded demo corpus from an ingested corpus of public-domain US grants.

    graphtx ingest ../shared/data/uspto-grants --out /tmp/c
    python -m graphtx.data.make_demo /tmp/c graphtx/data/demo

Writes ``us_grants.parquet`` (documents, canonical columns, zstd level 19) and
``us_grants_citations.tsv`` (citing_id, cited_id, category), which `graphtx ingest`
reads back like any other Parquet / TSV input.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pyarrow.parquet as pq

from graphtx.corpus.citations import read_citations

KEEP = [
    "id",
    "title",
    "abstract",
    "claims",
    "description",
    "ipc",
    "cpc",
    "family_id",
    "date",
    "lang",
    "kind",
    "priority_date",
    "application_date",
    "applicants",
    "country",
]


def make_demo(corpus_dir: str | Path, out_dir: str | Path) -> None:
    corpus_dir, out_dir = Path(corpus_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = pq.read_table(corpus_dir / "documents.parquet", columns=KEEP)
    pq.write_table(docs, out_dir / "us_grants.parquet", compression="zstd", compression_level=19)
    citations = read_citations(corpus_dir)
    with open(out_dir / "us_grants_citations.tsv", "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["citing_id", "cited_id", "category"])
        for c in citations:
            writer.writerow([c.citing_id, c.cited_id, c.category])
    print(f"wrote {docs.num_rows} documents and {len(citations)} citations to {out_dir}")


if __name__ == "__main__":
    make_demo(sys.argv[1], sys.argv[2])
