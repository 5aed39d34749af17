"""A claim set as a query: split into claims; search the first independent claim, or every one and merge per document.

A searcher's draft is often a whole claim set ("1. A ... 2. The ... of claim 1 ... 8. A method ...").
Split as ingest splits claims (``graphtx.corpus.claims``), a claim is independent when it refers to
no other claim. ``search_claim_set``:

* one independent claim (or text without claim numbers): one search, as ``Index.search``;
* several, ``all_independent=False``: the first independent claim is searched (the invention the
  first claim defines) and the result says which claims were *not* searched (``note``), so a
  caller can tell the user instead of cutting the set silently;
* several, ``all_independent=True``: each independent claim is searched for ``k`` hits, and the
  rankings are merged per document by ``merge``:

  - ``rrf`` (default): reciprocal rank fusion, ``sum over claims of 1 / (rrf_k + rank)`` (``rrf_k``:
    ``search.rrf_k``, 60); scale-free, so BM25 and fused scores of different claims mix fairly;
  - ``max``: the best score any claim gave the document (meaningful where scores are comparable
    across queries, as cosines are);

  ties by best rank in any claim, then id. A merged hit is the hit of the claim that ranked it best
  (title, explanation, signal scores), with the merged rank and score; ``found_by`` gives each
  document's rank under every claim that found it.

Example::

    from graphtx.index import Index, search_claim_set

    found = search_claim_set(Index.open("index"), open("claims.txt").read(), k=10, all_independent=True)
    for hit in found.result:
        print(hit.rank, hit.doc_id, round(hit.score, 4), found.found_by[hit.doc_id])   # {1: 3, 8: 1}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from graphtx.index.query import independent_claims
from graphtx.metrics import rrf_score

MERGES = ("rrf", "max")  # how the rankings of several independent claims become one


@dataclass(frozen=True)
class ClaimSetResult:
    result: object  # graphtx.index.search.SearchResult: merged hits (rank, score = merged) for several claims
    searched: tuple[int, ...]  # claim numbers searched
    not_searched: tuple[int, ...] = ()  # independent claims left out (without all_independent)
    merge: str = "single"  # single | rrf | max
    found_by: dict = field(default_factory=dict)  # doc id -> {claim number: rank in that claim's hits}

    @property
    def note(self) -> str:
        """What the user should know about the claims ('' when every independent claim was searched)."""
        if not self.not_searched:
            return ""
        total = len(self.searched) + len(self.not_searched)
        others = ", ".join(map(str, self.not_searched))
        return (
            f"the query has {total} independent claims; only claim {self.searched[0]} was searched, not claim(s) {others} "
            "(--all-independent searches every independent claim and merges the hits per document)"
        )

    def to_json(self) -> dict:
        out = self.result.to_json() | {
            "claims": {"searched": list(self.searched), "not_searched": list(self.not_searched), "merge": self.merge}
        }
        if self.merge != "single":
            for hit in out["hits"]:
                hit["found_by"] = {str(c): r for c, r in self.found_by.get(hit["doc_id"], {}).items()}
        if self.note:
            out["note"] = self.note
        return out


def search_claim_set(
    index,
    text: str | None = None,
    k: int | None = None,
    *,
    doc_id: str | None = None,
    all_independent: bool = False,
    merge: str = "rrf",
    rrf_k: int | None = None,
    offset: int = 0,
    **search_kwargs,
) -> ClaimSetResult:
    """Search a claim text (or an indexed document, ``doc_id``) claim set-aware; see the module docstring.

    ``search_kwargs`` go to ``Index.search`` unchanged (hybrid, ranker, rerank, rerank_depth, explain,
    filters, ...), once per searched claim. ``offset`` skips the best ``offset`` hits (a results page,
    ranks those of the whole ranking); merged claims are each searched for ``offset + k`` hits, merged,
    then paged.
    """
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {', '.join(MERGES)}, got {merge!r}")
    if offset < 0:
        raise ValueError(f"offset must be at least 0 (got {offset})")
    if text is None:
        return ClaimSetResult(index.search(None, k, doc_id=doc_id, offset=offset, **search_kwargs), searched=())
    claims = independent_claims(text)
    if len(claims) <= 1:
        return ClaimSetResult(
            index.search(text, k, offset=offset, **search_kwargs), searched=tuple(c.num for c in claims)
        )
    if not all_independent:  # Index.query keeps the first independent claim of the text
        return ClaimSetResult(
            index.search(text, k, offset=offset, **search_kwargs),
            searched=(claims[0].num,),
            not_searched=tuple(c.num for c in claims[1:]),
        )
    k = index.config.k if k is None else k
    if k < 1:
        raise ValueError(f"k must be at least 1 (got {k})")
    results = {c.num: index.search(c.text, k + offset, **search_kwargs) for c in claims}
    return _merged(results, k, merge, index.config.rrf_k if rrf_k is None else rrf_k, offset)


def _merged(results: dict, k: int, merge: str, rrf_k: int, offset: int = 0) -> ClaimSetResult:
    """One ranking from the hits of several claims ({claim number: SearchResult}); hits offset+1 .. offset+k of it."""
    found_by: dict[str, dict[int, int]] = {}
    best: dict[str, object] = {}  # doc id -> the hit of the claim that ranked it best
    score: dict[str, float] = {}
    for num, result in results.items():
        for hit in result.hits:
            found_by.setdefault(hit.doc_id, {})[num] = hit.rank
            if hit.doc_id not in best or hit.rank < best[hit.doc_id].rank:
                best[hit.doc_id] = hit
            part = rrf_score(hit.rank, rrf_k) if merge == "rrf" else hit.score
            score[hit.doc_id] = (
                score.get(hit.doc_id, 0.0) + part if merge == "rrf" else max(score.get(hit.doc_id, part), part)
            )
    order = sorted(score, key=lambda d: (-score[d], min(found_by[d].values()), d))[offset : offset + k]
    hits = tuple(dataclasses.replace(best[d], rank=r, score=score[d]) for r, d in enumerate(order, offset + 1))
    first = next(iter(results.values()))
    timings = {}
    for result in results.values():
        for name, ms in result.timings_ms.items():
            timings[name] = round(timings.get(name, 0.0) + ms, 2)
    merged = dataclasses.replace(first, hits=hits, timings_ms=timings)
    return ClaimSetResult(merged, searched=tuple(results), merge=merge, found_by={d: found_by[d] for d in order})
