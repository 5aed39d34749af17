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

import re
import textwrap

ABSTRACT_LINES = 3  # lines of abstract and of first claim without --full
WIDTH = 100  # wrap width
INDENT = " " * 6


def _wrapped(label: str, text: str, full: bool) -> list[str]:
    text = " ".join(text.split())
    lines = textwrap.wrap(
        text, WIDTH - len(INDENT), initial_indent=f"{label}: ", subsequent_indent=" " * (len(label) + 2)
    )
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


# --- the whole document (`graphtx show --index`) ------------------------------------------

DESCRIPTION_LINES = 12  # description lines without --full
_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or said that the this to was were which with wherein "
    "comprising comprises comprise including includes having along least one plurality configured each first second".split()
)


def query_terms(text: str) -> frozenset[str]:
    """Words of a query worth marking in a document: lower case, three letters or more, no stop words, a plural s dropped."""
    words = (w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9-]{2,}", text or ""))
    return frozenset(_stem(w) for w in words if w not in _STOP)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def mark(text: str, terms: frozenset[str], left: str = "[", right: str = "]") -> str:
    """``text`` with each word whose (plural-less) lower case is in ``terms`` between ``left`` and ``right``."""
    if not terms:
        return text
    return re.sub(
        r"[A-Za-z][A-Za-z0-9-]{2,}",
        lambda m: f"{left}{m.group(0)}{right}" if _stem(m.group(0).lower()) in terms else m.group(0),
        text,
    )


def document_lines(doc, query: str = "", full: bool = False) -> list[str]:
    """The printable whole document (graphtx.index.results.DocumentRecord): facts, every claim (independent ones marked),
    the description (``DESCRIPTION_LINES`` lines unless ``full``), the indexed documents it cites and that cite it;
    the words of ``query`` marked [like this]."""
    terms = query_terms(query)
    lines = [f"{doc.doc_id}  {doc.date}  {doc.title}"]
    facts = [f"applicants: {'; '.join(doc.applicants)}"] if doc.applicants else []
    facts += [
        f"{label} {value}"
        for label, value in (
            ("priority", doc.priority_date),
            ("filed", doc.application_date),
            ("family", doc.family_id),
            ("kind", doc.kind),
            ("country", doc.country),
        )
        if value
    ]
    lines += [INDENT + " · ".join(facts)] if facts else []
    classes = [f"{name} {', '.join(codes)}" for name, codes in (("IPC", doc.ipc), ("CPC", doc.cpc)) if codes]
    lines += [INDENT + " · ".join(classes)] if classes else []
    lines += [INDENT + doc.link] if doc.link else []
    if doc.abstract:
        lines += _wrapped("abstract", mark(doc.abstract, terms), True)
    if doc.claims:
        independent = [str(c["number"]) for c in doc.claims if c["independent"]]
        lines.append(f"claims ({len(doc.claims)}; independent: {', '.join(independent) or 'none marked'}):")
        for c in doc.claims:
            label = f"{c['number']}{' (independent)' if c['independent'] else ''}"
            lines += _wrapped(label, mark(c["text"], terms), True)
    elif doc.first_claim:
        lines += _wrapped("claim", mark(doc.first_claim, terms), True)
        lines.append(
            INDENT
            + "(only the first claim is in this index: it was built without its corpus, or before every claim was kept; rebuild it)"
        )
    if doc.description:
        text = " ".join(doc.description.split())
        wrapped = textwrap.wrap(
            mark(text, terms), WIDTH - len(INDENT), initial_indent="description: ", subsequent_indent="  "
        )
        if not full and len(wrapped) > DESCRIPTION_LINES:
            wrapped = wrapped[:DESCRIPTION_LINES] + [f"… ({len(wrapped) - DESCRIPTION_LINES} more lines: --full)"]
        lines += [INDENT + line for line in wrapped]
    for label, docs in (("cites, in this index", doc.cited_in_index), ("cited by, in this index", doc.citing_in_index)):
        lines.append(f"{label}: " + ("; ".join(f"{d} ({t})" if t else d for d, t in docs) if docs else "none"))
    if doc.cites and len(doc.cites) > len(doc.cited_in_index):
        lines.append(
            INDENT
            + f"(it cites {len(doc.cites)} documents in all; {len(doc.cites) - len(doc.cited_in_index)} are not in this index)"
        )
    return lines
