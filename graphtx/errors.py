"""Errors the ``graphtx`` command prints as one line (no traceback), each with its exit status.

A ``GraphtxError`` says what is wrong, naming the file, and how to mend it; ``exit_code``
follows the README's table: 2 bad usage or input, 1 failure.
"""

from __future__ import annotations


class GraphtxError(Exception):
    """A user-facing failure: the message names the file and the mend."""

    exit_code = 1


class IntegrityError(GraphtxError, ValueError):
    """A file does not match what its manifest recorded (size, sha256), or cannot be read: damaged input."""

    exit_code = 2

    def __init__(self, message: str, files: list[str] | tuple[str, ...] = ()):
        super().__init__(message)
        self.files = tuple(files)  # the damaged files, as paths


class LockedError(GraphtxError):
    """Another process writes this directory now."""

    exit_code = 1
