"""Ingest: any mix of patent sources → one canonical corpus directory.

Every input record ends up in exactly one place: ``documents.parquet`` (with
its citations) or ``errors.jsonl`` with file, position and reason. Files that
cannot be read at all (unknown format, unreadable folder, dangling link, damaged
archive member) are listed in ``errors.jsonl`` too, and the manifest's counts add up:
``records_seen == records_written + skipped``. A path given that does not exist is an
error before anything is written. The manifest's ``fields_filled`` says, per source path
given, how many documents got each field (and which ``extra`` keys were kept). The output is staged and committed whole
(:mod:`graphtx.atomic`): an interrupted run leaves the previous corpus as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from graphtx.corpus.base import ParsedRecord, RawRecord, RecordError, SkippedRecord
from graphtx.corpus.config import IngestConfig
from graphtx.corpus.formats import ARCHIVE_ERRORS, READERS, discover, missing_sources
from graphtx.corpus.schema import PatentDocument
from graphtx.corpus.store import CorpusWriter
from graphtx.parallel import bounded_map
from graphtx.progress import progress_bar


@dataclass(frozen=True)
class IngestReport:
    documents: int
    citations: int
    skipped: int
    records_seen: int
    out_dir: Path
    records_written: int = 0  # documents + citation-only rows; records_seen == records_written + skipped
    fields_filled: dict | None = (
        None  # per source path: documents, and how many filled each field (manifest's fields_filled)
    )
    not_patents: int = 0  # of the skipped: records that are no patent (sequence listings): listed, not a failure

    @property
    def complete(self) -> bool:
        """Every patent document was read (records that are no patent, listed in errors.jsonl, do not count)."""
        return self.skipped == self.not_patents

    def summary(self) -> dict:
        """``graphtx ingest --json``."""
        return {
            "out": str(self.out_dir),
            "records_seen": self.records_seen,
            "documents": self.documents,
            "citations": self.citations,
            "skipped": self.skipped,
            "not_patents": self.not_patents,
            "fields_filled": self.fields_filled,
        }

    def lines(self) -> list[str]:
        """What ``graphtx ingest`` prints: counts, where the skipped records are listed, the fields each source filled."""
        return [
            f"ingested {self.documents} documents and {self.citations} citations into {self.out_dir}",
            f"records seen: {self.records_seen}; skipped: {self.skipped}"
            + (f", of them {self.not_patents} not patents (sequence listings)" if self.not_patents else "")
            + (f" (each listed with its reason in {self.out_dir / 'errors.jsonl'})" if self.skipped else ""),
            *fields_lines(self.fields_filled or {}),
        ]


# One item flowing through the pipeline: a raw record to parse, or a skip decided early.
_Item = RawRecord | SkippedRecord


def _payload_size(raw: RawRecord) -> int:
    if isinstance(raw.payload, (bytes, str)):
        return len(raw.payload)
    if isinstance(raw.payload, dict):
        return sum(len(v) for v in raw.payload.values() if isinstance(v, (str, bytes)))
    return 0


def iter_items(sources: list[str | Path], cfg: IngestConfig) -> Iterator[_Item]:
    """Raw records of all sources, in order; unreadable files and oversized records as skips."""
    limit = int(cfg.max_record_mb * 1024 * 1024)
    for unit in discover(sources, cfg.format):
        if unit.format is None:
            yield SkippedRecord(unit.name, "whole file", unit.reason)
            continue
        reader = READERS[unit.format]
        try:
            with unit.open() as stream:
                for raw in reader.iter_raw(unit.name, stream):
                    if isinstance(raw, SkippedRecord):
                        yield raw
                        continue
                    if unit.damage:  # never silently wrong: its text may be altered anywhere
                        yield SkippedRecord(
                            raw.file,
                            raw.position,
                            f"not written: the file holds {unit.damage}; its records cannot be trusted",
                        )
                        continue
                    size = _payload_size(raw)
                    if size > limit:
                        yield SkippedRecord(
                            raw.file,
                            raw.position,
                            f"record is {size:,} bytes, over the limit of {cfg.max_record_mb:g} MiB (ingest.max_record_mb)",
                        )
                    else:
                        yield raw
        except (OSError, RecordError, ValueError, *ARCHIVE_ERRORS) as err:
            yield SkippedRecord(unit.name, "rest of file", f"stopped reading: {type(err).__name__}: {err}")


def parse_item(item: _Item) -> tuple[_Item, ParsedRecord | None]:
    """Worker side: parse one raw record; never raises. Failures come back as SkippedRecord."""
    if isinstance(item, SkippedRecord):
        return item, None
    # the payload stays behind, so results travel back cheaply
    stripped = RawRecord(item.format, item.file, item.position, None)
    try:
        return stripped, READERS[item.format].parse(item)
    except RecordError as err:
        return SkippedRecord(item.file, item.position, str(err), err.doc_id), None
    except Exception as err:  # a reader bug must not stop a batch job; it is reported per record
        return SkippedRecord(item.file, item.position, f"reader failure ({type(err).__name__}: {err})"), None


# fields counted in the manifest's fields_filled (a document "fills" one when it is not empty)
FILLED_FIELDS = (
    "title",
    "abstract",
    "claims",
    "description",
    "ipc",
    "cpc",
    "family_id",
    "date",
    "priority_date",
    "application_date",
    "applicants",
    "country",
    "kind",
    "lang",
)


class FieldCounts:
    """Per source path given: documents, and how many filled each field; ``extra`` keys by name."""

    def __init__(self, sources: list[str | Path]):
        self.sources = sorted((str(Path(s)) for s in sources), key=len, reverse=True)  # longest prefix first
        self.counts: dict[str, Counter] = {}
        self.extra: dict[str, Counter] = {}

    def add(self, doc: PatentDocument) -> None:
        source = next((s for s in self.sources if doc.source_file.startswith(s)), doc.source)
        counts = self.counts.setdefault(source, Counter())
        counts["documents"] += 1
        counts.update(name for name in FILLED_FIELDS if getattr(doc, name))
        if doc.extra:
            self.extra.setdefault(source, Counter()).update(doc.extra.keys())

    def to_json(self) -> dict:
        out = {}
        for source, counts in self.counts.items():
            out[source] = {"documents": counts["documents"], **{f: counts[f] for f in FILLED_FIELDS}}
            if source in self.extra:
                out[source]["extra"] = dict(sorted(self.extra[source].items()))
        return out


def ingest(
    sources: list[str | Path], out_dir: str | Path, cfg: IngestConfig = IngestConfig(), progress: bool | None = None
) -> IngestReport:
    if cfg.format is not None and cfg.format not in READERS:
        raise ValueError(f"unknown format {cfg.format!r}; known: {', '.join(READERS)}")
    if not sources:
        raise ValueError("no input paths given")
    missing = missing_sources(sources)
    if missing:
        raise FileNotFoundError(
            f"no such file or directory: {', '.join(missing)} (nothing was written; check the path)"
        )
    seen = written = 0
    filled = FieldCounts(sources)
    with CorpusWriter(out_dir, rows_per_group=cfg.rows_per_group) as writer:
        bar = progress_bar(desc="ingest", unit="rec", enabled=progress)
        results = bounded_map(parse_item, iter_items(sources, cfg), workers=cfg.workers, chunk_size=cfg.chunk_size)
        for item, parsed in results:
            seen += 1
            bar.update(1)
            if parsed is None:
                writer.skip(item)
                bar.set_postfix(skipped=writer.skipped, refresh=False)
                continue
            if parsed.document is None:
                writer.add_citations(parsed.citations)
                written += 1
            elif writer.add_document(parsed.document, parsed.citations, item.file, item.position):
                written += 1
                filled.add(parsed.document)
        bar.close()
        if seen != written + writer.skipped:  # every record is written or listed; anything else is a bug here
            raise RuntimeError(
                f"ingest lost track of records: {seen} seen, {written} written, {writer.skipped} skipped"
            )
        manifest = writer.close(
            {
                "sources": [str(s) for s in sources],
                "records_seen": seen,
                "records_written": written,
                "fields_filled": filled.to_json(),
            }
        )
    return IngestReport(
        manifest["documents"],
        manifest["citations"],
        manifest["skipped"],
        seen,
        Path(out_dir),
        written,
        manifest["fields_filled"],
        manifest["not_patents"],
    )


def fields_lines(filled: dict) -> list[str]:
    """One line a source: ``SOURCE: 371 documents; priority_date 371, applicants 370, ...; kept in extra: examiner 2``."""
    lines = []
    for source, counts in filled.items():
        have = ", ".join(f"{name} {counts[name]}" for name in FILLED_FIELDS if counts.get(name))
        none = [name for name in FILLED_FIELDS if not counts.get(name)]
        line = f"{source}: {counts['documents']} documents; filled: {have or 'nothing'}" + (
            f"; empty: {', '.join(none)}" if none else ""
        )
        if counts.get("extra"):
            line += "; kept in extra: " + ", ".join(f"{k} {n}" for k, n in counts["extra"].items())
        lines.append(line)
    return lines
