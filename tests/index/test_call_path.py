"""A claim search goes down through index/ and back once: along any call stack of a search, each module of
graphtx/index/ appears in at most two stretches (the facade ``search.py`` hands down and is handed back to once;
every other module is entered once). A module entered a third time is an idea with no single home."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from graphtx.index.claimset import search_claim_set
from graphtx.index.filters import SearchFilters
from graphtx.index.search import Index

CLAIMS = (
    "1. A snowthrower comprising: an auger housing; and a chute mounted on the auger housing.\n"
    "2. The snowthrower of claim 1, wherein the chute rotates.\n"
    "3. A battery pack comprising: a plurality of cells; and a cooling plate connected to the cells."
)


def stretches(modules: list[str]) -> Counter:
    """How many separate stretches each module has in a stack (outermost first)."""
    return Counter(m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m)


def worst_stack(run) -> tuple[dict, dict]:
    """({module: most stretches on any stack while ``run()`` ran}, {module: that stack, as module.function > ...})."""
    worst: dict[str, int] = {}
    where: dict[str, str] = {}

    def profile(frame, event, arg):
        if event != "call":
            return
        stack, f = [], frame
        while f is not None:
            stack.append((f.f_globals.get("__name__", ""), f.f_code.co_name))
            f = f.f_back
        stack.reverse()
        ours = [m for m, _ in stack if m.startswith("graphtx.index")]
        for module, count in stretches(ours).items():
            if count > worst.get(module, 0):
                worst[module] = count
                where[module] = " > ".join(
                    f"{m.rsplit('.', 1)[-1]}.{fn}" for m, fn in stack if m.startswith("graphtx.index")
                )

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return worst, where


def test_stretches_counts_returns_to_a_module():
    assert stretches(["a", "a", "b", "a", "c"]) == Counter({"a": 2, "b": 1, "c": 1})


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "how",
    [
        {"ranker": "hybrid", "explain": True},
        {"ranker": "dense"},
        {"ranker": "bm25", "filters": SearchFilters(before="2030-01-01", group_by_family=True)},
        {"ranker": "hybrid", "all_independent": True, "merge": "rrf"},
    ],
    ids=["hybrid-explained", "dense", "bm25-filtered", "claim-set"],
)
def test_a_claim_search_passes_each_index_module_at_most_twice(tiny_index, builder, how):
    index = Index.open(tiny_index)
    index.parser._builder = builder  # the session's spaCy pipeline
    search_claim_set(index, CLAIMS, 5, **how)  # warm: files opened, BM25 loaded, spaCy ready
    worst, where = worst_stack(lambda: search_claim_set(index, CLAIMS, 5, **how))
    assert (
        worst.get("graphtx.index.search", 0) >= 1 and worst.get("graphtx.index.rankers", 0) >= 1
    )  # the profile saw the search
    over = {m: where[m] for m, n in worst.items() if n > 2}
    assert not over, f"modules entered more than twice on one call path: {over}"
