"""Which reader handles which input: format detection and transparent decompression.

``discover(sources)`` expands files and directories into ``Input`` units, one per plain or
``.gz`` file and one per ``.zip`` member (each member's format detected by itself), each
with its format or the reason it cannot be read: an unreadable folder, a dangling link, a
zip member whose CRC does not match, an unknown format. ``Input.open()`` gives the binary
stream (``.gz`` and ``.zip`` are read without unpacking to disk); ``READERS[format]`` gives
the reader's ``iter_raw`` / ``parse`` pair. ``missing_sources`` names command-line paths
that do not exist (an error before anything is written, not a skip).
"""

from __future__ import annotations

import gzip
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from graphtx.corpus import citations, ep, marec, tabular, uspto
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
    "citations": Reader(citations.iter_raw_citations, citations.parse_citations),
}

_SUFFIX_FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".tsv": "citations", ".csv": "citations"}
_XML_ROOTS = {b"<us-patent-grant": "uspto", b"<ep-patent-document": "ep", b"<patent-document": "marec"}
_COMPRESSED = (".gz", ".zip")


class UnknownFormat(ValueError):
    pass


def _logical_suffix(path: Path | str) -> str:
    """``a.xml.gz -> .xml``; ``a.zip -> .zip`` (members are sniffed)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def sniff_xml(head: bytes) -> str:
    for root, fmt in _XML_ROOTS.items():
        if root in head:
            return fmt
    raise UnknownFormat("XML root is none of us-patent-grant, ep-patent-document, patent-document")


def _format_of(name: str, head: Callable[[], bytes], forced: str | None) -> str:
    """The format of one file or zip member: forced, by suffix, or by its XML root."""
    if forced:
        if forced not in READERS:
            raise UnknownFormat(f"unknown format {forced!r}; known: {', '.join(READERS)}")
        return forced
    suffix = _logical_suffix(name)
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if suffix in (".xml", ".txt", ""):
        return sniff_xml(head())
    raise UnknownFormat(f"unrecognised file type {suffix!r}")


def detect_format(path: Path, forced: str | None = None) -> str:
    """Format of a plain or ``.gz`` file; of a ``.zip``, its first member's (``discover`` sniffs each)."""
    if str(path).lower().endswith(".zip") and not forced:
        for _, stream in open_binary(path):
            with stream:
                return sniff_xml(stream.read(4096))
        raise UnknownFormat("empty archive")

    def head() -> bytes:
        for _, stream in open_binary(path):
            with stream:
                return stream.read(4096)
        return b""

    return _format_of(str(path), head, forced)


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


# --- discovery -------------------------------------------------------------------------

ARCHIVE_ERRORS = (zipfile.BadZipFile, zlib.error, gzip.BadGzipFile, EOFError)  # besides OSError


@dataclass(frozen=True)
class Input:
    """One readable unit: a plain or ``.gz`` file, or one member of a ``.zip``."""

    path: Path  # the file on disk
    member: str | None  # the zip member, or None
    format: str | None  # None: not readable, ``reason`` says why
    reason: str = ""
    damage: str = ""  # a .gz whose data fails its check: its records are listed, not written

    @property
    def name(self) -> str:
        """How errors.jsonl names it: ``path`` or ``path!member``."""
        return f"{self.path}!{self.member}" if self.member is not None else str(self.path)

    def open(self) -> BinaryIO:
        if self.member is not None:
            archive = zipfile.ZipFile(self.path)
            stream = archive.open(self.member)
            stream_close = stream.close

            def close() -> None:  # the member's stream owns its archive
                stream_close()
                archive.close()

            stream.close = close
            return stream
        if str(self.path).lower().endswith(".gz"):
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")


def missing_sources(sources: list[str | Path]) -> list[str]:
    """Command-line paths that do not exist (a dangling link counts as existing: it is listed)."""
    return [str(s) for s in sources if not os.path.lexists(s)]


def _walk(root: Path) -> Iterator[tuple[Path, str]]:
    """Files below ``root`` in sorted order, as ``(path, "")``, or ``(path, reason)`` for what cannot be read."""
    problems: list[tuple[Path, str]] = []

    def on_error(err: OSError) -> None:
        problems.append((Path(err.filename or root), f"unreadable folder: {err.strerror or err}"))

    found: list[tuple[Path, str]] = []
    for folder, dirs, files in os.walk(root, onerror=on_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in [
            d for d in dirs if os.path.islink(os.path.join(folder, d))
        ]:  # not followed: a loop would never end
            dirs.remove(name)
            found.append((Path(folder) / name, "symbolic link to a folder, not followed (give the folder itself)"))
        for name in files:
            if name.startswith(".") or Path(name).suffix.lower() in _PASSED_OVER:
                continue
            path = Path(folder) / name
            if path.is_symlink() and not path.exists():
                found.append((path, f"dangling symbolic link to {os.readlink(path)}"))
            elif path.is_file():
                found.append((path, ""))
            else:
                found.append((path, "not a regular file (a pipe, socket or device)"))
    yield from sorted(found + problems, key=lambda item: str(item[0]))


_PASSED_OVER = (".md", ".txt", ".pdf", ".html")


def _zip_members(path: Path, forced: str | None) -> Iterator[Input]:
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if not members:
                yield Input(path, None, None, "empty archive")
            for info in members:
                try:
                    with archive.open(
                        info
                    ) as stream:  # one pass for the CRC, so no record of a damaged member is written
                        head = stream.read(4096)
                        while stream.read(1 << 20):
                            pass
                    yield Input(path, info.filename, _format_of(info.filename, lambda: head, forced))
                except UnknownFormat as err:
                    yield Input(path, info.filename, None, f"cannot tell the format: {err}")
                except (OSError, *ARCHIVE_ERRORS, NotImplementedError, RuntimeError) as err:
                    yield Input(path, info.filename, None, f"damaged archive member: {err}")
    except (OSError, *ARCHIVE_ERRORS) as err:
        yield Input(path, None, None, f"cannot read the archive: {err}")


def gzip_damage(path: Path) -> str:
    """Why a .gz cannot be trusted (bad CRC, invalid deflate data), or '' (intact, or only truncated).

    One decompression pass: gzip checks its CRC only at the end, after every record was read.
    A truncated file is not damaged: the records before the cut decompress exactly.
    """
    try:
        with gzip.open(path, "rb") as stream:
            while stream.read(1 << 20):
                pass
    except EOFError:
        return ""
    except (OSError, zlib.error) as err:
        return f"damaged gzip data ({err})"
    return ""


def _units(path: Path, forced: str | None) -> Iterator[Input]:
    if str(path).lower().endswith(".zip"):
        yield from _zip_members(path, forced)
        return
    try:
        fmt = detect_format(path, forced)
    except (UnknownFormat, OSError, *ARCHIVE_ERRORS) as err:
        yield Input(path, None, None, f"cannot tell the format: {err}")
        return
    yield Input(path, None, fmt, damage=gzip_damage(path) if str(path).lower().endswith(".gz") else "")


def discover(sources: list[str | Path], forced: str | None = None) -> Iterator[Input]:
    """Expand sources into ``Input`` units; those that cannot be read carry the reason.

    Directories are walked in sorted order; hidden files and folders and READMEs are
    passed over; unreadable folders and dangling links are listed.
    """
    for source in sources:
        path = Path(source)
        if path.is_dir():
            files = list(_walk(path))
        elif path.is_symlink() and not path.exists():
            files = [(path, f"dangling symbolic link to {os.readlink(path)}")]
        elif path.exists():
            files = [(path, "")]
        else:
            files = [(path, "no such file or directory")]
        for file, why in files:
            if why:
                yield Input(file, None, None, why)
            else:
                yield from _units(file, forced)
