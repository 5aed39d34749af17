"""Citation protocols: retrieval over the whole corpus, and PaECTER's 30-candidate samples.

Retrieval (the paper's protocol, Björkqvist & Kallio 2023, plus the SciBERT-triplet paper's,
Acikalin & Kutlu 2022):

* a query is a citing document of the citations file; its candidates are every corpus document
  but itself; its relevant documents are the ones it cites, with the gain of their category;
* ranking: score desc, ties by id (:mod:`graphtx.eval.ranking`), kept to ``depth`` (1000);
* Recall@3 over (query, cited) pairs; nDCG@150 mean over queries; MAP (AP over the top
  ``depth``, all of a query's relevant documents in the denominator), MRR@10 and R@100/500/1000
  as trec_eval reports them: means over queries (:mod:`graphtx.metrics`);
* per query, the exact rank of every cited document (however deep) for error analysis and the
  metric-vs-k curves.

PaECTER (Ghosh et al. 2024): a sample is 1 focal document + 5 documents it cites + 25 it does not:
10 *hard* (cited by the focal's cited documents) and 15 *easy* (sharing a CPC subclass with the
focal). The 30 are ranked by the system's score for the focal (ties by id); per sample: the rank
of the first relevant (RFR, lower is better), AP and RR@10; reported as means. Sampling is seeded
and written to a JSON file so that anyone can rerun the very same samples (``load_samples``).
Where the pools are short the sample says how it was filled: a hard shortfall is filled with easy
negatives (``hard_short``); a focal without CPC codes (the EV-battery abstracts have none) draws its
easy negatives from the whole corpus (``easy_pool``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from graphtx.atomic import atomic_write_text
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus, Judgements
from graphtx.eval.ranking import ranks_of, top_k
from graphtx.eval.systems import System
from graphtx.metrics import aggregate_metrics, average_precision, metric_names, per_query_metrics, reciprocal_rank

CURVE_KS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 150, 200, 300, 500, 1000)


# --- retrieval ---------------------------------------------------------------------


@dataclass
class RetrievalResult:
    system: str  # label
    name: str  # System.name ("bm25" is the ratio reference)
    metrics: dict  # metric name -> value (metric_names order)
    queries: int
    pairs: int
    candidates: int  # per query (the corpus less the query)
    per_query: list = field(default_factory=list)  # one dict per query (see per_query_rows)
    curves: dict = field(default_factory=dict)  # {"k": [...], "Recall": [...], "nDCG": [...]}
    seconds: float = 0.0  # scoring and ranking, not fitting

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "per_query"}


def _chunks(rows: np.ndarray, size: int) -> Iterable[np.ndarray]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def rank_queries(system: System, corpus: EvalCorpus, judged: Judgements, cfg: EvalConfig) -> tuple[dict, dict]:
    """(rankings {query: top ``depth`` ids}, cited ranks {query: {cited: exact rank, inf when the cut-off removes it}}).

    Only the candidates the corpus's cut-off lets through are ranked (:mod:`graphtx.eval.cutoff`).
    """
    rankings, cited_ranks = {}, {}
    rows = corpus.rows(judged.query_ids)
    for chunk in _chunks(rows, cfg.query_chunk):
        scores = system.scores(chunk)  # (q', c)
        masks = corpus.candidate_mask(chunk)  # (q', c) bool or None
        for i, (row, s) in enumerate(zip(chunk, scores)):
            query = corpus.ids[row]
            exclude = int(row) if cfg.leave_out_self else None
            allowed = None if masks is None else masks[i]
            rankings[query] = [corpus.ids[i] for i in top_k(s, cfg.depth, exclude, allowed)]
            cited = list(judged.relevant[query])
            reachable = [d for d in cited if allowed is None or allowed[corpus.position[d]]]
            ranks = dict(zip(reachable, ranks_of(s, corpus.rows(reachable), exclude, allowed).tolist()))
            cited_ranks[query] = {d: ranks.get(d, math.inf) for d in cited}
    return rankings, cited_ranks


def metric_curves(
    cited_ranks: Mapping[str, Mapping[str, int]], relevant: Mapping[str, Mapping[str, float]], ks: Iterable[int]
) -> dict:
    """Recall@k over pairs and mean nDCG@k for each k, from the exact ranks of the cited documents."""
    ks = list(ks)
    recall, ndcg = [], []
    pairs = sum(len(r) for r in cited_ranks.values())
    for k in ks:
        recall.append(
            sum(1 for r in cited_ranks.values() for rank in r.values() if rank <= k) / pairs if pairs else math.nan
        )
        per_query = []
        for q, ranks in cited_ranks.items():
            gains = relevant[q]
            ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains.values(), reverse=True)[:k]))
            per_query.append(sum(gains[d] / math.log2(rank + 1) for d, rank in ranks.items() if rank <= k) / ideal)
        ndcg.append(float(np.mean(per_query)) if per_query else math.nan)
    return {"k": ks, "Recall": recall, "nDCG": ndcg}


def evaluate_retrieval(
    system: System, corpus: EvalCorpus, judged: Judgements, cfg: EvalConfig = EvalConfig(), per_query: bool = True
) -> RetrievalResult:
    """Score a fitted system on every judged query (see the module docstring)."""
    if not judged.relevant:
        raise ValueError("no query has a relevant document in the corpus: nothing to evaluate")
    if corpus.cutoff_policy != cfg.cutoff:
        raise ValueError(
            f"the corpus was loaded under the {corpus.cutoff_policy} cut-off, the evaluation asks for {cfg.cutoff}: "
            "load it with this config (EvalCorpus.load(path, cfg)) or corpus.with_cutoff(cfg.cutoff)"
        )
    started = time.time()
    rankings, cited_ranks = rank_queries(system, corpus, judged, cfg)
    metrics = aggregate_metrics(
        rankings, judged.relevant, cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks, cfg.depth
    )
    rows = per_query_rows(rankings, cited_ranks, judged.relevant, cfg) if per_query else []
    ks = sorted({k for k in CURVE_KS if k <= cfg.depth} | {cfg.recall_k, cfg.ndcg_k, *cfg.recall_ks})
    return RetrievalResult(
        system=system.label,
        name=system.name,
        metrics=metrics,
        queries=len(rankings),
        pairs=judged.pairs,
        candidates=len(corpus)
        - int(cfg.leave_out_self),  # before the cut-off (which lets a different number through per query)
        per_query=rows,
        curves=metric_curves(cited_ranks, judged.relevant, ks),
        seconds=round(time.time() - started, 2),
    )


def per_query_rows(
    rankings: Mapping, cited_ranks: Mapping, relevant: Mapping, cfg: EvalConfig, top: int = 3
) -> list[dict]:
    """One row per query: every measure, the first relevant rank, the top ids and each cited rank."""
    rows = []
    for q, ranking in rankings.items():
        m = per_query_metrics(ranking, relevant[q], cfg.recall_k, cfg.ndcg_k, cfg.mrr_k, cfg.recall_ks, cfg.depth)
        ranks = cited_ranks[q]
        first = min(ranks.values())
        rows.append(
            {
                "query": q,
                "relevant": int(m.pop("relevant")),
                "first_relevant_rank": first
                if math.isfinite(first)
                else "",  # "": every cited document removed by the cut-off
                **m,
                f"top{top}": " ".join(ranking[:top]),
                "cited_ranks": " ".join(
                    f"{d}:{r if math.isfinite(r) else '-'}"
                    for d, r in sorted(ranks.items(), key=lambda x: (x[1], x[0]))
                ),
            }
        )
    return rows


# --- PaECTER: sampling -----------------------------------------------------------


@dataclass(frozen=True)
class PaecterSample:
    focal: str
    cited: tuple[str, ...]  # relevant
    hard: tuple[str, ...]  # cited by the focal's citations, not by the focal
    easy: tuple[str, ...]  # same CPC (or any document, see easy_pool), not cited by the focal
    easy_pool: str = ""  # where the easy negatives come from
    hard_short: int = 0  # hard negatives missing from a too-small pool (replaced by easy ones)

    @property
    def candidates(self) -> tuple[str, ...]:
        return tuple(sorted((*self.cited, *self.hard, *self.easy)))


@dataclass
class PaecterSamples:
    samples: list  # of PaecterSample, by focal id
    meta: dict  # seed, sizes, sources, eligible focals, shortfalls

    def to_json(self) -> dict:
        return {**self.meta, "samples": [asdict(s) for s in self.samples]}


def _pick(rng: np.random.Generator, pool: list[str], n: int) -> list[str]:
    if n >= len(pool):
        return sorted(pool)
    return sorted(pool[i] for i in rng.choice(len(pool), size=n, replace=False))


def sample_paecter(
    corpus: EvalCorpus,
    judged: Judgements,
    cites: Mapping[str, set[str]],
    cfg: EvalConfig = EvalConfig(),
    seed: int = 0,
) -> PaecterSamples:
    """Draw PaECTER samples (module docstring). ``judged`` gives the focals and their cited documents;
    ``cites`` (citing -> cited, every known citation, e.g. train + validation files) gives the hard
    negatives and what a focal cites at all (never a negative)."""
    rng = np.random.default_rng(seed)
    eligible = sorted(q for q, rel in judged.relevant.items() if len(rel) >= cfg.paecter_cited)
    focals = _pick(rng, eligible, cfg.paecter_samples)
    n_neg = cfg.paecter_hard + cfg.paecter_easy
    by_code: dict[str, set[str]] = {}
    for doc_id, codes in zip(corpus.ids, corpus.codes):
        for code in codes:
            by_code.setdefault(code.replace(" ", "")[: cfg.paecter_cpc_chars], set()).add(doc_id)
    samples, skipped = [], []
    for focal in focals:
        cited = _pick(rng, sorted(judged.relevant[focal]), cfg.paecter_cited)
        cited_any = set(judged.relevant[focal]) | cites.get(focal, set()) | {focal}  # never negatives
        hard_pool = sorted(
            {d for c in set(judged.relevant[focal]) | cites.get(focal, set()) for d in cites.get(c, ())}
            & set(corpus.position) - cited_any
        )
        hard = _pick(rng, hard_pool, cfg.paecter_hard)
        short = cfg.paecter_hard - len(hard)
        codes = {c.replace(" ", "")[: cfg.paecter_cpc_chars] for c in corpus.codes[corpus.position[focal]]}
        taken = cited_any | set(hard)
        if codes:
            pool = sorted(set().union(*(by_code[c] for c in codes)) - taken)
            label = "same CPC " + ",".join(sorted(codes))
            if len(pool) < cfg.paecter_easy + short:
                pool, label = (
                    sorted(set(corpus.ids) - taken),
                    f"any document (fewer than {cfg.paecter_easy + short} share the focal's CPC)",
                )
        else:
            pool, label = sorted(set(corpus.ids) - taken), "any document (focal has no CPC)"
        easy = _pick(rng, pool, cfg.paecter_easy + short)
        if len(hard) + len(easy) < n_neg:
            skipped.append(focal)
            continue
        samples.append(PaecterSample(focal, tuple(cited), tuple(hard), tuple(easy), label, short))
    meta = {
        "protocol": f"PaECTER: 1 focal + {cfg.paecter_cited} cited + {cfg.paecter_hard} hard + {cfg.paecter_easy} easy non-cited",
        "seed": seed,
        "config": {
            k: getattr(cfg, k)
            for k in ("paecter_cited", "paecter_hard", "paecter_easy", "paecter_samples", "paecter_cpc_chars")
        },
        "corpus": corpus.source,
        "documents": len(corpus),
        "eligible_focals": len(eligible),
        "samples_drawn": len(samples),
        "skipped_focals": skipped,
        "hard_short_samples": sum(1 for s in samples if s.hard_short),
        "easy_without_cpc": sum(1 for s in samples if s.easy_pool.startswith("any document")),
    }
    return PaecterSamples(samples, meta)


def save_samples(samples: PaecterSamples, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(samples.to_json(), indent=1) + "\n")
    return path


def load_samples(path: str | Path, corpus: EvalCorpus) -> PaecterSamples:
    """Samples written by :func:`save_samples`; every id must be a document of ``corpus``."""
    data = json.loads(Path(path).read_text())
    samples = [
        PaecterSample(
            s["focal"],
            tuple(s["cited"]),
            tuple(s["hard"]),
            tuple(s["easy"]),
            s.get("easy_pool", ""),
            s.get("hard_short", 0),
        )
        for s in data.pop("samples")
    ]
    missing = sorted({d for s in samples for d in (s.focal, *s.candidates) if d not in corpus})
    if missing:
        raise ValueError(
            f"{path}: {len(missing)} sampled ids are not documents of {corpus.source or 'the corpus'} (first: {missing[0]})"
        )
    return PaecterSamples(samples, data | {"loaded_from": str(path)})


# --- PaECTER: scoring --------------------------------------------------------------


@dataclass
class PaecterResult:
    system: str  # label
    name: str  # System.name
    metrics: dict  # RFR (lower is better), MAP, MRR@k
    samples: int
    per_sample: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "per_sample"}


def paecter_metric_names(cfg: EvalConfig = EvalConfig()) -> list[str]:
    return ["RFR", "MAP", f"MRR@{cfg.mrr_k}"]


def evaluate_paecter(
    system: System, corpus: EvalCorpus, samples: PaecterSamples, cfg: EvalConfig = EvalConfig()
) -> PaecterResult:
    """Rank each sample's 30 candidates by the system's scores for its focal (ties by id)."""
    if not samples.samples:
        raise ValueError("no PaECTER samples (no focal has enough cited documents in the corpus)")
    rows = []
    focal_rows = corpus.rows(s.focal for s in samples.samples)
    for start in range(0, len(focal_rows), cfg.query_chunk):
        with corpus.cutoff_suspended():  # a sample's 30 candidates are the protocol: no system cuts them
            scores = system.scores(focal_rows[start : start + cfg.query_chunk])  # (q', c)
        for s, row_scores in zip(samples.samples[start : start + cfg.query_chunk], scores):
            cands = s.candidates  # sorted ids = sorted columns
            order = top_k(row_scores[corpus.rows(cands)], len(cands))
            ranking = [cands[i] for i in order]
            relevant = {d: 1.0 for d in s.cited}
            first = next(i + 1 for i, d in enumerate(ranking) if d in relevant)
            rows.append(
                {
                    "focal": s.focal,
                    "RFR": first,
                    "AP": average_precision(ranking, relevant),
                    f"RR@{cfg.mrr_k}": reciprocal_rank(ranking, relevant, cfg.mrr_k),
                    "cited_ranks": " ".join(str(i + 1) for i, d in enumerate(ranking) if d in relevant),
                }
            )
    names = paecter_metric_names(cfg)
    metrics = {
        names[0]: float(np.mean([r["RFR"] for r in rows])),
        names[1]: float(np.mean([r["AP"] for r in rows])),
        names[2]: float(np.mean([r[f"RR@{cfg.mrr_k}"] for r in rows])),
    }
    return PaecterResult(system.label, system.name, metrics, len(rows), rows)


__all__ = [
    "CURVE_KS",
    "PaecterResult",
    "PaecterSample",
    "PaecterSamples",
    "RetrievalResult",
    "evaluate_paecter",
    "evaluate_retrieval",
    "load_samples",
    "metric_curves",
    "metric_names",
    "paecter_metric_names",
    "rank_queries",
    "sample_paecter",
    "save_samples",
]
