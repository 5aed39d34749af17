"""Bibliographic-coupling pairs of a full-text corpus: a training signal mined from its own in-text patent mentions.

    python benchmarks/studies/coupling_pairs.py ft/mined/mentions.jsonl ft/masked --exclude ft/citations_all.tsv \\
        --graphs ft/graphs --out cpl        # cpl/coupling_train.tsv, cpl/coupling_valid.tsv, cpl/graphs/

Two documents of the corpus that both mention the same patent *outside* the corpus (`graphtx mine-citations`
writes every mention to mentions.jsonl; those dropped as "not in the corpus" are used) cite the same prior art:
a pair (Kessler's bibliographic coupling). The later document is the citing side, the earlier the cited (date
order, as a prior-art search); same-date pairs and pairs of an ``--exclude`` citations file (either direction:
the development set, so that no pair it judges is trained on) are dropped, and so are outside patents mentioned
by more than ``--max-citers`` documents (generic references). Pairs are split by their citing document (a
seeded hash): ``--valid-share`` of citing documents for validation, i.e. model selection; the development set
stays untouched. With ``--graphs``, OUT/graphs holds the graphs of the coupled documents plus ``--others`` seeded
random documents, with its own checksummed manifest: `graphtx train`'s evaluator encodes every document of its
graphs directory, so a small one keeps an evaluation under a minute (benchmarks/results/full-text-dev-set.md, run 8).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import itertools
import json
import random
from pathlib import Path

NOT_IN_CORPUS = "not in the corpus"


def coupling_pairs(
    mentions: list[dict], dates: dict[str, str], exclude: set[tuple[str, str]], max_citers: int
) -> tuple[set, collections.Counter]:
    """{(later id, earlier id)} of documents that mention one outside patent, and the dropped combinations by reason.

    mentions: rows of mentions.jsonl (citing_id, number, dropped); dates: doc id -> ISO date; exclude: pairs in
    either direction."""
    citers = collections.defaultdict(set)  # outside number -> documents mentioning it
    for m in mentions:
        if m.get("dropped") == NOT_IN_CORPUS and m["citing_id"] in dates:
            citers[m["number"]].add(m["citing_id"])
    pairs, dropped = set(), collections.Counter()
    for docs in citers.values():
        if not 2 <= len(docs) <= max_citers:
            continue
        for a, b in itertools.combinations(sorted(docs), 2):
            if (a, b) in exclude or (b, a) in exclude:
                dropped["an excluded citation"] += 1
            elif dates[a] == dates[b]:
                dropped["same date"] += 1
            else:
                pairs.add((a, b) if dates[a] > dates[b] else (b, a))
    return pairs, dropped


def is_valid(citing_id: str, share: float, seed: int) -> bool:
    """The seeded hash split by citing document, in tenths: ``share`` (0.1 steps) of documents are validation ones."""
    return int(hashlib.sha256(f"cpl{seed}:{citing_id}".encode()).hexdigest(), 16) % 10 < round(share * 10)


def write_tsv(path: Path, pairs) -> None:
    from graphtx.atomic import atomic_write_text

    atomic_write_text(path, "citing_id\tcited_id\n" + "".join(f"{a}\t{b}\n" for a, b in sorted(pairs)))


def write_graphs_subset(graphs_dir: Path, keep: set[str], out: Path) -> int:
    """OUT = the graphs of ``keep`` from GRAPHS_DIR, with a sealed, checksummed manifest; returns the graph count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx import integrity
    from graphtx.atomic import atomic_write_json, atomic_write_table
    from graphtx.graphs.parse import graphs_path

    table = pq.read_table(graphs_path(graphs_dir))  # checked against its manifest
    sub = table.filter(pa.array([d in keep for d in table.column("doc_id").to_pylist()]))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_table(out / "graphs.parquet", sub)
    manifest = json.loads((graphs_dir / "manifest.json").read_text())
    manifest.pop("manifest_sha256", None)
    manifest.update(
        documents=len(set(sub.column("doc_id").to_pylist())),
        graphs=dict(collections.Counter(sub.column("kind").to_pylist())),
        subset_of=str(graphs_dir),
    )
    manifest[integrity.CHECKSUMS_KEY] = integrity.record(out, ["graphs.parquet"])
    atomic_write_json(out / "manifest.json", integrity.seal(manifest))
    return sub.num_rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mentions", help="mentions.jsonl of `graphtx mine-citations`")
    p.add_argument("corpus", help="the corpus directory (dates)")
    p.add_argument(
        "--exclude", action="append", default=[], help="citations TSV whose pairs are never trained on (repeatable)"
    )
    p.add_argument(
        "--max-citers", type=int, default=20, help="outside patents mentioned by more documents are left out"
    )
    p.add_argument("--valid-share", type=float, default=0.1, help="share of citing documents for validation, in tenths")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--graphs", help="graphs directory of the corpus: write OUT/graphs, its coupled documents + --others"
    )
    p.add_argument("--others", type=int, default=2000)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    if not 0 <= a.valid_share < 1 or abs(a.valid_share * 10 - round(a.valid_share * 10)) > 1e-9:
        p.error(
            f"--valid-share {a.valid_share}: give tenths from 0.0 to 0.9 (the split hashes citing documents into ten buckets)"
        )
    import pyarrow.parquet as pq

    from graphtx.corpus.store import documents_path

    rows = pq.read_table(documents_path(a.corpus), columns=["id", "date"]).to_pylist()
    dates = {r["id"]: r["date"] for r in rows}
    exclude = set()
    for path in a.exclude:
        for line in Path(path).read_text().splitlines()[1:]:
            if line.strip():
                exclude.add(tuple(line.split("\t")[:2]))
    mentions = [json.loads(line) for line in open(a.mentions) if line.strip()]
    pairs, dropped = coupling_pairs(mentions, dates, exclude, a.max_citers)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    valid = {p for p in pairs if is_valid(p[0], a.valid_share, a.seed)}
    write_tsv(out / "coupling_train.tsv", pairs - valid)
    write_tsv(out / "coupling_valid.tsv", valid)
    coupled = {d for pair in pairs for d in pair}
    print(
        f"{len(pairs)} pairs over {len(coupled)} documents: {len(pairs - valid)} train, {len(valid)} validation; dropped {dict(dropped)}"
    )
    if a.graphs:
        rest = sorted(set(dates) - coupled)
        keep = coupled | set(random.Random(a.seed).sample(rest, min(a.others, len(rest))))
        print(
            f"{out / 'graphs'}: {write_graphs_subset(Path(a.graphs), keep, out / 'graphs')} graphs of {len(keep)} documents"
        )


if __name__ == "__main__":
    main()
