"""What ``graphtx eval phrases`` shows and writes: the table, the command's lines, results files, the scatter plot."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from graphtx.atomic import atomic_write_text, replacing
from graphtx.eval.phrases.protocol import PUBLISHED_NOTE, PhraseEvalReport
from graphtx.metrics import pearson_spearman


def format_table(report: PhraseEvalReport) -> list[str]:
    """Markdown table: method | Pearson | Spearman, our rows first, then the published ones."""
    width = max(len(r["method"]) + (len(PUBLISHED_NOTE) + 2 if not r["run"] else 0) for r in report.rows)
    lines = [f"| {'method':<{width}} | Pearson | Spearman |", f"|{'-' * (width + 2)}|--------:|---------:|"]
    for r in report.rows:
        name = r["method"] if r["run"] else f"{r['method']}, {PUBLISHED_NOTE}"
        lines.append(f"| {name:<{width}} | {r['pearson']:7.3f} | {r['spearman']:8.3f} |")
    return lines


def write_results(report: PhraseEvalReport, out_dir: str | Path) -> dict[str, Path]:
    """``results.json``, ``predictions.csv`` (validation pairs, gold, each method) and ``scatter.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": out / "results.json", "predictions": out / "predictions.csv", "scatter": out / "scatter.png"}
    valid = report.valid_pairs
    with replacing(paths["predictions"]) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        methods = list(report.predictions)
        writer.writerow(["anchor", "target", "context", "score", *methods])
        for i in range(len(valid)):
            writer.writerow(
                [
                    valid.anchor[i],
                    valid.target[i],
                    valid.context[i],
                    valid.score[i],
                    *(f"{report.predictions[m][i]:.6f}" for m in methods),
                ]
            )
    method = list(report.predictions)[-1]  # the fine-tuned model
    plot_scatter(
        report.predictions[method], report.gold, paths["scatter"], title=f"{method}: validation split", seed=report.seed
    )
    atomic_write_text(paths["results"], json.dumps(report.to_json(), indent=2) + "\n")  # the summary, last
    return paths


def plot_scatter(pred: np.ndarray, gold: np.ndarray, path: str | Path, title: str = "", seed: int = 0) -> Path:
    """Predicted vs. gold score; gold takes five values, so points get a seeded horizontal jitter
    and each gold level's mean prediction is marked. Agg canvas via the object API (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    pearson, spearman = pearson_spearman(pred, gold)
    jitter = np.random.default_rng(seed).uniform(-0.04, 0.04, size=len(gold))
    fig = Figure(figsize=(6, 4.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.scatter(gold + jitter, pred, s=4, alpha=0.25, color="tab:blue", linewidths=0, label="pair")
    levels = np.unique(gold)
    ax.plot(levels, [pred[gold == g].mean() for g in levels], "o-", color="tab:red", label="mean per gold score")
    ax.set_xlabel("gold score (jittered)")
    ax.set_ylabel("predicted cosine similarity")
    ax.set_title(f"{title}\nPearson {pearson:.3f}, Spearman {spearman:.3f}, {len(gold)} pairs", fontsize=9)
    ax.set_xticks(levels)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp, format="png", facecolor="white")
    return Path(path)


def report_lines(report: PhraseEvalReport, paths: dict[str, Path] | None = None) -> list[str]:
    """The lines ``graphtx eval phrases`` prints: data, selection, the table, timings, skipped rows, files written."""
    t, v = report.train, report.valid
    best = report.history[report.best_epoch]
    cfg = report.config
    lines = [
        f"phrase similarity on {v['path']} ({v['pairs']} pairs, {v['anchors']} anchors); tokens {report.tokens['path']} "
        f"({report.tokens['vocab_size']} x {report.tokens['dim']})",
        f"fine-tuned on {t['path']} ({t['pairs']} pairs, {t['anchors']} anchors; {t['dev_anchors']} anchors held out as dev), "
        f"seed {report.seed}, {cfg['loss']} loss: best epoch {report.best_epoch} of {cfg['epochs']} "
        f"(dev Pearson {best['dev_pearson']:.3f}, Spearman {best['dev_spearman']:.3f})",
        "",
        *format_table(report),
        "",
        f"seconds: fine-tune {report.seconds['fine_tune']}, total {report.seconds['total']}",
    ]
    for name, part in (("train", t), ("valid", v)):
        if part["skipped"]:
            lines.append(f"{name}: {len(part['skipped'])} rows skipped:")
            lines += [f"  line {s['line']}: {s['reason']}" for s in part["skipped"]]
    return lines + [f"wrote {path}" for path in (paths or {}).values()]
