"""Body of ``graphtx eval citations`` and ``graphtx eval paecter``: :class:`CitationOptions` -> systems -> report.

    graphtx eval citations CORPUS [--citations FILE ...] [--baselines bm25,tfidf,fasttext-avg,minilm]
        [--tokens DIR] [--vectors F | --query-vectors F --candidate-vectors F | --model DIR --graphs DIR | --index DIR]
        [--ranker-peer PEER DIR] [--peer-vectors DIR ...]
        [--hybrid] [--late [--rerank-depth N] [--late-storage int8|fp16|float32]]
        [--tune] [--extra-citations FILE ...] [--paecter-samples F] [--out DIR] [--per-query CSV] [--plot PNG] [--json]

CORPUS is a corpus directory (``graphtx ingest``) or a JSON-lines documents file read verbatim. The flags are
read into :class:`CitationOptions` by graphtx/cli/eval_args.py; a Python caller builds the options itself::

    summary, lines, status = run_command(CitationOptions("corpus", baselines=("bm25",), model="run/model", graphs="graphs"), config)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphtx.eval import BASELINES, PROTOCOLS

DEFAULT_BASELINES = ("bm25", "tfidf")  # + fasttext-avg when --tokens is given


@dataclass(frozen=True)
class CitationOptions:
    """What one ``graphtx eval citations`` (or ``paecter``) run evaluates, as values: each field is the flag of its name.

    Comma-separated flags are tuples here (``--baselines bm25,tfidf`` is ``("bm25", "tfidf")``); None is the flag not given.
    """

    corpus: str  # corpus directory or JSON-lines documents file
    citations: tuple[str, ...] = ()  # judged citation files; () = the corpus's own citations
    baselines: tuple[str, ...] | None = None  # None: bm25, tfidf (+ fasttext-avg with tokens); ("all",) or ("none",)
    tokens: str | None = None  # tokens directory (fasttext-avg baseline)
    # the graphtx system: at most one of vectors, query_vectors + candidate_vectors, model (+ graphs), index (+ graphs)
    vectors: str | None = None
    query_vectors: str | None = None
    candidate_vectors: str | None = None
    model: str | None = None
    graphs: str | None = None
    query_kind: str | None = None  # None: the config's (and not fixed: a corpus without claims may change it)
    candidate_kind: str | None = None
    index: str | None = None
    name: str | None = None  # label of the graphtx row
    hybrid: bool = False  # also graphtx fused with BM25
    late: bool = False  # also graphtx (and the hybrid) re-ranked by late interaction
    rerank_depth: int = 100  # late: first-stage candidates re-ranked per query
    late_storage: str = "int8"  # late: candidate node vectors as the index stores them
    rankers: tuple[str, ...] | None = (
        None  # None: learned when the model has a ranker; ("none",) none, ("all",) every kind
    )
    ranker_dir: str | None = None  # default MODEL/ranker (or INDEX/ranker)
    ranker_peer: tuple[str, str] | None = None  # (peer, ranker directory) of `graphtx rank-fit --peer`
    peer_vectors: tuple[str, ...] | None = None  # `graphtx teacher` directories read instead of encoding
    extra_citations: tuple[str, ...] = ()  # citation files used only to find PaECTER hard negatives
    samples: str | None = (
        None  # PaECTER samples JSON (read if it exists, else drawn and written); None: OUT/paecter_samples.json
    )
    protocols: tuple[str, ...] | None = None  # None: both (citations only)
    tune: bool = False  # also BM25 tuned on the judged (or tune_citations) queries
    tune_citations: str | None = None
    per_query: str | None = None  # per-query CSV
    plot: str | None = None  # metric-vs-k PNG
    k: int | None = None  # Recall@k cut-off (None: config)
    ndcg_k: int | None = None  # nDCG@k cut-off (None: config)
    known_item: bool = False  # judged pairs are (document, itself)
    gains: tuple[tuple[str, float], ...] | None = None  # gain per citation category; None: binary
    cutoff: str | None = None  # eval.cutoff policy (None: config)
    query_fields: tuple[str, ...] | None = None  # text fields of a query for the text baselines (None: config)
    candidate_fields: tuple[str, ...] | None = None
    seed: int | None = None  # PaECTER sampling seed (None: the config's)
    out: str | None = None  # results directory


def _graphtx_system(options: CitationOptions, cfg):
    from graphtx.eval.systems import ModelSystem, VectorSystem, index_system

    o = options
    chosen = [
        name
        for name, on in (
            ("--vectors", o.vectors),
            ("--candidate-vectors", o.candidate_vectors),
            ("--model", o.model),
            ("--index", o.index),
        )
        if on
    ]
    if len(chosen) > 1:
        raise ValueError(f"give one graphtx system, not {' and '.join(chosen)}")
    if o.vectors:
        return VectorSystem(o.vectors, label=o.name or "")
    if o.candidate_vectors:
        if not o.query_vectors:
            raise ValueError("--candidate-vectors needs --query-vectors")
        return VectorSystem(o.query_vectors, o.candidate_vectors, label=o.name or "")
    if o.model:
        if not o.graphs:
            raise ValueError("--model needs --graphs (a graphs directory of `graphtx parse`)")
        return ModelSystem(
            o.model,
            o.graphs,
            cfg.query_kind,
            cfg.candidate_kind,
            cfg.batch_size,
            label=o.name or "",
            query_kind_fixed=o.query_kind is not None,
        )
    if o.index:
        return index_system(
            o.index,
            o.graphs,
            cfg.query_kind,
            o.candidate_kind,
            cfg.batch_size,
            label=o.name or "",
            query_kind_fixed=o.query_kind is not None,
        )
    if o.query_vectors:
        raise ValueError("--query-vectors needs --candidate-vectors")
    return None


def _ranker_systems(names: tuple[str, ...], options: CitationOptions, cfg, graphtx, systems: list) -> list:
    """The rankers ``names`` (--rankers) over the graphtx system and BM25 (a BM25 row is added when missing: the ratios
    need it): the fitted ones of ``graphtx rank-fit`` (convex, learned, learned-lexical) from the ranker directory,
    every other registered ranker (graphtx.rank.registry) over the same pools."""
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.pool_system import PoolRankerSystem, PoolSettings
    from graphtx.eval.ranker import EVAL_KINDS, RankerSystem
    from graphtx.rank.registry import get_ranker, ranker_names

    names = tuple(EVAL_KINDS) if names == ("all",) else names
    known = (*ranker_names(), *(k for k in EVAL_KINDS if k not in ranker_names()))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"--rankers: unknown {', '.join(unknown)}; known: {', '.join(known)} (or all: {', '.join(EVAL_KINDS)})"
        )
    model = graphtx is not None and hasattr(graphtx, "model_dir")
    plugins = [get_ranker(n) for n in names if n not in EVAL_KINDS]
    fitted = [n for n in names if n in EVAL_KINDS] + [r.name for r in plugins if r.fits]  # need the ranker directory
    if (fitted or any("dense" in r.signals for r in plugins)) and not model:
        raise ValueError("--rankers combine a graph model with BM25: give --model (or --index) and --graphs")
    bm25 = next((s for s in systems if s.name == "bm25"), None)
    if bm25 is None:
        bm25 = make_baseline("bm25", cfg, options.tokens)
        systems.append(bm25)
    directory = (
        (Path(options.ranker_dir) if options.ranker_dir else Path(graphtx.model_dir) / "ranker") if fitted else None
    )
    settings = PoolSettings(rrf_k=cfg.rrf_k, candidates=cfg.rrf_depth)
    out = []
    for name in names:
        if name in EVAL_KINDS:
            out.append(RankerSystem(directory, EVAL_KINDS[name], bm25, graphtx, cfg.leave_out_self))
            continue
        ranker = get_ranker(name)
        dense = graphtx if model else None
        fit_dir = directory if ranker.fits else None
        out.append(PoolRankerSystem(ranker, bm25, dense, settings, cfg.rrf_depth, cfg.leave_out_self, fit_dir))
    return out


def _peer_ranker_systems(options: CitationOptions, cfg, systems: list, peer_vectors: dict) -> list:
    """--ranker-peer PEER DIR: the learned ranker fitted over a peer embedder's cosines (and its peer row, BM25's when missing)."""
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.ranker import RankerSystem
    from graphtx.text.peers import PEERS

    peer, directory = options.ranker_peer
    if peer not in PEERS:
        raise ValueError(f"--ranker-peer: unknown peer {peer!r}; known: {', '.join(PEERS)}")
    from graphtx.rank.store import has_ranker

    if not has_ranker(Path(directory)):  # said before any corpus work, not after it
        raise FileNotFoundError(
            f"--ranker-peer {peer} {directory}: no ranker there; fit one with `graphtx rank-fit CORPUS --peer {peer} ...`"
        )
    added = []
    bm25 = next((s for s in systems if s.name == "bm25"), None)
    if bm25 is None:
        bm25 = make_baseline("bm25", cfg, options.tokens)
        added.append(bm25)
    dense = next((s for s in systems if s.name == peer), None)
    if dense is None:
        dense = make_baseline(peer, cfg, peer_vectors=peer_vectors)
        added.append(dense)
    return [RankerSystem(Path(directory), "learned", bm25, dense, cfg.leave_out_self, peer=peer), *added]


def build_systems(options: CitationOptions, cfg) -> list:
    """The rows of one evaluation: the graphtx system first, its fused, re-ranked and ranker rows, then the baselines."""
    from graphtx.eval.baselines import make_baseline

    names = options.baselines
    if names is None:
        names = DEFAULT_BASELINES + (("fasttext-avg",) if options.tokens else ())
    elif names == ("all",):
        names = BASELINES
    elif names == ("none",):
        names = ()
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {', '.join(unknown)}; known: {', '.join(BASELINES)} (or all, none)")
    from graphtx.eval.peer_vectors import peer_vector_dirs

    peer_vectors = peer_vector_dirs(options.peer_vectors)
    ranker_peer = (options.ranker_peer or (None,))[0]
    unused = [p for p in peer_vectors if p not in names and p != ranker_peer]
    if unused:
        raise ValueError(
            f"--peer-vectors: {', '.join(f'{p} ({peer_vectors[p]})' for p in unused)} used by nothing: "
            f"add it to --baselines or give --ranker-peer {unused[0]} DIR"
        )
    systems = [make_baseline(n, cfg, options.tokens, peer_vectors) for n in dict.fromkeys(names)]
    graphtx = _graphtx_system(options, cfg)
    if graphtx is not None:
        systems.insert(0, graphtx)
    if options.hybrid:
        from graphtx.eval.fusion import FusionSystem

        if graphtx is None:
            raise ValueError("--hybrid fuses graphtx with BM25: give a graphtx system (--model, --index or --vectors)")
        bm25 = next((s for s in systems if s.name == "bm25"), None)
        if bm25 is None:  # the fused BM25 is also a row of its own: the ratios need it
            bm25 = make_baseline("bm25", cfg, options.tokens)
            systems.append(bm25)
        systems.insert(1, FusionSystem.from_config([graphtx, bm25], cfg))
    if options.late:
        from graphtx.eval.late import LateRerankSystem
        from graphtx.eval.systems import ModelSystem

        if not isinstance(graphtx, ModelSystem):
            raise ValueError(
                "--late re-ranks by the model's node vectors: give --model and --graphs (or --index and --graphs), not --vectors"
            )
        scorer = _late_scorer_of(graphtx, options.late_storage, cfg.batch_size)
        late = [LateRerankSystem(graphtx, scorer, options.rerank_depth, cfg.leave_out_self)]
        if options.hybrid:
            late.append(LateRerankSystem(systems[1], scorer, options.rerank_depth, cfg.leave_out_self))
        at = 2 if options.hybrid else 1
        systems[at:at] = late
    rankers = options.rankers
    if (
        rankers is None and graphtx is not None and hasattr(graphtx, "model_dir")
    ):  # a fitted ranker is evaluated by default
        from graphtx.rank.store import has_ranker

        rankers = ("learned",) if has_ranker(Path(options.ranker_dir or Path(graphtx.model_dir) / "ranker")) else None
    if rankers and rankers != ("none",):
        systems[1:1] = _ranker_systems(rankers, options, cfg, graphtx, systems)
    if options.ranker_peer:
        systems.extend(_peer_ranker_systems(options, cfg, systems, peer_vectors))
    if not systems:
        raise ValueError("nothing to evaluate: give --baselines and/or a graphtx system (--vectors, --model, --index)")
    return systems


def _late_scorer_of(system, storage: str, batch_size: int):
    """A LateScorer over the model and graphs of a fitted-later ModelSystem (or IndexModelSystem: its index's model)."""
    from graphtx.eval.late import LateScorer

    class _Scorer(LateScorer):
        def fit(self, corpus):
            if self.corpus is not corpus:
                self._model = system._load()  # the same model the dense row scores with
                self.query_kind, self.candidate_kind = system.query_kind, system.candidate_kind
            return super().fit(corpus)

    return _Scorer(system.model_dir, system.graphs_dir, system.query_kind, system.candidate_kind, storage, batch_size)


def run_command(
    options: CitationOptions, config, paecter_only: bool = False, progress: bool | None = None
) -> tuple[dict, list[str], int]:
    """(JSON summary, printed lines, exit status) of ``graphtx eval citations`` / ``paecter`` (``paecter_only``: the
    PaECTER protocol alone; the retrieval fields of ``options`` are then not read)."""
    from graphtx.eval.report import format_report, plot_curves, write_per_query, write_results
    from graphtx.eval.run import evaluate_citations
    from graphtx.from_dict import with_overrides

    o = options
    cfg = with_overrides(
        config.eval,
        query_fields=o.query_fields,
        candidate_fields=o.candidate_fields,
        query_kind=o.query_kind,
        candidate_kind=o.candidate_kind,
        cutoff="none" if paecter_only else o.cutoff,
        recall_k=None if paecter_only else o.k,
        ndcg_k=None if paecter_only else o.ndcg_k,
        gains=None if paecter_only else o.gains,
        depth=None
        if paecter_only
        else max(config.eval.depth, o.k or 0, o.ndcg_k or 0),  # a deeper cut-off asked for: rank deeper
    )
    known_item = not paecter_only and o.known_item
    if known_item:  # a query finds itself: keep it among its candidates, read the texts the graphs come from
        if o.cutoff not in (None, "none"):
            raise ValueError(
                f"--known-item judges each document by itself, which no date cut-off lets through: drop --cutoff {o.cutoff}"
            )
        cfg = with_overrides(
            cfg,
            leave_out_self=False,
            cutoff="none",
            query_fields=o.query_fields or ("first_claim",),
            candidate_fields=o.candidate_fields or ("claims", "description"),
        )
    seed = config.seed if o.seed is None else o.seed
    citations = list(o.citations)
    if not citations:
        if not Path(o.corpus).is_dir():
            raise ValueError("--citations is needed when the corpus is a documents file")
        citations = [o.corpus]
    protocols = ("paecter",) if paecter_only else o.protocols or PROTOCOLS
    if known_item:
        if "paecter" in (o.protocols or ()):
            raise ValueError("--known-item judges each document by itself: the PaECTER protocol needs real citations")
        protocols = ("retrieval",)
    samples = o.samples
    if samples is None and o.out and "paecter" in protocols:
        samples = str(Path(o.out) / "paecter_samples.json")
    report = evaluate_citations(
        o.corpus,
        citations,
        build_systems(o, cfg),
        cfg,
        protocols=protocols,
        extra_citations=list(o.extra_citations),
        paecter_samples=samples,
        tune=not paecter_only and o.tune,
        tune_citations=None if paecter_only else o.tune_citations,
        seed=seed,
        progress=progress,
    )
    paths = write_results(report, o.out) if o.out else {}
    if not paecter_only:
        if o.per_query:
            paths["per_query"] = write_per_query(report.retrieval, o.per_query)
        if o.plot and report.retrieval:
            paths["plot"] = plot_curves(report, o.plot)
    if samples and report.paecter_samples:
        paths["paecter_samples"] = Path(samples)
    lines = format_report(report) + [f"wrote {p}" for p in paths.values()]
    summary = report.to_json() | {"files": {k: str(v) for k, v in paths.items()}}
    skipped = sum(v for k, v in report.citations["skipped"].items() if k != "duplicate pair")
    return summary, lines, (3 if skipped else 0)


__all__ = ["CitationOptions", "build_systems", "run_command"]
