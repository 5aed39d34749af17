"""Resumable sharded work: a job cut into fixed row ranges, each finished shard journaled as it lands.

Used by the Ray engine (``graphtx parse --engine ray``, ``graphtx encode --engine ray``): the input is cut
into shards of ``size`` rows (``plan_shards``), a shard's output is written atomically into a staging
folder, then one line is appended to ``journal.jsonl`` (fsynced). A run killed at any point (Ctrl-C,
kill -9) leaves the finished shards and their journal lines; the same command re-run opens the journal
(``ShardJournal.open``), keeps the shards it records (files present, sizes as recorded) and redoes only
the rest. The final output is assembled from the shards in shard order, so it has the rows of a run that
was never interrupted, in the same order, each once.

The journal belongs to one job: ``key`` (inputs, their sizes and times, the settings that change the
output) is stored beside it, and a journal written under another key is cleared, never reused.

Layout of a staging folder::

    key.json        what the shards are of (the job's key)
    journal.jsonl   one line per finished shard: {"shard": i, "files": {name: bytes}, ...}
    shard-000000.*  the shards' outputs
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from graphtx.atomic import atomic_write_json, fsync_dir

KEY_FILE = "key.json"
JOURNAL_FILE = "journal.jsonl"


def plan_shards(total: int, size: int) -> list[tuple[int, int]]:
    """Row ranges ``[(start, stop), ...]`` of ``size`` rows covering ``0 .. total`` (the last one shorter)."""
    if size < 1:
        raise ValueError(f"shard size must be at least 1, got {size}")
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def file_identity(path: str | Path) -> dict:
    """What a job's key records of an input file: its resolved path, size and modification time."""
    path = Path(path).resolve()
    st = path.stat()
    return {"path": str(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def content_identity(path: str | Path) -> dict:
    """What a cache key records of an input file: its size and the sha256 of its bytes, not where it lies or when it was
    written, so that the same bytes written again (a corpus ingested anew, a copy elsewhere) find the same cache.
    The hash is computed once per process for a file whose path, size and modification time are unchanged."""
    from graphtx.integrity import cached_sha256

    return {"bytes": Path(path).stat().st_size, "sha256": cached_sha256(path)}


class ShardJournal:
    """The finished shards of one job in ``folder`` (created if need be); see the module docstring.

    >>> journal = ShardJournal(folder, {"input": file_identity(path), "size": 512})
    >>> done = journal.open()                                 # {shard: record} kept from a killed run
    >>> atomic_write_bytes(journal.path(3, ".pkl"), data)     # the shard's output, whole or not at all
    >>> journal.commit(3, [journal.path(3, ".pkl")], rows=512)
    """

    def __init__(self, folder: str | Path, key: dict):
        self.folder = Path(folder)
        self.key = json.loads(json.dumps(key))  # as it reads back from key.json (tuples become lists)
        self.done: dict[int, dict] = {}

    def path(self, shard: int, suffix: str) -> Path:
        return self.folder / f"shard-{shard:06d}{suffix}"

    def peek(self) -> set[int]:
        """The shards a previous run of this job finished, read only (nothing cleared or written: a plan's look)."""
        try:
            if json.loads((self.folder / KEY_FILE).read_text()) != self.key:
                return set()
            lines = (self.folder / JOURNAL_FILE).read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            return set()
        done = set()
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:  # the line a kill cut short
                break
            if all(
                (self.folder / name).is_file() and (self.folder / name).stat().st_size == size
                for name, size in record["files"].items()
            ):
                done.add(int(record["shard"]))
        return done

    def open(self) -> dict[int, dict]:
        """The shards a previous run of this job finished, ``{shard: journal record}``; anything else is cleared."""
        self.folder.mkdir(parents=True, exist_ok=True)
        key_file, journal = self.folder / KEY_FILE, self.folder / JOURNAL_FILE
        try:
            same_job = json.loads(key_file.read_text()) == self.key
        except (OSError, ValueError):
            same_job = False
        records: list[dict] = []
        if same_job and journal.exists():
            for line in journal.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:  # the line a kill cut short: its shard is redone
                    break
                if all(
                    (self.folder / name).is_file() and (self.folder / name).stat().st_size == size
                    for name, size in record["files"].items()
                ):
                    records.append(record)
        self.done = {int(r["shard"]): r for r in records}
        keep = {KEY_FILE, JOURNAL_FILE, *(name for r in records for name in r["files"])}
        for child in self.folder.iterdir():  # shards of another job, or written but never journaled
            if child.name not in keep:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        if not same_job:
            atomic_write_json(key_file, self.key)
        # rewritten whole: a torn last line must not swallow the next record appended
        tmp = journal.with_name(f".{JOURNAL_FILE}.tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        os.replace(tmp, journal)
        fsync_dir(self.folder)
        return dict(self.done)

    def commit(self, shard: int, files: list[Path], **record) -> None:
        """Record ``shard`` as finished; its ``files`` (in the folder, already complete) are checked on resume."""
        entry = {"shard": shard, "files": {Path(f).name: Path(f).stat().st_size for f in files}, **record}
        with open(self.folder / JOURNAL_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[shard] = entry

    def remove(self) -> None:
        """The job is complete: its staging folder goes."""
        shutil.rmtree(self.folder, ignore_errors=True)
