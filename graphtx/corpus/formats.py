"""Which reader handles which input: format detection and transparent decompression.

``discover(sources)`` expands files and directories into ``(path, format)`` pairs;
``open_binary(path)`` yields one binary stream per member (``.gz`` and ``.zip``
are read without unpacking to disk); ``READERS[format]`` gives the reader's
``iter_raw`` / ``parse`` pair.
"""

from __future__ import annotations

import gzip
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from graphtx.corpus import ep, marec, tabular, uspto
from graphtx.corpus.base import ParsedRecord, RawRecord, SkippedRecord


@dataclass(frozen=True)
class Reader:
    iter_raw: Callable[[str, BinaryIO], Iterator[RawRecord | SkippedRecord]]  # skips: recognised, never parsed
    parse: Callable[[RawRecord], ParsedRecord]


READERS: dict[str, Reader] = {
    "uspto": Reader(uspto.iter_raw, uspto.parse),
    "ep": Reader(ep.iter_raw, ep.parse),
    "marec": Reader(marec.iter_raw, marec.parse),
    "jsonl": Reader(tabular.iter_raw_jsonl, tabular.parse_jsonl),
    "parquet": Reader(tabular.iter_raw_parquet, tabular.parse_parquet),
    "citations": Reader(tabular.iter_raw_citations, tabular.parse_citations),
}

_SUFFIX_FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".tsv": "citations", ".csv": "citations"}
_XML_ROOTS = {b"<us-patent-grant": "uspto", b"<ep-patent-document": "ep", b"<patent-document": "marec"}
_COMPRESSED = (".gz", ".zip")


class UnknownFormat(ValueError):
    pass


def _logical_suffix(path: Path) -> str:
    """``a.xml.gz -> .xml``; ``a.zip -> .zip`` (members are sniffed)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def sniff_xml(head: bytes) -> str:
    for root, fmt in _XML_ROOTS.items():
        if root in head:
            return fmt
    raise UnknownFormat("XML root is none of us-patent-grant, ep-patent-document, patent-document")


def detect_format(path: Path, forced: str | None = None) -> str:
    if forced:
        if forced not in READERS:
            raise UnknownFormat(f"unknown format {forced!r}; known: {', '.join(READERS)}")
        return forced
    suffix = _logical_suffix(path)
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if suffix in (".xml", ".zip", ".txt", ""):
        for _, stream in open_binary(path):
            with stream:
                return sniff_xml(stream.read(4096))
        raise UnknownFormat("empty archive")
    raise UnknownFormat(f"unrecognised file type {suffix!r}")


def open_binary(path: Path) -> Iterator[tuple[str, BinaryIO]]:
    """Yield ``(name, stream)`` for a plain, gzip or zip file (one per zip member)."""
    name = str(path)
    if name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                if not member.endswith("/"):
                    yield f"{name}!{member}", archive.open(member)
    elif name.lower().endswith(".gz"):
        yield name, gzip.open(path, "rb")
    else:
        yield name, open(path, "rb")


def discover(sources: list[str | Path], forced: str | None = None) -> Iterator[tuple[Path, str | None, str]]:
    """Expand sources into ``(path, format or None, reason)``; None with a reason if unreadable.

    Directories are walked in sorted order; hidden files and READMEs are passed over.
    """
    for source in sources:
        path = Path(source)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            files = [p for p in files if p.suffix.lower() not in (".md", ".txt", ".pdf", ".html")]
        elif path.exists():
            files = [path]
        else:
            yield path, None, "no such file or directory"
            continue
        for file in files:
            try:
                yield file, detect_format(file, forced), ""
            except (UnknownFormat, OSError, zipfile.BadZipFile, gzip.BadGzipFile) as err:
                yield file, None, f"cannot tell the format: {err}"

