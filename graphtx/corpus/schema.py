"""Canonical corpus records and their Arrow schemas.

Every reader turns its input format into :class:`PatentDocument` and
:class:`Citation` objects (the one citation type of every stage; files of them are read by
:func:`graphtx.corpus.citations.read_citations`); :mod:`graphtx.corpus.store` writes them to
``documents.parquet`` and ``citations.parquet`` with the schemas below.

Ids
---
Documents from patent XML get ids of the form ``CC-NUMBER-KIND``
(``US-7315346-B2``, ``EP-1000000-B1``), the "ucid" convention of MAREC and
CLEF-IP. Cited documents are written the same way. Because citations often
name another publication of the same patent (``A1`` cites, ``B1`` is in the
corpus), :func:`id_key` drops the kind code so later stages can match
``US-6915749-B2`` with ``US-6915749-A``. Ids from JSONL/Parquet/TSV inputs are
kept as given (they are opaque strings such as ``2004281796``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pyarrow as pa

# Citation categories. X/Y/A/I/E/P/D/O/T/L follow the EPO/PCT search report codes;
# "examiner" / "applicant" / "other" follow the USPTO front page; "unknown" when the
# source does not say.
CITATION_CATEGORIES = (
    "X", "Y", "A", "I", "E", "P", "D", "O", "T", "L",
    "examiner", "applicant", "other", "unknown",
)  # fmt: skip
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
    priority_date: str = ""  # earliest priority date, ISO (the application date when nothing earlier is claimed; "" when unknown)
    application_date: str = ""  # filing date of this application, ISO ("" when unknown)
    applicants: tuple[str, ...] = ()  # applicants / assignees / proprietors, as printed, first named first
    country: str = ""  # publishing office (US, EP, WO, ...; from the id when the source does not say)
    extra: dict = field(default_factory=dict, compare=False)  # reader-specific fields (JSONL/Parquet: the unknown ones), stored as JSON

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
            Claim(c["num"], c["text"], c["independent"], tuple(c["depends_on"] or ()))
            for c in (row["claims"] or ())
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


# --- ids -------------------------------------------------------------------------

_UCID = re.compile(r"^([A-Z]{2})-([A-Z0-9]+)(?:-([A-Z][0-9]?))?$")


def make_id(country: str, number: str, kind: str = "") -> str:
    """``make_id("US", "07315346", "B2") -> "US-7315346-B2"``.

    Spaces are removed and purely numeric numbers lose leading zeros, so the
    same patent written two ways gets one id.
    """
    country = country.strip().upper()
    number = re.sub(r"[\s/,.-]", "", number.strip().upper())
    if number.isdigit():
        number = number.lstrip("0") or "0"
    kind = kind.strip().upper()
    return f"{country}-{number}-{kind}" if kind else f"{country}-{number}"


def country_of(doc_id: str) -> str:
    """The office of a ``CC-NUMBER-KIND`` id (``"US-7315346-B2" -> "US"``); "" for other ids."""
    m = _UCID.match(doc_id)
    return m.group(1) if m else ""


def kind_of(doc_id: str) -> str:
    """The kind code of a ``CC-NUMBER-KIND`` id (``"US-7315346-B2" -> "B2"``); "" for other ids."""
    m = _UCID.match(doc_id)
    return (m.group(3) or "") if m else ""


def id_key(doc_id: str) -> str:
    """Id without the kind code, for matching publications of one patent."""
    m = _UCID.match(doc_id)
    return f"{m.group(1)}-{m.group(2)}" if m else doc_id


# --- classification codes --------------------------------------------------------

_IPC = re.compile(r"^\s*([A-H])\s*(\d{2})\s*([A-Z])\s*(\d{1,4})\s*/\s*(\d{1,6})")


def normalise_ipc(code: str) -> str | None:
    """``"H01F  27/14  20060101AFI..." -> "H01F 27/14"``; None if not an IPC/CPC symbol."""
    m = _IPC.match(code.upper())
    if not m:
        return None
    section, cls, sub, group, subgroup = m.groups()
    return f"{section}{cls}{sub} {int(group)}/{subgroup}"
