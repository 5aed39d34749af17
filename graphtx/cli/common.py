"""What every subcommand shares: exit statuses, the common flags, printing a summary or its lines."""

from __future__ import annotations

import argparse
import json

from graphtx.graphs.graph import GRAPH_KINDS

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
KIND_CHOICES = list(GRAPH_KINDS)  # --kind of show, encode, index


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (see configs/); defaults apply where it is silent")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def add_ray_gpus(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ray-gpus",
        type=float,
        default=None,
        help="GPUs per encoder actor with --engine ray (default: the cluster's GPUs shared over the actors when it has some, else 0 = CPU)",
    )


def add_engine(p: argparse.ArgumentParser, what: str) -> None:
    """--engine local|ray and --ray-address (graphtx/ray_engine.py; Ray is the optional extra graphtx[ray])."""
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help=f"local: processes on this machine; ray: a Ray cluster ({what}; needs pip install 'graphtx[ray]')",
    )
    p.add_argument(
        "--ray-address",
        help="Ray cluster to join with --engine ray (auto, HOST:6379, ray://HOST:10001; default: RAY_ADDRESS or a local Ray)",
    )


def progress(args) -> bool | None:
    return False if args.quiet else None


def say(args, summary: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print("\n".join(lines))
