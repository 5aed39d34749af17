"""``graphtx index | search | serve``: index directories, prior-art search over them, the HTTP service."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from graphtx.cli.common import EXIT_OK, EXIT_SKIPPED, KIND_CHOICES, add_common, add_engine, add_ray_gpus, progress, say
from graphtx.cli.usage import at_least, port
from graphtx.rank.registry import ranker_names


def cmd_index(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.index.build import build_index, remove_documents, write_bm25
    from graphtx.index.report import bm25_report, build_lines, build_summary, repair_report

    cfg = with_overrides(
        config.index,
        kind=args.kind,
        index_type=args.index_type,
        batch_size=args.batch_size,
        chunk_size=args.chunk_size,
        shard_size=args.shard_size,
    )
    seed = config.seed if args.seed is None else args.seed
    removals = list(args.remove or [])
    if args.remove_file:
        removals += [
            line.strip() for line in Path(args.remove_file).read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    if args.verify:
        return _verify_index(args)
    if args.bm25:
        cfg = with_overrides(cfg, bm25=True)
    if args.rebuild and not args.graphs and not removals:
        from graphtx.index.finalize import repair_index

        say(args, *repair_report(args.out, repair_index(args.out, progress=progress(args))))
        return EXIT_OK
    if args.merge_ondisk and (cfg.index_type != "ivfpq" or cfg.ivf_refine or not args.graphs):
        raise ValueError(
            "--merge-ondisk merges IVF-PQ shards (index_type ivfpq, no ivf_refine) after adding --graphs: "
            "flat and HNSW shards stay as they are (each is memory-mapped when searched)"
        )
    if not args.graphs and not removals and not args.bm25:
        raise ValueError(
            "nothing to do: give --graphs (with --model) to add documents, --remove / --remove-file to take some out, --bm25, --rebuild (repair) or --verify"
        )
    if args.graphs:
        from graphtx.index.store import existing_index_model

        own_model, own_kind = existing_index_model(
            args.out
        )  # adding to an index: its model (and graph kind) by default
        if not args.model and own_model is None:
            raise ValueError(
                f"--graphs needs --model (the model that embeds the graphs): {args.out} is not an index yet"
            )
        args.model = args.model or str(own_model)
        if own_kind and not args.kind and cfg.kind != own_kind:
            cfg = with_overrides(cfg, kind=own_kind)
    reports = []
    if args.bm25 and not args.graphs and not removals:
        say(args, *bm25_report(write_bm25(args.out, progress=progress(args))))
        return EXIT_OK
    if removals:
        reports.append(
            remove_documents(
                args.out, removals, cfg if args.config else None, seed if args.config else None, progress=progress(args)
            )
        )
    if args.graphs:
        from graphtx.ray_engine import ray_session

        # one Ray for the whole build (encoder actors, then the shard tasks), not one started per step
        session = (
            ray_session(args.ray_address, num_cpus=args.ray_workers)
            if args.engine == "ray"
            else contextlib.nullcontext()
        )
        with session:
            reports.append(
                build_index(
                    args.model,
                    args.graphs,
                    args.out,
                    cfg,
                    corpus_dir=args.corpus,
                    replace=args.replace,
                    rebuild=args.rebuild,
                    seed=seed,
                    device=args.device,
                    progress=progress(args),
                    engine=args.engine,
                    ray_address=args.ray_address,
                    ray_workers=args.ray_workers,
                    ray_gpus=args.ray_gpus,
                    merge=args.merge_ondisk,
                )
            )
    not_found = [d for r in reports for d in r.not_found]
    duplicates = sum(r.duplicates for r in reports)
    say(args, build_summary(reports), build_lines(reports, cfg.kind))
    return EXIT_SKIPPED if not_found or duplicates else EXIT_OK


def _verify_index(args) -> int:
    """`graphtx index --out DIR --verify`: hash every file the manifest names; the damaged ones are listed (exit 2)."""
    from graphtx.errors import IntegrityError
    from graphtx.index.finalize import verify_index
    from graphtx.index.report import verify_report

    try:
        checked = verify_index(args.out)
    except IntegrityError as err:
        if args.json:
            print(
                json.dumps({"out": str(args.out), "ok": False, "damaged": list(err.files), "error": str(err)}, indent=2)
            )
        print(f"graphtx index: error: {err}", file=sys.stderr)
        for path in err.files:
            print(f"  damaged: {path}", file=sys.stderr)
        return err.exit_code
    say(args, *verify_report(args.out, checked))
    return EXIT_OK


def _query_text(args) -> str | None:
    if args.file:
        return sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    return args.text


def _index_dir(args) -> str:
    if args.index_dir and args.index and args.index_dir != args.index:
        raise ValueError(f"two index directories given ({args.index_dir} and --index {args.index}): give one")
    if not (args.index_dir or args.index):
        raise ValueError("give the index directory: graphtx search INDEX ... (or --index INDEX)")
    return args.index_dir or args.index


def _search_kwargs(args) -> dict:
    """The keyword arguments of Index.search, the same for one query and for every topic of a batch."""
    from graphtx.cli.filter_args import filters_from_args

    return {
        "hybrid": args.hybrid or None,
        "ranker": args.ranker,
        "rerank": args.rerank,
        "rerank_depth": args.rerank_depth,
        "filters": filters_from_args(args),
    }


def cmd_search(args, config) -> int:
    search_kwargs = _search_kwargs(args)  # a bad --before fails here, before torch and the index are loaded
    from graphtx.from_dict import with_overrides
    from graphtx.index.claimset import search_claim_set
    from graphtx.index.display import hit_lines
    from graphtx.index.report import search_header
    from graphtx.index.search import Index

    search_cfg = with_overrides(config.search, k=args.k, link_template=args.link_template)
    index_dir = _index_dir(args)
    batch_only = [f for f, on in (("--output", args.output), ("--tag", args.tag), ("--restart", args.restart)) if on]
    if args.topics and args.offset:
        raise ValueError("--offset pages the hits of one query; a batch run (--topics) writes the top k of each topic")
    if args.topics and not args.output:
        raise ValueError("--topics needs --output RUN (the TREC run file to write)")
    if args.topics and args.csv:
        raise ValueError("--csv writes the hits of one query; a batch run (--topics) writes its table beside --output")
    if args.topics and args.explain_png:
        raise ValueError(
            "--explain-png draws the hits of one query; with --topics the table lists the matched features"
        )
    if batch_only and not args.topics:
        raise ValueError(f"{', '.join(batch_only)} go with --topics (a batch run)")
    index = Index.open(
        index_dir,
        model=args.model,
        search=search_cfg,
        nprobe=args.nprobe,
        ef_search=args.ef_search,
        use_gpu=config.index.use_gpu,
        ranker_dir=args.ranker_dir,
    )
    if args.topics:
        return _search_topics(args, index, search_kwargs)
    explain = args.explain or bool(args.explain_png)
    found = search_claim_set(
        index,
        _query_text(args),
        doc_id=args.id,
        all_independent=args.all_independent,
        merge=args.merge,
        explain=explain,
        offset=args.offset,
        **search_kwargs,
    )
    result = found.result
    if found.note and not args.json:
        print(f"graphtx search: note: {found.note}", file=sys.stderr)
    pngs = []
    if args.explain_png:
        from graphtx.index.explain import render_explanation
        from graphtx.paths import file_in

        Path(args.explain_png).mkdir(parents=True, exist_ok=True)
        for hit in result.hits:
            path = file_in(
                args.explain_png, hit.doc_id, ".png", prefix=f"{hit.rank:02d}-"
            )  # ids are data: never a path
            pngs.append(
                str(render_explanation(hit.explanation, path, max_nodes=search_cfg.explain_max_nodes, rank=hit.rank))
            )
    if args.csv:
        from graphtx.index.batch import write_csv

        written = write_csv(found, args.csv)
        pngs_note = [f"wrote {p}" for p in written]
    else:
        pngs_note = []
    summary = found.to_json() | ({"png": pngs} if pngs else {})
    lines = search_header(found, index.count, index_dir, offset=args.offset)
    for hit in result.hits:
        lines += hit_lines(hit, full=args.full, found_by=found.found_by.get(hit.doc_id))
    lines += [f"rendered {p}" for p in pngs] + pngs_note
    say(args, summary, lines)
    return EXIT_OK


def _search_topics(args, index, search_kwargs: dict) -> int:
    """`graphtx search INDEX --topics FILE --output RUN`: every topic, one run file (graphtx/index/batch.py)."""
    from graphtx.index.batch import run_topics
    from graphtx.index.report import topics_lines

    report = run_topics(
        index,
        args.topics,
        args.output,
        args.k,
        table_format=args.format,
        tag=args.tag,
        topics_format=args.topics_format,
        all_independent=args.all_independent,
        merge=args.merge,
        features=not args.no_features,
        restart=args.restart,
        progress=progress(args),
        **search_kwargs,
    )
    say(args, report.to_json(), topics_lines(report))
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def cmd_serve(args, config) -> int:
    from graphtx.from_dict import with_overrides
    from graphtx.serve.app import serve

    allowed = (*config.serve.allowed_hosts, *args.allow_host) if args.allow_host else None
    cfg = with_overrides(
        config.serve,
        host=args.host,
        port=args.port,
        allowed_hosts=allowed,
        workers=args.workers,
        read_only=False if args.writable else None,
    )
    search_cfg = with_overrides(config.search, ranker=args.ranker, link_template=args.link_template)
    serve(args.index, cfg, search_cfg, model=args.model, log_level="warning" if args.quiet else "info")
    return EXIT_OK


def add_parsers(sub) -> None:
    """`graphtx index`, `graphtx search`, `graphtx serve` (graphtx/index/, graphtx/serve/)."""
    from graphtx.cli.filter_args import add_filter_arguments

    p = sub.add_parser(
        "index", help="model + graphs directory -> FAISS index directory (resumable; add, replace, remove)"
    )
    p.add_argument(
        "--out", required=True, help="index directory to write or extend (the same command resumes a killed run)"
    )
    p.add_argument("--model", help="model directory (`graphtx init-model` or `graphtx train`)")
    p.add_argument("--graphs", help="graphs directory written by `graphtx parse`: its documents are added")
    p.add_argument(
        "--corpus",
        help="corpus directory for titles, dates, classes and BM25 text (default: the one the graphs were parsed from)",
    )
    p.add_argument("--kind", choices=KIND_CHOICES, help="graph kind embedded (default: config, description)")
    p.add_argument("--index-type", choices=["flat", "ivfpq", "hnsw"], help="FAISS index type (default: config, flat)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="documents already indexed get the new version (default: they are skipped)",
    )
    p.add_argument("--remove", nargs="+", metavar="ID", help="take these documents out of the index")
    p.add_argument("--remove-file", help="text file of document ids to take out, one a line")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild every shard (and retrain IVF-PQ) from the stored vectors; alone: repair id map, shards, BM25 and manifest",
    )
    p.add_argument(
        "--bm25",
        action="store_true",
        help="write (or refresh) the BM25 state for hybrid search; alone: only that, for an existing index",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="hash every file the index's manifest names (shards and documents included); list the damaged ones",
    )
    p.add_argument(
        "--batch-size", type=at_least(1, "the batch size"), help="graphs per forward pass (default: config, 64)"
    )
    p.add_argument(
        "--chunk-size", type=at_least(1, "the chunk size"), help="documents per committed part (default: config, 1024)"
    )
    p.add_argument(
        "--shard-size",
        type=at_least(1, "the shard size"),
        help="documents per FAISS shard (default: config, 1,000,000)",
    )
    p.add_argument("--device", default="cpu", help="where the model runs: cpu | cuda | auto")
    p.add_argument(
        "--seed",
        type=at_least(0, "the seed"),
        help="IVF-PQ training sample and k-means seed (default: the config's seed)",
    )
    add_engine(p, "--ray-workers encoder actors")
    p.add_argument(
        "--ray-workers",
        type=at_least(1, "the number of Ray workers"),
        default=2,
        help="encoder actors with --engine ray (default 2)",
    )
    add_ray_gpus(p)
    p.add_argument(
        "--merge-ondisk",
        action="store_true",
        help="IVF-PQ: merge the shards into one index whose inverted lists stay on disk (faiss.contrib.ondisk), after the build",
    )
    add_common(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser(
        "search", help="prior-art search: claim text or a document id -> ranked patents (with --explain: why)"
    )
    query = p.add_mutually_exclusive_group(required=True)
    query.add_argument("--text", help='claim text, e.g. "1. A snowthrower comprising ..."')
    query.add_argument("--id", help="an indexed document's id: documents like it")
    query.add_argument(
        "--file",
        help="file with claim text (- for stdin); of a claim set the first independent claim is searched (all: --all-independent)",
    )
    query.add_argument(
        "--topics",
        metavar="FILE",
        help='batch: JSONL ({"id", "text"} or {"id"} of an indexed document), TSV (id<TAB>claim text) '
        "or a list of indexed ids -> a TREC run file (--output), resumable",
    )
    p.add_argument(
        "index_dir", nargs="?", metavar="INDEX", help="index directory written by `graphtx index` (or --index)"
    )
    p.add_argument("--index", help="index directory written by `graphtx index`")
    p.add_argument("-k", type=at_least(1, "k"), help="hits (default: config, 10)")
    p.add_argument(
        "--offset",
        type=at_least(0, "the offset"),
        default=0,
        help="skip the best N hits: a results page, hits N+1 .. N+k (ranks stay those of the whole ranking)",
    )
    p.add_argument("--hybrid", action="store_true", help="fuse with BM25 by reciprocal rank fusion (= --ranker hybrid)")
    p.add_argument(
        "--ranker",
        choices=list(ranker_names()),
        help="how hits are ranked (default: config search.ranker, auto = learned when the index or its model has a ranker of `graphtx rank-fit` (learned-lexical when it was fitted on another field: search.same_field), else hybrid)",
    )
    p.add_argument("--ranker-dir", help="ranker directory (default: INDEX/ranker, else the model's ranker/)")
    p.add_argument(
        "--explain",
        action="store_true",
        help="show which query features matched which features of each hit, the query features a hit lacks (not found: feature 3, 5), "
        "and under the hybrid / convex / learned / learned-lexical ranker what each signal (BM25, dense, late, ...) contributed to its score",
    )
    p.add_argument(
        "--full", action="store_true", help="print each hit's abstract and first claim in full (default: a few lines)"
    )
    p.add_argument(
        "--csv",
        metavar="FILE",
        help="also write the hits to FILE as CSV (with --explain, each hit's claim chart to FILE's stem + .chart.csv)",
    )
    p.add_argument(
        "--link-template",
        metavar="TEMPLATE",
        help="each hit's link, e.g. 'https://patents.google.com/patent/{id_compact}' (placeholders {id} {id_compact} {country} {number} "
        "{kind} {family_id}; '' = none; default: config search.link_template)",
    )
    p.add_argument(
        "--explain-png",
        metavar="DIR",
        help="render query and hit graphs with matched nodes highlighted, one PNG a hit (DIR/RANK-ID.png, the id made a safe file name)",
    )
    p.add_argument(
        "--rerank",
        choices=["none", "late"],
        help="late: re-rank the first stage's (dense or --hybrid) top --rerank-depth by node-level late interaction (default: config search.rerank)",
    )
    p.add_argument(
        "--rerank-depth",
        type=at_least(1, "the re-rank depth"),
        help="first-stage candidates re-ranked (default: config search.rerank_depth, 100)",
    )
    p.add_argument(
        "--model", help="model directory (default: the one the index names); its fingerprint must match the index"
    )
    p.add_argument("--nprobe", type=at_least(1, "nprobe"), help="IVF-PQ cells visited (default: the index's)")
    p.add_argument("--ef-search", type=at_least(1, "ef-search"), help="HNSW search list size (default: the index's)")
    p.add_argument(
        "--all-independent",
        action="store_true",
        help="search every independent claim of a claim set and merge the hits per document (--merge)",
    )
    p.add_argument(
        "--merge",
        choices=["rrf", "max"],
        default="rrf",
        help="--all-independent: rrf = reciprocal rank fusion of the claims' rankings "
        "(default; search.rrf_k), max = each document's best score under any claim",
    )
    b = p.add_argument_group("batch (--topics)")
    b.add_argument(
        "--output",
        metavar="RUN",
        help="TREC run file to write (qid Q0 docid rank score tag); beside it RUN's stem + .csv/.jsonl and .skipped.jsonl",
    )
    b.add_argument(
        "--format",
        choices=["csv", "jsonl"],
        default="csv",
        help="table of hits beside the run: rank, scores, matched features (default csv)",
    )
    b.add_argument("--tag", help="run tag, the TREC file's last column (default graphtx-RANKER)")
    b.add_argument(
        "--topics-format",
        choices=["auto", "jsonl", "tsv", "ids"],
        default="auto",
        help="how --topics is read (default: from the suffix or first line)",
    )
    b.add_argument(
        "--no-features",
        action="store_true",
        help="leave the matched features out of the table (no explanations: faster)",
    )
    b.add_argument(
        "--restart",
        action="store_true",
        help="discard the journal of an unfinished run with other settings and start over",
    )
    add_filter_arguments(p)
    add_common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "serve", help="HTTP service over an index: POST /search, POST /explain, GET /documents/{id}, GET /healthz"
    )
    p.add_argument("--index", required=True, help="index directory written by `graphtx index`")
    p.add_argument("--host", help="address to listen on (default: config, 127.0.0.1)")
    p.add_argument("--port", type=port, help="port (default: config, 8000)")
    p.add_argument("--model", help="model directory (default: the one the index names)")
    p.add_argument("--writable", action="store_true", help="also DELETE /documents/{id} (default: read-only)")
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a Host name clients use, besides localhost/127.0.0.1/[::1] (repeatable; '*' any); needed with a --host beyond loopback",
    )
    p.add_argument(
        "--workers",
        type=at_least(1, "the number of workers"),
        help="query threads (default: config, 4); /healthz answers beside them",
    )
    p.add_argument(
        "--ranker", choices=["auto", *ranker_names()], help="default ranker of /search (default: config, auto)"
    )
    p.add_argument(
        "--link-template",
        metavar="TEMPLATE",
        help="each hit's link (as graphtx search --link-template; default: config search.link_template)",
    )
    add_common(p)
    p.set_defaults(func=cmd_serve)
