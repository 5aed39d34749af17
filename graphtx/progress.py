"""Progress bars that also show in a log file: one line a minute when stderr is not a terminal.

tqdm's ``disable=None`` turns a bar off when its stream is not a TTY, so a long job run as
``nohup graphtx build ... > log 2>&1`` (or under CI, or on a cluster) printed nothing for tens of minutes.
:func:`progress_bar` makes the same decision once for every stage:

- ``enabled=False``: no bar (``--quiet``);
- ``enabled=True``, or ``None`` on a terminal: tqdm's usual bar, redrawn in place with ``\\r``;
- ``enabled=None`` off a terminal, "log mode": one plain line per refresh, at most one a minute, and none at all
  for a job done within its first minute (the tests and short commands stay quiet)::

      teacher minilm:  42%|####      | 9000/21000 [06:10<08:10, 24.3doc/s]

Example::

    for doc in progress_bar(docs, enabled=progress, desc="parse", unit="doc"):
        ...
"""

from __future__ import annotations

import re
import sys
from typing import IO

from tqdm import tqdm

__all__ = ["LOG_MODE", "progress_bar"]

# tqdm's settings in log mode; a caller's own keyword arguments win (a test passes mininterval=0, delay=0)
LOG_MODE = {
    "mininterval": 60.0,  # one line a minute at most
    "maxinterval": 60.0,  # tqdm's monitor thread forces a refresh after maxinterval: no sooner than a minute either
    "delay": 60.0,  # a job done within a minute writes nothing
    "ascii": True,  # '#' blocks: a log viewer need not know the terminal's encoding
    "dynamic_ncols": False,  # no terminal to ask for its width
    "ncols": 100,
}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # cursor moves and colours tqdm writes for a terminal


def progress_bar(iterable=None, *, enabled: bool | None, file: IO[str] | None = None, **tqdm_kwargs) -> tqdm:
    """A tqdm bar on ``file`` (default: ``sys.stderr`` now) wrapping ``iterable``, or a manual one (``update``).

    ``enabled``: True shows tqdm's bar, False none, None decides by ``file``: a terminal gets the bar, anything
    else (a log file, a pipe) gets log mode, one newline-terminated line per refresh (see :data:`LOG_MODE`).
    ``tqdm_kwargs`` (``desc``, ``unit``, ``total``, ``leave``, ``position``, ...) go to tqdm as given."""
    stream = sys.stderr if file is None else file
    if enabled is False:
        return tqdm(iterable, disable=True, file=stream, **tqdm_kwargs)
    if enabled or _isatty(stream):
        return tqdm(iterable, disable=False, file=stream, **tqdm_kwargs)
    return _LogBar(iterable, disable=False, file=_LineWriter(stream), **{**LOG_MODE, **tqdm_kwargs})


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _LineWriter:
    """A file for tqdm that turns each redraw into one line: ``\\r``, ANSI codes and padding out, ``\\n`` in."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.last = ""  # the line written last: the close redraws it when the last update already showed it

    def write(self, s: str) -> int:
        for line in _ANSI.sub("", s).replace("\r", "\n").split("\n"):
            line = line.rstrip()
            if line.strip() and line != self.last:
                self.stream.write(line + "\n")
                self.last = line
                self.flush()
        return len(s)

    def flush(self) -> None:
        flush = getattr(self.stream, "flush", None)
        if flush is not None:
            flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


class _LogBar(tqdm):
    """tqdm whose every redraw waits for ``mininterval`` and ``delay``.

    tqdm's own ``update`` does; ``set_postfix``, ``set_description`` (each step of a training loop) and its monitor
    thread redraw at once, which in a log file would be one line per step."""

    def refresh(self, nolock=False, lock_args=None):
        if hasattr(self, "start_t"):  # else tqdm's __init__ draws the first line (delay <= 0)
            now = self._time()
            if now - self.last_print_t < self.mininterval or now < self.start_t + self.delay:
                return False
            self.last_print_t = now  # the next update's interval counts from this line
        return super().refresh(nolock=nolock, lock_args=lock_args)
