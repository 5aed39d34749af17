"""One writer per output directory: an exclusive ``flock`` on ``DIR/.lock``, which holds the writer's PID.

``graphtx index`` (add, replace, remove, repair) holds it for its whole run, and so does every
stage that writes a whole output directory (ingest, parse, pretrain, a model save: ``atomic.StagedDir``),
so two runs into one directory never interleave: the second fails at once with "index DIR is locked by PID N
(graphtx index started at ...)". The kernel drops the lock when its process dies (kill -9
included); the PID left in the file by a dead writer is then a stale note, taken over with a
message. Readers (``graphtx search``, ``graphtx serve``) take no lock: they read the manifest,
written last and atomically, and only the files it names.

Example::

    with IndexLock("runs/demo/index"):
        ...  # write parts, finalize
    with DirectoryLock("runs/demo/corpus", "graphtx ingest", noun="output directory"):
        ...
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from graphtx.errors import LockedError

LOCK_FILE = ".lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class DirectoryLock:
    """Exclusive, non-blocking lock of a directory (re-entrant within one process)."""

    _held: dict[str, int] = {}  # resolved directory -> depth, for nested use in one process

    def __init__(self, directory: str | Path, what: str, noun: str = "directory", lock_file: str | Path | None = None):
        self.dir = Path(directory)
        self.what = what  # the command that writes, for the holder's note ("graphtx index")
        self.noun = noun  # what the directory is, for the message ("index")
        self.lock_path = Path(lock_file) if lock_file is not None else self.dir / LOCK_FILE
        self._fd: int | None = None
        self.took_over: dict | None = None  # the stale holder's note, when one was taken over
        # a lock file named by the caller sits beside what it guards (a batch run's .RUN.lock): removed at a clean exit,
        # under the lock; a waiter that opened it before then finds the path gone or another file there, and opens it anew
        self.remove_at_exit = lock_file is not None

    def __enter__(self) -> DirectoryLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        key = str(self.lock_path.resolve())
        if self._held.get(key):
            self._held[key] += 1
            return self
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_note(fd)
                os.close(fd)
                raise LockedError(
                    f"{self.noun} {self.dir} is locked by PID {holder.get('pid', '?')} ({holder.get('what', self.what)} started at "
                    f"{holder.get('started', '?')}{' on ' + holder['host'] if holder.get('host') and holder['host'] != socket.gethostname() else ''}): "
                    "wait for it to finish, or stop it (a killed writer's run continues with the same command)"
                ) from None
            if not self.remove_at_exit or _same_file(fd, self.lock_path):
                break
            os.close(fd)  # locked a file its holder removed as it let go: lock the one at the path now
        previous = _read_note(fd)
        pid = previous.get("pid")
        if (
            isinstance(pid, int)
            and pid != os.getpid()
            and previous.get("host", socket.gethostname()) == socket.gethostname()
        ):
            self.took_over = previous
            state = "no longer running" if not _alive(pid) else "running, but no longer holding the lock"
            print(
                f"{self.what}: took over the stale lock of {self.dir} left by PID {pid} ({state}; started at {previous.get('started', '?')})",
                file=sys.stderr,
            )
        note = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "what": self.what,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(note) + "\n").encode(), 0)
        self._fd = fd
        self._held[key] = 1
        return self

    def __exit__(self, *exc) -> None:
        key = str(self.lock_path.resolve())
        self._held[key] -= 1
        if self._held[key]:
            return
        del self._held[key]
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no note behind: only a crashed writer's PID is "stale"
            if self.remove_at_exit:  # a lock file beside an output (not inside a directory of its own): gone when done
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.lock_path)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class IndexLock(DirectoryLock):
    """The lock of an index directory (``graphtx index``)."""

    def __init__(self, directory: str | Path, what: str = "graphtx index"):
        super().__init__(directory, what, noun="index")


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (not one removed, or replaced, since it was opened)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _read_note(fd: int) -> dict:
    try:
        data = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        note = json.loads(data) if data else {}
        return note if isinstance(note, dict) else {}
    except (OSError, ValueError):
        return {}
