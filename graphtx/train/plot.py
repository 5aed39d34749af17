"""``graphtx plot RUN_DIR``: training curves of every stage as one PNG.

Panels: loss (raw and smoothed) and active triplets per step; learning rate; Recall@k and
nDCG@k per evaluation on the selection split (held-out training queries; validation is scored once, at the end); throughput (graphs/s).
"""

from __future__ import annotations

import json
from pathlib import Path

from graphtx.atomic import replacing


def _read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _smooth(values: list[float], width: int = 20) -> list[float]:
    out, acc = [], []
    for v in values:
        acc.append(v)
        acc = acc[-width:]
        out.append(sum(acc) / len(acc))
    return out


def _graphs_per_s(record: dict) -> float:
    """A log line's throughput: written by the citation stages, derived from graphs and seconds by stage pretrain's."""
    if "graphs_per_s" in record:
        return record["graphs_per_s"]
    return record.get("graphs", 0) / max(record.get("seconds", 0.0), 1e-9)


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Path(run_dir)
    stages = [
        d
        for d in ("pretrain", "base", "reduced")
        if (run / d / "log.jsonl").exists() or (run / d / "evals.jsonl").exists()
    ]
    if not stages:
        raise FileNotFoundError(f"{run} has no training logs (pretrain/log.jsonl, base/log.jsonl or reduced/log.jsonl)")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    offset = 0
    for stage in stages:
        log, evals = _read(run / stage / "log.jsonl"), _read(run / stage / "evals.jsonl")
        steps = [offset + r["step"] for r in log]
        if log:
            ax = axes[0][0]
            ax.plot(steps, [r["loss"] for r in log], alpha=0.25)
            ax.plot(steps, _smooth([r["loss"] for r in log]), label=f"{stage} loss (smoothed)")
            axes[0][1].plot(steps, [r["lr"] for r in log], label=f"{stage} learning rate")
            axes[1][1].plot(steps, _smooth([_graphs_per_s(r) for r in log]), label=f"{stage} graphs/s")
        if evals:
            k = evals[0].get("k", "k")
            xs = [offset + r["step"] for r in evals]
            axes[1][0].plot(xs, [r["recall"] for r in evals], marker="o", label=f"{stage} Recall@{k}")
            axes[1][0].plot(xs, [r["ndcg"] for r in evals], marker="s", label=f"{stage} nDCG")
        offset = max([offset] + steps + [offset + r["step"] for r in evals])
    titles = [["training loss", "learning rate"], ["selection (held-out training queries)", "throughput"]]
    for i in range(2):
        for j in range(2):
            axes[i][j].set_title(titles[i][j])
            axes[i][j].set_xlabel("step (stages one after the other)")
            if axes[i][j].get_legend_handles_labels()[0]:
                axes[i][j].legend(fontsize=8)
            axes[i][j].grid(alpha=0.3)
    if not axes[1][0].lines:  # an adaptation (graphtx adapt): nothing to select on, the last weights ship
        axes[1][0].text(
            0.5,
            0.5,
            "no selection evaluations:\nthe last weights ship",
            ha="center",
            va="center",
            transform=axes[1][0].transAxes,
        )
    axes[0][1].set_yscale("log")
    fig.suptitle(f"graphtx training: {run}")
    fig.tight_layout()
    out = Path(out) if out else run / "curves.png"
    with replacing(out) as tmp:
        fig.savefig(tmp, dpi=110, format=out.suffix.lstrip(".") or "png")
    plt.close(fig)
    return out
