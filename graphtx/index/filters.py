"""Search filters as patent searchers use them: a publication-date cut-off, classification
prefixes, offices, kind codes, and families.

``SearchFilters`` is what ``Index.search(filters=...)``, ``graphtx search`` and the ``/search``
body take. The filters that decide whether a document may be a hit (date, classes, country,
kind, the query's family) become one boolean mask over the index's documents
(:class:`FilterData`, read once from the index parts); every ranker keeps only masked-in
candidates and, where it reads a fixed number of FAISS neighbours, reads more (doubling up to
the whole index) until it has enough. ``group_by_family`` keeps the best hit of each family.

Rules:
- ``before``: publication date strictly before the cut-off. A partial date ("2009", "2009-06")
  counts as its last day, so it passes only when surely before; a document without a date never
  passes. For an id query the default cut-off is the query document's priority date (else its
  publication date): what a prior-art search for that document may cite. ``"none"`` turns it off.
- ``cpc`` / ``ipc``: a document passes when any of its codes starts with any prefix, spaces
  ignored (``H01M``, ``H01M 10/``, ``H01M10/44``). Given both, a document must pass both.
- ``country`` / ``kind``: any of the given codes; a kind passes by prefix (``B`` = B1, B2).
- ``exclude_family``: documents of the query's family (``family_id``, else the same number under
  another kind code) are no hits, nor is the query itself; default on for an id query.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, fields

import numpy as np

from graphtx.corpus.codes import id_key

_DATE = re.compile(r"^(\d{4})(?:[-/.]?(\d{2}))?(?:[-/.]?(\d{2}))?$")
OFF = "none"  # before=OFF: no date cut-off, also for id queries


def iso_cutoff(value: str) -> str:
    """``"20100630"``, ``"2010/06/30"``, ``"2010-06"`` -> ISO (partial dates stay partial); ValueError otherwise."""
    m = _DATE.match(value.strip())
    if not m or (m.group(3) and not m.group(2)):
        raise ValueError(f"before must be a date such as 2010-06-30, 2010-06 or 2010 (or none), got {value!r}")
    year, month, day = m.groups()
    if (month and not 1 <= int(month) <= 12) or (day and not 1 <= int(day) <= 31):
        raise ValueError(f"before must be a date such as 2010-06-30, 2010-06 or 2010 (or none), got {value!r}")
    return "-".join(p for p in (year, month, day) if p)


def _codes(value, upper: bool = True) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    out = []
    for item in items:
        for code in re.split(r"[,;]", str(item)):
            code = re.sub(r"\s+", "", code).upper() if upper else code.strip()
            if code and code not in out:
                out.append(code)
    return tuple(out)


@dataclass(frozen=True)
class SearchFilters:
    before: str | None = (
        None  # ISO date: publication strictly before; None: id query -> its priority date, text -> no cut-off; "none": off
    )
    cpc: tuple[str, ...] = ()  # CPC prefixes, any may match ("H01M", "H01M 10/44")
    ipc: tuple[str, ...] = ()  # IPC prefixes, any may match
    country: tuple[str, ...] = ()  # publishing offices (US, EP, WO, ...), any
    kind: tuple[str, ...] = ()  # kind-code prefixes (B = B1/B2, A1), any
    exclude_family: bool | None = None  # drop the query's family (and the query); None: on for an id query
    group_by_family: bool = False  # one hit per family, its best-scored member

    def __post_init__(self) -> None:
        before = self.before
        if before is not None:
            before = OFF if str(before).strip().lower() == OFF else iso_cutoff(str(before))
        object.__setattr__(self, "before", before)
        for name in ("cpc", "ipc", "country", "kind"):
            object.__setattr__(self, name, _codes(getattr(self, name)))

    def cutoff(self, query_date: str | None) -> str | None:
        """The date cut-off in force: ``before``, else (id query) ``query_date``; None: no cut-off."""
        if self.before == OFF:
            return None
        return self.before or query_date or None

    def excludes_family(self, id_query: bool) -> bool:
        return id_query if self.exclude_family is None else self.exclude_family and id_query

    def to_json(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict | None) -> SearchFilters:
        data = data or {}
        return cls(**{f.name: data[f.name] for f in fields(cls) if data.get(f.name) is not None})


NO_FILTERS = SearchFilters(before=OFF, exclude_family=False)  # nothing filtered, not even for an id query


# --- per-document data and the mask ------------------------------------------------


def date_end(date: str) -> str:
    """The last day a (partial) ISO date may mean, for "surely before": "2009" -> "2009-12-31"."""
    if len(date) == 4:
        return date + "-12-31"
    if len(date) == 7:
        return date + "-31"
    return date


def cutoff_start(date: str) -> str:
    """The first day of a (partial) cut-off: "2009" -> "2009-01-01"."""
    return date + "-01-01" if len(date) == 4 else date + "-01" if len(date) == 7 else date


class FilterData:
    """What the filters read, for every live document of an index, in id-map order.

    dates (n,) str (the last day a date may mean, "" unknown); priority, raw_dates: lists; country,
    kind, family (n,) str arrays (family: family_id, else the id without kind); cpc, ipc: tuples
    of space-free codes per document.
    """

    def __init__(self, doc_ids: list[str], rows: list[dict]):
        self.count = len(doc_ids)
        self.dates = np.array(
            [date_end(r.get("date") or "") for r in rows], dtype="U10"
        )  # (n,) ISO, compared as strings
        self.priority = [r.get("priority_date") or "" for r in rows]
        self.raw_dates = [r.get("date") or "" for r in rows]
        self.country = np.array([(r.get("country") or _country(d)).upper() for d, r in zip(doc_ids, rows)], dtype=str)
        self.kind = np.array([(r.get("kind") or _kind(d)).upper() for d, r in zip(doc_ids, rows)], dtype=str)
        self.family = np.array([r.get("family_id") or id_key(d) for d, r in zip(doc_ids, rows)], dtype=str)
        self.cpc = [tuple(c.replace(" ", "") for c in r.get("cpc") or ()) for r in rows]
        self.ipc = [tuple(c.replace(" ", "") for c in r.get("ipc") or ()) for r in rows]
        self._cache: dict[tuple, np.ndarray] = {}

    def unfilled(self, filters: SearchFilters) -> list[str]:
        """The class filters in use that no document of the index can pass: it has no such codes at all ("cpc")."""
        return [name for name in ("cpc", "ipc") if getattr(filters, name) and not any(getattr(self, name))]

    def query_date(self, position: int) -> str:
        """An id query's default cut-off: its priority date, else its publication date."""
        return self.priority[position] or self.raw_dates[position]

    def _cached(self, key: tuple, make) -> np.ndarray:
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = make()
        return self._cache[key]

    def mask(self, filters: SearchFilters, cutoff: str | None, family: str | None) -> np.ndarray | None:
        """(n,) bool: documents that may be hits; None when nothing is filtered."""
        parts = []
        if cutoff:
            start = cutoff_start(cutoff)
            parts.append(self._cached(("before", start), lambda: (self.dates != "") & (self.dates < start)))
        for name in ("cpc", "ipc"):
            prefixes = getattr(filters, name)
            if prefixes:
                codes = getattr(self, name)
                parts.append(
                    self._cached(
                        (name, prefixes),
                        lambda: np.array([any(c.startswith(prefixes) for c in cs) for cs in codes], dtype=bool),
                    )
                )
        if filters.country:
            parts.append(
                self._cached(("country", filters.country), lambda: np.isin(self.country, list(filters.country)))
            )
        if filters.kind:
            parts.append(
                self._cached(
                    ("kind", filters.kind),
                    lambda: np.logical_or.reduce([np.char.startswith(self.kind, k) for k in filters.kind]),
                )
            )
        if family is not None:
            parts.append(self.family != family)
        if not parts:
            return None
        out = parts[0].copy()
        for p in parts[1:]:
            out &= p
        return out


def _country(doc_id: str) -> str:
    m = re.match(r"^([A-Z]{2})-", doc_id)
    return m.group(1) if m else ""


def _kind(doc_id: str) -> str:
    m = re.match(r"^[A-Z]{2}-[A-Z0-9]+-([A-Z]\d?)$", doc_id)
    return m.group(1) if m else ""


class Filtering:
    """The filters' side of an open index: the live documents' dates, classes, offices, kinds and families (read once per
    index version), the mask of one query's filters, and one hit per family. A part :class:`~graphtx.index.search.Index`
    composes."""

    def __init__(self, reader, live_digest: str):
        """``reader``: the index's :class:`~graphtx.index.reader.DocumentReader`."""
        self.reader, self.live_digest = reader, live_digest
        self._cache: dict = {}  # live digest -> FilterData
        self._lock = threading.Lock()

    def data(self) -> FilterData:
        """Dates, classes, offices, kinds and families of the live documents (read once per index version)."""
        with self._lock:
            cached = self._cache.get(self.live_digest)
        if cached is not None:
            return cached
        ids, store = self.reader.ids, self.reader.store
        wanted = ["date", "priority_date", "country", "kind", "family_id", "ipc", "cpc"]
        rows: list[dict] = [{}] * len(ids)
        positions = np.arange(len(ids))
        for seq in np.unique(ids.part):
            at = positions[ids.part == seq]
            names = set(store.part_columns(int(seq)))
            table = store.read_part_columns(
                int(seq), [c for c in wanted if c in names]
            ).to_pylist()  # older parts lack some
            for p in at:
                rows[p] = table[int(ids.row[p])]
        data = FilterData(list(ids.doc_id), rows)
        with self._lock:
            self._cache = {self.live_digest: data}
        return data

    def mask(self, query_doc_id: str | None, filters: SearchFilters | None) -> tuple[np.ndarray | None, dict]:
        """(count,) bool of documents that may be hits (None: all), and the filters in force for the result; an id query
        (``query_doc_id``) brings its own priority date and family."""
        if filters is None:
            return None, {}
        position = self.reader.ids.position_of(query_doc_id) if query_doc_id is not None else None
        if (
            position is None
            and filters.cutoff(None) is None
            and not (filters.cpc or filters.ipc or filters.country or filters.kind or filters.group_by_family)
        ):
            return None, {
                **filters.to_json(),
                "before": None,
                "exclude_family": False,
            }  # a text query, nothing to filter
        data = self.data()
        cutoff = filters.cutoff(data.query_date(position) if position is not None else None)
        family = data.family[position] if position is not None and filters.excludes_family(True) else None
        mask = data.mask(filters, cutoff, family)
        applied = {**filters.to_json(), "before": cutoff, "exclude_family": family is not None}
        if mask is not None:
            applied["passing"] = int(mask.sum())  # documents that may be hits
            if not applied["passing"] and data.unfilled(filters):
                applied["unfilled"] = data.unfilled(filters)  # e.g. ["cpc"]: the index holds no CPC codes at all
        return mask, applied

    def one_per_family(self, hits: list) -> list:
        """The best-ranked hit of each family, in order."""
        family, ids = self.data().family, self.reader.ids
        seen: set = set()
        out = []
        for h in hits:
            f = family[ids.position_of(h.doc_id)]
            if f not in seen:
                seen.add(f)
                out.append(h)
        return out
