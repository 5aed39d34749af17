"""``graphtx eval citations | paecter | run | phrases``: one nested subcommand per evaluation protocol (graphtx/eval/)."""

from __future__ import annotations

from graphtx.cli.common import EXIT_OK, EXIT_SKIPPED, add_common, progress, say
from graphtx.cli.usage import at_least


def cmd_eval_phrases(args, config) -> int:
    from graphtx.eval.phrases import PhraseConfig, evaluate_phrases, report_lines, write_results
    from graphtx.from_dict import with_overrides

    seed = config.seed if args.seed is None else args.seed
    cfg = with_overrides(PhraseConfig(), epochs=args.epochs, loss=args.loss)
    report = evaluate_phrases(args.tokens, args.train, args.valid, cfg, seed=seed, progress=progress(args))
    paths = write_results(report, args.out) if args.out else {}
    summary = report.to_json() | {"files": {k: str(v) for k, v in paths.items()}}
    say(args, summary, report_lines(report, paths))
    return EXIT_SKIPPED if report.train["skipped"] or report.valid["skipped"] else EXIT_OK


def cmd_eval_citations(args, config, paecter_only: bool = False) -> int:
    from graphtx.cli.eval_args import citation_options
    from graphtx.eval.command import run_command

    summary, lines, status = run_command(
        citation_options(args, paecter_only), config, paecter_only=paecter_only, progress=progress(args)
    )
    say(args, summary, lines)
    return status


def cmd_eval_run(args, config) -> int:
    from graphtx.cli.eval_args import run_options
    from graphtx.eval.trec import run_runs_command

    summary, lines, status = run_runs_command(run_options(args), config)
    say(args, summary, lines)
    return status


def cmd_eval_paecter(args, config) -> int:
    return cmd_eval_citations(args, config, paecter_only=True)


def add_parsers(sub) -> None:
    """`graphtx eval PROTOCOL ...`: one nested subcommand per evaluation protocol."""
    p = sub.add_parser("eval", help="evaluation protocols (graphtx eval citations | paecter | phrases | run ...)")
    protocols = p.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")

    q = protocols.add_parser(
        "phrases", help="phrase similarity (Pearson, Spearman) of the SWEM node encoder, untrained and fine-tuned"
    )
    q.add_argument("--tokens", required=True, help="tokens directory written by `graphtx pretrain`")
    q.add_argument("--train", required=True, help="phrase pairs CSV to fine-tune on (anchor,target,score,context)")
    q.add_argument("--valid", required=True, help="phrase pairs CSV to score (never used for training or selection)")
    q.add_argument(
        "--epochs",
        type=at_least(1, "the number of epochs"),
        help="fine-tuning epochs (default 8; the best on held-out train anchors is kept)",
    )
    q.add_argument("--loss", choices=["mse", "cosent"], help="fine-tuning objective (default mse)")
    q.add_argument(
        "--seed",
        type=at_least(0, "the seed"),
        help="dev split, batch order and dropout seed (default: the config's seed)",
    )
    q.add_argument("--out", help="results directory: results.json, predictions.csv, scatter.png")
    add_common(q)
    q.set_defaults(func=cmd_eval_phrases)

    from graphtx.cli.eval_args import add_citation_arguments, add_run_arguments

    q = protocols.add_parser(
        "citations",
        help="citation retrieval (Recall@3, nDCG@150, MAP, MRR@10, R@100/500/1000) and PaECTER samples, graphtx and baselines",
    )
    add_citation_arguments(q)
    add_common(q)
    q.set_defaults(func=cmd_eval_citations)

    q = protocols.add_parser(
        "run",
        help="score TREC run files (graphtx search --topics, Pyserini, ...) against qrels or citations with the metrics "
        "and bootstrap intervals of `eval citations`; ratios to the first run or --baseline",
    )
    add_run_arguments(q)
    add_common(q)
    q.set_defaults(func=cmd_eval_run)

    q = protocols.add_parser(
        "paecter", help="PaECTER protocol only: seeded 1 focal + 5 cited + 25 non-cited samples -> RFR, MAP, MRR@10"
    )
    add_citation_arguments(q, paecter_only=True)
    add_common(q)
    q.set_defaults(func=cmd_eval_paecter)
