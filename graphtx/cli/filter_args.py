"""The filter flags of ``graphtx search`` (and of its batch runs), read into :class:`graphtx.index.filters.SearchFilters`."""

from __future__ import annotations

import argparse

from graphtx.index.filters import SearchFilters


def add_filter_arguments(p: argparse.ArgumentParser) -> None:
    """The filter flags of `graphtx search` (and of batch searches)."""
    g = p.add_argument_group("filters")
    g.add_argument(
        "--before",
        metavar="DATE",
        help="only documents published strictly before DATE (2010-06-30, 2010-06, 2010); "
        "with --id the default is the query document's priority date (else its date); none: no cut-off",
    )
    g.add_argument(
        "--cpc",
        nargs="+",
        metavar="PREFIX",
        help="only documents with a CPC code starting with one of these (H01M, 'H01M 10/44')",
    )
    g.add_argument(
        "--ipc", nargs="+", metavar="PREFIX", help="only documents with an IPC code starting with one of these"
    )
    g.add_argument("--country", nargs="+", metavar="CC", help="only documents of these offices (US EP WO ...)")
    g.add_argument(
        "--kind", dest="kind_code", nargs="+", metavar="KIND", help="only these kind codes, by prefix (B = B1 and B2)"
    )
    fam = g.add_mutually_exclusive_group()
    fam.add_argument(
        "--exclude-family",
        dest="exclude_family",
        action="store_true",
        default=None,
        help="leave out the query document's family and itself (default for --id)",
    )
    fam.add_argument(
        "--include-family", dest="exclude_family", action="store_false", help="keep the query document's family (--id)"
    )
    g.add_argument("--group-by-family", action="store_true", help="one hit per family: its best-scored member")


def filters_from_args(args: argparse.Namespace) -> SearchFilters:
    """The filters of :func:`add_filter_arguments`' flags (a bad --before is a ValueError here)."""
    return SearchFilters(
        before=args.before,
        cpc=tuple(args.cpc or ()),
        ipc=tuple(args.ipc or ()),
        country=tuple(args.country or ()),
        kind=tuple(args.kind_code or ()),
        exclude_family=args.exclude_family,
        group_by_family=args.group_by_family,
    )
