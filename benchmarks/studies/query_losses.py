"""Where graphtx alone loses to BM25, query by query, and whether shared rare words track the loss.

    python benchmarks/studies/query_losses.py PER_QUERY.csv CORPUS_DIR CITATIONS.tsv [--rare-df 50]

PER_QUERY.csv is `graphtx eval citations --per-query` (systems "graphtx (...)" and "BM25 (...)"). Prints the queries
where BM25 is above, below and level with graphtx at nDCG@150, the share of the net loss the four largest losses
carry, and the loss by the count of rare words (lowercased, 3+ characters, starting with a letter; in at most
--rare-df documents' title, abstract and description) that a query's title and abstract share with its cited
patent (the most over its cited patents), with Spearman's rho between that count and the loss.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path

WORD = re.compile(r"[a-z][a-z0-9]{2,}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("per_query", type=Path)
    p.add_argument("corpus", type=Path, help="corpus directory (`graphtx ingest`)")
    p.add_argument("citations", type=Path, help="citations TSV (citing_id, cited_id)")
    p.add_argument("--rare-df", type=int, default=50, help="a word is rare in at most this many documents")
    args = p.parse_args(argv)
    import numpy as np
    import pyarrow.parquet as pq

    from graphtx.metrics import pearson_spearman

    ndcg: dict[str, dict[str, float]] = {"model": {}, "bm25": {}}  # which -> query -> nDCG@150
    with args.per_query.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            system, value = row["system"], row.get("nDCG@150", "")
            if value == "":
                continue
            if system.startswith("graphtx (") and "+" not in system:
                ndcg["model"][row["query"]] = float(value)
            elif system.startswith("BM25"):
                ndcg["bm25"][row["query"]] = float(value)
    if not ndcg["model"] or not ndcg["bm25"]:
        p.error(f"{args.per_query} holds no 'graphtx (...)' or no 'BM25 (...)' rows")
    table = pq.read_table(args.corpus / "documents.parquet", columns=["id", "title", "abstract", "description"])
    columns = {name: [v or "" for v in table.column(name).to_pylist()] for name in table.column_names}
    words, query_words, df = {}, {}, Counter()
    for doc_id, title, abstract, description in zip(*(columns[c] for c in ("id", "title", "abstract", "description"))):
        words[doc_id] = set(WORD.findall(f"{title} {abstract} {description}".lower()))
        query_words[doc_id] = set(WORD.findall(f"{title} {abstract}".lower()))
        df.update(words[doc_id])
    with args.citations.open(encoding="utf-8", newline="") as f:
        pairs = [r[:2] for r in csv.reader(f, delimiter="\t") if r and r[0] != "citing_id"]
    queries = sorted(set(ndcg["model"]) & set(ndcg["bm25"]))
    loss = np.array([ndcg["bm25"][q] - ndcg["model"][q] for q in queries])  # > 0: BM25 above graphtx
    rare = np.array(
        [
            max(sum(df[w] <= args.rare_df for w in query_words[q] & words[c]) for a, c in pairs if a == q)
            for q in queries
        ]
    )
    order = np.argsort(-loss, kind="stable")[:4]
    print(f"queries {len(loss)}: BM25 above {(loss > 0).sum()}, below {(loss < 0).sum()}, level {(loss == 0).sum()}")
    print(
        f"net loss {loss.sum():.2f} nDCG@150 summed; the four largest losses {loss[order].sum():.2f}"
        f" ({', '.join(queries[i] for i in order)})"
    )
    print(f"Spearman(rare shared words, loss) {pearson_spearman(rare, loss)[1]:+.2f}")
    for lo, hi in ((0, 0), (1, 2), (3, 5), (6, 10**9)):
        group = loss[(rare >= lo) & (rare <= hi)]
        if len(group):
            print(
                f"rare shared words {lo}-{hi if hi < 10**9 else 'more'}: {len(group)} queries, mean loss {group.mean():.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
