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
    import pandas as pd
    import pyarrow.parquet as pq

    runs = pd.read_csv(args.per_query)
    model = runs[runs.system.str.startswith("graphtx (") & ~runs.system.str.contains(r"\+")].set_index("query")
    bm25 = runs[runs.system.str.startswith("BM25")].set_index("query")
    if model.empty or bm25.empty:
        p.error(f"{args.per_query} holds no 'graphtx (...)' or no 'BM25 (...)' rows")
    docs = pq.read_table(args.corpus / "documents.parquet", columns=["id", "title", "abstract", "description"])
    docs = docs.to_pandas().fillna("")
    words, df = {}, Counter()
    for doc_id, text in zip(docs.id, (docs.title + " " + docs.abstract + " " + docs.description).str.lower()):
        words[doc_id] = set(WORD.findall(text))
        df.update(words[doc_id])
    query_words = {d: set(WORD.findall(t)) for d, t in zip(docs.id, (docs.title + " " + docs.abstract).str.lower())}
    with args.citations.open(encoding="utf-8", newline="") as f:
        pairs = [r[:2] for r in csv.reader(f, delimiter="\t") if r and r[0] != "citing_id"]
    loss = (bm25["nDCG@150"] - model["nDCG@150"]).dropna()  # > 0: BM25 above graphtx
    rare = pd.Series(
        {
            q: max(sum(df[w] <= args.rare_df for w in query_words[q] & words[c]) for a, c in pairs if a == q)
            for q in loss.index
        }
    )
    top4 = loss.sort_values(ascending=False).head(4)
    print(f"queries {len(loss)}: BM25 above {(loss > 0).sum()}, below {(loss < 0).sum()}, level {(loss == 0).sum()}")
    print(
        f"net loss {loss.sum():.2f} nDCG@150 summed; the four largest losses {top4.sum():.2f} ({', '.join(top4.index)})"
    )
    print(f"Spearman(rare shared words, loss) {rare.corr(loss, method='spearman'):+.2f}")
    for lo, hi in ((0, 0), (1, 2), (3, 5), (6, 10**9)):
        group = loss[(rare >= lo) & (rare <= hi)]
        if len(group):
            print(
                f"rare shared words {lo}-{hi if hi < 10**9 else 'more'}: {len(group)} queries, mean loss {group.mean():.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
