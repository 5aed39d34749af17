"""How far apart two teachers' vectors of the same documents are: one precision against another, say.

    python benchmarks/studies/teacher_agreement.py TEACHER_A TEACHER_B [--json F]

TEACHER_A and TEACHER_B are `graphtx teacher` directories (or a run's ``teacher/``), read with their checks. Over the
documents both hold: each document's cosine between its two vectors (min, 1st percentile, median), and how many of
each document's ten nearest others, by each teacher's cosines, the two agree on. Prints the machine and one table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: machine.py, bench_teacher_precision.py

from bench_teacher_precision import cosine_summary, neighbour_overlap  # noqa: E402
from machine import basics  # noqa: E402

from graphtx.text.teacher import load_teacher_vectors  # noqa: E402


def agreement(a_dir: Path, b_dir: Path) -> dict:
    a, b = load_teacher_vectors(a_dir), load_teacher_vectors(b_dir)
    where = {d: i for i, d in enumerate(b.doc_ids)}
    both = [(i, where[d]) for i, d in enumerate(a.doc_ids) if d in where]
    if not both:
        raise SystemExit(f"{a_dir} and {b_dir} hold no document in common")
    va = a.vectors[[i for i, _ in both]]  # (n, dim)
    vb = b.vectors[[j for _, j in both]]  # (n, dim)
    return {
        "documents": len(both),
        "a": {"dir": str(a_dir), "label": a.label, "precision": a.manifest.get("precision", "float32")},
        "b": {"dir": str(b_dir), "label": b.label, "precision": b.manifest.get("precision", "float32")},
        "cosine": cosine_summary(va, vb),
        "top10_overlap": neighbour_overlap(va, vb),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    print("machine:", basics())
    got = agreement(args.a, args.b)
    c = got["cosine"]
    print(
        f"| documents | {got['a']['precision']} vs {got['b']['precision']}: cosine min | 1st pct | median | ten nearest in common |"
    )
    print("|---|---|---|---|---|")
    print(f"| {got['documents']:,} | {c['min']:.5f} | {c['p1']:.5f} | {c['median']:.5f} | {got['top10_overlap']:.3f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(got, indent=1) + "\n")


if __name__ == "__main__":
    main()
