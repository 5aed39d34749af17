"""The ``graphtx`` command: thin subcommands, one stage each, in four groups.

Exit status: 0 all records written (serve: stopped by a signal); 3 finished but some records were skipped
(listed in the output directory's errors.jsonl); 2 bad usage or input (a missing input
path included); 1 failure: a full disk ("disk full at PATH"), an interrupt (Ctrl-C or
SIGTERM, which stop worker processes too and leave the previous output in place).

=================  ===============================================================================
``common``         exit statuses, ``--config / --json / --quiet``, printing a summary or its lines
``usage``          the parser class (closest flag or choice for a typo), numeric argument types
``prepare``        ingest, parse, show, pretrain
``training``       init-model, encode, fit-late-head, train, plot, rank-fit
``search``         index, search, serve
``filter_args``    search's filter flags, read into ``SearchFilters``
``evaluate``       eval citations | paecter | run | phrases
``eval_args``      the flags of eval citations | paecter | run and rank-fit, read into the stages' options
``build``          build: all of them in one resumable command
=================  ===============================================================================

A subcommand is ``cmd_NAME(args, config) -> exit status``: ``main`` loads the config once
(``--config``, else the defaults), the stage does the work and formats its own report, the
subcommand prints it (``--json``: the summary). Every flag is declared here, under graphtx/cli/: a stage takes
typed values (its config, or a frozen options dataclass such as ``graphtx.eval.command.CitationOptions``), never the
parsed ``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading

from graphtx.cli import build, evaluate, prepare, search, training
from graphtx.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_SKIPPED, EXIT_USAGE
from graphtx.cli.usage import GraphtxParser

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_SKIPPED", "EXIT_USAGE", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = GraphtxParser(prog="graphtx", description="Patent prior-art search with invention graphs.")
    sub = parser.add_subparsers(dest="command", required=True)
    prepare.add_parsers(sub)
    training.add_parsers(sub)
    search.add_parsers(sub)
    evaluate.add_parsers(sub)
    build.add_parsers(sub)
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
    from graphtx.config import load_config
    from graphtx.errors import GraphtxError

    try:
        with _sigterm_unwinds():
            return args.func(args, load_config(args.config))  # the one place a command's config is read
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
        resume = (
            "; the shards finished so far are kept: the same command continues"
            if (getattr(args, "engine", "local") == "ray" and args.command in ("encode", "index"))
            or (args.command == "parse" and getattr(args, "kept_shards", False))
            else ""
        )
        print(
            f"graphtx {args.command}: interrupted{why}; a previous complete output is left as it was{resume}",
            file=sys.stderr,
        )
        return EXIT_FAILURE
