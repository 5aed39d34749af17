"""The arguments of ``graphtx eval citations | paecter | run`` and ``graphtx rank-fit``, and the options they are read into.

Each ``add_*_arguments`` builds a parser's flags; each ``*_options`` reads the parsed flags into the stage's frozen
options (:class:`graphtx.eval.command.CitationOptions`, :class:`graphtx.eval.trec.RunOptions`,
:class:`graphtx.eval.ranker.RankFitOptions`): comma-separated flags become tuples, ``--gains X=3,Y=2`` pairs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from graphtx.cli.usage import at_least
from graphtx.eval import BASELINES, PROTOCOLS
from graphtx.eval.cutoff import CUTOFFS
from graphtx.graphs.graph import GRAPH_KINDS
from graphtx.rank.registry import ranker_names
from graphtx.text.peers import PEERS

if TYPE_CHECKING:
    from graphtx.eval.command import CitationOptions
    from graphtx.eval.ranker import RankFitOptions
    from graphtx.eval.trec import RunOptions

# --- values ---------------------------------------------------------------------------


def comma_list(value: str | None) -> tuple[str, ...] | None:
    """``"bm25, tfidf"`` -> ``("bm25", "tfidf")``; None for no value."""
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None


def gains(value: str | None) -> tuple[tuple[str, float], ...] | None:
    """``"X=3,Y=2"`` -> ``(("X", 3.0), ("Y", 2.0))``; None for no value; ValueError for an item without ``=``."""
    if not value:
        return None
    out = []
    for item in value.split(","):
        category, sep, gain = item.partition("=")
        if not sep:
            raise ValueError(f"--gains: {item!r} is not CATEGORY=GAIN")
        out.append((category.strip(), float(gain)))
    return tuple(out)


# --- --cutoff -------------------------------------------------------------------------


def add_cutoff_argument(p: argparse.ArgumentParser, what: str = "every system of the run alike") -> None:
    p.add_argument(
        "--cutoff",
        choices=CUTOFFS,
        help=f"candidates a query may retrieve, for {what}: priority = published strictly before the query's priority date, its family "
        "left out, as `graphtx search --id` (a year-only date counts as its last day); year = not after the query's year; none = every "
        "document (the paper's protocol). Default: config eval.cutoff (priority)",
    )


# --- graphtx eval citations | paecter ---------------------------------------------------


def add_citation_arguments(p: argparse.ArgumentParser, paecter_only: bool = False) -> None:
    """Arguments of ``graphtx eval citations`` (``paecter_only``: of ``graphtx eval paecter``)."""
    p.add_argument(
        "corpus",
        help="corpus directory (`graphtx ingest`) or a JSON-lines documents file read verbatim (id, title, abstract, ...)",
    )
    p.add_argument(
        "--citations",
        nargs="+",
        help="judged citation pairs: TSV/CSV (citing_id, cited_id[, category]), citations Parquet or corpus directory; default: the corpus's citations",
    )
    p.add_argument(
        "--baselines",
        help=f"comma-separated from {', '.join(BASELINES)}, or all / none (default: bm25,tfidf, + fasttext-avg with --tokens)",
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
        "--rerank-depth",
        type=at_least(1, "the re-rank depth"),
        default=100,
        help="--late: first-stage candidates re-ranked per query (default 100)",
    )
    g.add_argument(
        "--late-storage",
        choices=["int8", "fp16", "float32"],
        default="int8",
        help="--late: candidate node vectors as the index stores them (default int8)",
    )
    g.add_argument(
        "--rankers",
        help="also these rankers over graphtx + BM25, comma-separated from the registered ones ("
        + ", ".join(ranker_names())
        + "; learned-lexical is the fitted ranker without graph features), all (the fitted ones) or none "
        "(default: learned when the model has a ranker)",
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
        "--extra-citations",
        nargs="+",
        default=[],
        help="citation files used only to find PaECTER hard negatives (e.g. the training citations)",
    )
    if paecter_only:
        p.add_argument(
            "--samples", help="PaECTER samples JSON: read if it exists, else drawn (--seed) and written there"
        )
    else:
        p.add_argument("--protocols", help=f"comma-separated from {', '.join(PROTOCOLS)} (default: both)")
        p.add_argument(
            "--paecter-samples", help="PaECTER samples JSON: read if it exists, else drawn (--seed) and written there"
        )
        p.add_argument(
            "--tune",
            action="store_true",
            help="also BM25 with k1 and b tuned on the judged (or --tune-citations) queries",
        )
        p.add_argument(
            "--tune-citations", help="citations to tune BM25 on (default: the judged ones, as the paper did)"
        )
        p.add_argument(
            "--per-query", help="per-query CSV for error analysis (every system, every measure, cited ranks)"
        )
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
        p.add_argument(
            "--gains",
            help="gain per citation category for nDCG, e.g. X=3,Y=2,A=1 (others: 1; 0 = not relevant); default binary",
        )
    if not paecter_only:
        add_cutoff_argument(p)
    p.add_argument(
        "--query-fields", help="text fields of a query for the text baselines, e.g. title,abstract (default: config)"
    )
    p.add_argument("--candidate-fields", help="text fields of a candidate for the text baselines (default: config)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="PaECTER sampling seed (default: the config's seed)")
    p.add_argument(
        "--out",
        help="results directory: results.json, per_query.csv, per_sample.csv, metric_vs_k.png, paecter_samples.json",
    )


def citation_options(args: argparse.Namespace, paecter_only: bool = False) -> CitationOptions:
    """The :class:`~graphtx.eval.command.CitationOptions` of parsed ``eval citations`` (or ``eval paecter``) flags."""
    from graphtx.eval.command import CitationOptions

    retrieval = {}
    if not paecter_only:  # flags only `eval citations` has
        retrieval = dict(
            protocols=comma_list(args.protocols),
            tune=args.tune,
            tune_citations=args.tune_citations,
            per_query=args.per_query,
            plot=args.plot,
            k=args.k,
            ndcg_k=args.ndcg_k,
            known_item=args.known_item,
            gains=gains(args.gains),
            cutoff=args.cutoff,
        )
    rankers = None if args.rankers is None else comma_list(args.rankers) or ()
    return CitationOptions(
        corpus=args.corpus,
        citations=tuple(args.citations or ()),
        baselines=comma_list(args.baselines),
        tokens=args.tokens,
        vectors=args.vectors,
        query_vectors=args.query_vectors,
        candidate_vectors=args.candidate_vectors,
        model=args.model,
        graphs=args.graphs,
        query_kind=args.query_kind,
        candidate_kind=args.candidate_kind,
        index=args.index,
        name=args.name,
        hybrid=args.hybrid,
        late=args.late,
        rerank_depth=args.rerank_depth,
        late_storage=args.late_storage,
        rankers=rankers,
        ranker_dir=args.ranker_dir,
        ranker_peer=tuple(args.ranker_peer) if args.ranker_peer else None,
        peer_vectors=tuple(args.peer_vectors) if args.peer_vectors is not None else None,
        extra_citations=tuple(args.extra_citations),
        samples=args.samples if paecter_only else args.paecter_samples,
        query_fields=comma_list(args.query_fields),
        candidate_fields=comma_list(args.candidate_fields),
        seed=args.seed,
        out=args.out,
        **retrieval,
    )


# --- graphtx eval run -----------------------------------------------------------------


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``graphtx eval run``."""
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="TREC run files (qid Q0 docid rank score tag): `graphtx search --topics`, Pyserini, ...",
    )
    p.add_argument(
        "--qrels",
        required=True,
        help="judgements: TREC qrels (qid iter docid rel) or citation pairs (TSV/CSV citing_id, cited_id[, category], "
        "citations Parquet, corpus directory)",
    )
    p.add_argument(
        "--baseline",
        help="the run the ratios and bootstrap intervals are to: its name (file stem) or path (default: the first run)",
    )
    p.add_argument(
        "--corpus",
        help="corpus directory or documents JSONL: pairs whose documents are not in it are not scored, as `graphtx eval citations`",
    )
    add_cutoff_argument(
        p, "every run alike, with --corpus (its dates and families); without --corpus no cut-off applies"
    )
    p.add_argument("--k", type=at_least(1, "k"), help="Recall@k cut-off (default: config, 3)")
    p.add_argument("--ndcg-k", type=at_least(1, "the nDCG cut-off"), help="nDCG@k cut-off (default: config, 150)")
    p.add_argument(
        "--gains", help="gain per category or qrels rel value for nDCG, e.g. X=3,Y=2,A=1 or 2=2,1=1 (default binary)"
    )
    p.add_argument("--per-query", help="per-query CSV (every run, every measure, each judged document's rank)")
    p.add_argument("--out", help="results directory: results.json, per_query.csv")


def run_options(args: argparse.Namespace) -> RunOptions:
    """The :class:`~graphtx.eval.trec.RunOptions` of parsed ``eval run`` flags."""
    from graphtx.eval.trec import RunOptions

    return RunOptions(
        runs=tuple(args.runs),
        qrels=args.qrels,
        baseline=args.baseline,
        corpus=args.corpus,
        cutoff=args.cutoff,
        k=args.k,
        ndcg_k=args.ndcg_k,
        gains=gains(args.gains),
        per_query=args.per_query,
        out=args.out,
    )


# --- graphtx rank-fit -----------------------------------------------------------------


def add_rank_fit_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``graphtx rank-fit``."""
    p.add_argument(
        "corpus", help="corpus directory (`graphtx ingest`) or JSON-lines documents file, as `graphtx eval citations`"
    )
    p.add_argument(
        "--run",
        help="training run directory (`graphtx train`): its model/ and its ranker_citations.tsv (the queries held out of training)",
    )
    p.add_argument("--model", help="model directory (default: RUN/model)")
    p.add_argument("--graphs", help="graphs directory of `graphtx parse` (needed with --run or --model)")
    p.add_argument(
        "--peer",
        choices=PEERS,
        help="fit over a peer text embedder's cosines (all-MiniLM-L6-v2, all-mpnet-base-v2) in place of the graph model's: "
        "the ranker one could assemble without graphtx, for comparison (needs --citations and --out)",
    )
    p.add_argument(
        "--peer-vectors",
        metavar="DIR",
        help="with --peer: that peer's vectors already written by `graphtx teacher` (e.g. on a GPU), read instead of encoding; "
        "evaluate the ranker with `graphtx eval citations --peer-vectors` over vectors made the same way",
    )
    p.add_argument(
        "--citations",
        nargs="+",
        help="training citations to fit on (default: RUN/ranker_citations.tsv); never validation citations",
    )
    p.add_argument("--out", help="ranker directory to write (default: MODEL/ranker)")
    p.add_argument(
        "--query-kind",
        choices=list(GRAPH_KINDS),
        help="query graph kind, as `graphtx eval citations --query-kind` (default: config, first_claim; when most documents "
        "have no claims, the candidate kind): fit the ranker on the query graphs it will rank with",
    )
    add_cutoff_argument(p, "the pools the ranker is fitted on (fit it under the protocol it is used with)")


def rank_fit_options(args: argparse.Namespace) -> RankFitOptions:
    """The :class:`~graphtx.eval.ranker.RankFitOptions` of parsed ``rank-fit`` flags."""
    from graphtx.eval.ranker import RankFitOptions

    return RankFitOptions(
        corpus=args.corpus,
        run=args.run,
        model=args.model,
        graphs=args.graphs,
        peer=args.peer,
        peer_vectors=args.peer_vectors,
        citations=tuple(args.citations or ()),
        out=args.out,
        query_kind=args.query_kind,
        cutoff=args.cutoff,
    )
