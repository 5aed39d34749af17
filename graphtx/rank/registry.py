"""The rankers of search, the service and the evaluation, by name: one dict, read by all of them.

``BUILT_IN`` lists graphtx's own rankers (one module each under ``graphtx/rank/rankers/``); :func:`register` adds
another at run time (a plug-in, or a test's toy ranker). Whatever is registered when a parser or the service's
schema is built is offered there.
"""

from __future__ import annotations

from graphtx.rank.pool import SIGNALS, PoolRanker
from graphtx.rank.rankers.bm25 import Bm25Ranker
from graphtx.rank.rankers.dense import DenseRanker
from graphtx.rank.rankers.fitted import ConvexRanker, LearnedLexicalRanker, LearnedRanker
from graphtx.rank.rankers.hybrid import HybridRanker

BUILT_IN: tuple[PoolRanker, ...] = (
    DenseRanker(),
    Bm25Ranker(),
    HybridRanker(),
    ConvexRanker(),
    LearnedRanker(),
    LearnedLexicalRanker(),
)
_RANKERS: dict[str, PoolRanker] = {r.name: r for r in BUILT_IN}


def register(ranker: PoolRanker, replace: bool = False) -> PoolRanker:
    """Add ``ranker`` under its name (``replace``: over one of the same name); returns it."""
    if not ranker.name or ranker.name == "auto" or not ranker.name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a ranker's name is a word of letters, digits, - and _ (not auto), got {ranker.name!r}")
    if not set(ranker.signals) <= set(SIGNALS) or not ranker.signals:
        raise ValueError(f"ranker {ranker.name}: signals must be some of {SIGNALS}, got {ranker.signals!r}")
    if ranker.name in _RANKERS and not replace:
        raise ValueError(f"a ranker named {ranker.name!r} is registered already")
    _RANKERS[ranker.name] = ranker
    return ranker


def unregister(name: str) -> None:
    """Remove a ranker added by :func:`register` (the built-in ones stay)."""
    if any(r.name == name for r in BUILT_IN):
        raise ValueError(f"{name} is built in")
    _RANKERS.pop(name, None)


def ranker_names() -> tuple[str, ...]:
    """Every registered ranker's name, the built-in ones first."""
    return tuple(_RANKERS)


def get_ranker(name: str) -> PoolRanker:
    if name not in _RANKERS:
        raise ValueError(f"unknown ranker {name!r}; known: {', '.join(_RANKERS)}")
    return _RANKERS[name]


def available_rankers(fitted) -> list[str]:
    """The rankers an index or model with the fitted ranker directory ``fitted`` (None: none) can use."""
    return [name for name, r in _RANKERS.items() if r.available(fitted)]


def fittable_rankers() -> list[PoolRanker]:
    """The registered rankers with a ``fit`` of their own (``graphtx rank-fit`` fits them beside convex and learned)."""
    return [r for r in _RANKERS.values() if r.fits]
