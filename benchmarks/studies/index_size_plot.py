"""Ratio to BM25 against the index's size, drawn from a regression JSON: which systems lose ground as an index grows?

    python benchmarks/studies/index_size_plot.py benchmarks/regressions/transfer-ft-42k-teacher.json \
        --out docs/img/index_size_ft42k.png

Reads the systems that transfer-ft-42k-teacher.yaml names per index size ("the teacher alone, 2,000", "BM25, 2,000",
...; the whole corpus under its own names, ``WHOLE``) and plots each one's ratio to BM25 of the same index at
``--metric`` (nDCG@150 by default) with its paired-bootstrap 95% interval, one line per system, the index's size on a
log axis. Prints the table it drew. Reads only the JSON: nothing is evaluated here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# series: (legend, the system's name at a subset size with {n} for "2,000", its name over the whole corpus)
SERIES = (
    ("the teacher alone (mpnet, reads every document)", "the teacher alone, {n}", "the teacher alone"),
    (
        "graphtx built on the large corpus's sample (read about 5%)",
        "graphtx built on its sample, {n}",
        "graphtx built on its sample",
    ),
    ("RRF of BM25 and that graphtx", "RRF of BM25 and it, {n}", "RRF of BM25 and it"),
)
BM25_AT, BM25_WHOLE = "BM25, {n}", "BM25 (title + abstract)"
SIZE_NAME = re.compile(r"^BM25, ([\d,]+)$")


def sizes_of(systems: dict) -> list[int]:
    """The subset sizes the JSON holds, from its systems named "BM25, N" (N with thousands commas)."""
    return sorted(int(m.group(1).replace(",", "")) for name in systems if (m := SIZE_NAME.match(name)))


def points(data: dict, metric: str, whole: int) -> dict[str, list[tuple[int, float, float, float]]]:
    """Per series: (index size, ratio to BM25 of that index, low, high), the sizes ascending, the whole corpus last.
    A series a size lacks (its run not finished) is left out at that size."""
    systems = data["systems"]
    out: dict[str, list[tuple[int, float, float, float]]] = {}
    for legend, at, whole_name in SERIES:
        rows = []
        for n in sizes_of(systems):
            name, ref = at.format(n=f"{n:,}"), BM25_AT.format(n=f"{n:,}")
            r = systems.get(name, {}).get("vs", {}).get(ref, {}).get(metric)
            if r:
                rows.append((n, r["ratio"], r["low"], r["high"]))
        r = systems.get(whole_name, {}).get("vs", {}).get(BM25_WHOLE, {}).get(metric)
        if r:
            rows.append((whole, r["ratio"], r["low"], r["high"]))
        out[legend] = rows
    return out


def draw(series: dict, metric: str, title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from graphtx.atomic import replacing

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for k, (legend, rows) in enumerate(series.items()):
        if not rows:
            continue
        shift = 1.0 + 0.03 * (k - 1)  # side by side on the log axis, so the intervals do not hide each other
        xs = [n * shift for n, *_ in rows]
        ys = [r for _, r, _, _ in rows]
        err = [[r - lo for _, r, lo, _ in rows], [hi - r for _, r, _, hi in rows]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=legend)
    ax.axhline(1.0, color="grey", linewidth=1, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("documents in the index (every judged document, then uniform fill)")
    ax.set_ylabel(f"{metric} / BM25 of the same index")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with replacing(out) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", type=Path, help="a regression JSON (benchmarks/regress.py)")
    p.add_argument("--out", type=Path, help="the PNG to write (none: print the table only)")
    p.add_argument("--metric", default="nDCG@150", choices=("nDCG@150", "Recall@3"))
    p.add_argument("--whole", type=int, default=42356, help="the whole corpus's size (default 42356)")
    args = p.parse_args(argv)
    data = json.loads(args.json.read_text(encoding="utf-8"))
    series = points(data, args.metric, args.whole)
    if not any(series.values()):
        raise SystemExit(f'{args.json}: no system named by index size ("BM25, 2,000", ...): nothing to draw')
    columns = [*sizes_of(data["systems"]), args.whole]
    print(f"| system | {' | '.join(f'{n:,}' for n in columns)} |")
    for legend, rows in series.items():
        cells = {n: f"{r:.2f}x [{lo:.2f}, {hi:.2f}]" for n, r, lo, hi in rows}
        print(f"| {legend} | {' | '.join(cells.get(n, '—') for n in columns)} |")
    if args.out:
        seeds = data.get("seeds", [])
        draw(
            series,
            args.metric,
            f"{data.get('name', args.json.stem)}: {args.metric} against BM25, seeds {seeds}",
            args.out,
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
