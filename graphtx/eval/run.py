"""One evaluation run: a corpus, its citations, several systems, every citation protocol.

``evaluate_citations`` is what ``graphtx eval citations`` and ``graphtx eval paecter`` (and
``benchmarks/bench_eval.py``) call: load the corpus and the judgements once, fit each system on
the same documents, run the protocols, and return a :class:`CitationEvalReport` that
:mod:`graphtx.eval.report` prints as tables, JSON, a per-query CSV and metric-vs-k plots.

BM25 tuning (``tune=True``): a grid over k1 x b (``EvalConfig.tune_k1`` / ``tune_b``), the best
``tune_metric`` on the tuning citations wins (first in grid order on a tie); the tuned system is
reported beside the default one. As in the paper the tuning citations default to the evaluated
ones (validation), so the tuned row is an upper bound for BM25 on these queries, and says so.
"""

from __future__ import annotations

import dataclasses
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphtx.corpus.citations import read_citations
from graphtx.eval import PROTOCOLS
from graphtx.eval.baselines import BM25System
from graphtx.eval.config import EvalConfig
from graphtx.eval.cutoff import unreachable_pairs
from graphtx.eval.data import EvalCorpus, Judgements, citation_graph, judgements
from graphtx.eval.protocols import (
    PaecterResult,
    PaecterSamples,
    RetrievalResult,
    evaluate_paecter,
    evaluate_retrieval,
    load_samples,
    sample_paecter,
    save_samples,
)
from graphtx.eval.systems import System
from graphtx.progress import progress_bar


@dataclass
class CitationEvalReport:
    config: EvalConfig
    corpus: dict  # source, documents
    citations: dict  # files, pairs read, scored, skipped by reason, queries
    systems: list = field(default_factory=list)  # {name, label, info, fit_seconds}
    retrieval: list = field(default_factory=list)  # RetrievalResult per system
    paecter: list = field(default_factory=list)  # PaecterResult per system
    paecter_samples: dict = field(default_factory=dict)  # meta of the samples (seed, file, counts)
    tuning: dict = field(default_factory=dict)  # BM25 grid, when tuned
    versions: dict = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict:
        from graphtx.eval.report import bootstrap_intervals, ratios

        cfg = dataclasses.asdict(self.config)
        intervals = bootstrap_intervals(self.retrieval, self.config.recall_k, self.config.ndcg_k)
        return {
            "config": cfg,
            "corpus": self.corpus,
            "citations": self.citations,
            "systems": self.systems,
            "retrieval": [
                r.to_json()
                | {
                    "ratio_to_bm25": ratios(self.retrieval, r),
                    "bootstrap_to_bm25": [dataclasses.asdict(i) for i in intervals.get(r.system, [])],
                }
                for r in self.retrieval
            ],
            "paecter": [r.to_json() | {"ratio_to_bm25": ratios(self.paecter, r)} for r in self.paecter],
            "paecter_samples": self.paecter_samples,
            "tuning": self.tuning,
            "versions": self.versions,
            "seconds": self.seconds,
        }


def _versions() -> dict:
    import numpy

    out = {"python": platform.python_version(), "numpy": numpy.__version__}
    for name in ("bm25s", "torch", "sentence_transformers"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "__version__", "")
    return out


def tune_bm25(
    corpus: EvalCorpus, judged: Judgements, cfg: EvalConfig, progress: bool | None = None
) -> tuple[BM25System, dict]:
    """(best BM25 system, the grid's results) over ``cfg.tune_k1`` x ``cfg.tune_b``."""
    metric = f"nDCG@{cfg.ndcg_k}" if cfg.tune_metric == "nDCG" else f"Recall@{cfg.recall_k}"
    base = BM25System.from_config(cfg).fit(corpus)
    tokens = base.fitted_tokens
    grid, best = [], None
    quick = dataclasses.replace(cfg, depth=max(cfg.recall_k, cfg.ndcg_k), recall_ks=())
    points = [(k1, b) for k1 in cfg.tune_k1 for b in cfg.tune_b]
    for k1, b in progress_bar(points, desc="tune bm25", unit="point", enabled=progress):
        system = BM25System.from_config(cfg, k1=k1, b=b).fit(corpus, tokens)
        value = evaluate_retrieval(system, corpus, judged, quick, per_query=False).metrics[metric]
        grid.append({"k1": k1, "b": b, metric: value})
        if best is None or value > best[2]:
            best = (k1, b, value)
    k1, b, value = best
    tuned = BM25System.from_config(cfg, k1=k1, b=b, label=f"BM25 tuned (k1 {k1:g}, b {b:g})").fit(corpus, tokens)
    tuned.name = "bm25-tuned"
    return tuned, {"metric": metric, "k1": k1, "b": b, "best": value, "grid": grid}


def evaluate_citations(
    corpus: str | Path | EvalCorpus,
    citations: str | Path | Sequence[str | Path],
    systems: Sequence[System],
    cfg: EvalConfig = EvalConfig(),
    protocols: Sequence[str] = PROTOCOLS,
    extra_citations: Sequence[str | Path] = (),
    paecter_samples: str | Path | None = None,
    tune: bool = False,
    tune_citations: str | Path | None = None,
    seed: int = 0,
    progress: bool | None = None,
) -> CitationEvalReport:
    """Run ``protocols`` for every system on one corpus and one set of judgements.

    ``citations``: the file(s) whose pairs are judged (TSV/CSV, citations Parquet, or a corpus
    directory's citations). ``extra_citations``: files only used to find PaECTER's hard negatives
    and what a focal cites at all (e.g. the training citations). ``paecter_samples``: a JSON file of
    samples: read when it exists, else drawn with ``seed`` and written there.
    """
    bad = set(protocols) - set(PROTOCOLS)
    if bad or not protocols:
        raise ValueError(f"unknown protocol(s) {', '.join(sorted(bad))}; known: {', '.join(PROTOCOLS)}")
    started = time.time()
    corpus = (corpus if isinstance(corpus, EvalCorpus) else EvalCorpus.load(corpus, cfg)).with_cutoff(cfg.cutoff)
    files = [citations] if isinstance(citations, (str, Path)) else list(citations)
    pairs = [c for f in files for c in read_citations(f)]
    judged = judgements(pairs, corpus, cfg)
    if not judged.relevant:
        raise ValueError(
            f"none of the {len(pairs)} citation pairs of {', '.join(map(str, files))} has both documents in {corpus.source or 'the corpus'}"
        )
    report = CitationEvalReport(
        config=cfg,
        corpus={
            "source": corpus.source,
            "documents": len(corpus),
            "query_fields": list(cfg.query_fields),
            "candidate_fields": list(cfg.candidate_fields),
        },
        citations={
            "files": [str(f) for f in files],
            "pairs_read": len(pairs),
            "pairs_scored": judged.pairs,
            "queries": len(judged.relevant),
            "skipped": judged.skipped,
            "gains": dict(cfg.gains) or "binary",
            "default_gain": cfg.default_gain,
            "cutoff": cfg.cutoff,
            "cutoff_rule": corpus.cutoff.describe(),
            "pairs_unreachable": unreachable_pairs(corpus.cutoff, judged.relevant, corpus.position),
            "paecter": "paecter" in protocols,
        },
    )

    systems = list(systems)
    if tune:
        tune_judged = judged if tune_citations is None else judgements(read_citations(tune_citations), corpus, cfg)
        tuned, report.tuning = tune_bm25(corpus, tune_judged, cfg, progress)
        report.tuning["citations"] = str(tune_citations or ", ".join(map(str, files)))
        report.tuning["tuned_on_evaluated_queries"] = tune_citations is None
        at = next((i + 1 for i, s in enumerate(systems) if s.name == "bm25"), len(systems))
        systems.insert(at, tuned)

    samples: PaecterSamples | None = None
    if "paecter" in protocols:
        if paecter_samples is not None and Path(paecter_samples).exists():
            samples = load_samples(paecter_samples, corpus)
        else:
            cites = citation_graph(pairs + [c for f in extra_citations for c in read_citations(f)])
            samples = sample_paecter(corpus, judged, cites, cfg, seed)
            samples.meta["citations"] = [str(f) for f in files]
            samples.meta["extra_citations"] = [str(f) for f in extra_citations]
            if paecter_samples is not None:
                save_samples(samples, paecter_samples)
                samples.meta["written_to"] = str(paecter_samples)
        report.paecter_samples = samples.meta

    for system in systems:
        t0 = time.time()
        if system.corpus is not corpus:
            system.fit(corpus)
        fit_seconds = round(time.time() - t0, 2)
        if "retrieval" in protocols:
            report.retrieval.append(evaluate_retrieval(system, corpus, judged, cfg))
        if samples is not None and samples.samples:
            report.paecter.append(evaluate_paecter(system, corpus, samples, cfg))
        report.systems.append(
            {"name": system.name, "label": system.label, "info": system.info(), "fit_seconds": fit_seconds}
        )
    report.versions = _versions()
    report.seconds = round(time.time() - started, 2)
    return report


__all__ = ["PROTOCOLS", "CitationEvalReport", "PaecterResult", "RetrievalResult", "evaluate_citations", "tune_bm25"]
