"""Run files scored like built-in systems: TREC runs + judgements -> the same metrics, per-query rows and bootstrap.

``graphtx eval run RUN [RUN ...] --qrels QRELS`` scores runs of any system (``graphtx search
--topics``, Pyserini's ``--output``, a sentence-transformers pipeline) with the code that scores
``graphtx eval citations``' own systems (:mod:`graphtx.metrics`, :mod:`graphtx.eval.bootstrap`),
so the numbers compare:

* a run file is TREC's ``qid Q0 docid rank score tag`` (white-space separated); a query's hits are
  ordered by score (descending), ties by the file's rank, then by id (trec_eval also orders by
  score, not by the rank column), and kept to ``eval.depth`` (1000); a document listed twice for a
  query counts once (its first line);
* judgements (``--qrels``) are TREC qrels (``qid iter docid rel``; rel > 0 is relevant, gain 1, or
  the gain ``--gains`` gives the rel value, e.g. ``2=2,1=1`` for graded nDCG) or citation pairs
  (TSV/CSV, citations Parquet, a corpus directory; gains per category as ``eval citations``);
  a query judging itself relevant is not scored (as ``eval.leave_out_self``); with ``--corpus``
  pairs whose documents are not in that corpus are not scored either, exactly as ``eval citations``
  judges;
* every judged query is scored: a judged query absent from a run scores 0 on every measure (as
  ``trec_eval -c``; trec_eval's default would average over the run's queries only and flatter a
  run that skips hard topics); the run's queries without judgements are not scored (counted).

Ratios and paired-bootstrap intervals are to the first run, or to ``--baseline NAME``.

Example::

    report = evaluate_runs(["runs/graphtx.trec", "runs/bm25.trec"], "qrels.txt", baseline="bm25")
    print("\\n".join(format_run_report(report)))
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphtx.corpus.citations import read_citations
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import Judgements, judgements
from graphtx.eval.protocols import CURVE_KS, RetrievalResult, metric_curves
from graphtx.metrics import aggregate_metrics, metric_names, per_query_metrics

# --- reading ---------------------------------------------------------------------------


@dataclass
class Run:
    name: str  # short name: the file's stem (made unique), what --baseline names
    path: Path
    rankings: dict  # query -> doc ids, best first (score desc, then rank, then id)
    tags: tuple[str, ...]
    lines: int
    duplicates: int  # (query, doc) lines after the first

    @property
    def depth(self) -> int:
        return max((len(r) for r in self.rankings.values()), default=0)


def read_run(path: str | Path, name: str = "") -> Run:
    """A TREC run file (module docstring); a malformed line is an error naming the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"run file {path} does not exist")
    rows: dict[str, dict[str, tuple[float, int]]] = {}
    tags: dict[str, None] = {}
    lines = duplicates = 0
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 6:
                raise ValueError(
                    f"{path} line {n}: a TREC run line has 6 fields (qid Q0 docid rank score tag), this one {len(parts)}"
                )
            qid, _, doc, rank, score, tag = parts
            try:
                rank_i, score_f = int(rank), float(score)
            except ValueError:
                raise ValueError(
                    f"{path} line {n}: rank {rank!r} must be a whole number and score {score!r} a number"
                ) from None
            if math.isnan(score_f):
                raise ValueError(f"{path} line {n}: score is nan")
            lines += 1
            tags[tag] = None
            hits = rows.setdefault(qid, {})
            if doc in hits:
                duplicates += 1
                continue
            hits[doc] = (score_f, rank_i)
    if not lines:
        raise ValueError(f"run file {path} holds no run lines (qid Q0 docid rank score tag)")
    rankings = {
        q: [d for d, _ in sorted(hits.items(), key=lambda item: (-item[1][0], item[1][1], item[0]))]
        for q, hits in rows.items()
    }
    return Run(name or path.stem, path, rankings, tuple(tags), lines, duplicates)


class _AnyDocument:
    """Stands for a corpus when none is given: every id is in it (only judgements' corpus rules use it)."""

    source = ""

    def __contains__(self, doc_id: str) -> bool:
        return True


def read_qrels(
    path: str | Path, cfg: EvalConfig = EvalConfig(), corpus=None, rel_gains: dict | None = None
) -> Judgements:
    """Judgements of TREC qrels or a citations file (module docstring), by ``eval.data.judgements``' rules.

    ``rel_gains``: TREC qrels only, the gain of a rel value ({"2": 2.0, "1": 1.0}); default binary (rel > 0: 1).
    """
    path = Path(path)
    pairs = _trec_qrels(path)
    if pairs is None:
        if rel_gains:
            raise ValueError(
                f"{path} is a citations file: its gains are per citation category (X=3,Y=2,...), not per rel value"
            )
        judged = judgements(read_citations(path), corpus if corpus is not None else _AnyDocument(), cfg)
    else:
        judged = _qrels_judgements(pairs, corpus if corpus is not None else _AnyDocument(), cfg, rel_gains or {})
    if not judged.relevant:
        raise ValueError(f"{path} judges no document relevant to any query (rel > 0, not the query itself)")
    return judged


def _qrels_judgements(pairs: list, corpus, cfg: EvalConfig, rel_gains: dict) -> Judgements:
    """``eval.data.judgements``' rules for qrels pairs, whose gain comes from the rel value."""
    from collections import Counter

    gains: dict[str, dict[str, float]] = {}
    skipped: Counter = Counter()
    for p in pairs:
        rel = int(p.category)
        gain = 0.0 if rel <= 0 else float(rel_gains.get(p.category, 1.0))
        if p.citing_id == p.cited_id and cfg.leave_out_self:
            skipped["self-citation"] += 1
        elif p.citing_id not in corpus:
            skipped["citing document not in the corpus"] += 1
        elif p.cited_id not in corpus:
            skipped["cited document not in the corpus"] += 1
        elif gain <= 0:
            skipped["not relevant (rel 0 or gain 0)"] += 1
        else:
            if p.cited_id in gains.get(p.citing_id, {}):
                skipped["duplicate pair"] += 1
            into = gains.setdefault(p.citing_id, {})
            into[p.cited_id] = max(gain, into.get(p.cited_id, 0.0))
    relevant = {q: dict(sorted(rel.items())) for q, rel in sorted(gains.items())}
    return Judgements(relevant, sum(map(len, relevant.values())), dict(skipped))


def is_trec_qrels(path: str | Path) -> bool:
    """Whether ``path`` reads as TREC qrels (else it is a citations file)."""
    return _trec_qrels(Path(path)) is not None


@dataclass(frozen=True)
class QrelsPair:
    """A qrels line as ``judgements`` reads a citation; ``category`` is the rel value ("2", "0")."""

    citing_id: str
    cited_id: str
    category: str


def _trec_qrels(path: Path) -> list[QrelsPair] | None:
    """Pairs of a TREC qrels file, the rel value as category; None when the file is not qrels (a citations file)."""
    if path.is_dir() or path.suffix in (".parquet", ".csv", ".tsv") or not path.is_file():
        return None
    out = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
                if not out:
                    return None  # not qrels: read as citations
                raise ValueError(
                    f"{path} line {n}: a TREC qrels line has 4 fields (qid iter docid rel), rel a whole number"
                )
            qid, _, doc, rel = parts
            out.append(QrelsPair(qid, doc, str(int(rel))))
    return out


# --- scoring ---------------------------------------------------------------------------


def evaluate_run(run: Run, judged: Judgements, cfg: EvalConfig = EvalConfig()) -> RetrievalResult:
    """The measures of ``eval citations`` for one run over every judged query (module docstring)."""
    started = time.time()
    rankings = {q: run.rankings.get(q, [])[: cfg.depth] for q in judged.relevant}
    metrics = aggregate_metrics(
        rankings, judged.relevant, cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks, cfg.depth
    )
    cited_ranks = {}
    rows = []
    for q, ranking in rankings.items():
        position = {d: i for i, d in enumerate(ranking, 1)}
        ranks = {d: position.get(d) for d in judged.relevant[q]}
        cited_ranks[q] = {d: r if r is not None else math.inf for d, r in ranks.items()}
        m = per_query_metrics(
            ranking, judged.relevant[q], cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks, cfg.depth
        )
        found = [r for r in ranks.values() if r is not None]
        rows.append(
            {
                "query": q,
                "relevant": int(m.pop("relevant")),
                "first_relevant_rank": min(found) if found else "",
                **m,
                "top3": " ".join(ranking[:3]),
                "cited_ranks": " ".join(
                    f"{d}:{r if r is not None else '-'}"
                    for d, r in sorted(ranks.items(), key=lambda x: (x[1] is None, x[1] or 0, x[0]))
                ),
            }
        )
    ks = sorted({k for k in CURVE_KS if k <= cfg.depth} | {cfg.recall_k, cfg.ndcg_k, *cfg.recall_ks})
    return RetrievalResult(
        system=f"{run.name} ({run.path.name}" + (f", {', '.join(run.tags)})" if run.tags else ")"),
        name=run.name,
        metrics=metrics,
        queries=len(rankings),
        pairs=judged.pairs,
        candidates=run.depth,
        per_query=rows,
        curves=metric_curves(cited_ranks, judged.relevant, ks),
        seconds=round(time.time() - started, 2),
    )


@dataclass
class RunEvalReport:
    config: EvalConfig
    qrels: dict  # file, pairs scored, queries, skipped by reason
    runs: list = field(
        default_factory=list
    )  # per run: name, file, tags, lines, queries, judged queries missing, unjudged queries, depth
    results: list = field(default_factory=list)  # RetrievalResult per run
    baseline: str = ""

    def to_json(self) -> dict:
        from graphtx.eval.report import bootstrap_intervals, ratios

        intervals = bootstrap_intervals(self.results, self.config.recall_k, self.config.ndcg_k, self.baseline)
        return {
            "config": dataclasses.asdict(self.config),
            "qrels": self.qrels,
            "runs": self.runs,
            "baseline": self.baseline,
            "retrieval": [
                r.to_json()
                | {
                    "ratio_to_baseline": ratios(self.results, r, self.baseline),
                    "bootstrap_to_baseline": [dataclasses.asdict(i) for i in intervals.get(r.system, [])],
                }
                for r in self.results
            ],
        }


def judged_ids(run: Run, judged: Judgements) -> tuple[Run, int]:
    """The run with each document id written as the judgements write it, where only the form differs.

    Other systems write ids their own way (``US8418590B2``, ``US-08418590-B2``); a document or query id
    absent from the judgements whose compact key (``graphtx.corpus.ids.compact``) is that of exactly one
    judged id becomes that id, so a run is not scored 0 for its spelling. Returns the run and how many
    ids changed.
    """
    from graphtx.corpus.ids import compact

    ids = {d for docs in judged.relevant.values() for d in docs}
    by_key: dict[str, set[str]] = {}
    for d in ids:
        by_key.setdefault(compact(d), set()).add(d)
    query_key: dict[str, set[str]] = {}
    for q in judged.relevant:
        query_key.setdefault(compact(q), set()).add(q)
    changed = 0
    rankings = {}
    for q, ranking in run.rankings.items():
        if (
            q not in judged.relevant and len(query_key.get(compact(q), ())) == 1
        ):  # a topic typed US8418590B2 is US-8418590-B2
            judged_q = next(iter(query_key[compact(q)]))
            if judged_q not in run.rankings and judged_q not in rankings:
                q, changed = judged_q, changed + 1
        out, seen = [], set()
        for d in ranking:
            if d not in ids and len(by_key.get(compact(d), ())) == 1:
                d, changed = next(iter(by_key[compact(d)])), changed + 1
            if d not in seen:
                seen.add(d)
                out.append(d)
        rankings[q] = out
    return (dataclasses.replace(run, rankings=rankings) if changed else run), changed


def cut_run(run: Run, corpus) -> tuple[Run, int, int]:
    """The run with the hits its corpus's cut-off rules out removed (:mod:`graphtx.eval.cutoff`), as ``eval citations``
    ranks. A hit is first read as the corpus writes its id (``US8418590B2`` = ``US-8418590-B2``, where one corpus id
    has that compact key); a hit the corpus does not hold at all keeps its place (its date is unknown here, and it is
    never relevant). Returns the run, how many hits were removed, and how many are not in the corpus."""
    from graphtx.corpus.ids import compact

    by_key: dict[str, list[str]] = {}
    for d in corpus.ids:
        by_key.setdefault(compact(d), []).append(d)

    def known(d: str) -> str | None:
        if d in corpus:
            return d
        found = by_key.get(compact(d), ())
        return found[0] if len(found) == 1 else None

    rankings, removed, unknown = {}, 0, 0
    for q, ranking in run.rankings.items():
        query = known(q)
        if query is None:  # a query the corpus does not know is not judged either
            rankings[q] = ranking
            continue
        allowed = corpus.candidate_mask([corpus.position[query]])[0]  # (c,) bool
        kept = []
        for d in ranking:
            doc = known(d)
            if doc is None:
                unknown += 1
                kept.append(d)
            elif allowed[corpus.position[doc]]:
                kept.append(d)
        removed += len(ranking) - len(kept)
        rankings[q] = kept
    return (dataclasses.replace(run, rankings=rankings) if removed else run), removed, unknown


def evaluate_runs(
    runs: Sequence[str | Path],
    qrels: str | Path,
    cfg: EvalConfig = EvalConfig(),
    baseline: str | None = None,
    corpus=None,
    rel_gains: dict | None = None,
) -> RunEvalReport:
    """Score each run file on the judgements of ``qrels``; ratios to ``baseline`` (a run's name or path; default the first).

    ``corpus``: an EvalCorpus whose documents alone are judged, and whose cut-off (``corpus.cutoff_policy``)
    removes the hits a query may not retrieve; ``rel_gains``: see :func:`read_qrels`.
    """
    if not runs:
        raise ValueError("give at least one run file")
    judged = read_qrels(qrels, cfg, corpus, rel_gains)
    names: list[str] = []
    loaded = []
    for path in runs:
        stem, n = Path(path).stem, 2
        name = stem
        while name in names:
            name, n = f"{stem}-{n}", n + 1
        names.append(name)
        loaded.append(read_run(path, name))
    if baseline is None:
        ref = loaded[0]
    else:
        ref = next((r for r in loaded if baseline in (r.name, str(r.path), r.path.name)), None)
        if ref is None:
            raise ValueError(f"--baseline {baseline!r} names none of the runs ({', '.join(names)})")
    from graphtx.eval.cutoff import unreachable_pairs

    policy = corpus.cutoff_policy if corpus is not None else "none"
    unreachable = unreachable_pairs(corpus.cutoff, judged.relevant, corpus.position) if corpus is not None else 0
    report = RunEvalReport(
        cfg,
        {
            "file": str(qrels),
            "pairs_scored": judged.pairs,
            "queries": len(judged.relevant),
            "skipped": judged.skipped,
            "cutoff": policy,
            "pairs_unreachable": unreachable,
        },
        baseline=ref.name,
    )
    for run in loaded:
        run, normalised = judged_ids(run, judged)
        removed = unknown = 0
        if corpus is not None and corpus.cutoff.active:
            run, removed, unknown = cut_run(run, corpus)
        report.results.append(evaluate_run(run, judged, cfg))
        report.runs.append(
            {
                "name": run.name,
                "file": str(run.path),
                "tags": list(run.tags),
                "lines": run.lines,
                "duplicates": run.duplicates,
                "depth": run.depth,
                "ids_normalised": normalised,
                "cut_off_hits": removed,
                "hits_not_in_corpus": unknown,
                "queries": len(run.rankings),
                "judged_missing": sorted(set(judged.relevant) - set(run.rankings)),
                "unjudged": len(set(run.rankings) - set(judged.relevant)),
            }
        )
    return report


def _gain_text(report: RunEvalReport) -> str:
    gains = report.qrels.get("gains") or dict(report.config.gains)
    return ", ".join(f"{k}={v:g}" for k, v in gains.items()) + " (others 1)" if gains else "binary"


def format_run_report(report: RunEvalReport) -> list[str]:
    """The text ``graphtx eval run`` prints: judgements, each run's coverage, the table and the bootstrap intervals."""
    from graphtx.eval.report import bootstrap_table, cutoff_line, metrics_table

    cfg, q = report.config, report.qrels
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(q["skipped"].items())) or "none"
    lines = [
        f"judgements {q['file']}: {q['pairs_scored']} pairs scored over {q['queries']} queries; not scored: {skipped}",
        f"gain: {_gain_text(report)}; hits ordered by score, ties by the run's rank, then id; "
        f"each query's top {cfg.depth} read; a judged query missing from a run scores 0",
        cutoff_line(q | {"paecter": False})
        + ("" if q.get("cutoff", "none") != "none" else " (give --corpus and --cutoff to score runs under a cut-off)"),
        "",
    ]
    for run in report.runs:
        missing = run["judged_missing"]
        lines.append(
            f"{run['name']}: {run['file']} ({run['lines']} lines, {run['queries']} queries, up to {run['depth']} hits each"
            + (
                f"; {len(missing)} judged queries not in it, scored 0: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}"
                if missing
                else ""
            )
            + (f"; {run['unjudged']} queries without judgements, not scored" if run["unjudged"] else "")
            + (f"; {run['duplicates']} repeated (query, doc) lines ignored" if run["duplicates"] else "")
            + (
                f"; {run['ids_normalised']} ids read as the judgements write them (e.g. US8418590B2 = US-8418590-B2)"
                if run.get("ids_normalised")
                else ""
            )
            + (f"; {run['cut_off_hits']} hits removed by the cut-off" if run.get("cut_off_hits") else "")
            + (
                f"; {run['hits_not_in_corpus']} hits not in the corpus kept in place (no date to cut by)"
                if run.get("hits_not_in_corpus")
                else ""
            )
            + ")"
        )
        if run["depth"] < cfg.ndcg_k:
            lines.append(
                f"  note: nDCG@{cfg.ndcg_k} and R@k beyond {run['depth']} read only the {run['depth']} hits a query has in this run"
            )
    lines += [
        "",
        f"(Recall@{cfg.recall_k} over pairs, nDCG@{cfg.ndcg_k} mean over queries; MAP, MRR@{cfg.mrr_k}, R@k means over queries; "
        f"in parentheses: ratio to {report.baseline})",
        "",
    ]
    lines += metrics_table(
        report.results,
        metric_names(cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks),
        first_column="run",
        reference=report.baseline,
    )
    lines += bootstrap_table(report.results, cfg.recall_k, cfg.ndcg_k, report.baseline, report.baseline)
    return lines


# --- command ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOptions:
    """What one ``graphtx eval run`` scores, as values: each field is the flag of its name (None: not given)."""

    runs: tuple[str, ...]  # TREC run files
    qrels: str  # TREC qrels or citation pairs
    baseline: str | None = None  # the run ratios and intervals are to (default: the first)
    corpus: str | None = None  # corpus whose documents alone are judged, and whose dates the cut-off reads
    cutoff: str | None = None  # eval.cutoff with corpus (None: config); without corpus none applies
    k: int | None = None  # Recall@k cut-off (None: config)
    ndcg_k: int | None = None  # nDCG@k cut-off (None: config)
    gains: tuple[tuple[str, float], ...] | None = None  # gain per category or qrels rel value; None: binary
    per_query: str | None = None  # per-query CSV
    out: str | None = None  # results directory: results.json, per_query.csv


def run_runs_command(options: RunOptions, config) -> tuple[dict, list[str], int]:
    """(JSON summary, printed lines, exit status) of ``graphtx eval run``."""
    import json

    from graphtx.atomic import atomic_write_text
    from graphtx.eval.data import EvalCorpus
    from graphtx.eval.report import _write_rows
    from graphtx.from_dict import with_overrides

    o = options
    qrels = is_trec_qrels(o.qrels)
    gains = o.gains
    if o.cutoff not in (None, "none") and not o.corpus:
        raise ValueError(f"--cutoff {o.cutoff} reads the documents' dates and families: give --corpus")
    cfg = with_overrides(
        config.eval,
        recall_k=o.k,
        ndcg_k=o.ndcg_k,
        gains=None if qrels else gains,
        depth=max(config.eval.depth, o.k or 0, o.ndcg_k or 0),
        cutoff=o.cutoff if o.corpus else "none",
    )
    corpus = EvalCorpus.load(o.corpus, cfg) if o.corpus else None
    report = evaluate_runs(
        list(o.runs), o.qrels, cfg, baseline=o.baseline, corpus=corpus, rel_gains=dict(gains or ()) if qrels else None
    )
    if qrels and gains:
        report.qrels["gains"] = {rel: g for rel, g in gains}
    paths = {}
    rows = [{"run": r.name, **row} for r in report.results for row in r.per_query]
    if o.out:
        out = Path(o.out)
        out.mkdir(parents=True, exist_ok=True)
        paths["per_query"] = _write_rows(rows, out / "per_query.csv")
        paths["json"] = out / "results.json"
        atomic_write_text(paths["json"], json.dumps(report.to_json(), indent=2) + "\n")
    if o.per_query:
        paths["per_query_csv"] = _write_rows(rows, o.per_query)
    lines = format_run_report(report) + [f"wrote {p}" for p in paths.values()]
    return report.to_json() | {"files": {k: str(v) for k, v in paths.items()}}, lines, 0


__all__ = [
    "Run",
    "RunEvalReport",
    "RunOptions",
    "cut_run",
    "evaluate_run",
    "evaluate_runs",
    "format_run_report",
    "read_qrels",
    "read_run",
    "run_runs_command",
]
