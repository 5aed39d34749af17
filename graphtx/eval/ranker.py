"""The ``graphtx rank-fit`` command (its wiring: corpus, citations, systems, report; the fit itself is
:mod:`graphtx.rank.fit`) and a fitted ranker evaluated as a row of ``graphtx eval citations --rankers``.

Both go through :meth:`graphtx.rank.fit.PoolSource.pool_inputs` and :meth:`graphtx.rank.store.Ranker.score` (which calls the one
feature function, :func:`graphtx.rank.features.pool_features`), so the rows a ranker is fitted on are
the rows it ranks at evaluation time.

The honest fit. A graph model trained on the training citations has seen their queries: its cosines
for them are better than for a new query, and a ranker fitted on them trusts the dense feature too
much. ``graphtx train`` therefore holds out ``train.ranker_holdout`` of the training queries from the
model's training and writes them to ``RUN/ranker_citations.tsv``; ``graphtx rank-fit --run RUN`` fits
on those (``--citations`` fits on any file, e.g. all training citations: the naive variant, kept for
the comparison in benchmarks/results/ranker.md). A fit on validation queries is refused when the run's
``valid_citations.tsv`` shows them.

A query's ranking: its pool (top ``rank.depth`` of BM25 and of the dense model) ranked by the
ranker; the other candidates after the pool, by BM25, then by id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphtx.eval.baselines import BM25System
from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus
from graphtx.eval.systems import System
from graphtx.rank.fit import PoolSource, fit_ranker
from graphtx.rank.store import Ranker

EVAL_KINDS = {"convex": "convex", "learned": "learned", "learned-lexical": "lexical"}  # --rankers name -> Ranker kind


class RankerSystem(System):
    """A fitted ranker over BM25 and a graphtx system, as a row of ``graphtx eval citations``."""

    def __init__(
        self,
        ranker: Ranker | str | Path,
        kind: str,
        bm25: BM25System,
        dense: System,
        leave_out_self: bool = True,
        label: str = "",
        peer: str = "",
    ):
        """``ranker``: a Ranker, or its directory (loaded at fit, once the graph model's fingerprint is known).
        ``peer``: the ranker was fitted over that peer embedder's cosines (``rank-fit --peer``), ``dense`` is its system."""
        super().__init__()
        self.ranker, self.kind, self.bm25, self.dense = ranker, kind, bm25, dense
        self.leave_out_self = leave_out_self
        self.name = {"convex": "convex", "learned": "learned", "lexical": "learned-lexical"}[kind]
        self.peer = peer
        if peer:  # a ranker over a peer embedder's cosines: its own row beside graphtx's
            self.name = f"{self.name}-{peer}"
        self.fixed_label = label
        self.label = label or self.name

    def fit(self, corpus: EvalCorpus) -> RankerSystem:
        from graphtx.rank.store import load_ranker

        super().fit(corpus)
        if self.dense.corpus is not corpus:
            self.dense.fit(corpus)
        if not isinstance(self.ranker, Ranker):
            self.ranker = load_ranker(self.ranker, getattr(self.dense, "fingerprint", ""))
        if self.kind not in self.ranker.kinds:
            raise ValueError(
                f"ranker {self.ranker.directory} has no {self.kind!r} model (it has {', '.join(self.ranker.kinds)})"
            )
        self.source = PoolSource(corpus, self.bm25, self.dense)
        what = {
            "convex": f"convex {self.ranker.convex['norm']} a={self.ranker.convex['weight']:g}",
            "learned": "learned (LightGBM)",
            "lexical": "learned, no graph features",
        }[self.kind]
        members = self.dense.label if self.peer else "graphtx"
        self.label = self.fixed_label or f"{what} ({members} + BM25)"
        return self

    def scores(self, rows: np.ndarray) -> np.ndarray:
        bm25, dense = self.source.scores(rows)
        out = np.empty((len(rows), len(self.corpus)), dtype=np.float64)  # (q, c)
        for i, row in enumerate(rows):
            inputs = self.source.pool_inputs(int(row), bm25[i], dense[i], self.ranker.depth, self.leave_out_self)
            s = self.ranker.score(self.kind, inputs, self.source.stats)  # (n,)
            top = bm25[i].max()  # -inf when the cut-off leaves nothing
            base = (s.min() if len(s) else 0.0) - 2.0
            out[i] = base + (
                bm25[i] / top if top > 0 else np.where(np.isfinite(bm25[i]), 0.0, -np.inf)
            )  # after the pool, by BM25 (in [base, base + 1])
            out[i, inputs.candidates] = s
            if self.leave_out_self:
                out[i, row] = -np.inf
        return out

    def info(self) -> dict:
        fitted = self.ranker.report.get(
            "cutoff", "none"
        )  # rankers fitted before the cut-off existed saw every document
        note = (
            {}
            if fitted == self.corpus.cutoff_policy
            else {"cutoff_note": f"fitted on pools cut as {fitted}, evaluated under {self.corpus.cutoff_policy}"}
        )
        fitted_kind = self.ranker.report.get("query_kind")
        if fitted_kind and fitted_kind != getattr(self.dense, "query_kind", fitted_kind):
            note["query_kind_note"] = (
                f"fitted with {fitted_kind} query graphs, evaluated with {self.dense.query_kind}: its dense features mean something else"
            )
        return {
            "ranker": str(self.ranker.directory),
            "kind": self.kind,
            "depth": self.ranker.depth,
            "convex": self.ranker.convex,
            "fitted_cutoff": fitted,
            "features": list(self.ranker.features.get(self.kind, ())),
            "members": [self.dense.label, self.bm25.label],
            **note,
        }


# --- graphtx rank-fit ------------------------------------------------------------------


@dataclass(frozen=True)
class RankFitOptions:
    """What one ``graphtx rank-fit`` fits, as values: each field is the flag of its name (None: not given)."""

    corpus: str  # corpus directory or JSON-lines documents file
    run: str | None = None  # training run directory: its model/ and ranker_citations.tsv
    model: str | None = None  # model directory (default RUN/model)
    graphs: str | None = None  # graphs directory (needed with run or model)
    peer: str | None = None  # fit over this peer's cosines in place of a graph model's (needs citations and out)
    peer_vectors: str | None = None  # with peer: its `graphtx teacher` vectors, read instead of encoding
    citations: tuple[str, ...] = ()  # training citations; () = RUN/ranker_citations.tsv
    out: str | None = None  # ranker directory (default MODEL/ranker)
    query_kind: str | None = None  # query graph kind (None: the config's, not fixed)
    cutoff: str | None = None  # eval.cutoff of the pools (None: config)


def run_rank_fit(options: RankFitOptions, config, progress: bool | None = None) -> tuple[dict, list[str]]:
    """(JSON summary, printed lines) of ``graphtx rank-fit``: the ranker fitted and saved."""
    from graphtx.corpus.citations import read_citations
    from graphtx.eval.data import judgements
    from graphtx.eval.systems import ModelSystem

    o = options
    run = Path(o.run) if o.run else None
    if run is not None and not run.is_dir():
        raise FileNotFoundError(f"run directory {run} does not exist")
    peer = o.peer
    model_dir = Path(o.model) if o.model else (run / "model" if run else None)
    if peer and (model_dir is not None or not o.citations or not o.out):
        raise ValueError(
            "--peer fits over the peer's cosines in place of a graph model: give --citations and --out, not --run or --model"
        )
    peer_vectors = o.peer_vectors
    if peer_vectors and not peer:
        raise ValueError("--peer-vectors goes with --peer (the ranker over that peer's cosines)")
    from graphtx.eval.peer_vectors import peer_vector_dirs

    vectors = peer_vector_dirs([peer_vectors] if peer_vectors else [])  # checked before the corpus is read
    if vectors and peer not in vectors:
        raise ValueError(f"--peer-vectors {peer_vectors} holds {next(iter(vectors))} vectors, not {peer}'s")
    if model_dir is None and not peer:
        raise ValueError("give --run (a `graphtx train` run directory) or --model (or --peer)")
    if not peer and not o.graphs:
        raise ValueError("--graphs is needed with a graph model (--run or --model)")
    citations = list(o.citations)
    if not citations:
        held = run / "ranker_citations.tsv" if run else None
        if held is None or not held.is_file():
            raise ValueError(
                f"no --citations, and {held or 'no --run'} holds no ranker_citations.tsv: train with train.ranker_holdout > 0, or pass --citations"
            )
        citations = [held]
    from graphtx.from_dict import with_overrides

    cfg: EvalConfig = with_overrides(config.eval, cutoff=o.cutoff)
    corpus = EvalCorpus.load(o.corpus, cfg)
    pairs = [c for f in citations for c in read_citations(f)]
    judged = judgements(pairs, corpus, cfg)
    if not judged.relevant:
        raise ValueError(
            f"none of the citation pairs of {', '.join(map(str, citations))} has both documents in {o.corpus}"
        )
    valid_file = run / "valid_citations.tsv" if run else None
    if valid_file is not None and valid_file.is_file():
        valid = {c.citing_id for c in read_citations(valid_file)}
        overlap = valid & set(judged.relevant)
        if overlap:
            raise ValueError(
                f"{len(overlap)} of the fit's queries are validation queries of {run} (e.g. {sorted(overlap)[0]}): fit on training citations only"
            )
    if peer:
        from graphtx.eval.baselines import make_baseline

        dense = make_baseline(
            peer, cfg, peer_vectors=vectors
        )  # its cosines take the graph model's place in the dense features
    else:
        query_kind = o.query_kind
        dense = ModelSystem(
            model_dir,
            o.graphs,
            query_kind or cfg.query_kind,
            cfg.candidate_kind,
            cfg.batch_size,
            query_kind_fixed=query_kind is not None,
        )  # as eval citations
    source = PoolSource(corpus, BM25System.from_config(cfg), dense)
    ranker = fit_ranker(source, judged, config.rank, dense.fingerprint, seed=config.seed, progress=progress)
    ranker.report["citations"] = [str(c) for c in citations]
    ranker.report["cutoff"] = cfg.cutoff  # the pools were cut as eval.cutoff says (graphtx/eval/cutoff.py)
    ranker.report["query_kind"] = getattr(dense, "query_kind", "text")
    ranker.report["model"] = str(model_dir) if model_dir else ""
    ranker.report["peer"] = peer or ""
    ranker.report["peer_vectors"] = str(peer_vectors or "")
    ranker.report["dense_coverage"] = (
        dense.coverage()
    )  # documents the dense features had no vector for (peer vectors of another corpus, say)
    missing = ranker.report["dense_coverage"]["candidates_without_vector"]
    from graphtx.text.field import corpus_profile

    ix = config.index
    ranker.corpus_profile = corpus_profile(
        o.corpus, ix.bm25_max_chars, ix.stopwords, ix.stemmer
    ).to_json()  # which field it was fitted on (search's auto)
    out = ranker.save(Path(o.out) if o.out else model_dir / "ranker")
    r = ranker.report
    lines = [
        f"pools cut as --cutoff {cfg.cutoff}: {corpus.cutoff.describe()}",
        *([f"note: {dense.query_kind_note}"] if getattr(dense, "query_kind_note", "") else []),
        *([f"dense features: {dense.label} cosines in place of a graph model's"] if peer else []),
        *([f"note: {missing:,} of {len(corpus):,} documents have no {dense.label} vector"] if missing else []),
        f"fitted on {r['queries']} queries ({r['pairs']} pairs, {r['pool_recall']:.1%} of them in the pools of ~{r['mean_pool_size']:.0f} candidates)",
        f"convex: {ranker.convex['norm']} normalisation, BM25 weight {ranker.convex['weight']:g} "
        + "("
        + ", ".join(f"{n}: a={t['weight']:g} nDCG {t['train_ndcg']:.3f}" for n, t in r["convex_trials"].items())
        + ")",
    ]
    for kind in ranker.boosters:
        members = r[kind]["bag"]  # each member's leaves, trees and cross-validated nDCG
        top = sorted(r[kind]["gain_importance"].items(), key=lambda kv: -kv[1])[:5]
        lines.append(
            f"{kind}: {len(members)} LightGBM fit{'s' if len(members) > 1 else ''} averaged, leaves {'/'.join(str(m['num_leaves']) for m in members)}, "
            f"trees {'/'.join(str(m['rounds']) for m in members)}, CV nDCG@{config.rank.ndcg_k} {np.mean([m['cv_ndcg'] for m in members]):.3f}; "
            f"top features {', '.join(f'{n} {v:.2f}' for n, v in top)}"
        )
    lines.append(f"wrote {out}")
    return {"ranker": str(out), "convex": ranker.convex, "report": r}, lines


def fit_ranker_after_training(
    corpus: str, run_dir: str | Path, graphs: str, config, progress: bool | None = None
) -> tuple[dict | None, list[str]]:
    """``graphtx rank-fit --run RUN`` when a training run held queries out for it (train.ranker_holdout > 0), so the trained
    model searches with the learned ranker without another command (`graphtx train`, `graphtx build`). A ranker already
    fitted on this very model under this cut-off is kept. (summary or None, lines to print); never raises: the model is
    trained and saved whatever the fit does."""
    import importlib.util

    from graphtx.model.io import FINGERPRINT_FILE
    from graphtx.rank.store import has_ranker, load_ranker

    run = Path(run_dir)
    if not (run / "ranker_citations.tsv").is_file():
        return None, []  # no held-out queries (train.ranker_holdout 0, or a corpus without citations)
    again = f"`graphtx rank-fit {corpus} --run {run} --graphs {graphs}`"
    if importlib.util.find_spec("lightgbm") is None:
        return None, [
            f"ranker not fitted: the learned ranker needs lightgbm (pip install 'graphtx[rank]'), then {again}"
        ]
    model_dir, ranker_dir = run / "model", run / "model" / "ranker"
    if has_ranker(ranker_dir):
        try:
            fitted = load_ranker(ranker_dir, (model_dir / FINGERPRINT_FILE).read_text().strip())
        except ValueError:
            fitted = None  # fitted on another model (a resumed run trained further): fit anew
        if fitted is not None and fitted.report.get("cutoff") == config.eval.cutoff:
            return None, [f"ranker: {ranker_dir} already fitted on this model (graphtx rank-fit to fit it again)"]
    try:
        summary, lines = run_rank_fit(RankFitOptions(corpus, run=str(run), graphs=graphs), config, progress=progress)
    except (
        ValueError,
        RuntimeError,
        OSError,
        MemoryError,
    ) as err:  # the model is trained and saved: say so, do not fail the run
        return {"error": str(err)}, [
            f"ranker not fitted: {err}",
            f"  the model is in {model_dir}; fit the ranker with {again}",
        ]
    return summary, ["ranker (graphtx rank-fit on the held-out training queries):", *(f"  {line}" for line in lines)]
