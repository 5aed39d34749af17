"""Atomic outputs: the one rule by which every stage writes what it makes.

A file or directory is written into a temporary sibling, fsynced, then renamed over its name,
so a reader (or a later stage) sees the old content or the new, never a mix:

- ``replacing(path)`` yields the temporary sibling of one file or directory to write into;
  on success it is fsynced and renamed over ``path``, on any failure (Ctrl-C included) removed.
  ``atomic_write_text`` / ``_bytes`` / ``_json`` / ``_table`` are the one-call forms.
- ``StagedDir(out, stage, owned)`` is a stage's whole output directory (ingest, parse, pretrain):
  every file is written into ``out/.partial/`` beside the previous output, which stays
  byte-identical until ``commit(manifest)``: the old manifest goes first, the new files are
  renamed in, and the new ``manifest.json`` comes last, so a folder with a manifest is complete.
  An interrupted run removes its partial; one killed outright (kill -9) leaves ``.partial/``
  with a ``PARTIAL.json`` saying what it is, which the next run clears. A ``resumable`` stage
  (``--engine ray``'s sharded parse) keeps its partial on failure and the next run of the same
  stage continues it (``graphtx.shards`` decides which of its pieces are reusable).
- ``DiskFull`` is what a full disk becomes (errno ENOSPC/EDQUOT, or pyarrow's message for it):
  the CLI turns it into "disk full at PATH" and exit status 1.

Resumable stages (index, training checkpoints) use the file forms for each piece they commit.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from graphtx.lock import DirectoryLock

PARTIAL_DIR = ".partial"  # inside a stage's output directory: the run in progress
PARTIAL_MARKER = "PARTIAL.json"
MANIFEST_FILE = "manifest.json"


# --- full disk ---------------------------------------------------------------------


class DiskFull(OSError):
    """No space left while writing ``path``; the previous complete output is untouched."""

    def __init__(self, path: str | Path, detail: str = ""):
        super().__init__(errno.ENOSPC, f"disk full at {path}" + (f" ({detail})" if detail else ""))
        self.path = str(path)

    def __str__(self) -> str:
        return f"disk full at {self.path}: free some space and run the command again (a previous complete output is untouched)"


def is_disk_full(err: BaseException) -> bool:
    if isinstance(err, DiskFull):
        return True
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(err, OSError) and "No space left on device" in str(err)  # pyarrow's IOError carries no errno


def as_disk_full(err: BaseException, path: str | Path) -> DiskFull:
    if isinstance(err, DiskFull):
        return err
    return DiskFull(getattr(err, "filename", None) or path)


# --- fsync ---------------------------------------------------------------------------


def fsync_dir(directory: str | Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # not every file system lets a directory be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_path(path: str | Path) -> None:
    """fsync a file, or every file of a directory tree and the directories themselves."""
    path = Path(path)
    if path.is_dir():
        for root, _, files in os.walk(path):
            for name in files:
                fsync_path(Path(root) / name)
            fsync_dir(root)
        return
    with open(path, "rb") as f:
        os.fsync(f.fileno())


# --- signals -------------------------------------------------------------------------


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the few renames of a commit (delivered right after)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# --- one file or directory -----------------------------------------------------------


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _replace(tmp: Path, path: Path) -> None:
    """Rename ``tmp`` over ``path``; a directory is swapped (old one renamed aside, then removed)."""
    if tmp.is_dir() and path.exists():
        old = path.with_name(f".{path.name}.old-{os.getpid()}")
        _remove(old)
        with signals_deferred():
            path.rename(old)
            tmp.rename(path)
        _remove(old)
    else:
        os.replace(tmp, path)
    fsync_dir(path.parent)


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write (a file, or a directory the caller creates).

    On success it is fsynced and renamed over ``path``; on failure it is removed and ``path``
    keeps what it held. A full disk is raised as ``DiskFull``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # "*.tmp": what IndexStore.clean_partial_files clears
    _remove(tmp)
    try:
        yield tmp
        fsync_path(tmp)
        _replace(tmp, path)
    except BaseException as err:
        _remove(tmp)
        if is_disk_full(err):
            raise as_disk_full(err, path) from err
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` so that ``path`` holds the old content or the new, never a mix."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, data: dict, indent: int | None = 2) -> None:
    atomic_write_text(path, json.dumps(data, indent=indent) + "\n")


def atomic_write_table(path: str | Path, table, row_group_size: int | None = None) -> None:
    import pyarrow.parquet as pq

    with replacing(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=row_group_size)


# --- a stage's output directory ---------------------------------------------------------


class StagedDir:
    """A stage's output directory, written beside the previous one and committed whole.

    ``owned`` names the files the stage writes (besides the manifest); on commit an owned file
    the new run did not write is removed, files the stage does not own are left alone
    (``owned=None``: whatever the run wrote). ``manifest`` names the file that marks the
    directory complete (``manifest.json``; a model directory's is ``fingerprint.txt``)::

        with StagedDir(out, "ingest", ("documents.parquet", "errors.jsonl")) as staged:
            write(staged.path("documents.parquet"))
            staged.commit({"documents": n})
    """

    def __init__(
        self,
        out_dir: str | Path,
        stage: str,
        owned: Iterable[str] | None,
        manifest: str = MANIFEST_FILE,
        resumable: bool = False,
    ):
        self.out_dir = Path(out_dir)
        self.resumable = (
            resumable  # keep .partial/ when the run fails, and reuse one a resumable run of this stage left
        )
        self.stage = stage
        self.owned = None if owned is None else tuple(owned)
        self.manifest_name = manifest
        self.partial = self.out_dir / PARTIAL_DIR
        self.committed = False
        self._open = False
        # one writer at a time; the lock file is a hidden sibling, so the output directory holds only the output
        self._lock = DirectoryLock(
            self.out_dir,
            stage.strip("`"),
            noun="output directory",
            lock_file=self.out_dir.parent / f".{self.out_dir.name}.lock",
        )
        self._locked = False

    def __enter__(self) -> "StagedDir":
        """Create the partial folder (once: entering again, to commit in a ``with``, keeps it)."""
        if self._open:
            return self
        self._open = True
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._lock.__enter__()  # before .partial/ is cleared: a second run must not clear the first's
            self._locked = True
            if not (self.resumable and self._left_resumable()):
                _remove(self.partial)  # a run killed outright left it; nothing in it is reusable
            self.partial.mkdir(exist_ok=True)
            marker = {
                "stage": self.stage,
                "pid": os.getpid(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "resumable": self.resumable,
                "note": f"incomplete output of a {self.stage} run; the files beside this folder are the last complete run; safe to delete"
                + ("; the same command continues it" if self.resumable else ""),
            }
            (self.partial / PARTIAL_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        except OSError as err:
            if is_disk_full(err):
                raise as_disk_full(err, self.partial) from err
            raise
        return self

    def _left_resumable(self) -> bool:
        try:
            marker = json.loads((self.partial / PARTIAL_MARKER).read_text())
        except (OSError, ValueError):
            return False
        return marker.get("stage") == self.stage and marker.get("resumable") is True

    def path(self, name: str) -> Path:
        return self.partial / name

    def commit(self, manifest: dict | str) -> None:
        """Move the new files in and write the manifest last (signals held back meanwhile)."""
        owned = self.owned
        if owned is None:
            owned = tuple(sorted(n for n in os.listdir(self.partial) if n not in (PARTIAL_MARKER, self.manifest_name)))
        for name in owned:
            if self.path(name).exists():
                fsync_path(self.path(name))
        with signals_deferred():
            with contextlib.suppress(FileNotFoundError):
                (self.out_dir / self.manifest_name).unlink()  # from here until the end the folder reads as incomplete
            fsync_dir(self.out_dir)
            for name in owned:
                new, old = self.path(name), self.out_dir / name
                if new.exists():
                    os.replace(new, old) if not new.is_dir() else _replace(new, old)
                elif old.exists():
                    _remove(old)
            if isinstance(manifest, dict):
                atomic_write_json(self.out_dir / self.manifest_name, manifest)
            else:
                atomic_write_text(self.out_dir / self.manifest_name, manifest)
            _remove(self.partial)
            fsync_dir(self.out_dir)
        self.committed = True

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._locked:  # not when left already (a nested ``with``)
            try:
                if not self.committed and not self.resumable:
                    _remove(self.partial)
            finally:
                self._locked = False
                self._lock.__exit__(exc_type, exc, tb)
        if exc is not None and is_disk_full(exc):
            raise as_disk_full(exc, self.out_dir) from exc


def interrupted_run(directory: str | Path) -> str:
    """A sentence for readers of a stage directory that an interrupted run left, or ''."""
    marker = Path(directory) / PARTIAL_DIR / PARTIAL_MARKER
    if not marker.exists():
        return ""
    try:
        stage = json.loads(marker.read_text()).get("stage", "?")
    except (OSError, ValueError):
        stage = "?"
    return f" (a {stage} run into it was interrupted before it completed: run it again)"
