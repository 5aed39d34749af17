"""``graphtx init-model | encode | fit-late-head | train | plot | rank-fit``: models, their training and the rankers fitted on them."""

from __future__ import annotations

import dataclasses
import sys

from graphtx.cli.common import EXIT_OK, KIND_CHOICES, add_common, add_engine, add_ray_gpus, progress, say
from graphtx.cli.usage import at_least, at_least_or, share
from graphtx.model.config import WORD_ORDERS
from graphtx.text.peers import PEERS
from graphtx.train.adapt import ADAPT_MAX_EPOCHS


def cmd_init_model(args, config) -> int:
    from graphtx.model.embed import init_model, init_report
    from graphtx.model.io import save_model

    seed = config.seed if args.seed is None else args.seed
    model_cfg = config.model if args.reduced else config.model.as_base()
    model, tokenizer = init_model(model_cfg, args.tokens, seed)
    save_model(args.out, model, tokenizer=tokenizer)
    say(args, *init_report(model, tokenizer, args.tokens, args.out))
    return EXIT_OK


def cmd_encode(args, config) -> int:
    from graphtx.model.chunks import resolve_device
    from graphtx.model.embed import embed_graphs, encode_report
    from graphtx.model.io import load_model

    device = resolve_device(args.device)  # checked first: a bad name or a missing GPU in words, not as a damaged model
    loaded = load_model(
        args.model, map_location=device if args.engine == "local" else "cpu"
    )  # ray: the actors load their own
    model, tokenizer = loaded.model, loaded.tokenizer
    n = embed_graphs(
        model,
        tokenizer,
        args.graphs,
        args.kind,
        args.out,
        batch_size=args.batch_size,
        progress=progress(args),
        engine=args.engine,
        model_dir=args.model,
        ray_address=args.ray_address,
        ray_workers=args.ray_workers,
        ray_gpus=args.ray_gpus,
    )
    say(args, *encode_report(n, model.out_dim, args.kind, args.out))
    return EXIT_OK


def cmd_train(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.train.run import summary_lines, train

    train_cfg = with_overrides(config.train, max_steps=args.max_steps, max_epochs=args.max_epochs)
    if args.stages:
        train_cfg = with_overrides(train_cfg, stages=tuple(args.stages.split(",")))
    if args.pretrain_graphs:
        train_cfg = with_overrides(train_cfg, pretrain_graphs=tuple(args.pretrain_graphs))
    if args.teacher:
        train_cfg = with_overrides(train_cfg, pretrain_teacher=args.teacher)
    if not (args.tokens or args.init or train_cfg.init_from):
        raise ValueError("give --tokens (a graphtx pretrain directory), --init (a model directory) or train.init_from")
    config = with_overrides(config, train=train_cfg, seed=args.seed)
    why = _adapts_instead(args, train_cfg)
    if why:
        from graphtx.train.adapt import adapt
        from graphtx.train.adapt import summary_lines as adapt_lines

        print(
            f"{why}: adapting the model to its documents without labels (as `graphtx adapt`), not training on trivial citations",
            file=sys.stderr,
        )
        summary = adapt(
            config,
            args.corpus,
            args.graphs,
            args.out,
            model_dir=args.init or train_cfg.init_from or None,
            tokens_dir=args.tokens,
            device=args.device,
            progress=progress(args),
        )
        say(args, summary, adapt_lines(summary, args.out))
        return EXIT_OK
    kwargs = dict(
        config=config,
        corpus_dir=args.corpus,
        graphs_dir=args.graphs,
        out_dir=args.out,
        tokens_dir=args.tokens,
        init_model_dir=args.init,
        citations=args.citations,
        valid_citations=args.valid_citations,
        test_citations=args.test_citations,
        device=args.device,
        progress=progress(args),
    )
    if args.engine == "ray":
        from graphtx.ray_engine import check_engine
        from graphtx.train.ray_launch import train_on_ray

        check_engine("ray")
        summary = train_on_ray(
            kwargs, workers=args.ray_workers, use_gpu=args.device.startswith("cuda"), address=args.ray_address
        )
    else:
        summary = train(**kwargs)
    if not summary:  # a non-main DDP rank
        return EXIT_OK
    lines = summary_lines(summary, args.out)
    if not args.no_rank_fit and summary.get("data", {}).get("ranker_citations", 0) > 0 and "interrupted" not in summary:
        from graphtx.eval.ranker import fit_ranker_after_training

        ranker, ranker_lines = fit_ranker_after_training(
            args.corpus, args.out, args.graphs, config, progress=progress(args)
        )
        if ranker is not None:
            summary["ranker"] = ranker
        lines += ranker_lines
    say(args, summary, lines)
    return EXIT_OK


def _adapts_instead(args, train_cfg) -> str:
    """Why `graphtx train` takes the label-free route (graphtx adapt) instead, or "" when it trains: a config that
    distils a teacher (configs/small.yaml) and training citations none of which links two documents of the corpus (the
    corpus's own front-page citations all pointing outside it, or none; or a ``--citations`` file of pairs outside it).
    Training on them would learn from trivial citations alone, which the adaptation beats."""
    from graphtx.train.run import citing_documents_within

    if args.engine != "local":
        return ""
    if "pretrain" not in train_cfg.stages or not train_cfg.pretrain_teacher or train_cfg.pretrain_teacher_weight <= 0:
        return ""
    if not args.citations and (args.valid_citations or args.test_citations):
        return ""  # held-out files given: the corpus's own citations train, and the run says if none is usable
    if citing_documents_within(args.corpus, args.citations) > 0:  # the --citations file, else the corpus's own
        return ""
    if not args.citations:
        return f"no citation between two documents of {args.corpus} and none given"
    held = [f for f in (args.valid_citations, args.test_citations) if f]
    unscored = (
        f" (an adaptation scores no held-out citations: evaluate {', '.join(held)} with `graphtx eval citations`)"
    )
    return f"none of the training citations in {args.citations} links two documents of {args.corpus}" + (
        unscored if held else ""
    )


def cmd_adapt(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.train.adapt import adapt, summary_lines

    train_cfg = config.train
    if args.teacher:  # naming a teacher turns distillation on (a config without one has its weight at 0)
        train_cfg = with_overrides(
            train_cfg, pretrain_teacher=args.teacher, pretrain_teacher_weight=train_cfg.pretrain_teacher_weight or 1.0
        )
    if isinstance(args.steps, int):
        train_cfg = with_overrides(train_cfg, pretrain_steps=args.steps)
    config = with_overrides(config, train=train_cfg, seed=args.seed)
    summary = adapt(
        config,
        args.corpus,
        args.graphs,
        args.out,
        model_dir=args.model,
        tokens_dir=args.tokens,
        device=args.device,
        progress=progress(args),
        hold_out_share=args.hold_out_share,
        read_every_document=args.steps == "all",
    )
    say(args, summary, summary_lines(summary, args.out))
    return EXIT_OK


def cmd_fit_late_head(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.train.late_head import run_fit_late_head, summary_lines

    config = with_overrides(config, seed=args.seed)
    late_dim = args.late_dim or config.model.late_dim
    log = None if args.quiet or args.json else (lambda line: print(line, file=sys.stderr))
    summary = run_fit_late_head(
        config, args.model, args.corpus, args.graphs, args.citations, args.valid_citations, args.out, late_dim, log=log
    )
    say(args, summary, summary_lines(summary, args.out))
    return EXIT_OK


def cmd_plot(args, config) -> int:
    from graphtx.train.plot import plot_run

    path = plot_run(args.run, args.out)
    say(args, {"out": str(path)}, [f"wrote {path}"])
    return EXIT_OK


def cmd_distil_phrases(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.text.phrase_pairs import read_phrase_pairs
    from graphtx.train.phrase_distil import distil_phrases

    cfg = with_overrides(
        config.distil_phrases,
        peer=args.peer,
        node_dim=args.node_dim,
        word_order=args.word_order,
        epochs=args.epochs,
        max_phrases=args.max_phrases,
        teacher_epochs=args.teacher_epochs,
    )
    pairs = read_phrase_pairs(args.pairs) if args.pairs else None
    exclude = read_phrase_pairs(args.exclude) if args.exclude else None
    seed = config.seed if args.seed is None else args.seed
    report = distil_phrases(
        args.tokens,
        args.graphs,
        args.out,
        cfg,
        pairs=pairs,
        exclude=exclude,
        seed=seed,
        progress=progress(args),
        peer_cache_dir=config.eval.peer_cache_dir,
    )
    say(args, dataclasses.asdict(report), report.lines())
    return EXIT_OK


def cmd_rank_fit(args, config) -> int:
    from graphtx.cli.eval_args import rank_fit_options
    from graphtx.eval.ranker import run_rank_fit

    summary, lines = run_rank_fit(rank_fit_options(args), config, progress=progress(args))
    say(args, summary, lines)
    return EXIT_OK


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "distil-phrases",
        help="tokens + graphs -> tokens whose SWEM node encoder a peer taught (node-phrase distillation)",
    )
    p.add_argument(
        "--tokens", required=True, help="tokens directory written by `graphtx pretrain` (its tokenizer is kept)"
    )
    p.add_argument(
        "--graphs", required=True, nargs="+", help="graphs directories whose feature-node phrases are distilled"
    )
    p.add_argument(
        "--out", required=True, help="tokens directory to write (distilled token vectors + node_projection.npz)"
    )
    p.add_argument(
        "--pairs",
        help="labelled phrase pairs CSV (anchor,target,score,context): the teacher is fine-tuned on them first "
        "and a held-out share of their anchors selects the epochs",
    )
    p.add_argument(
        "--exclude", help="phrase pairs CSV whose phrases are never taught (a validation set you will score on)"
    )
    p.add_argument("--peer", choices=PEERS, help="the teacher (default: config distil_phrases.peer, minilm)")
    p.add_argument(
        "--node-dim",
        type=at_least(1, "the node size"),
        help="distilled projection size = model.node_dim (default 256, configs/small.yaml's)",
    )
    p.add_argument(
        "--word-order",
        choices=WORD_ORDERS,
        help="the node encoder's word-order channel = model.word_order of the models "
        "meant to start from it (default: config distil_phrases.word_order, none; configs/small-word-order.yaml: trigram)",
    )
    p.add_argument(
        "--epochs", type=at_least(1, "the number of epochs"), help="student passes over the pool (default 40)"
    )
    p.add_argument(
        "--teacher-epochs",
        type=at_least(0, "the number of epochs"),
        help="teacher passes over --pairs (default 2; 0 = as shipped)",
    )
    p.add_argument(
        "--max-phrases", type=at_least(1, "the number of phrases"), help="corpus phrases distilled (default 150000)"
    )
    p.add_argument(
        "--seed", type=at_least(0, "the seed"), help="dev split, pool draw and batch order (default: the config's seed)"
    )
    add_common(p)
    p.set_defaults(func=cmd_distil_phrases)

    p = sub.add_parser("init-model", help="config + tokens directory -> an untrained model directory")
    p.add_argument("--tokens", required=True, help="tokens directory written by `graphtx pretrain`")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--reduced", action="store_true", help="with the MoE reduction head (default: the base model)")
    p.add_argument(
        "--seed", type=at_least(0, "the seed"), help="weight initialisation seed (default: the config's seed)"
    )
    add_common(p)
    p.set_defaults(func=cmd_init_model)

    p = sub.add_parser("encode", help="model + graphs directory -> graph vectors (Parquet)")
    p.add_argument("--model", required=True, help="model directory (`graphtx init-model` or `graphtx train`)")
    p.add_argument("--graphs", required=True, help="graphs directory written by `graphtx parse`")
    p.add_argument("--kind", default="description", choices=KIND_CHOICES)
    p.add_argument("--out", required=True, help="vectors.parquet to write")
    p.add_argument("--batch-size", type=at_least(1, "the batch size"), default=64, help="graphs per forward pass")
    p.add_argument(
        "--device",
        default="cpu",
        help="where the model runs (engine local): cpu | cuda | auto; the vectors are float32 either way",
    )
    add_engine(p, "--ray-workers encoder actors")
    p.add_argument(
        "--ray-workers",
        type=at_least(1, "the number of Ray workers"),
        default=2,
        help="encoder actors with --engine ray (default 2)",
    )
    add_ray_gpus(p)
    add_common(p)
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser(
        "fit-late-head",
        help="a trained model + citations -> the same model with a late-interaction head fitted on its frozen node states",
    )
    p.add_argument(
        "--model", required=True, help="trained model directory (kept as it is: its dense ranking does not change)"
    )
    p.add_argument("--corpus", required=True, help="corpus directory (`graphtx ingest`)")
    p.add_argument("--graphs", required=True, help="graphs directory (`graphtx parse`)")
    p.add_argument("--citations", required=True, help="training citations (TSV/CSV or corpus directory)")
    p.add_argument(
        "--valid-citations", required=True, help="validation citations: select the head on the re-ranked dense top N"
    )
    p.add_argument("--out", required=True, help="output model directory")
    p.add_argument(
        "--late-dim",
        type=at_least(1, "the late-interaction vector size"),
        help="late-interaction vector size (default: config model.late_dim)",
    )
    p.add_argument("--seed", type=at_least(0, "the seed"))
    add_common(p)
    p.set_defaults(func=cmd_fit_late_head)

    p = sub.add_parser("train", help="citations + graphs -> a trained model (base stage, then MoE reduction stage)")
    p.add_argument(
        "--corpus",
        required=True,
        help="corpus directory (documents: ids, families, dates, classes; citations unless --citations)",
    )
    p.add_argument("--graphs", required=True, help="graphs directory written by `graphtx parse`")
    p.add_argument("--out", required=True, help="run directory (the same command resumes a killed run)")
    init = p.add_mutually_exclusive_group()
    init.add_argument("--tokens", help="tokens directory of `graphtx pretrain`: start from a fresh model")
    init.add_argument(
        "--init", help="model directory to start from, e.g. a --stages pretrain run's model/ (default: train.init_from)"
    )
    p.add_argument(
        "--citations", help="training citations TSV (citing_id, cited_id[, category]); default: the corpus's citations"
    )
    p.add_argument(
        "--valid-citations",
        help="validation citations TSV (train.split = files), scored once at the end; nothing is selected on them",
    )
    p.add_argument("--test-citations", help="test citations TSV, scored once at the end")
    p.add_argument("--stages", help="comma-separated, in order: pretrain,base,reduced (default: config)")
    p.add_argument(
        "--pretrain-graphs",
        nargs="+",
        metavar="DIR",
        help="stage pretrain: more graphs directories pooled with --graphs (default: train.pretrain_graphs)",
    )
    p.add_argument(
        "--teacher",
        help="stage pretrain: a `graphtx teacher` directory whose document vectors are distilled, or a peer (minilm, mpnet) "
        "whose vectors of the pool the run writes to OUT/teacher (default: train.pretrain_teacher)",
    )
    p.add_argument("--max-epochs", type=at_least(1, "the number of epochs"), help="per stage (default: config)")
    p.add_argument("--max-steps", type=at_least(0, "the step cap"), help="per stage, 0 = no cap (default: config)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="default: the config's seed")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument(
        "--no-rank-fit",
        action="store_true",
        help="do not fit the learned ranker at the end (by default it is fitted on the queries train.ranker_holdout kept out, as `graphtx rank-fit --run`)",
    )
    add_engine(
        p,
        "DDP over --ray-workers Ray Train workers, gloo on CPU, NCCL with --device cuda; the run directory on storage all workers see",
    )
    p.add_argument(
        "--ray-workers",
        type=at_least(1, "the number of Ray workers"),
        default=2,
        help="DDP workers with --engine ray (default 2)",
    )
    add_common(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "adapt", help="a model adapted to a corpus without citations: the teacher distilled on its own documents"
    )
    p.add_argument(
        "--corpus", required=True, help="corpus directory (`graphtx ingest`): the documents the teacher reads"
    )
    p.add_argument("--graphs", required=True, help="graphs directory of `graphtx parse` over that corpus")
    p.add_argument(
        "--out",
        required=True,
        help="run directory (RUN/model for `graphtx index`); the same command resumes a killed run",
    )
    start = p.add_mutually_exclusive_group(required=True)
    start.add_argument("--model", help="model directory to adapt (a trained run's model/)")
    start.add_argument("--tokens", help="tokens directory of `graphtx pretrain`: adapt a fresh model")
    p.add_argument(
        "--teacher",
        help="a `graphtx teacher` directory, or a peer (minilm, mpnet) whose vectors the run writes to OUT/teacher (default: train.pretrain_teacher)",
    )
    p.add_argument(
        "--steps",
        type=at_least_or("all", 1, "the number of steps"),
        help="distillation steps, at most train.adapt_max_passes passes over the documents (default "
        f"{ADAPT_MAX_EPOCHS}), or `all`: the steps that read every one that many times (default: train.pretrain_steps)",
    )
    p.add_argument(
        "--hold-out-share",
        type=share,
        default=0.0,
        help="keep this seeded share of the documents out of the adaptation and write their known-item judgements "
        "to OUT/test_citations.tsv (for `graphtx eval citations --known-item`; default 0: adapt to every document)",
    )
    p.add_argument("--seed", type=at_least(0, "the seed"), help="default: the config's seed")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    add_common(p)
    p.set_defaults(func=cmd_adapt)

    p = sub.add_parser("plot", help="training curves of a run directory -> PNG")
    p.add_argument("run", help="run directory of `graphtx train`")
    p.add_argument("--out", help="PNG path (default RUN/curves.png)")
    add_common(p)
    p.set_defaults(func=cmd_plot)

    from graphtx.cli.eval_args import add_rank_fit_arguments

    p = sub.add_parser(
        "rank-fit",
        help="fit the convex and LightGBM rankers (BM25 + graph model) on training citations -> MODEL/ranker",
    )
    add_rank_fit_arguments(p)
    add_common(p)
    p.set_defaults(func=cmd_rank_fit)
