"""What a citation evaluation reads: the documents of a corpus and the citations that judge them.

* :class:`EvalCorpus` — every document of a corpus directory (``graphtx ingest``): its id, the
  text a text baseline reads for it as a query and as a candidate, and its CPC (or IPC) codes.
  Document order is id order, so the columns of every score matrix are the same for every system.
* :func:`judgements` — citations (read by :func:`graphtx.corpus.citations.read_citations`) →
  ``{query: {cited: gain}}`` under the evaluation rules:

  - a pair whose citing or cited document is not in the corpus, or that cites itself, is not
    scored, and is counted by reason (``Judgements.skipped``); with ``leave_out_self`` off
    (known-item evaluation: a document's first claim must find the document itself) a pair
    (d, d) is scored;
  - the gain of a pair is the gain of its category (``EvalConfig.gains``; binary by default);
    a pair listed twice keeps its highest gain; gain 0 = not relevant;
  - the queries are the citing documents left with a relevant document, sorted by id.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphtx.corpus.schema import Citation, PatentDocument
from graphtx.corpus.store import iter_documents
from graphtx.eval.config import EvalConfig

TEXT_FIELDS = ("title", "abstract", "first_claim", "claims", "description")


# --- documents -------------------------------------------------------------------


def document_text(doc: PatentDocument, fields: Sequence[str]) -> str:
    """The named fields joined by newlines; a document with none of them gives its first
    non-empty of abstract, first claim, description, title (as graphs fall back)."""
    parts = [_field(doc, f) for f in fields]
    text = "\n".join(p for p in parts if p)
    if text:
        return text
    return next((t for t in (_field(doc, f) for f in ("abstract", "first_claim", "description", "title")) if t), "")


def _field(doc: PatentDocument, name: str) -> str:
    if name == "first_claim":
        return doc.first_claim.strip()
    if name == "claims":
        return "\n".join(c.text for c in doc.claims).strip()
    if name not in TEXT_FIELDS:
        raise ValueError(f"unknown text field {name!r}; known: {', '.join(TEXT_FIELDS)}")
    return (getattr(doc, name) or "").strip()


@dataclass(frozen=True, eq=False)
class EvalCorpus:
    """All documents of a corpus, in id order: the candidates of every query (less the query itself)."""

    ids: tuple[str, ...]  # sorted
    query_texts: tuple[str, ...]  # text of each document as a query (EvalConfig.query_fields)
    candidate_texts: tuple[str, ...]  # text of each document as a candidate (EvalConfig.candidate_fields)
    codes: tuple[tuple[str, ...], ...]  # CPC codes of each document (IPC where it has no CPC)
    dates: tuple[str, ...] = ()  # publication date or year of each document ("" unknown; () none known)
    source: str = ""
    priority: tuple[str, ...] = ()  # priority date of each document ("" unknown; () none known)
    families: tuple[
        str, ...
    ] = ()  # family key of each document (family_id, else the id without kind code; () = the ids')
    cutoff_policy: str = "none"  # which candidates a query may retrieve (graphtx/eval/cutoff.py): none, priority, year
    position: dict = field(default_factory=dict, repr=False)  # id -> row
    cutoff: object = field(
        default=None, init=False, repr=False, compare=False
    )  # CandidateCutoff of cutoff_policy over these documents
    cutoff_on: bool = field(default=True, init=False, repr=False, compare=False)  # False within cutoff_suspended()

    def __post_init__(self) -> None:
        from graphtx.corpus.codes import id_key
        from graphtx.eval.cutoff import CandidateCutoff

        if list(self.ids) != sorted(set(self.ids)):
            raise ValueError("EvalCorpus ids must be unique and sorted")
        object.__setattr__(self, "position", {d: i for i, d in enumerate(self.ids)})
        families = self.families or tuple(id_key(d) for d in self.ids)
        dates = self.dates or ("",) * len(self.ids)
        object.__setattr__(
            self,
            "cutoff",
            CandidateCutoff.build(self.cutoff_policy, dates, self.priority or ("",) * len(self.ids), families),
        )

    def candidate_mask(self, rows: np.ndarray) -> np.ndarray | None:
        """(q, c) bool: the candidates each query row may retrieve under the cut-off; None: every document but the query
        (also while :meth:`cutoff_suspended`)."""
        return self.cutoff.mask(rows) if self.cutoff_on else None

    @contextlib.contextmanager
    def cutoff_suspended(self):
        """Within: no cut-off for any system scoring this corpus (PaECTER's fixed 30-candidate samples)."""
        object.__setattr__(self, "cutoff_on", False)
        try:
            yield self
        finally:
            object.__setattr__(self, "cutoff_on", True)

    def with_cutoff(self, policy: str) -> EvalCorpus:
        """The same documents under another cut-off policy."""
        return self if policy == self.cutoff_policy else dataclasses.replace(self, cutoff_policy=policy)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self.position

    def year(self, row: int) -> float:
        """Year of the document at ``row`` (nan when unknown)."""
        date = self.dates[row] if self.dates else ""
        return float(date[:4]) if date[:4].isdigit() else float("nan")

    def rows(self, ids: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.position[d] for d in ids), dtype=np.int64)

    @property
    def same_texts(self) -> bool:
        """True when queries and candidates read the same text (a system may encode once)."""
        return self.query_texts == self.candidate_texts

    @classmethod
    def from_documents(
        cls, docs: Iterable[PatentDocument], cfg: EvalConfig = EvalConfig(), source: str = ""
    ) -> EvalCorpus:
        from graphtx.corpus.codes import id_key

        by_id: dict[str, PatentDocument] = {}
        for doc in docs:
            if doc.id in by_id:
                raise ValueError(f"{source or 'corpus'}: document id {doc.id} appears twice")
            by_id[doc.id] = doc
        ids = sorted(by_id)
        if not ids:
            raise ValueError(f"{source or 'corpus'}: no documents")
        return cls(
            ids=tuple(ids),
            query_texts=tuple(document_text(by_id[d], cfg.query_fields) for d in ids),
            candidate_texts=tuple(document_text(by_id[d], cfg.candidate_fields) for d in ids),
            codes=tuple(tuple(by_id[d].cpc or by_id[d].ipc) for d in ids),
            dates=tuple(by_id[d].date or "" for d in ids),
            source=source,
            priority=tuple(by_id[d].priority_date or "" for d in ids),
            families=tuple(by_id[d].family_id or id_key(d) for d in ids),
            cutoff_policy=cfg.cutoff,
        )

    @classmethod
    def load(cls, corpus: str | Path, cfg: EvalConfig = EvalConfig()) -> EvalCorpus:
        """A corpus directory (``graphtx ingest``), or a JSON-lines file of documents read verbatim
        (:func:`iter_raw_documents`)."""
        path = Path(corpus)
        if path.is_file() and path.suffix in (".jsonl", ".json"):
            return cls.from_documents(iter_raw_documents(path), cfg, source=str(corpus))
        return cls.from_documents(iter_documents(corpus), cfg, source=str(corpus))


def iter_raw_documents(path: str | Path) -> Iterable[PatentDocument]:
    """Documents of a JSON-lines file, texts exactly as given (no ingest normalisation).

    Fields: ``id``; any of ``title``, ``abstract``, ``description``, ``claims`` (a string, or a list
    of strings whose first is the first claim), ``date`` (or ``year``), ``priority_date``, ``family_id`` and ``cpc`` / ``ipc`` (a list, or one string split
    at ``;`` and ``,``). Published baseline numbers are computed on such raw text: ``graphtx ingest``
    resolves HTML entities (``&gt;`` -> ``>``) and collapses whitespace, which changes a lexical
    baseline's tokens in a few documents (7 of the 3,603 EV-battery abstracts).
    """
    from graphtx.corpus.schema import Claim

    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                doc_id = str(row["id"]).strip()
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                raise ValueError(f"{path}: line {n}: not a JSON object with an id ({err})") from None
            claims = row.get("claims") or []
            claims = [claims] if isinstance(claims, str) else [str(c) for c in claims]
            codes = {k: row.get(k) or [] for k in ("cpc", "ipc")}
            codes = {
                k: tuple(c.strip() for c in (re.split(r"[;,]", v) if isinstance(v, str) else v) if c.strip())
                for k, v in codes.items()
            }
            yield PatentDocument(
                id=doc_id,
                source="jsonl",
                source_file=str(path),
                title=str(row.get("title") or ""),
                abstract=str(row.get("abstract") or ""),
                claims=tuple(Claim(i + 1, c, i == 0) for i, c in enumerate(claims)),
                description=str(row.get("description") or ""),
                cpc=codes["cpc"],
                ipc=codes["ipc"],
                date=str(row.get("date") or row.get("year") or "").strip(),
                priority_date=str(row.get("priority_date") or "").strip(),
                family_id=str(row.get("family_id") or "").strip(),
            )


# --- citations -------------------------------------------------------------------


@dataclass(frozen=True)
class Judgements:
    relevant: dict  # query id -> {cited id: gain > 0}, queries sorted by id
    pairs: int  # scored (query, cited) pairs
    skipped: dict  # reason -> pairs not scored

    @property
    def query_ids(self) -> list[str]:
        return list(self.relevant)


def judgements(citations: Iterable[Citation], corpus: EvalCorpus, cfg: EvalConfig = EvalConfig()) -> Judgements:
    """``{query: {cited: gain}}`` by the rules of the module docstring."""
    gains: dict[str, dict[str, float]] = defaultdict(dict)
    skipped: Counter = Counter()
    seen = set()
    for c in citations:
        key = (c.citing_id, c.cited_id)
        if c.citing_id == c.cited_id and cfg.leave_out_self:
            skipped["self-citation"] += 1
        elif c.citing_id not in corpus:
            skipped["citing document not in the corpus"] += 1
        elif c.cited_id not in corpus:
            skipped["cited document not in the corpus"] += 1
        else:
            gain = cfg.gain(c.category)
            if key in seen:
                skipped["duplicate pair"] += 1
            seen.add(key)
            gains[c.citing_id][c.cited_id] = max(gain, gains[c.citing_id].get(c.cited_id, 0.0))
    relevant = {q: {d: g for d, g in sorted(rel.items()) if g > 0} for q, rel in sorted(gains.items())}
    zero = sum(len(rel) for rel in gains.values()) - sum(len(rel) for rel in relevant.values())
    if zero:
        skipped["category gain 0"] += zero
    relevant = {q: rel for q, rel in relevant.items() if rel}
    return Judgements(relevant, sum(map(len, relevant.values())), dict(skipped))


def citation_graph(citations: Iterable[Citation]) -> Mapping[str, set[str]]:
    """citing id -> the ids it cites (every pair, in the corpus or not)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for c in citations:
        if c.citing_id != c.cited_id:
            graph[c.citing_id].add(c.cited_id)
    return graph
