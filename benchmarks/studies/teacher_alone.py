"""A distillation teacher scored as a retriever: is it worth distilling on this set?

    python benchmarks/studies/teacher_alone.py CORPUS TEACHER_DIR CITATIONS.tsv --per-query teacher.csv
    python benchmarks/compare_runs.py --reference bm25=E/run.csv:bm25 teacher=teacher.csv untrained=E/untrained.csv

TEACHER_DIR is a `graphtx teacher` directory or a training run's ``teacher/`` (the vectors stage pretrain distils:
all-MiniLM-L6-v2 over title + abstract by default). Its cosines go through `graphtx eval citations`'s own pieces: the
corpus and its cut-off (``--cutoff``; default ``--config``'s, else ``priority``, the searcher's protocol), the judgements (skipped pairs
listed with their reasons) and the retrieval protocol. Reusing the vectors a run wrote, a 42k-document teacher costs
seconds here instead of a re-encoding (`graphtx eval --baselines minilm`). Prints the machine, the load and one row;
``--per-query`` writes the per-query CSV of `graphtx eval citations --per-query`, which compare_runs.py pairs.

The headroom a teacher offers a student (``--student MODEL --graphs GRAPHS``): two more rows, the student model
alone and the reciprocal rank fusion of student and teacher (graphtx/eval/fusion.py, the evaluation's own RRF). If the
fusion is not above the student, a student that learned the teacher perfectly would still not beat its start there
(full-text development set, run 9: 1.05x / 1.01x).

    python benchmarks/studies/teacher_alone.py ft/masked teacher-passages ft/citations_all.tsv --student models/untrained \
        --graphs ft/graphs --per-query headroom.csv

What the teacher adds to BM25 (``--bm25``): BM25 alone over ``--fields`` (default: EvalConfig's, title and abstract;
full texts: title,abstract,description) and RRF(BM25, teacher), the evaluation's own fusion (``--hybrid``'s
constant and depth).

What exact imitation of the teacher gives (``--perfect-student VECTORS --model MODEL``): two more rows, the student's
vectors as `graphtx encode` wrote them ([sqrt(1 - b) g ; sqrt(b) l], graphtx/model/lexical.py) and a student that
imitates the teacher exactly: the teacher's vector in place of the graph part g, joined to the student's own
lexical part l at the model's ``lexical_weight`` b (``--weight``: another b; none is fitted). Nothing is encoded: it
reads the vectors file, which must be the model's own (fingerprint checked). A reference, not a strict bound (a
student can combine its parts otherwise: on EV the pre-trained student passes it at nDCG@150). On the full-text development set it is 1.04x / 0.98x the untrained model, and the student
distilled from that teacher equals it (run 11).

    python benchmarks/studies/teacher_alone.py ft/masked teacher-passages ft/citations_all.tsv \
        --perfect-student vec/untrained.parquet --model models/untrained --per-query ceiling.csv
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from graphtx.eval.peer_vectors import PeerVectorsSystem
from graphtx.eval.systems import DenseSystem


class TeacherSystem(PeerVectorsSystem):
    """The cosine of two documents' teacher vectors (graphtx/eval/peer_vectors.py's rules), as the row "teacher"."""

    def __init__(self, directory: str | Path):
        from graphtx.text.teacher import teacher_label

        super().__init__(directory)
        self.name = "teacher"
        self.label = f"teacher {teacher_label(self.manifest)}"


def headroom_systems(teacher, student_dir, graphs_dir, cfg, corpus) -> list:
    """[the student alone, RRF(student, teacher)], fitted; the student queries as `graphtx eval citations` does."""
    from graphtx.eval.fusion import FusionSystem
    from graphtx.eval.systems import ModelSystem

    student = ModelSystem(
        student_dir,
        graphs_dir,
        cfg.query_kind,
        cfg.candidate_kind,
        cfg.batch_size,
        label="student",
        query_kind_fixed=False,
    ).fit(corpus)
    return [student, FusionSystem.from_config([student, teacher], cfg, label="RRF(student, teacher)").fit(corpus)]


class PerfectStudent(DenseSystem):
    """[sqrt(1 - b) teacher ; sqrt(b) the student's lexical part]: the searched vector of a student equal to its teacher.

    Built from two fitted systems over the same corpus: ``teacher`` (its vectors, unit rows) and ``student`` (a
    VectorSystem over `graphtx encode` output, whose graph part is ``out_dim`` wide and joined at ``student_weight``).
    ``weight``: the perfect student's lexical weight (default: the student's). A document either side lacks is unknown
    (DenseSystem's rules)."""

    name = "perfect-student"

    def __init__(
        self,
        teacher: DenseSystem,
        student: DenseSystem,
        out_dim: int,
        student_weight: float,
        weight: float | None = None,
    ):
        super().__init__()
        self.teacher, self.student, self.out_dim, self.student_weight = teacher, student, out_dim, student_weight
        self.weight = student_weight if weight is None else weight
        self.label = f"perfect student (teacher + the lexical part of {student.label}, weight {self.weight:g})"

    def fit(self, corpus) -> PerfectStudent:
        import numpy as np
        from reweight_vectors import join_parts, split_parts

        super().fit(corpus)
        sides = []
        for side in ("query", "candidate"):  # each side its own: a query's lexical part from the query's vectors
            _, lexical = split_parts(
                getattr(self.student, f"{side}_vectors").astype(np.float32), self.out_dim, self.student_weight
            )  # (docs, L)
            joined = join_parts(
                getattr(self.teacher, f"{side}_vectors").astype(np.float32), lexical, self.weight
            )  # (docs, D_teacher + L)
            known = getattr(self.teacher, f"{side}_known") & getattr(self.student, f"{side}_known")  # (docs,)
            sides.append((joined, known))
        (query, query_known), (candidate, candidate_known) = sides
        self.set_vectors(query, candidate, query_known, candidate_known)
        return self


def perfect_student_systems(
    teacher, vectors_path, model_dir, corpus, weight: float | None = None, query_vectors_path=None
) -> list:
    """[the student's vectors, the perfect student], fitted; ``model_dir``: the model that wrote the vectors (checked).
    ``query_vectors_path``: the queries' own vectors when they are other graphs than the candidates' (a full-text
    set's queries are their title + abstract, its candidates whole texts); default: ``vectors_path`` for both."""
    from reweight_vectors import check_written_by

    from graphtx.eval.systems import VectorSystem
    from graphtx.model.io import load_config_file

    config = load_config_file(model_dir)
    if not config.lexical_dim:
        raise SystemExit(f"--model {model_dir} has no lexical channel: the perfect student is the teacher alone")
    student = VectorSystem(
        query_vectors_path or vectors_path, vectors_path, label=f"student ({Path(vectors_path).name})"
    ).fit(corpus)  # both files of one model: VectorSystem checks their fingerprints agree
    check_written_by(student.meta["candidate"], model_dir, str(vectors_path))
    return [student, PerfectStudent(teacher, student, config.out_dim, config.lexical_weight, weight).fit(corpus)]


def bm25_systems(teacher, cfg, corpus) -> list:
    """[BM25 alone, RRF(BM25, teacher)], fitted: what the teacher adds to the lexical baseline."""
    from graphtx.eval.baselines import BM25System
    from graphtx.eval.fusion import FusionSystem

    bm25 = BM25System.from_config(cfg).fit(corpus)
    return [bm25, FusionSystem.from_config([bm25, teacher], cfg, label="RRF(BM25, teacher)").fit(corpus)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="corpus directory (`graphtx ingest`)")
    p.add_argument("teacher", type=Path, help="a `graphtx teacher` directory or a run's teacher/")
    p.add_argument("citations", type=Path, help="citations TSV (citing_id, cited_id[, category])")
    p.add_argument(
        "--cutoff", choices=("none", "priority", "year"), help="default: --config's eval.cutoff, else priority"
    )
    p.add_argument(
        "--config",
        type=Path,
        help="a graphtx YAML config whose eval section applies (e.g. a full-text set's query and candidate fields, "
        "benchmarks/regressions/transfer/full-text-fields.yaml); --cutoff and --fields override it",
    )
    p.add_argument("--per-query", type=Path, help="write the per-query CSV here")
    p.add_argument(
        "--student", type=Path, help="a graphtx model directory: add it alone and fused with the teacher (RRF)"
    )
    p.add_argument("--graphs", type=Path, help="the corpus's graphs directory (`graphtx parse`), with --student")
    p.add_argument("--bm25", action="store_true", help="add BM25 alone and RRF(BM25, teacher)")
    p.add_argument(
        "--fields", help="with --bm25: BM25's text fields for queries and candidates, e.g. title,abstract,description"
    )
    p.add_argument(
        "--perfect-student",
        type=Path,
        metavar="VECTORS",
        help="a student's `graphtx encode` vectors: add them and a student equal to the teacher (needs --model)",
    )
    p.add_argument(
        "--perfect-student-queries",
        type=Path,
        metavar="VECTORS",
        help="with --perfect-student: the queries' own vectors from the same model (e.g. their first_claim graphs "
        "where the candidates are description graphs: a query is never read through a candidate's text); default: "
        "--perfect-student's for both",
    )
    p.add_argument("--model", type=Path, help="with --perfect-student: the model that wrote the vectors")
    p.add_argument("--weight", type=float, help="with --perfect-student: its lexical weight (default: the model's)")
    args = p.parse_args(argv)
    if bool(args.perfect_student) != bool(args.model):
        p.error("--perfect-student and --model go together")
    if args.perfect_student_queries and not args.perfect_student:
        p.error("--perfect-student-queries goes with --perfect-student")
    if args.weight is not None and not (args.perfect_student and 0.0 < args.weight < 1.0):
        p.error("--weight is the perfect student's: give --perfect-student, and a weight in (0, 1)")
    if bool(args.student) != bool(args.graphs):
        p.error("--student and --graphs go together")
    if args.fields and not args.bm25:
        p.error("--fields is BM25's: give --bm25")

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # machine.py: in benchmarks/, above studies/
    from machine import basics

    from graphtx.config import load_config
    from graphtx.corpus.citations import read_citations
    from graphtx.eval.config import EvalConfig
    from graphtx.eval.data import EvalCorpus, judgements
    from graphtx.eval.protocols import evaluate_retrieval
    from graphtx.eval.report import write_per_query

    base = load_config(args.config).eval if args.config else EvalConfig()
    cfg = dataclasses.replace(base, cutoff=args.cutoff or base.cutoff)
    if args.fields:
        fields = tuple(f.strip() for f in args.fields.split(",") if f.strip())
        try:
            cfg = dataclasses.replace(cfg, query_fields=fields, candidate_fields=fields)
        except ValueError as err:
            p.error(f"--fields: {err}")
    corpus = EvalCorpus.load(args.corpus, cfg)
    judged = judgements(read_citations(args.citations), corpus, cfg)
    for reason, n in sorted(judged.skipped.items()):
        print(f"skipped {n} pairs: {reason}", file=sys.stderr)
    system = TeacherSystem(args.teacher).fit(corpus)
    systems = [system, *headroom_systems(system, args.student, args.graphs, cfg, corpus)] if args.student else [system]
    if args.bm25:
        systems += bm25_systems(system, cfg, corpus)
    if args.perfect_student:
        systems += perfect_student_systems(
            system, args.perfect_student, args.model, corpus, args.weight, args.perfect_student_queries
        )
    results = [evaluate_retrieval(s, corpus, judged, cfg) for s in systems]
    print(f"machine: {basics()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"\n| system (cut-off {cfg.cutoff}) | queries | pairs | Recall@{cfg.recall_k} | nDCG@{cfg.ndcg_k} | without a vector |\n"
        f"|---|---|---|---|---|---|"
    )
    for s, result in zip(systems, results, strict=True):
        missing = s.coverage()["candidates_without_vector"] if hasattr(s, "coverage") else ""
        print(
            f"| {result.system} | {result.queries} | {result.pairs} | {result.metrics[f'Recall@{cfg.recall_k}']:.4f} | "
            f"{result.metrics[f'nDCG@{cfg.ndcg_k}']:.4f} | {missing} |"
        )
    if args.per_query:
        write_per_query(results, args.per_query)  # the evaluation's own writer: same columns, replaced atomically
    return 0


if __name__ == "__main__":
    sys.exit(main())
