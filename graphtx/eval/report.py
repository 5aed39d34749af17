"""A :class:`~graphtx.eval.run.CitationEvalReport` as markdown tables, a per-query CSV, JSON and a plot.

Tables give every metric with its ratio to BM25 (the first system named ``bm25``, default
parameters) in parentheses; for RFR lower is better, so a ratio below 1 is the better one.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path

from graphtx.atomic import atomic_write_text, replacing

REFERENCE = "bm25"  # System.name of the ratio reference: BM25 with the configured (default) parameters


def _reference(results: Sequence, reference: str = REFERENCE) -> object | None:
    return next((r for r in results if r.name == reference), None)


def ratios(results: Sequence, result, reference: str = REFERENCE) -> dict:
    """{metric: result / reference} for every metric (reference: the System.name, BM25 by default); {} without that row."""
    ref = _reference(results, reference)
    if ref is None:
        return {}
    return {m: (v / ref.metrics[m] if ref.metrics.get(m) else math.nan) for m, v in result.metrics.items()}


def _cell(metric: str, value: float, ratio: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    text = f"{value:.2f}" if metric == "RFR" else f"{value:.4f}"  # RFR is a rank, the others are in [0, 1]
    return f"{text} ({ratio:.2f}x)" if ratio is not None and not math.isnan(ratio) else text


def metrics_table(
    results: Sequence, names: Sequence[str], first_column: str = "system", reference: str = REFERENCE
) -> list[str]:
    lines = [f"| {first_column} | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for r in results:
        rat = ratios(results, r, reference)
        lines.append(f"| {r.system} | " + " | ".join(_cell(m, r.metrics[m], rat.get(m)) for m in names) + " |")
    return lines


def bootstrap_intervals(results: Sequence, recall_k: int, ndcg_k: int, reference: str = REFERENCE) -> dict[str, list]:
    """{system label: [Recall@k, nDCG@k ratio intervals to the reference (BM25)]} from per-query rows (paired bootstrap)."""
    from graphtx.eval.bootstrap import intervals_to_reference

    ref = _reference(results, reference)
    if ref is None or not ref.per_query:
        return {}
    return {
        r.system: intervals_to_reference(r.per_query, ref.per_query, recall_k, ndcg_k)
        for r in results
        if r is not ref and r.per_query
    }


def bootstrap_table(
    results: Sequence, recall_k: int, ndcg_k: int, reference: str = REFERENCE, reference_label: str = "BM25"
) -> list[str]:
    intervals = bootstrap_intervals(results, recall_k, ndcg_k, reference)
    if not intervals:
        return []
    ref = reference_label
    lines = [
        "",
        f"Ratio to {ref} with its paired-bootstrap 95% interval (queries resampled, {next(iter(intervals.values()))[0].resamples:,} times):",
        "",
        f"| system | Recall@{recall_k} / {ref} | nDCG@{ndcg_k} / {ref} |",
        "|---|---|---|",
    ]
    for system, (recall, ndcg) in intervals.items():
        lines.append(f"| {system} | {recall} | {ndcg} |")
    return lines


def cutoff_line(citations: dict) -> str:
    """The cut-off every system ranked under, and how many judged pairs it makes unreachable."""
    from graphtx.eval.cutoff import DESCRIPTIONS

    policy = citations.get("cutoff", "none")
    line = f"cut-off: {DESCRIPTIONS[policy]}"
    unreachable = citations.get("pairs_unreachable", 0)
    if unreachable:
        line += f"; {unreachable} of {citations['pairs_scored']} judged pairs cite a document it removes (scored as misses by every system)"
    return line + (
        "; PaECTER samples keep their 30 candidates" if policy != "none" and citations.get("paecter") else ""
    )


def format_report(report) -> list[str]:
    """The text ``graphtx eval citations`` prints: what was evaluated, then one table per protocol."""
    from graphtx.eval.protocols import paecter_metric_names
    from graphtx.metrics import metric_names

    cfg, c = report.config, report.citations
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(c["skipped"].items())) or "none"
    lines = [
        f"corpus {report.corpus['source']}: {report.corpus['documents']} documents; query text {'+'.join(cfg.query_fields)}, candidate text {'+'.join(cfg.candidate_fields)}",
        f"citations {', '.join(c['files'])}: {c['pairs_read']} pairs read, {c['pairs_scored']} scored over {c['queries']} queries; not scored: {skipped}",
        f"gain: {'binary' if not cfg.gains else ', '.join(f'{k}={v:g}' for k, v in cfg.gains)}"
        + (f" (others {cfg.default_gain:g})" if cfg.gains else "")
        + f"; ties broken by id; query {'left out of' if cfg.leave_out_self else 'kept in'} its own ranking",
        cutoff_line(c),
    ]
    lines += [
        f"note: {s['label']}: {s['info'][k]}"
        for s in report.systems
        for k in ("query_kind_note", "cutoff_note", "fields_note")
        if s["info"].get(k)
    ]
    if report.retrieval:
        r0 = report.retrieval[0]
        lines += [
            "",
            f"Citation retrieval: {r0.queries} queries, {r0.pairs} (query, cited) pairs, {r0.candidates} candidates per query"
            + (f" before the {cfg.cutoff} cut-off" if cfg.cutoff != "none" else ""),
            f"(Recall@{cfg.recall_k} over pairs, nDCG@{cfg.ndcg_k} mean over queries: the paper's; MAP (AP@{cfg.depth}), MRR@{cfg.mrr_k}, "
            f"R@k means over queries: trec_eval's; in parentheses: ratio to BM25)",
            "",
            *metrics_table(report.retrieval, metric_names(cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks)),
        ]
        lines += bootstrap_table(report.retrieval, cfg.recall_k, cfg.ndcg_k)
    if report.tuning:
        t = report.tuning
        lines += [
            "",
            f"BM25 tuned on {t['citations']}: k1 {t['k1']:g}, b {t['b']:g} ({t['metric']} {t['best']:.4f}; grid of {len(t['grid'])})"
            + (
                "; tuned on the evaluated queries, as the paper did: an upper bound for BM25 here"
                if t["tuned_on_evaluated_queries"]
                else ""
            ),
        ]
    if report.paecter_samples:
        m = report.paecter_samples
        where = m.get("loaded_from") or m.get("written_to") or "not saved"
        lines += [
            "",
            f"{m.get('protocol', 'PaECTER')}; {len(report.paecter[0].per_sample) if report.paecter else 0} samples "
            f"(eligible focals {m.get('eligible_focals')}, seed {m.get('seed')}, samples file: {where})",
        ]
        if m.get("hard_short_samples") or m.get("easy_without_cpc"):
            lines.append(
                f"  {m.get('hard_short_samples', 0)} samples with fewer hard negatives than asked (filled with easy ones); "
                f"{m.get('easy_without_cpc', 0)} drew easy negatives from the whole corpus (no shared CPC)"
            )
        if report.paecter:
            lines += [
                "(RFR: mean rank of the first cited document among the 30, lower is better; in parentheses: ratio to BM25)",
                "",
            ]
            lines += metrics_table(report.paecter, paecter_metric_names(cfg))
        else:
            lines.append("  no sample: no focal cites enough documents of the corpus")
    for s in report.systems:
        cov = {k: v for k, v in s["info"].items() if k.endswith("without_vector") and v}
        if cov:
            lines.append(f"note: {s['label']}: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in cov.items()))
    lines += ["", f"seconds: {report.seconds}"]
    return lines


def _write_rows(rows: list[dict], path: str | Path) -> Path:
    """Rows as CSV (floats to 6 decimals); an empty file when there are none."""
    path = Path(path)
    with replacing(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        if rows:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            for row in rows:
                writer.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in row.items()})
    return path


def write_per_query(results, path: str | Path) -> Path:
    """One row per (system, query) of retrieval ``results`` (a report's ``retrieval``): every measure and each cited document's rank."""
    return _write_rows([{"system": r.system, **row} for r in results for row in r.per_query], path)


def write_per_sample(report, path: str | Path) -> Path:
    """One row per (system, PaECTER sample): rank of the first cited document, AP, RR."""
    return _write_rows([{"system": r.system, **row} for r in report.paecter for row in r.per_sample], path)


def plot_curves(report, path: str | Path, title: str = "") -> Path:
    """Recall@k (over pairs) and nDCG@k against k (log scale), one line per system (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = -(-len(report.retrieval) // 3)  # legend rows below the panels, 3 systems a row
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2 + 0.22 * rows))
    for r in report.retrieval:
        style = "--" if r.name.startswith(REFERENCE) else "-"
        width = 2.4 if r.name == "graphtx" else 1.4
        for ax, metric in zip(axes, ("Recall", "nDCG")):
            ax.plot(r.curves["k"], r.curves[metric], style, lw=width, marker=".", label=r.system)
    for ax, metric in zip(axes, ("Recall@k (over query-cited pairs)", "nDCG@k (mean over queries)")):
        ax.set_xscale("log")
        ax.set_xlabel("k")
        ax.set_ylabel(metric)
        ax.grid(True, which="both", alpha=0.3)
    for k in (report.config.recall_k, report.config.ndcg_k):
        for ax in axes:
            ax.axvline(k, color="grey", lw=0.6, ls=":")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False
    )  # below the panels: never over a curve
    fig.suptitle(
        title
        or f"{report.corpus['source']}: {report.citations['queries']} queries, {report.citations['pairs_scored']} pairs",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.22 * rows / (4.2 + 0.22 * rows) + 0.02, 1, 1))
    with replacing(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return path


def write_results(report, out_dir: str | Path, plot: bool = True) -> dict:
    """results.json, per_query.csv, per_sample.csv (PaECTER) and metric_vs_k.png in ``out_dir``.

    Each file is replaced atomically; results.json, the summary, is written last.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json"}
    if report.retrieval:
        paths["per_query"] = write_per_query(report.retrieval, out / "per_query.csv")
        if plot:
            paths["plot"] = plot_curves(report, out / "metric_vs_k.png")
    if report.paecter:
        paths["per_sample"] = write_per_sample(report, out / "per_sample.csv")
    atomic_write_text(paths["json"], json.dumps(report.to_json(), indent=2) + "\n")
    return paths
