"""Hits as a patent searcher reads them on screen (``graphtx search``): one block a hit.

Each block: rank, score, id, date and the full title; then the fields the corpus has (a field it
lacks is left out, never shown blank): applicants, priority / filing dates, family, kind,
classes, the abstract and the first claim (wrapped, ``ABSTRACT_LINES`` lines unless ``full``),
the link; with ``--explain`` the node matches, the claim chart ("not found: feature 3, 5") and what
each ranker signal contributed.

Example::

    for line in hit_lines(hit, full=False):
        print(line)
"""

from __future__ import annotations

import textwrap

ABSTRACT_LINES = 3  # lines of abstract and of first claim without --full
WIDTH = 100  # wrap width
INDENT = " " * 6


def _wrapped(label: str, text: str, full: bool) -> list[str]:
    text = " ".join(text.split())
    lines = textwrap.wrap(text, WIDTH - len(INDENT), initial_indent=f"{label}: ", subsequent_indent=" " * (len(label) + 2))
    if not full and len(lines) > ABSTRACT_LINES:
        lines = lines[:ABSTRACT_LINES]
        lines[-1] = lines[-1].rstrip() + " … (--full: all)"
    return [INDENT + line for line in lines]


def _classes(codes: tuple[str, ...], shown: int = 6) -> str:
    more = f" (+{len(codes) - shown})" if len(codes) > shown else ""
    return ", ".join(codes[:shown]) + more


def hit_lines(hit, full: bool = False, found_by: dict | None = None) -> list[str]:
    """The printable block of one hit (graphtx.index.search.Hit); ``found_by`` ({claim: rank}): which claims of a merged claim set found it."""
    lines = [f"{hit.rank:>4}  {hit.score:7.4f}  {hit.doc_id:<18} {hit.date:<10}  {hit.title}"]
    if found_by:
        lines.append(INDENT + "found by " + ", ".join(f"claim {c} (rank {r})" for c, r in sorted(found_by.items())))
    facts = []
    if hit.applicants:
        facts.append("applicants: " + "; ".join(hit.applicants))
    if hit.priority_date:
        facts.append(f"priority {hit.priority_date}")
    if hit.application_date:
        facts.append(f"filed {hit.application_date}")
    if hit.family_id:
        facts.append(f"family {hit.family_id}")
    if hit.kind:
        facts.append(f"kind {hit.kind}")
    if facts:
        lines.append(INDENT + " · ".join(facts))
    classes = [f"{name} {_classes(codes)}" for name, codes in (("IPC", hit.ipc), ("CPC", hit.cpc)) if codes]
    if classes:
        lines.append(INDENT + " · ".join(classes))
    if hit.abstract:
        lines += _wrapped("abstract", hit.abstract, full)
    if hit.first_claim:
        lines += _wrapped("claim", hit.first_claim, full)
    if hit.link:
        lines.append(INDENT + hit.link)
    if hit.explanation is not None:
        lines += hit.explanation.table()
        lexical = getattr(hit.explanation, "lexical", None)
        lines += [lexical.line()] if lexical is not None else []
        chart = getattr(hit.explanation, "chart", None)
        lines += chart() if chart else []
    if hit.ranker_explanation is not None:
        lines += hit.ranker_explanation.lines()
    return lines
