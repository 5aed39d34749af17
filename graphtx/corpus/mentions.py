"""Citations mined from the text: "U.S. Pat. No. 7,123,456" in a description, kept when the patent is in the corpus.

US descriptions name the prior art they build on ("In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 ...").
Where the named patent is itself a document of the corpus, the pair (citing, cited) is a citation a
searcher would want found: a development set of one's own for full texts, with no examiner needed.

What is mined, per document (``description``, else ``abstract``):

* every mention ``U.S. Pat. No. N`` / ``U.S. Patent No. N`` / ``US Pat. Nos. N, M and K`` (numbers with
  commas, spaces or nothing between digit groups, reissues ``RE 12,345`` too);
* a mention is **dropped** (and counted, with its reason, in ``mentions.jsonl``) when it names a related
  application of the same family rather than prior art: the words around it, or anywhere in its
  paragraph beside an application reference (Ser. No., application No., a filing date), say
  continuation, division(al), claims priority or benefit, parent, related or co-pending application,
  reissue, cross-reference, or the application "now U.S. Pat. No. ..." (the patent that an earlier
  application of the family became); when it names the document itself; when the patent is not in the corpus;
* the cited document must be dated before the citing one (a later date means a mis-read number or a
  family member): otherwise dropped as ``cited document not older``;
* a **pair** is dropped when the two documents share a large part of their text (``max_shared_text``: the
  share of the shorter one's word 8-gram shingles found in the other; a continuation repeats its parent's
  description), whatever the words around the mention say.

Of the pairs kept, the share whose two documents have the same applicant (assignee) is reported beside
that share among random pairs of the corpus: a set that is mostly one applicant citing itself measures
near-duplicate detection as much as prior-art search. ``kept_pairs.jsonl`` lists each kept pair with its
applicants, titles, shared-text share and the words around the mention, for checking by hand.

Split by the citing document's date: the citing documents of the latest ``valid_share`` (by date) give
the validation citations, the others the training citations, so nothing later than a validation query
is learned from. Written as ``citations_train.tsv`` / ``citations_validation.tsv`` (``citing_id<TAB>cited_id``,
the EV-battery set's format: ``graphtx train --citations``, ``graphtx eval citations --citations``), both in
``citations_all.tsv``, and ``mentions.jsonl`` (every mention: citing id, the number as written, the cited id or why it was dropped), and
``masked_citing.jsonl``: the citing documents with every sentence that mentions a patent taken out of every field a
query reads (title, abstract, description), so that a query does not hold its answer (ingest it before the corpus: ``graphtx ingest DIR/masked_citing.jsonl CORPUS_SOURCE
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
MENTION = re.compile(
    rf"\bU\.?\s?S\.?\s+Pat(?:ent)?s?\.?\s+(?:(?:Nos?|Numbers?)\.?\s*)?((?:{_NUMBER})(?:{_SEPARATOR}(?:{_NUMBER}))*)",
    re.I,
)
NUMBER = re.compile(r"(RE)\.?\s?(\d{1,2})[ ,.]?(\d{3})(?![,.]?\d)|(\d{1,2})[ ,.]?(\d{3})[ ,.]?(\d{3})(?![,.]?\d)", re.I)
# words that make a mention a family member: strong ones alone; weak ones ("continuation", "priority to") only beside an
# application reference ("application", "Ser. No.", "filed"), since they also occur in technical prose ("gives priority to")
STRONG_RELATED = re.compile(
    r"now\s+U\.?\s?S\.?\s+Pat|now\s+issued|issued\s+as\s+U\.?\s?S|cross[- ]reference\s+(?:to|is\s+made)|which\s+is\s+a\s+(?:continuation|division)"
    r"|\bparent\s+(?:U\.?\s?S\.?\s+)?(?:Pat\b|patent\b)"
    r"|(?:application|invention|disclosure)\s+is\s+(?:also\s+)?related\s+to\s+(?:the\s+following\s+|commonly[- ]\w+\s+|co-?pending\s+)*"
    r"(?:U\.?\s?S\.?\s+)?(?:Pat\b|patents?\b|(?:patent\s+)?applications?\b)",
    re.I,
)
WEAK_RELATED = re.compile(
    r"continuation|divisional|\bdivision\s+of|claims?\s+(?:the\s+)?(?:benefit|priority)|priority\s+(?:to|of|from)|parent\s+application"
    r"|related\s+(?:to\s+)?(?:(?:U\.?\s?S\.?|co-?pending|commonly[- ](?:owned|assigned))\s+)*(?:patent\s+)?applications?"
    r"|co-?pending|reissue\s+of",
    re.I,
)
# an application named as such, near the mention or anywhere in its paragraph ("application" alone is common prose in
# software patents: "a continuation token is returned to the application")
APPLICATION_NAMED = re.compile(
    r"\bSer\.?\s*Nos?\b\.?\s*\d|\bapplication\s+(?:Nos?\b\.?|number)\s*\d|\bapplication\s+Ser\b|provisional\s+(?:patent\s+)?application|PCT/"
    r"|\bfiled\s+(?:on\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r"|\b(?:this|present|instant|the\s+present)\s+(?:patent\s+)?application\s+(?:is|claims|was|has)",
    re.I,
)
SHINGLE_WORDS = 8  # words a shingle: long enough that shared technical phrases are rare, short enough for repeated text


@dataclass
class MinedCitations:
    documents: int
    mentions: int
    train: int  # unique (citing, cited) pairs
    validation: int
    valid_from: str  # citing dates on or after this are validation
    dropped: Counter = field(default_factory=Counter)  # reason -> mentions
    out_dir: Path = Path()
    same_applicant: int = 0  # kept pairs whose two documents share an applicant
    same_applicant_random: float = 0.0  # that share among random pairs of the corpus's documents with an applicant
    with_applicants: int = 0  # kept pairs whose two documents both name an applicant
    max_shared_text: float = 1.0

    def lines(self) -> list[str]:
        dropped = ", ".join(f"{n:,} {why}" for why, n in self.dropped.most_common())
        kept = self.train + self.validation
        return [
            f"mined {self.mentions:,} patent mentions in {self.documents:,} documents into {self.out_dir}",
            f"citations within the corpus: {self.train:,} train, {self.validation:,} validation (the latest citing documents, from {self.valid_from})",
            f"dropped: {dropped or 'none'} (each in {self.out_dir / 'mentions.jsonl'})",
            f"same applicant: {self.same_applicant:,} of the {self.with_applicants:,} kept pairs whose documents both name one "
            f"({_share(self.same_applicant, self.with_applicants)}; random pairs of the corpus: {self.same_applicant_random:.1%}); "
            f"the {kept:,} kept pairs with the words around each mention: {self.out_dir / 'kept_pairs.jsonl'}",
        ]

    def to_json(self) -> dict:
        return {
            "documents": self.documents,
            "mentions": self.mentions,
            "train": self.train,
            "validation": self.validation,
            "valid_from": self.valid_from,
            "dropped": dict(self.dropped),
            "out_dir": str(self.out_dir),
            "same_applicant": self.same_applicant,
            "with_applicants": self.with_applicants,
            "same_applicant_random": self.same_applicant_random,
            "max_shared_text": self.max_shared_text,
        }


def _share(n: int, of: int) -> str:
    return f"{n / of:.1%}" if of else "-"


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
    """Whether a mention's paragraph says it is a family member, not prior art: a strong family word, or a weak one
    beside an application named as such."""
    para_start = text.rfind("\n", 0, start) + 1
    para_end = text.find("\n", end)
    para_end = len(text) if para_end < 0 else para_end
    paragraph = text[para_start:para_end]
    return bool(
        STRONG_RELATED.search(paragraph) or (WEAK_RELATED.search(paragraph) and APPLICATION_NAMED.search(paragraph))
    )


def mention_context(text: str, start: int, end: int, before: int = 500, after: int = 300) -> str:
    """The words around a mention, within its paragraph: what a person checking the pair reads."""
    para_start = text.rfind("\n", 0, start) + 1
    para_end = text.find("\n", end)
    para_end = len(text) if para_end < 0 else para_end
    return text[max(para_start, start - before) : min(para_end, end + after)]


def shingles(text: str, words: int = SHINGLE_WORDS) -> set[int]:
    """The word ``words``-grams of ``text`` (lower case, letters and digits), as a set of 64-bit hashes."""
    import hashlib

    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return {
        int.from_bytes(hashlib.blake2b(" ".join(tokens[i : i + words]).encode(), digest_size=8).digest(), "big")
        for i in range(max(0, len(tokens) - words + 1))
    }


def shared_text(a: set[int], b: set[int]) -> float:
    """The share of the smaller shingle set found in the other (0 when either is empty)."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


_LEGAL_FORM = re.compile(
    r"(?:\s+(?:inc|incorporated|corp|corporation|co|company|ltd|limited|llc|lp|plc|gmbh|ag|sa|bv|nv|kk))+$"
)  # at the end only


def applicant_key(name: str) -> str:
    """An applicant's name without case, punctuation or legal form ("International Business Machines Corp." ->
    "international business machines")."""
    words = " ".join(re.sub(r"[^a-z0-9 ]", " ", name.lower()).split())
    return _LEGAL_FORM.sub("", words).removeprefix("the ").strip()


def same_applicant(a, b) -> bool:
    """Whether two documents' applicant lists share a name (applicant_key)."""
    ka = {applicant_key(x) for x in a or () if applicant_key(x)}
    return bool(ka & {applicant_key(x) for x in b or () if applicant_key(x)})


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


RELATED = "a related application (continuation, division, priority, co-pending, now U.S. Pat. No.)"
RELATED_ELSEWHERE = "named as a related application by another mention in the same document"
SHARED = "the two documents share most of their text (a family member)"
RANDOM_PAIRS = 20_000  # random document pairs behind the corpus's same-applicant share


def mine_citations(
    corpus_dir: str | Path, out_dir: str | Path, valid_share: float = 0.2, max_shared_text: float = 0.3, seed: int = 0
) -> MinedCitations:
    """Mine in-text patent citations within the corpus at ``corpus_dir`` into ``out_dir`` (module docstring)."""
    if not 0.0 <= valid_share < 1.0:
        raise ValueError(f"the validation share must be in [0, 1), got {valid_share}")
    if not 0.0 < max_shared_text <= 1.0:
        raise ValueError(f"the largest shared-text share must be in (0, 1], got {max_shared_text}")
    path = documents_path(corpus_dir)
    names = pq.ParquetFile(path).schema_arrow.names
    head = pq.read_table(path, columns=[c for c in ("id", "date", "applicants") if c in names]).to_pydict()
    ids, dates = head["id"], head["date"]
    applicants = dict(zip(ids, head.get("applicants") or [[] for _ in ids]))
    date_of = dict(zip(ids, (d or "" for d in dates)))
    resolver = IdResolver(ids)
    pairs: dict[tuple[str, str], str] = {}  # (citing, cited) -> the citing date
    contexts: dict[
        tuple[str, str], str
    ] = {}  # (citing, cited) -> the words around its first kept mention, within its paragraph
    related: set[tuple[str, str]] = set()  # (citing, cited) named as a related application by some mention
    log, dropped, mentions = [], Counter(), 0
    texts = (
        row
        for batch in pq.ParquetFile(path).iter_batches(batch_size=512, columns=["description", "abstract"])
        for row in batch.to_pylist()
    )
    for doc_id, date, row in zip(ids, dates, texts):  # descriptions streamed: a full-text corpus need not fit in memory
        text = row["description"] or row["abstract"] or ""
        for number, start, end in patent_numbers(text):
            mentions += 1
            found = resolver.resolve(number)
            cited = found[0] if len(found) == 1 else None
            why = ""
            if is_related_application(text, start, end):
                why = RELATED
                if cited is not None:
                    related.add((doc_id, cited))
            elif cited is None:
                why = "not in the corpus" if not found else "several publications of that number"
            elif cited == doc_id:
                why = "the document itself"
            elif not (date_of.get(cited) and date and date_of[cited] < date):
                why = "cited document not older"
            log.append({"citing_id": doc_id, "number": number, "cited_id": cited, **({"dropped": why} if why else {})})
            if why:
                dropped[why] += 1
            else:
                pairs[(doc_id, cited)] = date or ""
                contexts.setdefault((doc_id, cited), mention_context(text, start, end))
    _drop_pairs(
        log, related, RELATED_ELSEWHERE, dropped
    )  # one family mention makes the pair a family pair, however its others read
    pairs = {p: d for p, d in pairs.items() if p not in related}
    documents = _read_documents(path, {d for p in pairs for d in p}, names)
    grams = {
        d: shingles(" ".join(documents[d].get(f) or "" for f in ("title", "abstract", "description")))
        for d in documents
    }
    shared = {p: shared_text(grams[p[0]], grams[p[1]]) for p in pairs}
    repeating = {p for p, share in shared.items() if share >= max_shared_text}
    _drop_pairs(
        log, repeating, SHARED, dropped
    )  # a pair whose documents repeat each other is a family member, whatever the words said
    pairs = {p: d for p, d in pairs.items() if p not in repeating}
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
    for name, rows in (
        ("citations_train.tsv", train),
        ("citations_validation.tsv", validation),
        ("citations_all.tsv", sorted(pairs)),
    ):
        atomic_write_text(out / name, header + "".join(f"{a}\t{b}\n" for a, b in rows))
    atomic_write_text(out / "mentions.jsonl", "".join(json.dumps(e) + "\n" for e in log))
    both = [p for p in sorted(pairs) if applicants.get(p[0]) and applicants.get(p[1])]
    same = {p for p in both if same_applicant(applicants[p[0]], applicants[p[1]])}
    validating_pairs = set(validation)
    kept = [
        {
            "citing_id": a,
            "cited_id": b,
            "citing_date": date_of[a],
            "cited_date": date_of[b],
            "same_applicant": (a, b) in same,
            "shared_text": round(shared[(a, b)], 4),
            "citing_applicants": applicants.get(a) or [],
            "cited_applicants": applicants.get(b) or [],
            "citing_title": documents[a].get("title") or "",
            "cited_title": documents[b].get("title") or "",
            "context": contexts[(a, b)],
            "split": "validation" if (a, b) in validating_pairs else "train",
        }
        for a, b in sorted(pairs)
    ]
    atomic_write_text(out / "kept_pairs.jsonl", "".join(json.dumps(k) + "\n" for k in kept))
    citing = {a for a, _ in pairs}
    masked = [
        json.dumps(_masked(documents[d])) + "\n" for d in ids if d in citing
    ]  # ingest this first, then the corpus
    atomic_write_text(out / "masked_citing.jsonl", "".join(masked))
    return MinedCitations(
        len(ids),
        mentions,
        len(train),
        len(validation),
        valid_from,
        dropped,
        out,
        len(same),
        random_same_applicant(applicants, seed),
        len(both),
        max_shared_text,
    )


def _drop_pairs(log: list[dict], pairs: set[tuple[str, str]], reason: str, dropped: Counter) -> None:
    """Mark every kept mention of ``pairs`` in ``log`` as dropped for ``reason``, counted in ``dropped``."""
    for entry in log:
        if not entry.get("dropped") and (entry["citing_id"], entry["cited_id"]) in pairs:
            entry["dropped"] = reason
            dropped[reason] += 1


_COLUMNS = (
    "id",
    "title",
    "abstract",
    "description",
    "date",
    "priority_date",
    "applicants",
    "country",
    "kind",
    "ipc",
    "cpc",
    "family_id",
)


def _read_documents(path: Path, wanted: set[str], names: list[str]) -> dict[str, dict]:
    """The rows of ``wanted`` ids (the columns of _COLUMNS the corpus has)."""
    out = {}
    for batch in pq.ParquetFile(path).iter_batches(batch_size=512, columns=[c for c in _COLUMNS if c in names]):
        for row in batch.to_pylist():
            if row["id"] in wanted:
                out[row["id"]] = row
    return out


def _masked(row: dict) -> dict:
    """A citing document as a query may read it: every sentence that mentions a patent taken out of each text field."""
    row = {**row, **{f: mask_mentions(row.get(f) or "") for f in ("title", "abstract", "description")}}
    return {k: v for k, v in row.items() if v not in (None, "", [])}


def random_same_applicant(applicants: dict[str, list], seed: int, pairs: int = RANDOM_PAIRS) -> float:
    """The share of random pairs of documents (both with an applicant) that share one: the base rate."""
    import random

    named = sorted(d for d, a in applicants.items() if a)
    if len(named) < 2:
        return 0.0
    rng = random.Random(seed)
    hits = 0
    for _ in range(pairs):
        a, b = rng.sample(named, 2)
        hits += same_applicant(applicants[a], applicants[b])
    return hits / pairs
