"""Citations mined from the text: "U.S. Pat. No. 7,123,456" in a description, kept when the patent is in the corpus.

US descriptions name the prior art they build on ("In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 ...").
Where the named patent is itself a document of the corpus, the pair (citing, cited) is a citation a
searcher would want found: a development set of one's own for full texts, with no examiner needed.

What is mined, per document (``description``, else ``abstract``):

* every mention ``U.S. Pat. No. N`` / ``U.S. Patent No. N`` / ``US Pat. Nos. N, M and K`` (numbers with
  commas, spaces or nothing between digit groups, reissues ``RE 12,345`` too);
* a mention is **dropped** (and counted, with its reason, in ``mentions.jsonl``) when it names a related
  application of the same family rather than prior art: the words around it say continuation,
  divisional, claims priority or benefit, parent or related application, cross-reference, or the
  application "now U.S. Pat. No. ..." (the patent that an earlier application of the family became);
  when it names the document itself; when the patent is not in the corpus;
* the cited document must be dated before the citing one (a later date means a mis-read number or a
  family member): otherwise dropped as ``cited document not older``.

Split by the citing document's date: the citing documents of the latest ``valid_share`` (by date) give
the validation citations, the others the training citations, so nothing later than a validation query
is learned from. Written as ``citations_train.tsv`` / ``citations_validation.tsv`` (``citing_id<TAB>cited_id``,
the EV-battery set's format: ``graphtx train --citations``, ``graphtx eval citations --citations``) and
``mentions.jsonl`` (every mention: citing id, the number as written, the cited id or why it was dropped), and
``masked_citing.jsonl``: the citing documents with every sentence that mentions a patent taken out, so that a
query does not hold its answer (ingest it before the corpus: ``graphtx ingest DIR/masked_citing.jsonl CORPUS_SOURCE
--out MASKED``, the later duplicates are skipped and listed).

Example::

    report = mine_citations("runs/ft/corpus", "runs/ft/mined", valid_share=0.2)
    report.train, report.validation, report.dropped     # 4,112, 1,030, {"not in the corpus": 51,200, ...}
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from graphtx.atomic import atomic_write_text
from graphtx.corpus.ids import IdResolver
from graphtx.corpus.store import documents_path

# a number: 7-8 digits with commas, spaces or nothing between the groups (not part of a longer one), or a reissue's 5
_NUMBER = r"(?:RE\.?\s?\d{1,2}[ ,.]?\d{3}|\d{1,2}[ ,.]?\d{3}[ ,.]?\d{3})(?![,.]?\d)"
_SEPARATOR = r"\s*(?:[,;&]\s*)?(?:\b(?:and|or)\b\s*)?"  # "A, B, and C", "A; B; and C", "A & B"
MENTION = re.compile(rf"\bU\.?\s?S\.?\s+Pat(?:ent)?s?\.?\s+(?:(?:Nos?|Numbers?)\.?\s*)?((?:{_NUMBER})(?:{_SEPARATOR}(?:{_NUMBER}))*)", re.I)
NUMBER = re.compile(r"(RE)\.?\s?(\d{1,2})[ ,.]?(\d{3})(?![,.]?\d)|(\d{1,2})[ ,.]?(\d{3})[ ,.]?(\d{3})(?![,.]?\d)", re.I)
# words that make a mention a family member: strong ones alone; weak ones ("continuation", "priority to") only beside an
# application reference ("application", "Ser. No.", "filed"), since they also occur in technical prose ("gives priority to")
STRONG_RELATED = re.compile(r"now\s+U\.?\s?S\.?\s+Pat|now\s+issued|issued\s+as\s+U\.?\s?S|cross[- ]reference", re.I)
WEAK_RELATED = re.compile(
    r"continuation|divisional|claims?\s+(?:the\s+)?(?:benefit|priority)|priority\s+(?:to|of|from)|parent\s+application"
    r"|related\s+(?:U\.?\s?S\.?\s+)?application",
    re.I,
)
APPLICATION_REF = re.compile(r"application|Ser\.?\s*No|filed|provisional", re.I)
CONTEXT_BEFORE, CONTEXT_AFTER = 200, 60  # characters around a mention read for family words (within its paragraph)


@dataclass
class MinedCitations:
    documents: int
    mentions: int
    train: int  # unique (citing, cited) pairs
    validation: int
    valid_from: str  # citing dates on or after this are validation
    dropped: Counter = field(default_factory=Counter)  # reason -> mentions
    out_dir: Path = Path()

    def lines(self) -> list[str]:
        dropped = ", ".join(f"{n:,} {why}" for why, n in self.dropped.most_common())
        return [
            f"mined {self.mentions:,} patent mentions in {self.documents:,} documents into {self.out_dir}",
            f"citations within the corpus: {self.train:,} train, {self.validation:,} validation (the latest citing documents, from {self.valid_from})",
            f"dropped mentions: {dropped or 'none'} (each in {self.out_dir / 'mentions.jsonl'})",
        ]

    def to_json(self) -> dict:
        return {"documents": self.documents, "mentions": self.mentions, "train": self.train, "validation": self.validation,
                "valid_from": self.valid_from, "dropped": dict(self.dropped), "out_dir": str(self.out_dir)}  # fmt: skip


def patent_numbers(text: str) -> list[tuple[str, int, int]]:
    """``(number as "US7123456" / "USRE12345", start, end)`` of every US patent mention in ``text``, in order."""
    out = []
    for m in MENTION.finditer(text):
        for n in NUMBER.finditer(m.group(1)):
            if n.group(1):  # a reissue
                out.append(("USRE" + str(int(n.group(2) + n.group(3))), m.start(), m.end()))
            else:
                out.append(("US" + str(int(n.group(4) + n.group(5) + n.group(6))), m.start(), m.end()))
    return out


def is_related_application(text: str, start: int, end: int) -> bool:
    """Whether the words around a mention (within its paragraph) say it is a family member, not prior art."""
    para_start = text.rfind("\n", 0, start) + 1
    para_end = text.find("\n", end)
    para_end = len(text) if para_end < 0 else para_end
    window = text[max(para_start, start - CONTEXT_BEFORE) : min(para_end, end + CONTEXT_AFTER)]
    return bool(STRONG_RELATED.search(window) or (WEAK_RELATED.search(window) and APPLICATION_REF.search(window)))


# a sentence ends at . ! ? before white space and a capital, unless the period closes an abbreviation (U.S. Pat. No., Jan., et al.)
_SENTENCE_END = re.compile(
    r"(?<!\bU\.S)(?<!\bPat)(?<!\bNo)(?<!\bNos)(?<!\bSer)(?<!\bRe)(?<!\bU)(?<!\bS)(?<!\bal)(?<!\bFig)(?<!\bFigs)(?<!\bInc)(?<!\bCorp)(?<!\bCo)(?<!\bJan)(?<!\bFeb)(?<!\bMar)(?<!\bApr)(?<!\bJun)(?<!\bJul)(?<!\bAug)(?<!\bSep)(?<!\bSept)(?<!\bOct)(?<!\bNov)(?<!\bDec)(?<!\be\.g)(?<!\bi\.e)(?<!\bMr)(?<!\bDr)[.!?](?=\s+[A-Z]|\s*$)"
)


def mask_mentions(text: str) -> str:
    """``text`` without the sentences that mention a US patent: a citing document as a query, which must not hold its answer
    (the cited number, often its title or its inventor's words beside it)."""
    spans = []
    for _, start, end in patent_numbers(text):
        para_start = text.rfind("\n", 0, start) + 1
        before = [m.end() for m in _SENTENCE_END.finditer(text, para_start, start)]
        after = _SENTENCE_END.search(text, end)
        para_end = text.find("\n", end)
        para_end = len(text) if para_end < 0 else para_end
        stop = min(after.end(), para_end) if after else para_end
        spans.append((before[-1] if before else para_start, stop))
    if not spans:
        return text
    out, at = [], 0
    for start, stop in sorted(spans):
        if start > at:
            out.append(text[at:start])
        at = max(at, stop)
    out.append(text[at:])
    return re.sub(r"[ \t]{2,}", " ", "".join(out))


def mine_citations(corpus_dir: str | Path, out_dir: str | Path, valid_share: float = 0.2) -> MinedCitations:
    """Mine in-text patent citations within the corpus at ``corpus_dir`` into ``out_dir`` (module docstring)."""
    if not 0.0 <= valid_share < 1.0:
        raise ValueError(f"the validation share must be in [0, 1), got {valid_share}")
    path = documents_path(corpus_dir)
    head = pq.read_table(path, columns=["id", "date"])
    ids, dates = head.column("id").to_pylist(), head.column("date").to_pylist()
    date_of = dict(zip(ids, (d or "" for d in dates)))
    resolver = IdResolver(ids)
    pairs: dict[tuple[str, str], str] = {}  # (citing, cited) -> the citing date
    log, dropped, mentions = [], Counter(), 0
    texts = (row for batch in pq.ParquetFile(path).iter_batches(batch_size=512, columns=["description", "abstract"]) for row in batch.to_pylist())
    for doc_id, date, row in zip(ids, dates, texts):  # descriptions streamed: a full-text corpus need not fit in memory
        text = row["description"] or row["abstract"] or ""
        for number, start, end in patent_numbers(text):
            mentions += 1
            found = resolver.resolve(number)
            cited = found[0] if len(found) == 1 else None
            why = ""
            if is_related_application(text, start, end):
                why = "a related application (continuation, divisional, priority, now U.S. Pat. No.)"
            elif cited is None:
                why = "not in the corpus" if not found else "several publications of that number"
            elif cited == doc_id:
                why = "the document itself"
            elif not (date_of.get(cited) and date and date_of[cited] < date):
                why = "cited document not older"
            log.append(
                {"citing_id": doc_id, "number": number, "cited_id": cited, "dropped": why}
                if why
                else {"citing_id": doc_id, "number": number, "cited_id": cited}
            )
            if why:
                dropped[why] += 1
            else:
                pairs[(doc_id, cited)] = date or ""
    # the latest share of citing documents validate; cut on (date, id), so documents of one issue date can fall either side
    citing_docs = sorted({(d, c) for (c, _), d in pairs.items()})
    cut = len(citing_docs) - max(1, round(len(citing_docs) * valid_share)) if valid_share else len(citing_docs)
    cut = max(cut, 0)
    validating = set(citing_docs[cut:])
    valid_from = citing_docs[cut][0] if cut < len(citing_docs) else "9999"
    train = sorted(p for p, d in pairs.items() if (d, p[0]) not in validating)
    validation = sorted(p for p, d in pairs.items() if (d, p[0]) in validating)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    header = "citing_id\tcited_id\n"
    atomic_write_text(out / "citations_train.tsv", header + "".join(f"{a}\t{b}\n" for a, b in train))
    atomic_write_text(out / "citations_validation.tsv", header + "".join(f"{a}\t{b}\n" for a, b in validation))
    atomic_write_text(out / "mentions.jsonl", "".join(json.dumps(e) + "\n" for e in log))
    citing = {a for a, _ in (*train, *validation)}
    masked = []  # the citing documents with their mention sentences taken out: ingest this first, then the corpus
    columns = ["id", "title", "abstract", "description", "date", "priority_date", "applicants", "country", "kind", "ipc", "cpc", "family_id"]
    present = [c for c in columns if c in pq.ParquetFile(path).schema_arrow.names]
    for batch in pq.ParquetFile(path).iter_batches(batch_size=512, columns=present):
        for row in batch.to_pylist():
            if row["id"] in citing:
                row["description"] = mask_mentions(row.get("description") or "")
                masked.append(json.dumps({k: v for k, v in row.items() if v not in (None, "", [])}) + "\n")
    atomic_write_text(out / "masked_citing.jsonl", "".join(masked))
    return MinedCitations(len(ids), mentions, len(train), len(validation), valid_from, dropped, out)
