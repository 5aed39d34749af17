"""Canonical corpus records and their Arrow schemas.

Every reader turns its input format into :class:`PatentDocument` and
:class:`Citation` objects (the one citation type of every stage; files of them are read by
:func:`graphtx.corpus.citations.read_citations`); :mod:`graphtx.corpus.store` writes them to
``documents.parquet`` and ``citations.parquet`` with the schemas below.

Ids and classification codes are spelled as :mod:`graphtx.corpus.codes` says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

# Citation categories. X/Y/A/I/E/P/D/O/T/L follow the EPO/PCT search report codes;
# "examiner" / "applicant" / "other" follow the USPTO front page; "unknown" when the
# source does not say.
CITATION_CATEGORIES = (
    "X",
    "Y",
    "A",
    "I",
    "E",
    "P",
    "D",
    "O",
    "T",
    "L",
    "examiner",
    "applicant",
    "other",
    "unknown",
)
TRIVIAL = "trivial"  # a document paired with itself (training's known-item validation); never read from a file


@dataclass(frozen=True)
class Claim:
    num: int  # claim number as printed (1-based)
    text: str  # claim text, whitespace-normalised, number prefix removed
    independent: bool  # no reference to another claim
    depends_on: tuple[int, ...] = ()  # numbers of the claims it refers to


@dataclass(frozen=True)
class PatentDocument:
    id: str
    source: str  # reader that produced it: uspto | ep | marec | jsonl | parquet
    source_file: str
    title: str = ""
    abstract: str = ""
    claims: tuple[Claim, ...] = ()
    description: str = ""
    ipc: tuple[str, ...] = ()  # normalised "H01M 10/44"
    cpc: tuple[str, ...] = ()
    family_id: str = ""
    date: str = ""  # publication date, ISO "YYYY-MM-DD" ("" when unknown)
    lang: str = ""  # language of the text fields ("en", "de", ...; "" when unknown)
    kind: str = ""  # publication kind code (B1, A1, ...)
    priority_date: str = (
        ""  # earliest priority date, ISO (the application date when nothing earlier is claimed; "" when unknown)
    )
    application_date: str = ""  # filing date of this application, ISO ("" when unknown)
    applicants: tuple[str, ...] = ()  # applicants / assignees / proprietors, as printed, first named first
    country: str = ""  # publishing office (US, EP, WO, ...; from the id when the source does not say)
    extra: dict = field(
        default_factory=dict, compare=False
    )  # reader-specific fields (JSONL/Parquet: the unknown ones), stored as JSON

    @property
    def first_claim_index(self) -> int:
        """Index into :attr:`claims` of the first independent claim (-1 if none)."""
        for i, claim in enumerate(self.claims):
            if claim.independent:
                return i
        return 0 if self.claims else -1

    @property
    def first_claim(self) -> str:
        i = self.first_claim_index
        return self.claims[i].text if i >= 0 else ""


@dataclass(frozen=True)
class Citation:
    citing_id: str
    cited_id: str
    category: str = "unknown"  # one of CITATION_CATEGORIES
    source: str = ""  # where the citation comes from: "front-page", "search-report", "tsv", ...

    def __post_init__(self) -> None:
        if self.category not in CITATION_CATEGORIES and self.category != TRIVIAL:
            raise ValueError(f"unknown citation category {self.category!r}")


CLAIM_TYPE = pa.struct(
    [
        ("num", pa.int32()),
        ("text", pa.string()),
        ("independent", pa.bool_()),
        ("depends_on", pa.list_(pa.int32())),
    ]
)

DOCUMENT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("source_file", pa.string()),
        ("title", pa.string()),
        ("abstract", pa.string()),
        ("claims", pa.list_(CLAIM_TYPE)),
        ("first_claim_index", pa.int32()),
        ("description", pa.string()),
        ("ipc", pa.list_(pa.string())),
        ("cpc", pa.list_(pa.string())),
        ("family_id", pa.string()),
        ("date", pa.string()),
        ("lang", pa.string()),
        ("kind", pa.string()),
        ("priority_date", pa.string()),
        ("application_date", pa.string()),
        ("applicants", pa.list_(pa.string())),
        ("country", pa.string()),
        ("extra", pa.string()),  # JSON object; "{}" when empty
    ]
)
# Columns a corpus written before them lacks; reading one gives the empty value.
NEW_DOCUMENT_COLUMNS = ("priority_date", "application_date", "applicants", "country", "extra")

CITATION_SCHEMA = pa.schema(
    [
        ("citing_id", pa.string()),
        ("cited_id", pa.string()),
        ("category", pa.string()),
        ("source", pa.string()),
    ]
)


def document_to_row(doc: PatentDocument) -> dict:
    return {
        "id": doc.id,
        "source": doc.source,
        "source_file": doc.source_file,
        "title": doc.title,
        "abstract": doc.abstract,
        "claims": [
            {"num": c.num, "text": c.text, "independent": c.independent, "depends_on": list(c.depends_on)}
            for c in doc.claims
        ],
        "first_claim_index": doc.first_claim_index,
        "description": doc.description,
        "ipc": list(doc.ipc),
        "cpc": list(doc.cpc),
        "family_id": doc.family_id,
        "date": doc.date,
        "lang": doc.lang,
        "kind": doc.kind,
        "priority_date": doc.priority_date,
        "application_date": doc.application_date,
        "applicants": list(doc.applicants),
        "country": doc.country,
        "extra": json.dumps(doc.extra, ensure_ascii=False, default=str) if doc.extra else "{}",
    }


def document_from_row(row: dict) -> PatentDocument:
    return PatentDocument(
        id=row["id"],
        source=row["source"],
        source_file=row["source_file"],
        title=row["title"] or "",
        abstract=row["abstract"] or "",
        claims=tuple(
            Claim(c["num"], c["text"], c["independent"], tuple(c["depends_on"] or ())) for c in (row["claims"] or ())
        ),
        description=row["description"] or "",
        ipc=tuple(row["ipc"] or ()),
        cpc=tuple(row["cpc"] or ()),
        family_id=row["family_id"] or "",
        date=row["date"] or "",
        lang=row["lang"] or "",
        kind=row["kind"] or "",
        priority_date=row.get("priority_date") or "",  # .get: corpora older than these columns
        application_date=row.get("application_date") or "",
        applicants=tuple(row.get("applicants") or ()),
        country=row.get("country") or "",
        extra=json.loads(row.get("extra") or "{}"),
    )


def citation_to_row(c: Citation) -> dict:
    return {"citing_id": c.citing_id, "cited_id": c.cited_id, "category": c.category, "source": c.source}
