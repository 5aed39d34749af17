"""A distillation teacher scored as a retriever: is it worth distilling on this set?

    python benchmarks/teacher_alone.py CORPUS TEACHER_DIR CITATIONS.tsv --per-query teacher.csv
    python benchmarks/compare_runs.py --reference bm25=E/run.csv:bm25 teacher=teacher.csv untrained=E/untrained.csv

TEACHER_DIR is a `graphtx teacher` directory or a training run's ``teacher/`` (the vectors stage pretrain distils:
all-MiniLM-L6-v2 over title + abstract by default). Its cosines go through `graphtx eval citations`'s own pieces: the
corpus and its cut-off (``--cutoff``, default ``priority``, the searcher's protocol), the judgements (skipped pairs
listed with their reasons) and the retrieval protocol. Reusing the vectors a run wrote, a 42k-document teacher costs
seconds here instead of a re-encoding (`graphtx eval --baselines minilm`). Prints the machine, the load and one row;
``--per-query`` writes the per-query CSV of `graphtx eval citations --per-query`, which compare_runs.py pairs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from graphtx.eval.systems import DenseSystem


class TeacherSystem(DenseSystem):
    """The cosine of two documents' teacher vectors; a document without one is unknown (DenseSystem's rules)."""

    name = "teacher"

    def __init__(self, directory: str | Path):
        super().__init__()
        self.directory = Path(directory)

    def fit(self, corpus) -> TeacherSystem:
        from graphtx.eval.systems import vectors_by_id
        from graphtx.text.teacher import load_teacher_vectors

        super().fit(corpus)
        teacher = load_teacher_vectors(self.directory)
        self.label = f"teacher {teacher.label}"
        vectors, known = vectors_by_id(list(teacher.doc_ids), teacher.vectors, corpus, str(self.directory))
        self.set_vectors(vectors, vectors, known, known)
        return self


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="corpus directory (`graphtx ingest`)")
    p.add_argument("teacher", type=Path, help="a `graphtx teacher` directory or a run's teacher/")
    p.add_argument("citations", type=Path, help="citations TSV (citing_id, cited_id[, category])")
    p.add_argument("--cutoff", default="priority", choices=("none", "priority", "year"))
    p.add_argument("--per-query", type=Path, help="write the per-query CSV here")
    args = p.parse_args(argv)

    from machine import basics

    from graphtx.corpus.citations import read_citations
    from graphtx.eval.config import EvalConfig
    from graphtx.eval.data import EvalCorpus, judgements
    from graphtx.eval.protocols import evaluate_retrieval
    from graphtx.eval.report import write_per_query

    cfg = dataclasses.replace(EvalConfig(), cutoff=args.cutoff)
    corpus = EvalCorpus.load(args.corpus, cfg)
    judged = judgements(read_citations(args.citations), corpus, cfg)
    for reason, n in sorted(judged.skipped.items()):
        print(f"skipped {n} pairs: {reason}", file=sys.stderr)
    system = TeacherSystem(args.teacher).fit(corpus)
    result = evaluate_retrieval(system, corpus, judged, cfg)
    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n| system (cut-off {args.cutoff}) | queries | pairs | Recall@{cfg.recall_k} | nDCG@{cfg.ndcg_k} | without a vector |\n"
          f"|---|---|---|---|---|---|\n| {result.system} | {result.queries} | {result.pairs} | "
          f"{result.metrics[f'Recall@{cfg.recall_k}']:.4f} | {result.metrics[f'nDCG@{cfg.ndcg_k}']:.4f} | "
          f"{system.coverage()['candidates_without_vector']} |")  # fmt: skip
    if args.per_query:
        write_per_query([result], args.per_query)  # the evaluation's own writer: same columns, replaced atomically
    return 0


if __name__ == "__main__":
    sys.exit(main())
