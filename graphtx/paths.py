"""Document ids as file names: the one place an id becomes part of a path.

Ids come from the data (``US-7315346-B2``, but also ``../../x``, ``/etc/passwd``, ``a/b``, ``..``,
a NUL byte or 10,000 characters from a hostile or broken source). ``safe_file_name`` maps any id
to a single path component of at most ``MAX_STEM`` characters made of ``[A-Za-z0-9._-]``, never
starting with a dot; an id that had to be changed gets a short hash of the original, so two ids
never share a name. ``file_in`` joins it to the chosen folder and checks that the result is
inside it.

Example::

    safe_file_name("US-7315346-B2", ".png")   # 'US-7315346-B2.png'
    safe_file_name("../../x", ".png")         # 'x-9cdf6a50.png'
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

MAX_STEM = 96  # characters before the suffix: well under every file system's 255-byte limit
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(doc_id: str, suffix: str = "", prefix: str = "") -> str:
    """``prefix + slug(doc_id) + suffix``; the slug is the id itself when it is already a plain, short name."""
    slug = _UNSAFE.sub("_", doc_id).strip("._-")
    if slug != doc_id or len(slug) > MAX_STEM or not slug:
        tag = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        slug = f"{slug[: MAX_STEM - 9]}-{tag}" if slug else f"id-{tag}"
    name = f"{prefix}{slug}{suffix}"
    assert "/" not in name and "\0" not in name and name not in (".", "..")
    return name


def file_in(folder: str | Path, doc_id: str, suffix: str = "", prefix: str = "") -> Path:
    """``folder / safe_file_name(...)``, checked to lie directly inside ``folder``."""
    folder = Path(folder)
    path = folder / safe_file_name(doc_id, suffix, prefix)
    if path.resolve().parent != folder.resolve():
        raise ValueError(
            f"document id {doc_id!r} does not map to a file inside {folder}"
        )  # unreachable by construction
    return path
