"""``graphtx build``: a user's own patents to a searchable index in one resumable command (graphtx/build/run.py)."""

from __future__ import annotations

import sys

from graphtx.build import MIN_TRAINING_QUERIES, STEPS
from graphtx.build.plan import READ_ALL_WITHIN_S
from graphtx.cli.common import EXIT_OK, add_common, progress, say
from graphtx.cli.usage import at_least, at_least_or
from graphtx.text.peers import PEERS
from graphtx.train.adapt import ADAPT_FEW_PASSES, ADAPT_MAX_EPOCHS


def cmd_build(args, config) -> int:
    from graphtx.build.run import build
    from graphtx.config import REPO_ROOT, load_config
    from graphtx.from_dict import with_overrides

    if not args.config and (REPO_ROOT / "configs" / "small.yaml").is_file():
        config = load_config(
            REPO_ROOT / "configs" / "small.yaml"
        )  # the shipped default (mpnet taught, selection on held-out queries)
    config = with_overrides(config, seed=args.seed)
    if isinstance(args.steps, int):
        config = with_overrides(config, train=with_overrides(config.train, pretrain_steps=args.steps))
    log = lambda line: print(line, file=sys.stderr)  # noqa: E731  (the steps' lines are few; --quiet drops the progress bars)
    summary = build(
        args.sources,
        args.out,
        config,
        citations=args.citations,
        until=args.until,
        plan_only=args.plan,
        teacher=args.teacher,
        device=args.device,
        read_every_document=True if args.steps == "all" else None if args.steps is None else False,
        progress=progress(args),
        log=log,
    )
    lines = [f"build: {args.out} ({'plan only' if args.plan else 'until ' + args.until})"]
    say(args, summary, lines)
    return EXIT_OK


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "build",
        help="your patents -> corpus, graphs, tokens, model (trained, or adapted without citations), index: one resumable command",
    )
    p.add_argument(
        "sources", nargs="+", help="patent files or folders: USPTO / EP / MAREC XML (.gz, .zip), JSONL, Parquet"
    )
    p.add_argument(
        "--out",
        required=True,
        help="build directory (corpus/, graphs/, sample/ for a large corpus, tokens/, run/, index/, build.json); "
        "the same command resumes",
    )
    p.add_argument(
        "--citations",
        help="citations between your documents (citing_id<TAB>cited_id): the model trains on them when "
        f"{MIN_TRAINING_QUERIES} or more documents cite another of the corpus; fewer or none: it adapts to the "
        "documents without labels",
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="read the sources, print what each step will do and cost on this machine, stop",
    )
    p.add_argument("--until", choices=STEPS, default="index", help="stop after this step (default: index)")
    p.add_argument(
        "--teacher",
        help=f"the teacher distilled into the model: a peer ({', '.join(PEERS)}) or a `graphtx teacher` directory "
        "(default: the config's; on a CPU a large corpus gets minilm, and the plan says what mpnet would cost)",
    )
    p.add_argument(
        "--steps",
        type=at_least_or("all", 1, "the number of steps"),
        help="distillation steps, or `all`: the steps that read every document train.adapt_max_passes times "
        f"({ADAPT_MAX_EPOCHS} by default). Default: train.pretrain_steps, adapting at most that many passes over the corpus; on a corpus they would read "
        f"fewer than {ADAPT_FEW_PASSES:.0f} times, `all` when the plan projects the model step (teacher and "
        f"distillation) within {READ_ALL_WITHIN_S / 3600:.0f} h on this machine with the same teacher (a GPU, for "
        "tens of thousands of abstracts), else a seeded uniform sample of as many documents as the steps read "
        "that many times, every document indexed; the plan says which, and a resumed build keeps its way. "
        "With `--steps N` the default never reads all: N steps sample as the default's do. Reading every document "
        "placed them better than the sample did (benchmarks/results/transfer.md)",
    )
    p.add_argument("--seed", type=at_least(0, "the seed"), help="default: the config's seed")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda (default auto: a GPU when PyTorch sees one)")
    add_common(p)
    p.set_defaults(func=cmd_build)
