"""Arguments and body of ``graphtx eval citations`` and ``graphtx eval paecter`` (graphtx/cli/ stays thin).

    graphtx eval citations CORPUS [--citations FILE ...] [--baselines bm25,tfidf,fasttext-avg,minilm]
        [--tokens DIR] [--vectors F | --query-vectors F --candidate-vectors F | --model DIR --graphs DIR | --index DIR]
        [--ranker-peer PEER DIR] [--peer-vectors DIR ...]
        [--hybrid] [--late [--rerank-depth N] [--late-storage int8|fp16|float32]]
        [--tune] [--extra-citations FILE ...] [--paecter-samples F] [--out DIR] [--per-query CSV] [--plot PNG] [--json]

CORPUS is a corpus directory (``graphtx ingest``) or a JSON-lines documents file read verbatim.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphtx.eval import BASELINES, PROTOCOLS
from graphtx.eval.cutoff import add_cutoff_argument
from graphtx.graphs.graph import GRAPH_KINDS
from graphtx.usage import at_least

DEFAULT_BASELINES = ("bm25", "tfidf")  # + fasttext-avg when --tokens is given


def add_citation_arguments(p: argparse.ArgumentParser, paecter_only: bool = False) -> None:
    p.add_argument("corpus", help="corpus directory (`graphtx ingest`) or a JSON-lines documents file read verbatim (id, title, abstract, ...)")
    p.add_argument(
        "--citations",
        nargs="+",
        help="judged citation pairs: TSV/CSV (citing_id, cited_id[, category]), citations Parquet or corpus directory; default: the corpus's citations",
    )
    p.add_argument(
        "--baselines", help=f"comma-separated from {', '.join(BASELINES)}, or all / none (default: bm25,tfidf, + fasttext-avg with --tokens)"
    )
    p.add_argument("--tokens", help="tokens directory of `graphtx pretrain` (fasttext-avg baseline)")
    g = p.add_argument_group("graphtx system (any one)")
    g.add_argument("--vectors", help="vectors.parquet of `graphtx encode`, used for queries and candidates")
    g.add_argument("--query-vectors", help="vectors of the query graphs (with --candidate-vectors)")
    g.add_argument("--candidate-vectors", help="vectors of the candidate graphs")
    g.add_argument("--model", help="model directory (`graphtx init-model` / `graphtx train`), with --graphs")
    g.add_argument("--graphs", help="graphs directory of `graphtx parse` (with --model or --index)")
    g.add_argument(
        "--query-kind",
        choices=list(GRAPH_KINDS),
        help="query graph kind with --model or --index (default: config, first_claim; when most documents have no claims, "
        "the candidate kind, as `graphtx search --id`, and the report says so)",
    )
    g.add_argument(
        "--candidate-kind",
        choices=list(GRAPH_KINDS),
        help="candidate graph kind with --model (default: config, description) or --index (default: the index's kind)",
    )
    g.add_argument("--index", help="graphtx index directory: its model on --graphs (hook; needs graphtx.index)")
    g.add_argument("--name", help="label of the graphtx row in the tables")
    g.add_argument(
        "--hybrid",
        action="store_true",
        help="also graphtx fused with BM25 by reciprocal rank fusion (eval.rrf_k, eval.rrf_depth), as `graphtx search --hybrid`",
    )
    g.add_argument(
        "--late",
        action="store_true",
        help="also graphtx (and, with --hybrid, the hybrid) with its top --rerank-depth re-ranked by node-level late "
        "interaction, as `graphtx search --rerank late` (needs --model or --index of a model with model.late_dim > 0)",
    )
    g.add_argument(
        "--rerank-depth", type=at_least(1, "the re-rank depth"), default=100, help="--late: first-stage candidates re-ranked per query (default 100)"
    )
    g.add_argument(
        "--late-storage",
        choices=["int8", "fp16", "float32"],
        default="int8",
        help="--late: candidate node vectors as the index stores them (default int8)",
    )
    g.add_argument(
        "--rankers",
        help="also these rankers of `graphtx rank-fit` over graphtx + BM25, comma-separated from convex, learned, "
        "learned-lexical (no graph features), all or none (default: learned when the model has a ranker)",
    )
    g.add_argument("--ranker-dir", help="ranker directory (default: MODEL/ranker, or INDEX/ranker)")
    g.add_argument(
        "--ranker-peer",
        nargs=2,
        metavar=("PEER", "DIR"),
        help="also a ranker of `graphtx rank-fit --peer PEER` (minilm, mpnet) from DIR, over that peer's cosines + BM25",
    )
    g.add_argument(
        "--peer-vectors",
        nargs="+",
        metavar="DIR",
        help="peer vectors already written by `graphtx teacher` (e.g. on a GPU): the peer of each directory's manifest "
        "(minilm, mpnet) reads its cosines there instead of encoding, in --baselines and --ranker-peer",
    )
    p.add_argument(
        "--extra-citations", nargs="+", default=[], help="citation files used only to find PaECTER hard negatives (e.g. the training citations)"
    )
    if paecter_only:
        p.add_argument("--samples", help="PaECTER samples JSON: read if it exists, else drawn (--seed) and written there")
    else:
        p.add_argument("--protocols", help=f"comma-separated from {', '.join(PROTOCOLS)} (default: both)")
        p.add_argument("--paecter-samples", help="PaECTER samples JSON: read if it exists, else drawn (--seed) and written there")
        p.add_argument("--tune", action="store_true", help="also BM25 with k1 and b tuned on the judged (or --tune-citations) queries")
        p.add_argument("--tune-citations", help="citations to tune BM25 on (default: the judged ones, as the paper did)")
        p.add_argument("--per-query", help="per-query CSV for error analysis (every system, every measure, cited ranks)")
        p.add_argument("--plot", help="metric-vs-k PNG (Recall@k and nDCG@k of every system)")
        p.add_argument("--k", type=at_least(1, "k"), help="Recall@k cut-off (default: config, 3)")
        p.add_argument("--ndcg-k", type=at_least(1, "the nDCG cut-off"), help="nDCG@k cut-off (default: config, 150)")
        p.add_argument(
            "--known-item",
            action="store_true",
            help="judged pairs are (document, itself), e.g. train's test_citations.tsv of a corpus without citations: each query "
            "(its first claim) must find its own document, which stays among its candidates; text baselines read "
            "first_claim as the query and claims,description as the candidate unless --query-fields/--candidate-fields",
        )
        p.add_argument("--gains", help="gain per citation category for nDCG, e.g. X=3,Y=2,A=1 (others: 1; 0 = not relevant); default binary")
    if not paecter_only:
        add_cutoff_argument(p)
    p.add_argument("--query-fields", help="text fields of a query for the text baselines, e.g. title,abstract (default: config)")
    p.add_argument("--candidate-fields", help="text fields of a candidate for the text baselines (default: config)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="PaECTER sampling seed (default: the config's seed)")
    p.add_argument("--out", help="results directory: results.json, per_query.csv, per_sample.csv, metric_vs_k.png, paecter_samples.json")


def _csv(value: str | None) -> tuple[str, ...] | None:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def _gains(value: str | None) -> tuple | None:
    if not value:
        return None
    out = []
    for item in value.split(","):
        category, sep, gain = item.partition("=")
        if not sep:
            raise ValueError(f"--gains: {item!r} is not CATEGORY=GAIN")
        out.append((category.strip(), float(gain)))
    return tuple(out)


def _graphtx_system(args, cfg):
    from graphtx.eval.systems import ModelSystem, VectorSystem, index_system

    chosen = [
        name
        for name, on in (
            ("--vectors", args.vectors),
            ("--candidate-vectors", args.candidate_vectors),
            ("--model", args.model),
            ("--index", args.index),
        )
        if on
    ]
    if len(chosen) > 1:
        raise ValueError(f"give one graphtx system, not {' and '.join(chosen)}")
    if args.vectors:
        return VectorSystem(args.vectors, label=args.name or "")
    if args.candidate_vectors:
        if not args.query_vectors:
            raise ValueError("--candidate-vectors needs --query-vectors")
        return VectorSystem(args.query_vectors, args.candidate_vectors, label=args.name or "")
    if args.model:
        if not args.graphs:
            raise ValueError("--model needs --graphs (a graphs directory of `graphtx parse`)")
        return ModelSystem(
            args.model,
            args.graphs,
            cfg.query_kind,
            cfg.candidate_kind,
            cfg.batch_size,
            label=args.name or "",
            query_kind_fixed=args.query_kind is not None,
        )
    if args.index:
        return index_system(
            args.index,
            args.graphs,
            cfg.query_kind,
            args.candidate_kind,
            cfg.batch_size,
            label=args.name or "",
            query_kind_fixed=args.query_kind is not None,
        )
    if args.query_vectors:
        raise ValueError("--query-vectors needs --candidate-vectors")
    return None


def _ranker_systems(args, cfg, graphtx, systems: list) -> list:
    """The rankers of --rankers over the graphtx system and BM25 (a BM25 row is added when missing: the ratios need it)."""
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.ranker import EVAL_KINDS, RankerSystem

    names = _csv(args.rankers)
    names = tuple(EVAL_KINDS) if names == ("all",) else names
    unknown = [n for n in names if n not in EVAL_KINDS]
    if unknown:
        raise ValueError(f"--rankers: unknown {', '.join(unknown)}; known: {', '.join(EVAL_KINDS)} (or all)")
    if graphtx is None or not hasattr(graphtx, "model_dir"):
        raise ValueError("--rankers combine a graph model with BM25: give --model (or --index) and --graphs")
    directory = Path(args.ranker_dir) if args.ranker_dir else Path(graphtx.model_dir) / "ranker"
    bm25 = next((s for s in systems if s.name == "bm25"), None)
    if bm25 is None:
        bm25 = make_baseline("bm25", cfg, args.tokens)
        systems.append(bm25)
    return [RankerSystem(directory, EVAL_KINDS[name], bm25, graphtx, cfg.leave_out_self) for name in names]


def _peer_ranker_systems(args, cfg, systems: list, peer_vectors: dict) -> list:
    """--ranker-peer PEER DIR: the learned ranker fitted over a peer embedder's cosines (and its peer row, BM25's when missing)."""
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.ranker import RankerSystem
    from graphtx.text.peers import PEERS

    peer, directory = args.ranker_peer
    if peer not in PEERS:
        raise ValueError(f"--ranker-peer: unknown peer {peer!r}; known: {', '.join(PEERS)}")
    from graphtx.rank.store import has_ranker

    if not has_ranker(Path(directory)):  # said before any corpus work, not after it
        raise FileNotFoundError(f"--ranker-peer {peer} {directory}: no ranker there; fit one with `graphtx rank-fit CORPUS --peer {peer} ...`")
    added = []
    bm25 = next((s for s in systems if s.name == "bm25"), None)
    if bm25 is None:
        bm25 = make_baseline("bm25", cfg, args.tokens)
        added.append(bm25)
    dense = next((s for s in systems if s.name == peer), None)
    if dense is None:
        dense = make_baseline(peer, cfg, peer_vectors=peer_vectors)
        added.append(dense)
    return [RankerSystem(Path(directory), "learned", bm25, dense, cfg.leave_out_self, peer=peer), *added]


def build_systems(args, cfg) -> list:
    from graphtx.eval.baselines import make_baseline

    names = _csv(args.baselines)
    if names is None:
        names = DEFAULT_BASELINES + (("fasttext-avg",) if args.tokens else ())
    elif names == ("all",):
        names = BASELINES
    elif names == ("none",):
        names = ()
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {', '.join(unknown)}; known: {', '.join(BASELINES)} (or all, none)")
    from graphtx.eval.peer_vectors import peer_vector_dirs

    peer_vectors = peer_vector_dirs(getattr(args, "peer_vectors", None))
    ranker_peer = (getattr(args, "ranker_peer", None) or (None,))[0]
    unused = [p for p in peer_vectors if p not in names and p != ranker_peer]
    if unused:
        raise ValueError(
            f"--peer-vectors: {', '.join(f'{p} ({peer_vectors[p]})' for p in unused)} used by nothing: "
            f"add it to --baselines or give --ranker-peer {unused[0]} DIR"
        )
    systems = [make_baseline(n, cfg, args.tokens, peer_vectors) for n in dict.fromkeys(names)]
    graphtx = _graphtx_system(args, cfg)
    if graphtx is not None:
        systems.insert(0, graphtx)
    if getattr(args, "hybrid", False):
        from graphtx.eval.fusion import FusionSystem

        if graphtx is None:
            raise ValueError("--hybrid fuses graphtx with BM25: give a graphtx system (--model, --index or --vectors)")
        bm25 = next((s for s in systems if s.name == "bm25"), None)
        if bm25 is None:  # the fused BM25 is also a row of its own: the ratios need it
            bm25 = make_baseline("bm25", cfg, args.tokens)
            systems.append(bm25)
        systems.insert(1, FusionSystem.from_config([graphtx, bm25], cfg))
    if getattr(args, "late", False):
        from graphtx.eval.late import LateRerankSystem
        from graphtx.eval.systems import ModelSystem

        if not isinstance(graphtx, ModelSystem):
            raise ValueError("--late re-ranks by the model's node vectors: give --model and --graphs (or --index and --graphs), not --vectors")
        scorer = _late_scorer_of(graphtx, args.late_storage, cfg.batch_size)
        late = [LateRerankSystem(graphtx, scorer, args.rerank_depth, cfg.leave_out_self)]
        if getattr(args, "hybrid", False):
            late.append(LateRerankSystem(systems[1], scorer, args.rerank_depth, cfg.leave_out_self))
        at = 2 if getattr(args, "hybrid", False) else 1
        systems[at:at] = late
    rankers = getattr(args, "rankers", None)
    if rankers is None and graphtx is not None and hasattr(graphtx, "model_dir"):  # a fitted ranker is evaluated by default
        from graphtx.rank.store import has_ranker

        rankers = "learned" if has_ranker(Path(args.ranker_dir or Path(graphtx.model_dir) / "ranker")) else None
    if rankers and rankers != "none":
        args.rankers = rankers
        systems[1:1] = _ranker_systems(args, cfg, graphtx, systems)
    if getattr(args, "ranker_peer", None):
        systems.extend(_peer_ranker_systems(args, cfg, systems, peer_vectors))
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


def run_command(args, config, paecter_only: bool = False, progress: bool | None = None) -> tuple[dict, list[str], int]:
    """(JSON summary, printed lines, exit status) of ``graphtx eval citations`` / ``paecter``."""
    from graphtx.eval.report import format_report, plot_curves, write_per_query, write_results
    from graphtx.eval.run import evaluate_citations
    from graphtx.from_dict import with_overrides

    cfg = with_overrides(
        config.eval,
        query_fields=_csv(args.query_fields),
        candidate_fields=_csv(args.candidate_fields),
        query_kind=args.query_kind,
        candidate_kind=args.candidate_kind,
        cutoff="none" if paecter_only else args.cutoff,
        recall_k=None if paecter_only else args.k,
        ndcg_k=None if paecter_only else args.ndcg_k,
        gains=None if paecter_only else _gains(args.gains),
        depth=None if paecter_only else max(config.eval.depth, args.k or 0, args.ndcg_k or 0),  # a deeper cut-off asked for: rank deeper
    )
    known_item = not paecter_only and args.known_item
    if known_item:  # a query finds itself: keep it among its candidates, read the texts the graphs come from
        if args.cutoff not in (None, "none"):
            raise ValueError(f"--known-item judges each document by itself, which no date cut-off lets through: drop --cutoff {args.cutoff}")
        cfg = with_overrides(
            cfg,
            leave_out_self=False,
            cutoff="none",
            query_fields=_csv(args.query_fields) or ("first_claim",),
            candidate_fields=_csv(args.candidate_fields) or ("claims", "description"),
        )
    seed = config.seed if args.seed is None else args.seed
    citations = args.citations
    if not citations:
        if not Path(args.corpus).is_dir():
            raise ValueError("--citations is needed when the corpus is a documents file")
        citations = [args.corpus]
    protocols = ("paecter",) if paecter_only else _csv(args.protocols) or PROTOCOLS
    if known_item:
        if "paecter" in (_csv(args.protocols) or ()):
            raise ValueError("--known-item judges each document by itself: the PaECTER protocol needs real citations")
        protocols = ("retrieval",)
    samples = args.samples if paecter_only else args.paecter_samples
    if samples is None and args.out and "paecter" in protocols:
        samples = str(Path(args.out) / "paecter_samples.json")
    report = evaluate_citations(
        args.corpus,
        citations,
        build_systems(args, cfg),
        cfg,
        protocols=protocols,
        extra_citations=args.extra_citations,
        paecter_samples=samples,
        tune=not paecter_only and args.tune,
        tune_citations=None if paecter_only else args.tune_citations,
        seed=seed,
        progress=progress,
    )
    paths = write_results(report, args.out) if args.out else {}
    if not paecter_only:
        if args.per_query:
            paths["per_query"] = write_per_query(report.retrieval, args.per_query)
        if args.plot and report.retrieval:
            paths["plot"] = plot_curves(report, args.plot)
    if samples and report.paecter_samples:
        paths["paecter_samples"] = Path(samples)
    lines = format_report(report) + [f"wrote {p}" for p in paths.values()]
    summary = report.to_json() | {"files": {k: str(v) for k, v in paths.items()}}
    skipped = sum(v for k, v in report.citations["skipped"].items() if k != "duplicate pair")
    return summary, lines, (3 if skipped else 0)


__all__ = ["add_citation_arguments", "add_cutoff_argument", "build_systems", "run_command"]
